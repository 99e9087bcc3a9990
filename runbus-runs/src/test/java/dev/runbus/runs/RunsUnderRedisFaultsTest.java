package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.RetryPolicy;
import dev.runbus.SubscribeOptions;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.RedisFaultPlan;
import dev.runbus.testkit.RedisFaultPlan.Fault;
import dev.runbus.testkit.RedisServerProcess;
import dev.runbus.testkit.TcpProxy;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Range;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The runs layer's counterpart of {@code RedisFaultsPropertyTest} (issue 20, "a Redis-side fault suite … for the
 * runs layer"): the same seeded faults on a Redis of the test's own — stalls ({@code CLIENT PAUSE}), a wire that
 * holds everything, replies lost with their connection (Lettuce re-sends what was unanswered, so commands run
 * twice) and a script cache flushed under it — spread over the submissions of runs, unordered and in per-user
 * order. Two workers and the submitter reach Redis through the faulty wire; PostgreSQL is not faulted, so it must
 * end with the truth: every submitted run done exactly once in effect (one set of replies), within its attempt
 * budget, per user in submission order when ordered, nothing left pending in PostgreSQL or in the group, soon after
 * the last fault. What Redis loses (a trigger whose publish timed out, an ack, a delivery) the sweeper converges.
 * {@code -Drunbus.faults.seeds=N} runs seeds 1 to N, {@code -Drunbus.faults.seed=K} seed K, each in both modes.
 *
 * <p>The cases run side by side: each has a Redis, a schema, a key prefix and a connection pool of its own, and
 * its time is the faults' span, not CPU.
 */
@Execution(ExecutionMode.CONCURRENT)
class RunsUnderRedisFaultsTest extends RunsTestSupport {

    private static final String TOPIC = RunsConfig.DEFAULT_TOPIC;
    private static final String GROUP = RunsConfig.DEFAULT_GROUP;
    private static final int PARTITIONS = 4;
    private static final int USERS = 8;
    private static final int RUNS_PER_USER = 10;
    private static final int SUBMITTERS = 4;
    private static final int MAX_DELIVERIES = 3;
    private static final Duration LEASE = Duration.ofSeconds(2);
    /** The bus's command timeout through the faulty wire: short, so that a held wire is an error, not a wait. */
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(1);
    /** Lease + 2 s for progress to resume (the bound), and room to drain what piled up and to sweep. */
    private static final Duration CONVERGE = Duration.ofSeconds(30);
    /** The submissions spread over the faults' span (a few seconds) and the faults themselves, each retried. */
    private static final Duration SUBMISSIONS = Duration.ofSeconds(60);

    private RedisServerProcess server;
    private RedisClient direct;
    private StatefulRedisConnection<String, String> connection;
    /** The case's own: the cases beside it do not wait for the test JVM's shared pool of 16. */
    private HikariDataSource pool;

    /**
     * Three seeds in each mode unless a property names others; see {@link #seeds}. Seed 4 lost replies long enough
     * for an unordered group that counted the PEL's deliveries to end runs failed after one attempt.
     */
    static Stream<Arguments> seedsAndModes() {
        return seeds(1L, 2L, 4L).flatMap(seed -> Stream.of(Arguments.of(seed, false), Arguments.of(seed, true)));
    }

    /** Seeds 1 to {@code runbus.faults.seeds}, or the one seed {@code runbus.faults.seed}, else {@code defaults}. */
    static Stream<Long> seeds(Long... defaults) {
        Long n = Long.getLong("runbus.faults.seeds");
        Long one = Long.getLong("runbus.faults.seed");
        return n != null ? LongStream.rangeClosed(1, n).boxed() : one != null ? Stream.of(one) : Stream.of(defaults);
    }

    @BeforeEach
    void startServer() {
        server = RedisServerProcess.start(); // its own: the faults pause it and flush its scripts
        direct = RedisClient.create(server.uri());
        connection = direct.connect();
        pool = TestDatabase.newPool("faults-" + prefix, 8);
        closeables.add(pool); // the first closeable, so closed after the Runs that use it
    }

    @Override
    protected DataSource runsDataSource() {
        return pool;
    }

    @AfterEach
    void stopServer() {
        connection.close();
        direct.shutdown();
        server.close();
    }

    /** One handler call: which run (its user, its index in the user's submissions), when it started and ended. */
    private record HandlerCall(UUID runId, String userId, int index, long startedNanos, long endedNanos) {
    }

