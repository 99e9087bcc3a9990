package dev.runbus.bench;

import dev.runbus.Bus;
import dev.runbus.Message;
import dev.runbus.RetryPolicy;
import dev.runbus.SubscribeOptions;
import dev.runbus.Subscription;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.LongSupplier;

/**
 * What Redis holds per message, measured on a real server through the bus itself: a stream entry (three payload
 * sizes), a scheduled entry, a pending entry and a dead letter. Each figure is the growth over {@code n} messages,
 * divided by {@code n}, read two ways: {@code MEMORY USAGE … SAMPLES 0} of the keys that hold them, and the
 * server's {@code used_memory} (what the allocator gave out, the figure to size a server by; it also counts the
 * rest of the server, so it is read on a quiet one).
 */
final class RedisSizing {

    /**
     * One measured figure: bytes per message, by the keys' MEMORY USAGE and by the server's used_memory, the median
     * of {@link #REPEATS} measurements, with the least and the most used_memory measured.
     */
    record Row(String what, int messages, double keyBytes, double serverBytes, double serverMin, double serverMax) {

        Row(String what, int messages, double keyBytes, double serverBytes) {
            this(what, messages, keyBytes, serverBytes, serverBytes, serverBytes);
        }

        /** The medians of measurements of one thing. */
        static Row median(List<Row> rows) {
            List<Double> keys = rows.stream().map(Row::keyBytes).sorted().toList();
            List<Double> server = rows.stream().map(Row::serverBytes).sorted().toList();
            return new Row(rows.get(0).what(), rows.get(0).messages(), keys.get(keys.size() / 2),
                    server.get(server.size() / 2), server.get(0), server.get(server.size() - 1));
        }
    }

    /** Measurements of each figure, on topics of their own; the median is reported (another client may write). */
    static final int REPEATS = 3;

    static final String GROUP = "sizing";
    static final Duration WAIT = Duration.ofMinutes(5);

    private final Bus bus;
    private final RedisAdmin admin;
    private final String prefix;
    private final Random random = new Random(42);

    RedisSizing(Bus bus, RedisAdmin admin, String prefix) {
        this.bus = bus;
        this.admin = admin;
        this.prefix = prefix;
    }

    List<Row> measure(int n) throws Exception {
        List<List<Row>> rounds = new ArrayList<>();
        for (int r = 1; r <= REPEATS; r++) {
            Progress.say("Redis: measurement %d of %d", r, REPEATS);
            List<Row> rows = new ArrayList<>();
            rows.add(streamEntries("entries-100-" + r, 100, n));
            rows.add(streamEntries("entries-1k-" + r, 1024, n));
            rows.add(streamEntries("entries-10k-" + r, 10 * 1024, n / 5));
            rows.add(scheduled("scheduled-100-" + r, 100, n));
            rows.add(scheduled("scheduled-1k-" + r, 1024, n));
            rows.add(pending("pending-" + r, n));
            rows.addAll(deadLetters("dead-" + r, n));
            rounds.add(rows);
        }
        return medians(rounds);
    }

    /** Row by row, the median of the rounds. */
    static List<Row> medians(List<List<Row>> rounds) {
        List<Row> out = new ArrayList<>();
        for (int i = 0; i < rounds.get(0).size(); i++) {
            int row = i;
            out.add(Row.median(rounds.stream().map(r -> r.get(row)).toList()));
        }
        return out;
    }

    /** Published messages of {@code size} payload bytes, in batches of 500, waiting in the stream. */
    private Row streamEntries(String topic, int size, int n) throws Exception {
        Progress.say("  %,d stream entries with %,d-byte payloads", n, size);
        return measure("stream entry, " + size(size) + " payload", n,
                () -> admin.memoryUsage(stream(topic)), () -> publish(topic, size, n));
    }

    /** Messages published with a delay of an hour: a member of the delay set and the entry's fields beside it. */
    private Row scheduled(String topic, int size, int n) throws Exception {
        Progress.say("  %,d scheduled entries with %,d-byte payloads", n, size);
        return measure("scheduled entry (delayed publish or retry), " + size(size) + " payload", n,
                () -> admin.memoryUsage(key(topic, "delayed")) + admin.memoryUsage(key(topic, "delayed:entries")),
                () -> {
                    for (int i = 0; i < n; i++) {
                        bus.publisher().publish(topic, message(size), Duration.ofHours(1));
                    }
                });
    }

