package dev.runbus.runs;

import dev.runbus.FlowRate;

/**
 * One flow key's limits in place of the workers' (docs/flow-control.md): kept in PostgreSQL by
 * {@link Runs#setFlowOverride}, and set in Redis from there, again at every sweep, so that they outlive a Redis that
 * lost its data. A null component leaves the workers' own: their {@code flowCap}, their {@code flowRate}, the weight
 * 1.
 *
 * @param cap    the key's cap, 0 or more; null: the workers' {@code flowCap}
 * @param rate   the key's rate; null: the workers' {@code flowRate}
 * @param weight the key's weight under a topic cap or rate, from a millionth to a million; null: 1
 */
public record FlowOverride(Integer cap, FlowRate rate, Double weight) {

    public FlowOverride {
        if (cap != null && cap < 0) {
            throw new InvalidRunException("cap", "must be 0 or more, not " + cap);
        }
        if (rate != null && rate.per().toNanos() % 1_000 != 0) {
            throw new InvalidRunException("rate", "its period must be whole microseconds, not " + rate.per());
        }
        if (weight != null && !(weight >= 1e-6 && weight <= 1e6)) {
            throw new InvalidRunException("weight", "must be from 0.000001 to 1000000, not " + weight);
        }
    }

    /** Nothing of its own: the workers' limits. */
    public static FlowOverride none() {
        return new FlowOverride(null, null, null);
    }

    public FlowOverride withCap(int cap) {
        return new FlowOverride(cap, rate, weight);
    }

    public FlowOverride withRate(FlowRate rate) {
        return new FlowOverride(cap, rate, weight);
    }

    public FlowOverride withWeight(double weight) {
        return new FlowOverride(cap, rate, weight);
    }

    /** Whether it sets nothing. */
    public boolean isNone() {
        return cap == null && rate == null && weight == null;
    }
}
