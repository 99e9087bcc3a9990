package dev.runbus.bench;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Message;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Scenario 13, opt-in (ten minutes): flow control's caps while workers die, at full scale (docs/flow-control.md,
 * guarantees 1 and 2; {@code FlowCapUnderKillsTest} is its short form in the test suite). Worker JVMs
 * ({@link FlowKillsChild}) with a cap per key and a cap for the topic run the messages of many keys, which a publisher
 * keeps backlogged, while the scenario SIGKILLs a random worker every {@link #KILL_EVERY_MILLIS} ms and SIGTERMs
 * another every {@link #TERM_EVERY_MILLIS} ms, starting a new one in each one's place. From the merged log of every
 * handler's start and end (a handler whose worker died before its end ran until the death): the most handlers of one
 * key, and in all, at any instant; the messages published, handled and lost; the dead letters; and, after each
 * SIGKILL, how long until every slot the victim held was free again: its hold reaped (or given back), or its message
 * started again by another worker, which then holds it.
 */
final class FlowKillsScenario {

    static final long KILL_EVERY_MILLIS = 5_000;
    static final long TERM_EVERY_MILLIS = 7_000;
    /** Backlog the publisher keeps waiting: every key always has messages to run. */
    private static final int BACKLOG = 3_000;
    private static final String TOPIC = "flow-kills";
    private static final String GROUP = "workers";

    record Result(int workers, int handlersEach, int keys, int keyCap, int topicCap, long minIdleMillis,
                  long claimIntervalMillis, long seconds, int sigkills, int sigterms, long published, long handled,
                  long lost, long deadLetters, int mostOfOneKey, int mostInAll, List<Double> recoverySeconds,
                  int recoveryUnfinished) implements java.io.Serializable {

        /** The bound a dead worker's slots come back within: {@code minIdle + claimInterval}, and a second. */
        double recoveryBoundSeconds() {
            return (minIdleMillis + claimIntervalMillis) / 1e3 + 1;
        }
    }

    /** A handler's start (+1) or end (-1) on a worker, µs on the machine's clock. */
    private record Event(long micros, int delta, String key, String messageId, String streamId, Worker worker) {
    }

    /** A worker JVM, its log's reader, and once dead, when it died (µs, taken after its death). */
    private static final class Worker {
        final String name;
        final Process process;
        final Thread reader;
        final AtomicBoolean ready = new AtomicBoolean();
        /** Message id → its start event, while its handler runs here. */
        final Map<String, Event> running = new ConcurrentHashMap<>();
        /**
         * The starts of the last handlers that ended here: an entry whose handler ended may still hold its slot (its
         * ack and release not answered yet) when the worker dies.
         */
        final java.util.concurrent.ConcurrentLinkedDeque<Event> recentlyEnded =
                new java.util.concurrent.ConcurrentLinkedDeque<>();
        volatile long diedAtMicros = Long.MAX_VALUE;
        /** How it died: "SIGKILL", "SIGTERM", or "end" (stopped after the run); null while it lives. */
        volatile String death;

        Worker(String name, Process process, List<Event> events, Map<String, List<Event>> startsById) {
            this.name = name;
            this.process = process;
            this.reader = new Thread(() -> read(events, startsById), "flow-kills-log-" + name);
            reader.setDaemon(true);
            reader.start();
        }

        private void read(List<Event> events, Map<String, List<Event>> startsById) {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    String[] f = line.split(" ");
                    if (!line.equals("READY") && !plausible(f[f.length - 1])) {
                        continue; // the last line of a worker SIGKILLed while printing it, cut short
                    }
                    if (f[0].equals("READY")) {
                        ready.set(true);
                    } else if (f[0].equals("S") && f.length == 5) {
                        Event e = new Event(Long.parseLong(f[4]), 1, f[1], f[2], f[3], this);
                        events.add(e);
                        running.put(f[2], e);
                        startsById.computeIfAbsent(f[2], k -> new CopyOnWriteArrayList<>()).add(e);
                    } else if (f[0].equals("E") && f.length == 4) {
                        events.add(new Event(Long.parseLong(f[3]), -1, f[1], f[2], null, this));
                        Event started = running.remove(f[2]);
                        if (started != null) {
                            recentlyEnded.addFirst(started);
                            while (recentlyEnded.size() > 256) {
                                recentlyEnded.pollLast();
                            }
                        }
                    }
                }
            } catch (Exception e) {
                // the worker died: its log ends here
            }
        }
    }

    private FlowKillsScenario() {
    }

    /**
     * Publishes the batch, again after a failure (the same messages: a message published twice runs twice, which the
     * scenario counts as handled, not lost).
     */
    private static void publishAll(Bus bus, List<Message> batch) {
        for (int attempt = 1; ; attempt++) {
            try {
                bus.publisher().publishAll(TOPIC, batch);
                return;
            } catch (RuntimeException e) {
                Progress.say("flow-kills: publishing %d messages failed (%s); again", batch.size(), e);
                if (attempt >= 10) {
                    throw e;
                }
                Env.sleep(500);
            }
        }
    }

    /** A time as the workers print it, µs since the epoch: 16 digits, within a day of now. */
    private static boolean plausible(String micros) {
        if (!micros.matches("\\d{16}")) {
            return false;
        }
        return Math.abs(Long.parseLong(micros) - micros()) < TimeUnit.DAYS.toMicros(1);
    }

    static Result run(Env env) throws Exception {
        boolean quick = env.options.quick();
        int workerCount = quick ? 4 : 8;
        int handlersEach = quick ? 16 : 32;
        int keys = 40;
        int keyCap = 3;
        int topicCap = quick ? 32 : 64;
        long minIdle = 3_000;
        long claimInterval = 1_500;
        long seconds = quick ? 60 : 600;
        String prefix = env.prefix("flow-kills");
        List<Event> events = java.util.Collections.synchronizedList(new ArrayList<>());
        Map<String, List<Event>> startsById = new ConcurrentHashMap<>();
        Set<String> published = ConcurrentHashMap.newKeySet();
        List<Worker> workers = new ArrayList<>();
        List<Worker> all = new ArrayList<>();
        List<Double> recovery = new CopyOnWriteArrayList<>();
        List<Thread> watchers = new ArrayList<>();
        int[] unfinished = {0};
        Random random = new Random(env.order.seed());
        String holds = prefix + ":{" + TOPIC + "}:flow:holds";
        String queue = prefix + ":{" + TOPIC + "}:flow:queue";
        int[] spawned = {0};
        java.util.function.Supplier<Worker> spawn = () -> {
            String name = "w" + (++spawned[0]);
            try {
                Process p = new ProcessBuilder(javaExecutable(), "-Xmx256m", "-cp", RecoveryScenario.classPath(),
                        FlowKillsChild.class.getName(), env.options.redisUri(), prefix, TOPIC, GROUP, name,
                        Long.toString(minIdle), Long.toString(claimInterval), Integer.toString(keyCap),
                        Integer.toString(topicCap), Integer.toString(handlersEach))
                        .redirectError(ProcessBuilder.Redirect.DISCARD).start();
                Worker w = new Worker(name, p, events, startsById);
                all.add(w);
                return w;
            } catch (Exception e) {
                throw new IllegalStateException("starting worker " + name, e);
            }
        };
        int sigkills = 0;
        int sigterms = 0;
        AtomicBoolean publishing = new AtomicBoolean(true);
        try (Bus bus = Bus.connect(BusConfig.builder(env.options.redisUri()).keyPrefix(prefix).build());
             StatefulRedisConnection<String, String> connection = env.admin.client().connect()) {
            RedisCommands<String, String> redis = connection.sync();
            for (int i = 0; i < workerCount; i++) {
                workers.add(spawn.get());
            }
            awaitReady(workers);
            Thread publisher = new Thread(() -> {
                int n = 0;
                while (publishing.get()) {
                    if (redis.zcard(queue) < BACKLOG) {
                        List<Message> batch = new ArrayList<>();
                        for (int i = 0; i < 1_000; i++, n++) {
                            Message m = Message.builder("job", new byte[0]).flowKey("k" + (n % keys)).build();
                            batch.add(m);
                            published.add(m.id());
                        }
                        publishAll(bus, batch);
                    }
                    Env.sleep(100);
                }
            }, "flow-kills-publisher");
            publisher.setDaemon(true);
            publisher.start();
            long start = System.nanoTime();
            long end = start + TimeUnit.SECONDS.toNanos(seconds);
            long nextKill = start + TimeUnit.MILLISECONDS.toNanos(KILL_EVERY_MILLIS);
            long nextTerm = start + TimeUnit.MILLISECONDS.toNanos(TERM_EVERY_MILLIS);
            long lastSaid = start;
            while (System.nanoTime() < end) {
                long now = System.nanoTime();
                if (now >= nextKill) {
                    Worker victim = workers.remove(random.nextInt(workers.size()));
                    long killedAt = System.nanoTime();
                    victim.process.toHandle().destroyForcibly(); // not Process's: it would close the pipes too
                    victim.process.waitFor(10, TimeUnit.SECONDS);
                    victim.diedAtMicros = micros(); // its handlers ran until here at the latest
                    victim.death = "SIGKILL";
                    victim.reader.join(5_000); // its log read to the end: what ran there at its death
                    List<Event> holding = new ArrayList<>(victim.running.values());
                    for (Event e : victim.recentlyEnded) { // ended, but its slot not given back yet
                        if (redis.zscore(holds, e.key() + "\0" + e.streamId()) != null) {
                            holding.add(e);
                        }
                    }
                    sigkills++;
                    watchers.add(watchRecovery(victim, holding, killedAt, redis, holds, startsById, recovery,
                            unfinished));
                    workers.add(spawn.get());
                    nextKill += TimeUnit.MILLISECONDS.toNanos(KILL_EVERY_MILLIS);
                }
                if (now >= nextTerm) {
                    Worker victim = workers.remove(random.nextInt(workers.size()));
                    // SIGTERM: its handlers finish within its shutdown timeout. Signalled through its handle:
                    // Process.destroy also closes the pipes, and what it prints while it stops would be lost.
                    victim.process.toHandle().destroy();
                    if (!victim.process.waitFor(10, TimeUnit.SECONDS)) {
                        victim.process.toHandle().destroyForcibly();
                        victim.process.waitFor(10, TimeUnit.SECONDS);
                    }
                    victim.diedAtMicros = micros();
                    victim.death = "SIGTERM";
                    sigterms++;
                    workers.add(spawn.get());
                    nextTerm += TimeUnit.MILLISECONDS.toNanos(TERM_EVERY_MILLIS);
                }
                if (now - lastSaid > TimeUnit.SECONDS.toNanos(30)) {
                    lastSaid = now;
                    Progress.say("flow-kills: %d s of %d, %d SIGKILLs and %d SIGTERMs, %,d published, %,d handler"
                            + " starts", TimeUnit.NANOSECONDS.toSeconds(now - start), seconds, sigkills, sigterms,
                            published.size(), startsById.size());
                }
                Env.sleep(20);
            }
            publishing.set(false);
            publisher.join(30_000);
            // The kills are over: the workers left run what waits, so that every message published is accounted for.
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
            while (System.nanoTime() < deadline && handledCount(events, published) < published.size()) {
                Env.sleep(200);
            }
            for (Thread t : watchers) {
                t.join(60_000);
            }
            long deadLetters = redis.xlen(prefix + ":{" + TOPIC + "}:dead");
            for (Worker w : workers) {
                w.process.toHandle().destroy();
            }
            for (Worker w : workers) {
                w.process.waitFor(10, TimeUnit.SECONDS);
                w.diedAtMicros = micros();
                w.death = "end";
            }
            for (Worker w : all) {
                w.reader.join(5_000);
            }
            long handled = handledCount(events, published);
            if (handled < published.size()) {
                diagnose(redis, prefix, events, published, startsById);
            }
            int[] most = mostAtOnce(events);
            Result r = new Result(workerCount, handlersEach, keys, keyCap, topicCap, minIdle, claimInterval, seconds,
                    sigkills, sigterms, published.size(), handled, published.size() - handled, deadLetters, most[0],
                    most[1], List.copyOf(recovery), unfinished[0]);
            Progress.say("flow-kills: %d workers × %d handlers, %d s, %d SIGKILLs, %d SIGTERMs: at most %d of a key"
                    + " (cap %d) and %d in all (cap %d) at once; %,d published, %,d lost, %d dead letters; slots back"
                    + " after a SIGKILL p50 %.2f s, p99 %.2f s (bound %.1f s)", workerCount, handlersEach, seconds,
                    sigkills, sigterms, most[0], keyCap, most[1], topicCap, r.published(), r.lost(), deadLetters,
                    percentile(recovery, 50), percentile(recovery, 99), r.recoveryBoundSeconds());
            return r;
        } finally {
            publishing.set(false);
            for (Worker w : all) {
                w.process.destroyForcibly();
            }
            env.admin.deleteMatching(prefix + ":*");
        }
    }

    /**
     * After a SIGKILL, waits (on a thread of its own, the kills going on) until every slot the victim held is free:
     * its hold gone from the topic's holds, or its message started again by another worker since the kill; records
     * how long that took from the kill, or counts it unfinished after a minute.
     */
    private static Thread watchRecovery(Worker victim, List<Event> holding, long killedAt,
                                        RedisCommands<String, String> shared, String holds,
                                        Map<String, List<Event>> startsById, List<Double> recovery,
                                        int[] unfinished) {
        long killedAtMicros = micros();
        Thread t = new Thread(() -> {
            Set<Event> left = new HashSet<>(holding);
            long deadline = killedAt + TimeUnit.MINUTES.toNanos(1);
            while (!left.isEmpty() && System.nanoTime() < deadline) {
                left.removeIf(e -> startedElsewhere(e, victim, killedAtMicros, startsById)
                        || shared.zscore(holds, e.key() + "\0" + e.streamId()) == null);
                if (!left.isEmpty()) {
                    Env.sleep(20);
                }
            }
            if (left.isEmpty()) {
                recovery.add((System.nanoTime() - killedAt) / 1e9);
            } else {
                synchronized (unfinished) {
                    unfinished[0]++;
                }
            }
        }, "flow-kills-recovery-" + victim.name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static boolean startedElsewhere(Event e, Worker victim, long sinceMicros,
                                            Map<String, List<Event>> startsById) {
        List<Event> starts = startsById.getOrDefault(e.messageId(), List.of());
        return starts.stream().anyMatch(s -> s.worker() != victim && s.micros() >= sinceMicros);
    }

    /** Says where the messages that never ended are: never started, or started on which workers, and Redis's state. */
    private static void diagnose(RedisCommands<String, String> redis, String prefix, List<Event> events,
                                 Set<String> published, Map<String, List<Event>> startsById) {
        Set<String> ended = new HashSet<>();
        synchronized (events) {
            events.stream().filter(e -> e.delta() < 0).forEach(e -> ended.add(e.messageId()));
        }
        List<String> lost = published.stream().filter(id -> !ended.contains(id)).toList();
        long neverStarted = lost.stream().filter(id -> !startsById.containsKey(id)).count();
        String base = prefix + ":{" + TOPIC + "}:";
        Progress.say("flow-kills: %d messages never ended: %d never started; Redis: %d waiting, %d ready keys, %d"
                        + " holds, %d in later, stream %d entries, %d pending", lost.size(), neverStarted,
                redis.zcard(base + "flow:queue"), redis.zcard(base + "flow:ready"), redis.zcard(base + "flow:holds"),
                redis.zcard(base + "flow:later"), redis.xlen(base + "stream"),
                redis.xpending(base + "stream", GROUP).getCount());
        Progress.say("  group: %s", redis.xinfoGroups(base + "stream"));
        Map<String, String> streamIdOf = new HashMap<>();
        String from = "-";
        while (true) {
            List<io.lettuce.core.StreamMessage<String, String>> page = redis.xrange(base + "stream",
                    io.lettuce.core.Range.create(from, "+"), io.lettuce.core.Limit.create(0, 1000));
            page.forEach(m -> streamIdOf.put(m.getBody().get("id"), m.getId()));
            if (page.size() < 1000) {
                break;
            }
            String last = page.get(page.size() - 1).getId();
            from = "(" + last;
        }
        lost.stream().limit(8).forEach(id -> Progress.say("  %s: stream id %s, fields %s", id, streamIdOf.get(id),
                streamIdOf.get(id) == null ? "-" : redis.xrange(base + "stream", io.lettuce.core.Range.create(
                        streamIdOf.get(id), streamIdOf.get(id))).get(0).getBody().keySet()));
        lost.stream().filter(startsById::containsKey).limit(5).forEach(id -> Progress.say("  %s started on %s", id,
                startsById.get(id).stream().map(e -> e.worker().name + " (" + e.worker().death + " "
                        + (e.worker().diedAtMicros - e.micros()) / 1000 + " ms after the start)").toList()));
        lost.stream().filter(id -> !startsById.containsKey(id)).limit(3).forEach(id -> Progress.say(
                "  %s never started", id));
    }

    /** Published messages whose handler ended at least once. */
    private static long handledCount(List<Event> events, Set<String> published) {
        Set<String> ended = new HashSet<>();
        List<Event> copy;
        synchronized (events) {
            copy = new ArrayList<>(events);
        }
        for (Event e : copy) {
            if (e.delta() < 0) {
                ended.add(e.messageId());
            }
        }
        ended.retainAll(published);
        return ended.size();
    }

    /**
     * The most handlers of one key, and in all, at any instant of the merged log: each start counts until its end on
     * the same worker, or until the worker's death; at one instant, ends count before starts.
     */
    private static int[] mostAtOnce(List<Event> events) {
        List<Event> timeline = new ArrayList<>();
        Map<Worker, Map<String, ArrayDeque<Event>>> open = new HashMap<>();
        List<Event> sorted;
        synchronized (events) {
            sorted = new ArrayList<>(events);
        }
        sorted.sort(Comparator.comparingLong(Event::micros));
        for (Event e : sorted) {
            Map<String, ArrayDeque<Event>> mine = open.computeIfAbsent(e.worker(), w -> new HashMap<>());
            if (e.delta() > 0) {
                mine.computeIfAbsent(e.messageId(), id -> new ArrayDeque<>()).add(e);
                timeline.add(e);
            } else {
                ArrayDeque<Event> starts = mine.get(e.messageId());
                if (starts != null && !starts.isEmpty()) {
                    starts.poll();
                    timeline.add(e);
                }
            }
        }
        // A start without its end ran until its worker died.
        open.forEach((w, mine) -> mine.forEach((id, starts) -> starts.forEach(s ->
                timeline.add(new Event(w.diedAtMicros, -1, s.key(), id, null, w)))));
        timeline.sort(Comparator.comparingLong(Event::micros).thenComparingInt(Event::delta));
        Map<String, Integer> perKey = new HashMap<>();
        int total = 0;
        int mostKey = 0;
        int mostAll = 0;
        Map<Worker, Integer> perWorker = new HashMap<>();
        String peak = "";
        for (Event e : timeline) {
            int n = perKey.merge(e.key(), e.delta(), Integer::sum);
            perWorker.merge(e.worker(), e.delta(), Integer::sum);
            total += e.delta();
            mostKey = Math.max(mostKey, n);
            if (total > mostAll) {
                mostAll = total;
                long at = e.micros();
                StringBuilder b = new StringBuilder();
                perWorker.forEach((w, k) -> {
                    if (k > 0) {
                        b.append(w.name).append('=').append(k).append(w.diedAtMicros < Long.MAX_VALUE
                                ? " (died " + (w.diedAtMicros - at) / 1000 + " ms later)" : "").append(", ");
                    }
                });
                peak = b.toString();
            }
        }
        Progress.say("flow-kills: the most handlers at once, %d, by worker: %s", mostAll, peak);
        return new int[] {mostKey, mostAll};
    }

    static double percentile(List<Double> values, double p) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(null);
        int i = (int) Math.ceil(p / 100 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
    }

    private static void awaitReady(List<Worker> workers) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!workers.stream().allMatch(w -> w.ready.get())) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("workers not ready within 60 s");
            }
            Env.sleep(20);
        }
    }

    /** The machine's clock in µs, as the workers print it. */
    private static long micros() {
        return ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    }

    private static String javaExecutable() {
        return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }
}
