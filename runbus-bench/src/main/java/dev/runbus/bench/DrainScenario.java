package dev.runbus.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Scenario 1: drain N messages of 200 bytes with C consumers of one group and a no-op handler; throughput
 * from the first publish to the last ack. Every contender, every C, in a random order within each round.
 */
final class DrainScenario {

    /** Messages per second of each contender at each C: one value per round (NaN when it failed). */
    record Result(int messages, List<Integer> consumerCounts, Map<String, String> contenders,
                  Map<String, Map<Integer, List<Double>>> rates) implements java.io.Serializable {

        List<Double> of(String contender, int consumers) {
            return rates.get(contender).get(consumers);
        }

        /** Whether {@code contender} was measured at {@code consumers} (a variant may run at one C only). */
        boolean has(String contender, int consumers) {
            return rates.containsKey(contender) && rates.get(contender).containsKey(consumers)
                    && !rates.get(contender).get(consumers).isEmpty();
        }
    }

    /** The C at which runbus is measured also as one subscription of that concurrency. */
    static final int ONE_SUBSCRIPTION_AT = 16;

    private DrainScenario() {
    }

    static Result run(Env env) throws Exception {
        BenchOptions.Sizes s = env.sizes;
        List<Contender> contenders = env.openContenders();
        // The Spring Boot starter's listener beside the plain API it wraps (drain only: it measures the annotation's
        // path, which the other scenarios do not exercise differently).
        contenders.add(1, new ListenerContender(env.options.redisUri(), env.prefix("listener")));
        Contender oneSubscription = RunbusContender.oneSubscription(env.options.redisUri(), env.prefix("runbus-one"));
        contenders.add(2, oneSubscription);
        try {
            Map<String, String> described = new LinkedHashMap<>();
            Map<String, Map<Integer, List<Double>>> rates = new LinkedHashMap<>();
            for (Contender c : contenders) {
                described.put(c.name(), c.describe());
                Map<Integer, List<Double>> byC = new LinkedHashMap<>();
                s.consumerCounts().forEach(n -> byC.put(n, new ArrayList<>()));
                rates.put(c.name(), byC);
            }
            Progress.say("drain: warm-up, %,d messages per contender and round", s.warmupMessages());
            Jit.settle("drain", () -> {
                for (Contender c : contenders) {
                    env.drain(c, 4, s.warmupMessages(), i -> false, "warmup");
                }
            });
            for (int round = 0; round < env.options.repeats(); round++) {
                for (int consumers : s.consumerCounts()) {
                    List<Contender> measured = new ArrayList<>(contenders);
                    if (consumers != ONE_SUBSCRIPTION_AT) {
                        measured.remove(oneSubscription);
                    }
                    for (Contender c : env.order.of(measured, "drain C=" + consumers, round, Contender::name)) {
                        double rate = env.drain(c, consumers, s.drainMessages(), i -> false, "drain");
                        rates.get(c.name()).get(consumers).add(rate);
                        Progress.say("drain round %d/%d, C=%d, %-16s %,10.0f msg/s", round + 1,
                                env.options.repeats(), consumers, c.name(), rate);
                    }
                }
            }
            return new Result(s.drainMessages(), s.consumerCounts(), described, rates);
        } finally {
            Env.closeAll(contenders);
        }
    }
}
