package dev.runbus.bench;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Message;
import dev.runbus.Publisher;
import dev.runbus.SubscribeOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The measurements of the flow-control scenario ({@link FlowScenario}), each on a fresh topic of one partition, with
 * a publishing bus and a consuming bus of their own (a web process and a worker), both on the run's key prefix.
 */
final class FlowMeasures {

    /** Handlers of the consuming bus; the topic's cap in the gated runs. */
    static final int CONCURRENCY = 64;
    /** Tenants of the drain and of the fairness runs. */
    static final int TENANTS = 100;
    /** Each key's cap in the gated drain: above CONCURRENCY / TENANTS, so the topic's cap is what binds. */
    static final int KEY_CAP = 8;
    static final int PUBLISH_BATCH = 500;
    /** A handler's work in the fairness run: a tenant's job that waits on something. */
    static final long FAIR_HANDLER_MILLIS = 10;
    /** Admissions per window of the all-backlogged share measurement: ten turns of each tenant. */
    static final int SHARE_WINDOW = 10 * TENANTS;
    static final double[] WEIGHTS = {1, 2, 5};
    /** Sub-keys of each tenant in the drain with sub-keys: a tenant's conversations. */
    static final int DRAIN_SUB_KEYS = 10;
    /** Sub-keys the heavy tenant spreads its messages over in the second shares measurement. */
    static final int HEAVY_SUB_KEYS = 1_000;

    private FlowMeasures() {
    }

    /** A delivery seen by a handler: its flow key and the stream id Redis let it in under. */
    record Admission(String flowKey, String streamId) {
    }

    private static Bus bus(Env env, String slug) {
        return Bus.connect(BusConfig.builder(env.options.redisUri()).keyPrefix(env.prefix(slug)).build());
    }

    private static Message message(String flowKey, long sentNanos) {
        return message(flowKey, sentNanos, null);
    }

    /** A message with a flow key (null: none) and a flow sub-key (null: none). */
    private static Message message(String flowKey, long sentNanos, String subKey) {
        Message.Builder b = Message.builder("flow", Payloads.make(sentNanos, false));
        if (flowKey != null) {
            b.flowKey(flowKey);
            if (subKey != null) {
                b.flowSubKey(subKey);
            }
        }
        return b.build();
    }

    private static void publish(Publisher publisher, String topic, List<Message> messages) {
        for (int i = 0; i < messages.size(); i += PUBLISH_BATCH) {
            publisher.publishAll(topic, messages.subList(i, Math.min(messages.size(), i + PUBLISH_BATCH)));
        }
    }