    /**
     * Entries delivered and not acknowledged: a handler that fails, with {@link RetryPolicy#onIdle()} and a
     * {@code minIdle} of an hour, leaves each one pending in the group (and its start record, a field of the
     * group's starts hash, beside it); the subscription is closed before anything takes them over. The entries
     * themselves were published before the first reading, so the figure is the pending entry alone.
     */
    private Row pending(String topic, int n) throws Exception {
        publish(topic, 100, n);
        Progress.say("  %,d pending entries", n);
        return measure("pending entry (delivered, not acknowledged), beside its stream entry", n,
                () -> admin.memoryUsage(stream(topic)) + admin.memoryUsage(key(topic, "starts:" + GROUP)),
                () -> {
                    try (Subscription s = bus.subscribe(topic, GROUP, "c1", d -> {
                        throw new IllegalStateException("held for the measurement");
                    }, SubscribeOptions.builder().retryPolicy(RetryPolicy.onIdle()).maxDeliveries(1000)
                            .minIdle(Duration.ofHours(1)).concurrency(16).build())) {
                        waitFor("pending entries", () -> pendingOf(topic) == n);
                    }
                });
    }

    /**
     * Dead letters: a handler that fails with {@code maxDeliveries} 1, the reason
     * {@code java.lang.IllegalStateException: handler failed} (47 characters; a reason is at most 1000). Two rows:
     * the dead-letter stream entry, and the record each move keeps for 10 minutes (so that a move sent again
     * answers as the first did), read by deleting the records after the moves.
     */
    private List<Row> deadLetters(String topic, int n) throws Exception {
        publish(topic, 100, n);
        Progress.say("  %,d dead letters", n);
        String records = key(topic, "dead:call:*");
        long keys0 = admin.memoryUsage(key(topic, "dead"));
        long server0 = admin.settledUsedMemory();
        try (Subscription s = bus.subscribe(topic, GROUP, "c1", d -> {
            throw new IllegalStateException("handler failed");
        }, SubscribeOptions.builder().maxDeliveries(1).concurrency(16).build())) {
            waitFor("dead letters", () -> bus.deadLetters().count(topic) == n);
        }
        long keys1 = admin.memoryUsage(key(topic, "dead"));
        long recordKeys = admin.memoryUsageMatching(records);
        long server1 = admin.settledUsedMemory();
        admin.deleteMatching(records);
        long server2 = admin.settledUsedMemory();
        return List.of(
                new Row("dead letter (dead-letter stream entry, 100 B payload), beside its stream entry", n,
                        (keys1 - keys0) / (double) n, (server2 - server0) / (double) n),
                new Row("record of a dead-letter move (expires after 10 minutes)", n, recordKeys / (double) n,
                        (server1 - server2) / (double) n));
    }

    private Row measure(String what, int n, LongSupplier keys, Step step) throws Exception {
        long keys0 = keys.getAsLong();
        long server0 = admin.settledUsedMemory();
        step.run();
        long keys1 = keys.getAsLong();
        long server1 = admin.settledUsedMemory();
        return new Row(what, n, (keys1 - keys0) / (double) n, (server1 - server0) / (double) n);
    }

    private void publish(String topic, int size, int n) {
        List<Message> batch = new ArrayList<>(500);
        for (int i = 0; i < n; i++) {
            batch.add(message(size));
            if (batch.size() == 500 || i == n - 1) {
                bus.publisher().publishAll(topic, batch);
                batch.clear();
            }
        }
    }

    /** A message as an application publishes one: a type, a random UUID as its id, printable random bytes. */
    private Message message(int size) {
        byte[] payload = new byte[size];
        for (int i = 0; i < size; i++) {
            payload[i] = (byte) ('!' + random.nextInt(94));
        }
        return Message.builder("order.created", payload).build();
    }

    /** 100 B, 1 KiB, 10 KiB. */
    static String size(int bytes) {
        return bytes % 1024 == 0 ? bytes / 1024 + " KiB" : bytes + " B";
    }

    private long pendingOf(String topic) {
        return bus.inspector().groups(topic).stream().filter(g -> g.name().equals(GROUP))
                .mapToLong(g -> g.pending()).sum();
    }

    private String stream(String topic) {
        return key(topic, "stream");
    }

    private String key(String topic, String what) {
        return prefix + ":{" + topic + "}:" + what;
    }

    static void waitFor(String what, java.util.function.BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("gave up waiting for the " + what + " after " + WAIT);
            }
            Thread.sleep(100);
        }
    }

    @FunctionalInterface
    interface Step {
        void run() throws Exception;
    }
}
