package dev.runbus.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/**
 * Scenario 2: a fixed offered rate (each XADD sent at its time, not in bursts), C consumers, no-op handler;
 * latency from enqueue (the time the producer sent the XADD, carried in the payload) to the moment the
 * consumer learned that Redis accepted its XACK. The first part of each window is warm-up and not recorded.
 */
final class LatencyScenario {

    /**
     * One window of one contender: percentiles in ms, the rate at which messages were acknowledged over the
     * whole window, and whether a backlog built up (the consumers did not keep up with the offered rate).
     */
    record Sample(double p50, double p99, double p999, double ackedRate, boolean saturated)
            implements java.io.Serializable {
        static final Sample FAILED = new Sample(Double.NaN, Double.NaN, Double.NaN, Double.NaN, true);
    }

    record Result(List<Integer> rates, int consumers, long measureMillis, List<String> contenders,
                  Map<Integer, Map<String, List<Sample>>> samples, boolean runbusAckObserved)
            implements java.io.Serializable {

        List<Double> values(int rate, String contender, java.util.function.ToDoubleFunction<Sample> f) {
            List<Double> out = new ArrayList<>();
            for (Sample s : samples.get(rate).get(contender)) {
                out.add(f.applyAsDouble(s));
            }
            return out;
        }

        boolean saturated(int rate, String contender) {
            return samples.get(rate).get(contender).stream().anyMatch(Sample::saturated);
        }
    }

    private LatencyScenario() {
    }

    static Result run(Env env) throws Exception {
        BenchOptions.Sizes s = env.sizes;
        List<Contender> contenders = env.openContenders();
        try {
            List<String> names = new ArrayList<>();
            contenders.forEach(c -> names.add(c.name()));
            Map<Integer, Map<String, List<Sample>>> samples = new LinkedHashMap<>();
            for (int rate : s.latencyRates()) {
                Map<String, List<Sample>> byName = new LinkedHashMap<>();
                names.forEach(n -> byName.put(n, new ArrayList<>()));
                samples.put(rate, byName);
            }
            // Compiled code in every contender's path before the first window (one round when the drain ran first).
            Jit.settle("latency", () -> {
                for (Contender c : contenders) {
                    env.drain(c, s.latencyConsumers(), s.warmupMessages(), i -> false, "warmup");
                }
            });
            for (int round = 0; round < env.options.repeats(); round++) {
                for (int rate : s.latencyRates()) {
                    for (Contender c : env.order.of(contenders, "latency " + rate + " msg/s", round, Contender::name)) {
                        Sample sample = once(env, c, rate);
                        samples.get(rate).get(c.name()).add(sample);
                        Progress.say("latency round %d/%d, %,d msg/s, %-16s p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms%s",
                                round + 1, env.options.repeats(), rate, c.name(), sample.p50(), sample.p99(),
                                sample.p999(), sample.saturated() ? " (did not keep up)" : "");
                    }
                }
            }
            boolean observed = ((RunbusContender) contenders.get(0)).ackObserved();
            return new Result(s.latencyRates(), s.latencyConsumers(), s.latencyMeasureMillis(), names, samples,
                    observed);
        } finally {
            Env.closeAll(contenders);
        }
    }

    @SuppressWarnings("try") // the consumers only need to run, and to stop afterwards
    private static Sample once(Env env, Contender c, int rate) {
        BenchOptions.Sizes s = env.sizes;
        Target t = env.target(c, "latency");
        env.admin.createGroup(t.streamKey(), t.group());
        LatencyRecorder recorder = new LatencyRecorder();
        Probe probe = new Probe(recorder);
        try (Contender.Consumers running = c.start(t, s.latencyConsumers(), probe)) {
            Env.sleep(300);
            recorder.measureFrom(Payloads.now() + s.latencyWarmupMillis() * 1_000_000L);
            long t0 = System.nanoTime();
            int sent = env.producer.publishPaced(t.streamKey(), rate, s.latencyWarmupMillis() + s.latencyMeasureMillis());
            long tSent = System.nanoTime();
            env.awaitAcked(probe, sent, t, 180_000);
            long tDone = System.nanoTime();
            boolean saturated = tDone - tSent > 500_000_000L;
            return new Sample(recorder.millisAt(50), recorder.millisAt(99), recorder.millisAt(99.9),
                    sent / ((tDone - t0) / 1e9), saturated);
        } catch (TimeoutException e) {
            Progress.say("  %s at %,d msg/s: %s", c.name(), rate, e.getMessage());
            return Sample.FAILED;
        } catch (Exception e) {
            Progress.say("  %s at %,d msg/s failed: %s", c.name(), rate, e);
            return Sample.FAILED;
        } finally {
            env.admin.deleteMatching(t.keyPattern());
        }
    }
}
