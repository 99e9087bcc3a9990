package dev.runbus.spring;

import dev.runbus.FlowFairness;
import dev.runbus.FlowRate;
import dev.runbus.SubscribeOptions;
import java.time.Duration;

/**
 * Flow control of a subscription (docs/flow-control.md): {@code runbus.listener.flow.*} for the listeners,
 * {@code runbus.runs.flow.*} for the runs worker. Unset, a limit is off; the defaults are the library's.
 */
public class FlowProperties {

    /** The most messages of one flow key that run at once across the group; unset: no cap per key. */
    private Integer cap;

    /** A rate per flow key, PERMITS/PERIOD[,BURST] (5/1s, 100/1m,20); unset: none. */
    private String rate;

    /** The most messages with a flow key that run at once in the whole topic (unpartitioned only); unset: none. */
    private Integer topicCap;

    /** A rate for the whole topic, PERMITS/PERIOD[,BURST] (unpartitioned only); unset: none. */
    private String topicRate;

    /** What the topic's fair shares count: BY_COST (each message its declared cost) or BY_HANDLER_TIME. */
    private FlowFairness fairness = FlowFairness.BY_COST;

    /** How long waiting is worth one step of a message's priority. */
    private Duration priorityAging = Duration.ofSeconds(60);

    /** These settings on {@code b}: the caps and rates that are set, the fairness and the aging. */
    SubscribeOptions.Builder applyTo(SubscribeOptions.Builder b) {
        if (cap != null) {
            b.flowCap(cap);
        }
        if (rate != null && !rate.isBlank()) {
            b.flowRate(parse("rate", rate));
        }
        if (topicCap != null) {
            b.flowTopicCap(topicCap);
        }
        if (topicRate != null && !topicRate.isBlank()) {
            b.flowTopicRate(parse("topic-rate", topicRate));
        }
        return b.flowFairness(fairness).flowPriorityAging(priorityAging);
    }

    private static FlowRate parse(String property, String text) {
        try {
            return FlowRate.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("flow." + property + ": " + e.getMessage(), e);
        }
    }

    public Integer getCap() {
        return cap;
    }

    public void setCap(Integer cap) {
        this.cap = cap;
    }

    public String getRate() {
        return rate;
    }

    public void setRate(String rate) {
        this.rate = rate;
    }

    public Integer getTopicCap() {
        return topicCap;
    }

    public void setTopicCap(Integer topicCap) {
        this.topicCap = topicCap;
    }

    public String getTopicRate() {
        return topicRate;
    }

    public void setTopicRate(String topicRate) {
        this.topicRate = topicRate;
    }

    public FlowFairness getFairness() {
        return fairness;
    }

    public void setFairness(FlowFairness fairness) {
        this.fairness = fairness;
    }

    public Duration getPriorityAging() {
        return priorityAging;
    }

    public void setPriorityAging(Duration priorityAging) {
        this.priorityAging = priorityAging;
    }
}