    /** Inputs are {@code <user>/<index>[/flaky]}; flaky ones fail their first attempt, so a retry crosses faults. */
    private static final class Recorder implements RunHandler {
        final List<HandlerCall> executions = new CopyOnWriteArrayList<>();
        final Map<UUID, AtomicInteger> perRun = new ConcurrentHashMap<>();

        @Override
        public List<Reply> execute(RunContext run) throws Exception {
            long started = System.nanoTime();
            perRun.computeIfAbsent(run.runId(), k -> new AtomicInteger()).incrementAndGet();
            String[] parts = run.input().split("/");
            try {
                if (parts.length > 2 && parts[2].equals("flaky") && run.attempt() == 1) {
                    throw new IllegalStateException("flaky input fails its first attempt");
                }
                return ECHO.execute(run);
            } finally {
                executions.add(new HandlerCall(run.runId(), run.userId(), Integer.parseInt(parts[1]), started,
                        System.nanoTime()));
            }
        }
    }

    @ParameterizedTest(name = "seed {0}, ordered {1}")
    @MethodSource("seedsAndModes")
    // Only a ceiling for a case that hangs: above the waits inside at their most stretched (the submissions and the
    // faults 4 × 60 s, convergence 4 × 30 s, the group 4 × 15 s), so that a case that fails reports its own wait or
    // assertion, not this timeout (which abandons the case's thread and with it the case's own failure).
    @Timeout(value = 8, unit = TimeUnit.MINUTES)
    void everyRunEndsDoneOnce_inOrderPerUserWhenAsked_underRedisSideFaults(long seed, boolean ordered)
            throws Exception {
        SplittableRandom random = new SplittableRandom(seed);
        List<Fault> faults = RedisFaultPlan.plan(random, false);
        String mode = ordered ? "ordered" : "unordered";
        int total = USERS * RUNS_PER_USER;
        RedisCommands<String, String> redis = connection.sync();
        Recorder handler = new Recorder();
        Map<String, UUID> submitted = new ConcurrentHashMap<>(); // idempotency key -> the run its submit returned
        Map<String, Boolean> flaky = new ConcurrentHashMap<>();
        AtomicInteger submitErrors = new AtomicInteger();
        long started = System.nanoTime();
        try (TcpProxy proxy = TcpProxy.start("127.0.0.1", server.port())) {
            // Two workers, each with a sweeper (one sweeps at a time), and the submitter: all through the wire.
            for (String consumer : List.of("w1", "w2")) {
                Runs worker = runs(busThrough(proxy, ordered), config(consumer, ordered));
                worker.startWorker(handler);
                worker.startSweeper();
            }
            Runs submitter = runs(busThrough(proxy, ordered), config("submitter", ordered));

            Thread faulting = new Thread(() -> RedisFaultPlan.apply(faults, proxy, direct), "faults-seed-" + seed);
            long faultsStarted = System.nanoTime(); // the plan's times and the submissions' pace count from here
            faulting.start();
            long spanMillis = RedisFaultPlan.span(faults);
            AtomicReference<Throwable> submitFailure = new AtomicReference<>();
            List<Thread> submitters = new ArrayList<>();
            for (int s = 0; s < SUBMITTERS; s++) {
                int first = s;
                // Each user belongs to one submitter, which submits its runs one after another: that is the
                // submission order the ordered mode must keep.
                Thread t = new Thread(() -> {
                    try {
                        for (int k = 1; k <= RUNS_PER_USER; k++) {
                            for (int u = first; u < USERS; u += SUBMITTERS) {
                                String user = "user-" + u;
                                boolean isFlaky = (u + k) % 4 == 1;
                                String key = "seed" + seed + "-" + mode + "-" + user + "-" + k;
                                NewRun run = new NewRun("s-" + u, user, user + "/" + k + (isFlaky ? "/flaky" : ""),
                                        key);
                                flaky.put(key, isFlaky);
                                submitted.put(key, submitWithRetries(submitter, run, submitErrors));
                            }
                            long due = faultsStarted + TimeUnit.MILLISECONDS.toNanos(spanMillis * k / RUNS_PER_USER);
                            long ahead = TimeUnit.NANOSECONDS.toMillis(due - System.nanoTime());
                            if (ahead > 0) {
                                Thread.sleep(ahead); // spreads the submissions over the faults: a pace
                            }
                        }
                    } catch (Throwable e) {
                        submitFailure.set(e);
                    }
                }, "submitter-" + s);
                t.start();
                submitters.add(t);
            }
            long joinDeadline = System.nanoTime() + Wait.scaled(SUBMISSIONS).toNanos();
            for (Thread t : submitters) {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(joinDeadline - System.nanoTime())));
            }
            faulting.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(joinDeadline - System.nanoTime())));
            assertThat(submitFailure.get()).as("seed %d %s: a submission that never went through", seed, mode)
                    .isNull();
            assertThat(submitters.stream().filter(Thread::isAlive).map(Thread::getName).toList())
                    .as("seed %d %s: submitters still submitting after %s", seed, mode, Wait.scaled(SUBMISSIONS))
                    .isEmpty();
            assertThat(faulting.isAlive()).as("seed %d %s: the faults still applied", seed, mode).isFalse();
            long faultsEnded = System.nanoTime(); // the last fault over and the last submission returned

            // Every submission that returned is accounted for: one run per idempotency key, all in PostgreSQL.
            assertThat(submitted).as("submissions that returned").hasSize(total);
            assertThat(submitted.values().stream().distinct().count()).as("distinct runs").isEqualTo(total);
            assertThat(count("SELECT count(*) FROM %s.runs")).as("rows in runs").isEqualTo(total);

            Wait.until("seed " + seed + " " + mode + ": every run finished", CONVERGE,
                    () -> count("SELECT count(*) FROM %s.runs WHERE status IN ('done', 'failed')") == total);
            long convergedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - faultsEnded);

            Map<UUID, Object[]> rows = runRows(); // id -> {status, attempts, user_id, idempotency_key}
            List<String> streams = streams(ordered);
            // No handler fails more than once, so no trigger may be dead-lettered (docs/architecture.md, rule 13: a delivery
            // counts when a handler starts on it). Listed with its run and that run's handler calls, to tell a
            // delivery count the faults ran up from one the handlers spent.
            for (String s : streams) {
                String dead = s.substring(0, s.length() - ":stream".length()) + ":dead";
                List<String> letters = new ArrayList<>();
                for (var letter : redis.xrange(dead, Range.create("-", "+"))) {
                    Map<String, String> f = letter.getBody();
                    UUID run = submitted.values().stream().filter(id -> id.toString().equals(f.get("id")))
                            .findFirst().orElse(null);
                    letters.add(f.get("dl:stream_id") + " (" + f.get("dl:deliveries") + " deliveries, reason '"
                            + f.get("dl:reason") + "') of run " + f.get("id") + " " + (run == null ? "?"
                            : Arrays.toString(rows.get(run)) + ", handler calls "
                            + handler.perRun.getOrDefault(run, new AtomicInteger()).get()));
                }
                assertThat(letters).as("seed %d %s: dead letters on %s", seed, mode, dead).isEmpty();
            }
            for (Map.Entry<String, UUID> e : submitted.entrySet()) {
                Object[] row = rows.get(e.getValue());
                assertThat(row).as("seed %d %s: the run of %s", seed, mode, e.getKey()).isNotNull();
                assertThat(row[3]).as("its idempotency key").isEqualTo(e.getKey());
                // No input fails always: a run failed by the faults is a finding.
                assertThat(row[0]).as("seed %d %s: status of %s", seed, mode, e.getKey()).isEqualTo("done");
                int attempts = (Integer) row[1];
                assertThat(attempts).as("seed %d %s: attempts of %s", seed, mode, e.getKey())
                        .isBetween(flaky.get(e.getKey()) ? 2 : 1, MAX_DELIVERIES);
                int calls = handler.perRun.getOrDefault(e.getValue(), new AtomicInteger()).get();
                // Every handler call started an attempt counted in PostgreSQL first.
                assertThat(calls).as("seed %d %s: handler calls of %s", seed, mode, e.getKey())
                        .isBetween(flaky.get(e.getKey()) ? 2 : 1, attempts);
            }
            // Exactly one set of replies per run, by SQL: two rows, numbered 1 and 2, naming the run's input.
            assertThat(count("SELECT count(*) FROM %s.messages")).as("seed %d %s: reply rows", seed, mode)
                    .isEqualTo(2L * total);
            assertThat(count("SELECT count(*) FROM %s.runs r WHERE (SELECT count(*) FROM %s.messages m"
                    + " WHERE m.run_id = r.id AND ((m.seq = 1 AND m.content = 'echo:' || r.input)"
                    + " OR (m.seq = 2 AND m.content = 'done:' || r.input))) <> 2"))
                    .as("seed %d %s: runs without exactly their one set of replies", seed, mode).isZero();
            assertThat(count("SELECT count(*) FROM %s.runs WHERE status IN ('pending', 'running')"
                    + " OR next_attempt_at IS NOT NULL")).as("unfinished runs").isZero();
            if (ordered) {
                assertThat(orderViolations(schema)).as("seed %d: runs started before an earlier run of their user"
                        + " finished (PostgreSQL's timestamps)", seed).isZero();
                assertHandlerCallsInSubmissionOrderPerUser(seed, handler);
            }

            Wait.until("seed " + seed + " " + mode + ": nothing pending in the group", Duration.ofSeconds(15),
                    () -> streams.stream().allMatch(s -> redis.xpending(s, GROUP).getCount() == 0));
            long republished = count("SELECT coalesce(sum(republished), 0) FROM %s.runs");
            System.out.printf("seed %d %s: faults %s; %d runs (%d submit errors retried, %d republished by the"
                            + " sweeper, %d handler calls) all done %d ms after the last fault, %d ms in all%n",
                    seed, mode, faults, total, submitErrors.get(), republished, handler.executions.size(),
                    convergedMillis, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
            closeAll(); // while the wire is still there: closing acks and leaves the group cleanly
        } finally {
            // When the try's proxy was closed already, the buses close without their wire. The keys go with the
            // case's own Redis (stopServer), so nothing here waits on a server the faults may still be holding.
            closeAll();
        }
    }

    /**
     * Closes the workers, the submitter and their buses, newest first, before their keys are deleted; the case's pool
     * last.
     */
    private void closeAll() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        closeables.clear();
    }

    /**
     * A client retries a submission that failed with the same idempotency key: if the first one was committed,
     * the retry returns that run and publishes nothing.
     */
    private static UUID submitWithRetries(Runs runs, NewRun run, AtomicInteger errors) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                return runs.submit(run).runId();
            } catch (RuntimeException e) {
                errors.incrementAndGet();
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(100); // a client's pause before it retries
            }
        }
    }

    /**
     * Per user, the handler calls in the order they started name runs in submission order: an earlier run never
     * starts after a later one did (a repeat of one run right after itself is the flaky run's retry, or a
     * duplicate delivery that PostgreSQL absorbs).
     */
    private static void assertHandlerCallsInSubmissionOrderPerUser(long seed, Recorder handler) {
        Map<String, List<HandlerCall>> byUser = new HashMap<>();
        for (HandlerCall e : handler.executions) {
            byUser.computeIfAbsent(e.userId(), u -> new ArrayList<>()).add(e);
        }
        assertThat(byUser).hasSize(USERS);
        byUser.forEach((user, calls) -> {
            calls.sort(Comparator.comparingLong(HandlerCall::startedNanos));
            List<Integer> order = calls.stream().map(HandlerCall::index).toList();
            for (int i = 1; i < order.size(); i++) {
                assertThat(order.get(i)).as("seed %d: %s's handler calls by start time: %s", seed, user, order)
                        .isGreaterThanOrEqualTo(order.get(i - 1));
            }
            assertThat(order.stream().distinct().count()).as("%s's runs called", user).isEqualTo(RUNS_PER_USER);
        });
    }

    private Bus busThrough(TcpProxy proxy, boolean ordered) {
        BusConfig.Builder b = BusConfig.builder(proxy.uri()).keyPrefix(prefix).commandTimeout(COMMAND_TIMEOUT);
        Bus bus = Bus.connect((ordered ? b.partitions(TOPIC, PARTITIONS) : b).build());
        closeables.add(bus);
        return bus;
    }

    /** The tests' configuration (sweep threshold 500 ms, every 200 ms), retries after 300 ms. */
    private RunsConfig config(String consumer, boolean ordered) {
        SubscribeOptions.Builder worker = workerOptions().maxDeliveries(MAX_DELIVERIES);
        if (ordered) {
            worker.leaseTime(LEASE);
        }
        return configBuilder(schema, consumer, worker.build()).ordered(ordered)
                .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(300))).build();
    }

    private List<String> streams(boolean ordered) {
        if (!ordered) {
            return List.of(prefix + ":{" + TOPIC + "}:stream");
        }
        List<String> names = new ArrayList<>();
        for (String name : new Partitions(TOPIC, PARTITIONS).names()) {
            names.add(prefix + ":{" + name + "}:stream");
        }
        return names;
    }

    private long count(String sql) {
        return TestDatabase.count(sql.replace("%s", schema));
    }

    private Map<UUID, Object[]> runRows() throws Exception {
        Map<UUID, Object[]> rows = new HashMap<>();
        try (Connection c = TestDatabase.pool().getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT id, status, attempts, user_id, idempotency_key FROM " + schema
                     + ".runs")) {
            while (rs.next()) {
                rows.put(rs.getObject(1, UUID.class), new Object[] {rs.getString(2), rs.getInt(3), rs.getString(4),
                        rs.getString(5)});
            }
        }
        return rows;
    }

}