    private static void await(String what, long timeoutMillis, BooleanSupplier done) throws TimeoutException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new TimeoutException("timed out waiting for " + what);
            }
            LockSupport.parkNanos(1_000_000);
        }
    }

    /** How the drain's topic is flow-controlled. */
    enum Gate {
        /** No flow control: the messages carry no flow key. */
        NONE,
        /** Each key's cap {@link #KEY_CAP}: the keys together may run more than the handlers, so none binds. */
        KEY_CAPS,
        /** As {@link #KEY_CAPS}, each tenant's messages spread over {@link #DRAIN_SUB_KEYS} sub-keys. */
        KEY_CAPS_SUB_KEYS,
        /** The key caps and a topic cap of {@link #CONCURRENCY}, the handlers' number: it binds all the time. */
        TOPIC_CAP
    }

    /**
     * {@code messages} spread over {@link #TENANTS} flow keys, flow-controlled by {@code gate} (or, with
     * {@link Gate#NONE}, the same messages without flow keys), published while nobody subscribes, then drained by one
     * bus of {@link #CONCURRENCY} handlers that do nothing. Publish and drain rates, and the Redis commands per
     * message over both (scripts' commands counted as commands).
     */
    static FlowScenario.Drain drain(Env env, Gate gate, int messages) throws Exception {
        boolean gated = gate != Gate.NONE;
        String slug = "flow-drain-" + env.nextId();
        String topic = "drain";
        try (Bus publisherBus = bus(env, slug); Bus consumerBus = bus(env, slug)) {
            List<Message> batch = new ArrayList<>(messages);
            for (int i = 0; i < messages; i++) {
                batch.add(message(gated ? "tenant-" + (i % TENANTS) : null, 0,
                        gate == Gate.KEY_CAPS_SUB_KEYS ? "conversation-" + (i / TENANTS % DRAIN_SUB_KEYS) : null));
            }
            publisherBus.publisher().publish(topic, message(gated ? "warm-up" : null, 0)); // registered, loaded
            ServerCounters before = env.admin.counters();
            long t0 = System.nanoTime();
            publish(publisherBus.publisher(), topic, batch);
            long t1 = System.nanoTime();
            AtomicInteger handled = new AtomicInteger();
            SubscribeOptions.Builder options = SubscribeOptions.builder().concurrency(CONCURRENCY);
            if (gated) {
                options.flowCap(KEY_CAP);
            }
            if (gate == Gate.TOPIC_CAP) {
                options.flowTopicCap(CONCURRENCY);
            }
            long t2 = System.nanoTime();
            consumerBus.subscribe(topic, "g", "c", d -> handled.incrementAndGet(), options.build());
            await("the drain", Math.max(60_000, messages), () -> handled.get() >= messages + 1);
            long t3 = System.nanoTime();
            ServerCounters used = env.admin.counters().minus(before);
            return new FlowScenario.Drain(messages / ((t1 - t0) / 1e9), messages / ((t3 - t2) / 1e9),
                    used.totalCalls() / (double) messages);
        } finally {
            env.admin.deleteMatching(env.prefix(slug) + "*");
        }
    }

    /**
     * One key's {@code messages} run one at a time: gated by a cap of 1 (each release lets the next in), or ungated
     * by a subscription of concurrency 1 (the next read ahead, already in the consumer). The gap from one handler's
     * end to the next one's start, ms: p50 and p99.
     */
    static FlowScenario.HandOff handOff(Env env, boolean gated, int messages) throws Exception {
        String slug = "flow-handoff-" + env.nextId();
        String topic = "handoff";
        try (Bus publisherBus = bus(env, slug); Bus consumerBus = bus(env, slug)) {
            List<Message> batch = new ArrayList<>(messages);
            for (int i = 0; i < messages; i++) {
                batch.add(message(gated ? "one" : null, 0));
            }
            publish(publisherBus.publisher(), topic, batch);
            long[] starts = new long[messages];
            long[] ends = new long[messages];
            AtomicInteger n = new AtomicInteger();
            SubscribeOptions.Builder options = SubscribeOptions.builder()
                    .concurrency(gated ? 4 : 1);
            if (gated) {
                options.flowCap(1);
            }
            consumerBus.subscribe(topic, "g", "c", d -> {
                long start = System.nanoTime();
                int i = n.getAndIncrement();
                if (i < messages) {
                    starts[i] = start;
                    ends[i] = System.nanoTime();
                }
            }, options.build());
            await("the hand-offs", Math.max(60_000, messages * 50L), () -> n.get() >= messages);
            double[] gaps = new double[messages - 1];
            for (int i = 1; i < messages; i++) {
                gaps[i - 1] = (starts[i] - ends[i - 1]) / 1e6;
            }
            Arrays.sort(gaps);
            return new FlowScenario.HandOff(percentile(gaps, 0.50), percentile(gaps, 0.99));
        } finally {
            env.admin.deleteMatching(env.prefix(slug) + "*");
        }
    }

    /**
     * A heavy tenant with a backlog of {@code heavyBacklog} and {@link #TENANTS} − 1 light tenants publishing
     * {@code lightRate} messages a second in all, spread evenly, for {@code windowMillis}; handlers of
     * {@link #FAIR_HANDLER_MILLIS} ms. Gated: a topic cap of {@link #CONCURRENCY}, fair shares; ungated: the same
     * messages without flow keys, first come first served. The light tenants' wait (publish → handler start) and
     * the throughput while the window lasted.
     */
    static FlowScenario.Fairness fairness(Env env, boolean gated, int heavyBacklog, int lightRate, long windowMillis)
            throws Exception {
        String slug = "flow-fair-" + env.nextId();
        String topic = "fair";
        try (Bus publisherBus = bus(env, slug); Bus consumerBus = bus(env, slug)) {
            List<Message> heavy = new ArrayList<>(heavyBacklog);
            for (int i = 0; i < heavyBacklog; i++) {
                heavy.add(message(gated ? "heavy" : null, 0));
            }
            publish(publisherBus.publisher(), topic, heavy);
            ConcurrentLinkedQueue<Double> lightWaits = new ConcurrentLinkedQueue<>();
            AtomicLong handled = new AtomicLong();
            SubscribeOptions.Builder options = SubscribeOptions.builder().concurrency(CONCURRENCY);
            if (gated) {
                options.flowTopicCap(CONCURRENCY);
            }
            consumerBus.subscribe(topic, "g", "c", d -> {
                long started = Payloads.now();
                if (d.message().type().equals("light")) {
                    lightWaits.add((started - Payloads.enqueuedAt(d.message().payload())) / 1e6);
                }
                handled.incrementAndGet();
                Thread.sleep(FAIR_HANDLER_MILLIS);
            }, options.build());
            Env.sleep(1_000); // the heavy tenant's backlog running at full speed
            long handledBefore = handled.get();
            long t0 = System.nanoTime();
            long intervalNanos = 1_000_000_000L / lightRate;
            int sent = 0;
            for (long next = t0; next - t0 < windowMillis * 1_000_000L; next += intervalNanos) {
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
                Message.Builder b = Message.builder("light", Payloads.make(Payloads.now(), false));
                publisherBus.publisher().publish(topic, gated ? b.flowKey("light-" + (sent % (TENANTS - 1))).build()
                        : b.build());
                sent++;
            }
            long t1 = System.nanoTime();
            double rate = (handled.get() - handledBefore) / ((t1 - t0) / 1e9);
            long backlogged = heavyBacklog - (handled.get() - lightWaits.size());
            int lightSent = sent;
            await("the light tenants' messages", Math.max(120_000, heavyBacklog * 2L),
                    () -> lightWaits.size() >= lightSent);
            double[] waits = lightWaits.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            return new FlowScenario.Fairness(percentile(waits, 0.50), percentile(waits, 0.99),
                    percentile(waits, 0.999), rate, lightSent, backlogged > 0);
        } finally {
            env.admin.deleteMatching(env.prefix(slug) + "*");
        }
    }

    /**
     * {@link #TENANTS} tenants all backlogged, the first with {@code heavyEach × 100} messages and each other with
     * {@code lightEach}, behind a topic cap of {@link #CONCURRENCY}, handlers that do nothing. The admissions, in the
     * order Redis let them in (their stream ids), are cut into windows of {@link #SHARE_WINDOW} while every tenant
     * still had messages waiting; per window, the largest tenant count over the smallest and Jain's index. The worst
     * window of each. With {@code heavySubKeys} above 0, the heavy tenant's messages are spread over that many
     * sub-keys (it must gain nothing by it).
     */
    static FlowScenario.Shares shares(Env env, int lightEach, int heavySubKeys) throws Exception {
        String slug = "flow-shares-" + env.nextId();
        String topic = "shares";
        int heavyEach = lightEach * 100;
        try (Bus publisherBus = bus(env, slug); Bus consumerBus = bus(env, slug)) {
            List<Message> all = new ArrayList<>();
            for (int i = 0; i < heavyEach; i++) {
                all.add(message("tenant-0", 0, heavySubKeys == 0 ? null : "conversation-" + (i % heavySubKeys)));
                if (i < lightEach) {
                    for (int t = 1; t < TENANTS; t++) {
                        all.add(message("tenant-" + t, 0));
                    }
                }
            }
            publish(publisherBus.publisher(), topic, all);
            List<Admission> admissions = admissions(consumerBus, topic, all.size(),
                    SubscribeOptions.builder().concurrency(CONCURRENCY).flowTopicCap(CONCURRENCY));
            // Every light tenant is backlogged until its last message is let in: windows end before the first one.
            Map<String, Integer> seen = new HashMap<>();
            int backloggedUntil = admissions.size();
            for (int i = 0; i < admissions.size(); i++) {
                String key = admissions.get(i).flowKey();
                if (!key.equals("tenant-0") && seen.merge(key, 1, Integer::sum) == lightEach) {
                    backloggedUntil = i;
                    break;
                }
            }
            double worstRatio = 1;
            double worstJain = 1;
            int windows = 0;
            for (int from = 0; from + SHARE_WINDOW <= backloggedUntil; from += SHARE_WINDOW) {
                Map<String, Integer> counts = new HashMap<>();
                for (int t = 0; t < TENANTS; t++) {
                    counts.put("tenant-" + t, 0);
                }
                admissions.subList(from, from + SHARE_WINDOW).forEach(a -> counts.merge(a.flowKey(), 1, Integer::sum));
                int max = counts.values().stream().mapToInt(Integer::intValue).max().orElse(0);
                int min = counts.values().stream().mapToInt(Integer::intValue).min().orElse(0);
                worstRatio = Math.max(worstRatio, min == 0 ? Double.POSITIVE_INFINITY : max / (double) min);
                worstJain = Math.min(worstJain, jain(counts.values()));
                windows++;
            }
            return new FlowScenario.Shares(worstRatio, worstJain, windows);
        } finally {
            env.admin.deleteMatching(env.prefix(slug) + "*");
        }
    }

    /**
     * Three tenants of weights 1, 2 and 5, each with {@code each} messages waiting, behind a topic cap of 8: each
     * one's share of the admissions while all three still had messages waiting, over the share its weight asks.
     */
    static FlowScenario.Weights weights(Env env, int each) throws Exception {
        String slug = "flow-weights-" + env.nextId();
        String topic = "weights";
        try (Bus publisherBus = bus(env, slug); Bus consumerBus = bus(env, slug)) {
            for (int w = 0; w < WEIGHTS.length; w++) {
                consumerBus.setFlowWeight(topic, "w" + w, WEIGHTS[w]);
            }
            List<Message> all = new ArrayList<>();
            for (int i = 0; i < each; i++) {
                for (int w = 0; w < WEIGHTS.length; w++) {
                    all.add(message("w" + w, 0));
                }
            }
            publish(publisherBus.publisher(), topic, all);
            List<Admission> admissions = admissions(consumerBus, topic, all.size(),
                    SubscribeOptions.builder().concurrency(CONCURRENCY).flowTopicCap(8));
            int[] counts = new int[WEIGHTS.length];
            for (Admission a : admissions) {
                int w = a.flowKey().charAt(1) - '0';
                if (++counts[w] == each) {
                    break; // one tenant ran out: the others are not competing with it any more
                }
            }
            double total = Arrays.stream(counts).sum();
            double weights = Arrays.stream(WEIGHTS).sum();
            double[] shares = new double[WEIGHTS.length];
            for (int w = 0; w < WEIGHTS.length; w++) {
                shares[w] = (counts[w] / total) / (WEIGHTS[w] / weights);
            }
            return new FlowScenario.Weights(shares[0], shares[1], shares[2]);
        } finally {
            env.admin.deleteMatching(env.prefix(slug) + "*");
        }
    }

    /** Subscribes with {@code options} and returns the first {@code n} admissions, in the order Redis let them in. */
    private static List<Admission> admissions(Bus bus, String topic, int n, SubscribeOptions.Builder options)
            throws TimeoutException {
        ConcurrentLinkedQueue<Admission> seen = new ConcurrentLinkedQueue<>();
        bus.subscribe(topic, "g", "c", d -> seen.add(new Admission(d.message().flowKey(), d.streamId())),
                options.build());
        await("the admissions", Math.max(60_000, n * 2L), () -> seen.size() >= n);
        List<Admission> sorted = new ArrayList<>(seen);
        sorted.sort((a, b) -> compareIds(a.streamId(), b.streamId()));
        return sorted;
    }

    private static int compareIds(String a, String b) {
        int da = a.indexOf('-');
        int db = b.indexOf('-');
        int c = Long.compare(Long.parseLong(a.substring(0, da)), Long.parseLong(b.substring(0, db)));
        return c != 0 ? c : Long.compare(Long.parseLong(a.substring(da + 1)), Long.parseLong(b.substring(db + 1)));
    }

    /** Jain's fairness index: 1 when all are equal, 1/n when one has everything. */
    static double jain(java.util.Collection<Integer> counts) {
        double sum = 0;
        double squares = 0;
        for (int c : counts) {
            sum += c;
            squares += (double) c * c;
        }
        return squares == 0 ? 1 : sum * sum / (counts.size() * squares);
    }

    private static double percentile(double[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }
}
