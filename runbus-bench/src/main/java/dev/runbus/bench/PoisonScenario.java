package dev.runbus.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;

/**
 * Scenario 5: the drain of scenario 1 through runbus at C=4, without poison and with 1% poison messages
 * (every 100th: the handler throws). Two kinds of poisoned drain:
 * <ul>
 *   <li>dead-lettered at once ({@code maxDeliveries} 1): each poison message takes the whole poison path in
 *       the window — the failure, then the dead-letter script (copy + XACK, atomically) — and the drain ends
 *       when every entry is acknowledged, dead letters included;</li>
 *   <li>left for a retry ({@code maxDeliveries} 3, the default): a failed message stays pending for a later
 *       delivery; the drain ends when every clean message is acknowledged and every poison message failed
 *       once. This is the cost to the healthy traffic.</li>
 * </ul>
 * The same handler runs in every drain (it reads the payload to recognise poison).
 */
final class PoisonScenario {

    record Result(int messages, int consumers, int poisonEvery, List<Double> clean, List<Double> deadLettered,
                  List<Double> retried) implements java.io.Serializable {
    }

    static final int PAIRS_PER_REPEAT = 3;

    private PoisonScenario() {
    }

    static Result run(Env env) throws Exception {
        BenchOptions.Sizes s = env.sizes;
        int consumers = 4;
        int every = s.poisonEvery();
        IntPredicate poison = i -> i % every == every - 1;
        long poisonCount = s.drainMessages() / every;
        List<Double> clean = new ArrayList<>();
        List<Double> deadLettered = new ArrayList<>();
        List<Double> retried = new ArrayList<>();
        RunbusContender once = new RunbusContender(env.options.redisUri(), env.prefix("poison"), true, 1);
        RunbusContender later = new RunbusContender(env.options.redisUri(), env.prefix("poison-retry"), true, 3);
        try {
            Jit.settle("poison", () -> {
                env.drain(once, consumers, s.warmupMessages(), poison, "warmup");
                env.drain(later, consumers, s.warmupMessages(), poison, s.warmupMessages() / every, "warmup");
            });
            // The cost sought (a few %) is smaller than the machine's drift over a minute, so each figure is the
            // median of more pairs than the other scenarios take: PAIRS_PER_REPEAT per repeat.
            int rounds = env.options.repeats() * PAIRS_PER_REPEAT;
            for (int round = 0; round < rounds; round++) {
                for (int k = 0; k < 3; k++) {
                    int kind = (k + round) % 3;
                    double rate;
                    String label;
                    if (kind == 0) {
                        rate = env.drain(once, consumers, s.drainMessages(), i -> false, "poison");
                        clean.add(rate);
                        label = "no poison";
                    } else if (kind == 1) {
                        rate = env.drain(once, consumers, s.drainMessages(), poison, "poison");
                        deadLettered.add(rate);
                        label = "1% poison, dead-lettered at once";
                    } else {
                        rate = env.drain(later, consumers, s.drainMessages(), poison, poisonCount, "poison");
                        retried.add(rate);
                        label = "1% poison, left for a retry";
                    }
                    Progress.say("poison round %d/%d, %-34s %,10.0f msg/s", round + 1, rounds, label,
                            rate);
                }
            }
        } finally {
            once.close();
            later.close();
        }
        return new Result(s.drainMessages(), consumers, every, clean, deadLettered, retried);
    }
}
