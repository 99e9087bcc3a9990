package dev.runbus.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * Scenario 12: flow control (docs/flow-control.md), runbus against itself without it. Each round, in an order drawn
 * for the round: the drain of {@link FlowMeasures#TENANTS} tenants' messages gated (key caps and a topic cap) and
 * ungated; one key's hand-off at a cap of 1 against a subscription of concurrency 1; a heavy tenant's backlog with
 * light tenants publishing beside it, gated (fair shares) and ungated (first come, first served); then the shares of
 * 100 backlogged tenants at 100:1 and of three tenants weighted 1:2:5, which depend on the order Redis let messages
 * in, not on the machine's speed.
 */
final class FlowScenario {

    /** Publish and drain rates, msg/s, and Redis commands per message over both. */
    record Drain(double publishRate, double drainRate, double commandsPerMessage) implements java.io.Serializable {
        static final Drain FAILED = new Drain(Double.NaN, Double.NaN, Double.NaN);
    }

    /** The gap from a handler's end to the next one's start, ms. */
    record HandOff(double p50, double p99) implements java.io.Serializable {
        static final HandOff FAILED = new HandOff(Double.NaN, Double.NaN);
    }

    /**
     * The light tenants' wait (publish → handler start, ms), the throughput while they published (msg/s), how many
     * light messages were sent, and whether the heavy tenant still had a backlog when the window ended.
     */
    record Fairness(double lightP50, double lightP99, double lightP999, double rate, int lightMessages,
                    boolean heavyBacklogged) implements java.io.Serializable {
        static final Fairness FAILED = new Fairness(Double.NaN, Double.NaN, Double.NaN, Double.NaN, 0, false);
    }

    /** The worst window's largest tenant count over its smallest, and its Jain index; windows measured. */
    record Shares(double maxOverMin, double jain, int windows) implements java.io.Serializable {
        static final Shares FAILED = new Shares(Double.NaN, Double.NaN, 0);
    }

    /** Each weighted tenant's share over the share its weight asks (1 is exact). */
    record Weights(double weight1, double weight2, double weight5) implements java.io.Serializable {
        static final Weights FAILED = new Weights(Double.NaN, Double.NaN, Double.NaN);
    }

    record Result(int drainMessages, int handOffMessages, int heavyBacklog, int lightRate, long windowMillis,
                  int sharesLightEach, int weightsEach, List<Drain> gated, List<Drain> topicCapped,
                  List<Drain> ungated,
                  List<HandOff> gatedHandOff, List<HandOff> ungatedHandOff, List<Fairness> fair,
                  List<Fairness> unfair, List<Shares> shares, List<Weights> weights, List<Drain> subKeyed,
                  List<Shares> sharesOverSubKeys) implements java.io.Serializable {
    }

    private FlowScenario() {
    }

    static Result run(Env env) throws Exception {
        boolean quick = env.options.quick();
        int drainMessages = quick ? 10_000 : 50_000;
        int handOffMessages = quick ? 500 : 2_000;
        int heavyBacklog = quick ? 30_000 : 100_000;
        int lightRate = 500;
        long windowMillis = quick ? 3_000 : 10_000;
        int lightEach = quick ? 30 : 100;
        int weightsEach = quick ? 500 : 2_000;
        List<Drain> gated = new ArrayList<>();
        List<Drain> topicCapped = new ArrayList<>();
        List<Drain> ungated = new ArrayList<>();
        List<HandOff> gatedHandOff = new ArrayList<>();
        List<HandOff> ungatedHandOff = new ArrayList<>();
        List<Fairness> fair = new ArrayList<>();
        List<Fairness> unfair = new ArrayList<>();
        List<Shares> shares = new ArrayList<>();
        List<Weights> weights = new ArrayList<>();
        List<Drain> subKeyed = new ArrayList<>();
        List<Shares> sharesOverSubKeys = new ArrayList<>();
        Jit.settle("flow", 3, () -> {
            FlowMeasures.drain(env, FlowMeasures.Gate.TOPIC_CAP, drainMessages / 5);
            FlowMeasures.drain(env, FlowMeasures.Gate.NONE, drainMessages / 5);
        });
        int rounds = env.options.repeats();
        for (int round = 0; round < rounds; round++) {
            for (int k = 0; k < 8; k++) {
                switch ((k + round) % 8) {
                    case 0 -> gated.add(say(round, "drain, key caps",
                            attempt("drain", () -> FlowMeasures.drain(env, FlowMeasures.Gate.KEY_CAPS,
                                    drainMessages), Drain.FAILED)));
                    case 1 -> ungated.add(say(round, "drain, ungated",
                            attempt("drain", () -> FlowMeasures.drain(env, FlowMeasures.Gate.NONE,
                                    drainMessages), Drain.FAILED)));
                    case 7 -> subKeyed.add(say(round, "drain, key caps, sub-keys",
                            attempt("drain", () -> FlowMeasures.drain(env, FlowMeasures.Gate.KEY_CAPS_SUB_KEYS,
                                    drainMessages), Drain.FAILED)));
                    case 6 -> topicCapped.add(say(round, "drain, topic cap",
                            attempt("drain", () -> FlowMeasures.drain(env, FlowMeasures.Gate.TOPIC_CAP,
                                    drainMessages), Drain.FAILED)));
                    case 2 -> gatedHandOff.add(say(round, "hand-off at a cap of 1",
                            attempt("hand-off", () -> FlowMeasures.handOff(env, true, handOffMessages),
                                    HandOff.FAILED)));
                    case 3 -> ungatedHandOff.add(say(round, "hand-off at concurrency 1",
                            attempt("hand-off", () -> FlowMeasures.handOff(env, false, handOffMessages),
                                    HandOff.FAILED)));
                    case 4 -> fair.add(say(round, "heavy tenant, fair shares",
                            attempt("fairness", () -> FlowMeasures.fairness(env, true, heavyBacklog, lightRate,
                                    windowMillis), Fairness.FAILED)));
                    default -> unfair.add(say(round, "heavy tenant, first come first served",
                            attempt("fairness", () -> FlowMeasures.fairness(env, false, heavyBacklog, lightRate,
                                    windowMillis), Fairness.FAILED)));
                }
            }
            shares.add(say(round, attempt("shares", () -> FlowMeasures.shares(env, lightEach, 0), Shares.FAILED)));
            sharesOverSubKeys.add(say(round, attempt("shares", () -> FlowMeasures.shares(env, lightEach,
                    FlowMeasures.HEAVY_SUB_KEYS), Shares.FAILED)));
            weights.add(say(round, attempt("weights", () -> FlowMeasures.weights(env, weightsEach), Weights.FAILED)));
        }
        return new Result(drainMessages, handOffMessages, heavyBacklog, lightRate, windowMillis, lightEach,
                weightsEach, gated, topicCapped, ungated, gatedHandOff, ungatedHandOff, fair, unfair, shares, weights,
                subKeyed, sharesOverSubKeys);
    }

    /** What {@code measure} returns, or {@code failed} (said so) when it throws. */
    private static <T> T attempt(String what, java.util.concurrent.Callable<T> measure, T failed) {
        try {
            return measure.call();
        } catch (Exception e) {
            Progress.say("  flow %s failed: %s", what, e);
            return failed;
        }
    }

    private static Drain say(int round, String label, Drain d) {
        Progress.say("flow round %d, %-16s publish %s msg/s, drain %s msg/s, %.1f Redis commands/msg", round + 1,
                label, Fmt.rate(d.publishRate()), Fmt.rate(d.drainRate()), d.commandsPerMessage());
        return d;
    }

    private static HandOff say(int round, String label, HandOff h) {
        Progress.say("flow round %d, %-26s gap p50 %s ms, p99 %s ms", round + 1, label, Fmt.ms(h.p50()),
                Fmt.ms(h.p99()));
        return h;
    }

    private static Fairness say(int round, String label, Fairness f) {
        Progress.say("flow round %d, %-38s light wait p50 %s ms, p99 %s ms, p99.9 %s ms (%,d); %s msg/s%s",
                round + 1, label, Fmt.ms(f.lightP50()), Fmt.ms(f.lightP99()), Fmt.ms(f.lightP999()),
                f.lightMessages(), Fmt.rate(f.rate()), f.heavyBacklogged() ? "" : " (heavy backlog ran out)");
        return f;
    }

    private static Shares say(int round, Shares s) {
        Progress.say("flow round %d, 100 tenants at 100:1: worst window max/min %.3f, Jain %.4f (%d windows)",
                round + 1, s.maxOverMin(), s.jain(), s.windows());
        return s;
    }

    private static Weights say(int round, Weights w) {
        Progress.say("flow round %d, weights 1:2:5, share ÷ asked: %.3f, %.3f, %.3f", round + 1, w.weight1(),
                w.weight2(), w.weight5());
        return w;
    }
}
