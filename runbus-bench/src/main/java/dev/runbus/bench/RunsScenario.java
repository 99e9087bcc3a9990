package dev.runbus.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.SubscribeOptions;
import dev.runbus.Subscription;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.Reply;
import dev.runbus.runs.Runs;
import dev.runbus.runs.RunsConfig;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Scenario 3: runs through submit → handler → replies + done → ack with a no-op handler (one reply), next to
 * PostgreSQL doing the same writes without a bus: the set-based reference ({@link PgSetReference}) on 1, 2 and
 * 4 connections, and one transaction per run ({@link PgNaiveBaseline}) as the naive baseline. runbus and every
 * reference are warmed alike and measured in a random order in each round; each measurement uses a schema of
 * its own, made by the runs layer's migrations and dropped afterwards.
 */
final class RunsScenario {

    record Result(int runs, int concurrency, int submitters, int referenceRuns, int pgPerRunRuns, int rate,
                  long latencyMillis, List<Double> runbus, Map<Integer, List<Double>> reference,
                  List<Double> pgPerRun1, List<Double> pgPerRunN, List<Double> p50, List<Double> p99,
                  List<Double> achievedRate, List<Double> submitP50, List<Double> toHandlerP50,
                  List<Double> toAckP50) implements java.io.Serializable {

        /** Results saved before the set-based reference existed have none ({@code --report-from}). */
        Result {
            reference = reference == null ? Map.of() : reference;
        }

        /** Per round, the set-based reference at its best connection count of that round. */
        List<Double> bestReference() {
            List<Double> best = new ArrayList<>();
            for (int i = 0; i < runbus.size(); i++) {
                double b = Double.NaN;
                for (List<Double> byConnections : reference.values()) {
                    double v = i < byConnections.size() ? byConnections.get(i) : Double.NaN;
                    b = Double.isNaN(b) || v > b ? v : b;
                }
                best.add(b);
            }
            return best;
        }
    }

    /** One latency measurement: submit → ack p50 and p99 (ms), the achieved rate, and the p50 of each stage. */
    private record Latency(double p50, double p99, double rate, double submitP50, double toHandlerP50,
                           double toAckP50) {
    }

    /** One figure measured in every round: its name, how it is measured (runs/s), and its values. */
    private record Part(String name, Callable<Double> measure, List<Double> values) {
    }

    /** The connection counts of the set-based reference. */
    static final List<Integer> REFERENCE_CONNECTIONS = List.of(1, 2, 4);
    /** More than {@link Jit#MAX_ROUNDS}: the runs path (JDBC, PostgreSQL driver, Hikari) compiles longest. */
    static final int MAX_WARMUP_ROUNDS = 8;
    /**
     * Threads that submit at the scheduled times: a submit waits for its commit (a few ms), so enough of them
     * that the offered rate is kept even when commits are slow.
     */
    private static final int LATENCY_SUBMITTERS = 32;

    private RunsScenario() {
    }

    static Result run(Env env) throws Exception {
        BenchOptions.Sizes s = env.sizes;
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(env.options.databaseUrl());
        // Submitters and handlers need no connection of their own: the group committers write for them. The
        // naive baseline uses runsConcurrency connections at once.
        hc.setMaximumPoolSize(s.runsConcurrency() + 8);
        hc.setPoolName("runbus-bench");
        List<Double> runbus = new ArrayList<>();
        Map<Integer, List<Double>> reference = new LinkedHashMap<>();
        List<Double> perRun1 = new ArrayList<>();
        List<Double> perRunN = new ArrayList<>();
        List<Double> p50 = new ArrayList<>();
        List<Double> p99 = new ArrayList<>();
        List<Double> achieved = new ArrayList<>();
        List<Double> submitP50 = new ArrayList<>();
        List<Double> toHandlerP50 = new ArrayList<>();
        List<Double> toAckP50 = new ArrayList<>();
        try (HikariDataSource ds = new HikariDataSource(hc);
             Bus bus = Bus.connect(BusConfig.builder(env.options.redisUri()).keyPrefix(env.prefix("runs")).build())) {
            List<Part> parts = new ArrayList<>();
            parts.add(new Part("runbus", () -> throughput(env, bus, ds, s.runs()), runbus));
            for (int n : REFERENCE_CONNECTIONS) {
                reference.put(n, new ArrayList<>());
                parts.add(new Part("set-based reference, " + n + (n == 1 ? " connection" : " connections"),
                        () -> onOwnTables(env, bus, ds,
                                schema -> PgSetReference.measure(ds, schema, s.referenceRuns(), n)),
                        reference.get(n)));
            }
            parts.add(new Part("naive baseline, 1 connection",
                    () -> onOwnTables(env, bus, ds, schema -> PgNaiveBaseline.measure(ds, schema, s.pgPerRunRuns(), 1)),
                    perRun1));
            parts.add(new Part("naive baseline, " + s.runsConcurrency() + " connections",
                    () -> onOwnTables(env, bus, ds, schema -> PgNaiveBaseline.measure(ds, schema, s.pgPerRunRuns(),
                            s.runsConcurrency())), perRunN));
            // Full rounds of every part until the JIT has settled: after one round, a C2 thread still took a
            // third of the CPU; and PostgreSQL's caches are as warm for the references as for runbus.
            Jit.settle("runs", MAX_WARMUP_ROUNDS, () -> {
                for (Part p : parts) {
                    p.measure().call();
                }
            });
            for (int round = 0; round < env.options.repeats(); round++) {
                int r = round + 1;
                for (Part p : env.order.of(parts, "runs", round, Part::name)) {
                    double v = p.measure().call();
                    p.values().add(v);
                    Progress.say("runs round %d/%d, %s: %,.0f runs/s", r, env.options.repeats(), p.name(), v);
                }
                Latency lat = latency(env, bus, ds);
                p50.add(lat.p50());
                p99.add(lat.p99());
                achieved.add(lat.rate());
                submitP50.add(lat.submitP50());
                toHandlerP50.add(lat.toHandlerP50());
                toAckP50.add(lat.toAckP50());
                Progress.say("runs round %d/%d, submit→done→ack at %,d runs/s: p50 %.2f ms, p99 %.2f ms", r,
                        env.options.repeats(), s.runsRate(), lat.p50(), lat.p99());
            }
        }
        return new Result(s.runs(), s.runsConcurrency(), s.runsSubmitters(), s.referenceRuns(), s.pgPerRunRuns(),
                s.runsRate(), s.runsLatencyMillis(), runbus, reference, perRun1, perRunN, p50, p99, achieved,
                submitP50, toHandlerP50, toAckP50);
    }

    /** Runs per second from the first submit until every run is done and every trigger acked. */
    private static double throughput(Env env, Bus bus, HikariDataSource ds, int total) throws Exception {
        BenchOptions.Sizes s = env.sizes;
        try (Measurement m = new Measurement(env, bus, ds)) {
            AtomicInteger next = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(s.runsSubmitters());
            long t0 = System.nanoTime();
            for (int i = 0; i < s.runsSubmitters(); i++) {
                pool.execute(() -> {
                    for (int k = next.getAndIncrement(); k < total; k = next.getAndIncrement()) {
                        m.runs.submit(new NewRun("session-" + k % 50, "user-" + k % 50, "input " + k, "k-" + k));
                    }
                });
            }
            pool.shutdown();
            if (!pool.awaitTermination(10, TimeUnit.MINUTES)) {
                throw new IllegalStateException("submitting did not finish");
            }
            m.awaitDone(total);
            return total / ((System.nanoTime() - t0) / 1e9);
        }
    }

    /**
     * submit → done → ack at a fixed offered rate; submissions are scheduled at their times and handed to
     * {@link #LATENCY_SUBMITTERS} submitter threads.
     */
    private static Latency latency(Env env, Bus bus, HikariDataSource ds) throws Exception {
        BenchOptions.Sizes s = env.sizes;
        try (Measurement m = new Measurement(env, bus, ds)) {
            long warmup = 500;
            int total = (int) (s.runsRate() * (warmup + s.runsLatencyMillis()) / 1000);
            long interval = 1_000_000_000L / s.runsRate();
            AtomicInteger next = new AtomicInteger();
            long start = System.nanoTime() + 10_000_000L;
            long measureFrom = Payloads.now() + 10_000_000L + warmup * 1_000_000L;
            ExecutorService pool = Executors.newFixedThreadPool(LATENCY_SUBMITTERS);
            for (int i = 0; i < LATENCY_SUBMITTERS; i++) {
                pool.execute(() -> {
                    for (int k = next.getAndIncrement(); k < total; k = next.getAndIncrement()) {
                        long due = start + k * interval;
                        long wait;
                        // Sleep until due, not in short slices: dozens of threads waking every 100 µs would
                        // take the CPU the measured path needs. The latency counts from the actual submit.
                        while ((wait = due - System.nanoTime()) > 0) {
                            LockSupport.parkNanos(wait);
                        }
                        String key = "lat-" + k;
                        m.clock.submitting(key);
                        m.runs.submit(new NewRun("session-" + k % 50, "user-" + k % 50, "input " + k, key));
                        m.clock.submitted(key);
                    }
                });
            }
            pool.shutdown();
            if (!pool.awaitTermination(10, TimeUnit.MINUTES)) {
                throw new IllegalStateException("submitting did not finish");
            }
            m.awaitDone(total);
            double rate = total / ((System.nanoTime() - start) / 1e9);
            if (!m.ackObserved) {
                throw new IllegalStateException("the worker's acks could not be observed");
            }
            RunClock.Stages st = m.clock.latencies(measureFrom);
            Progress.say("runs latency stages p50/p99 ms: submit %.2f/%.2f, submitted→handler %.2f/%.2f,"
                    + " handler→ack %.2f/%.2f", st.submit().millisAt(50), st.submit().millisAt(99),
                    st.toHandler().millisAt(50), st.toHandler().millisAt(99), st.toAck().millisAt(50),
                    st.toAck().millisAt(99));
            return new Latency(st.total().millisAt(50), st.total().millisAt(99), rate, st.submit().millisAt(50),
                    st.toHandler().millisAt(50), st.toAck().millisAt(50));
        }
    }

    /** A PostgreSQL measurement on runs tables of its own, made by the runs layer's migrations. */
    @FunctionalInterface
    private interface OnTables {
        double measure(String schema) throws Exception;
    }

    private static double onOwnTables(Env env, Bus bus, HikariDataSource ds, OnTables measurement) throws Exception {
        String schema = schema(env);
        RunsConfig config = RunsConfig.builder().schema(schema).topic("pg-" + env.nextId()).build();
        try {
            Runs.create(bus, ds, config).close(); // the runs layer's own tables, triggers included
            return measurement.measure(schema);
        } finally {
            drop(ds, schema);
        }
    }

    private static String schema(Env env) {
        return "runbus_bench_" + ProcessHandle.current().pid() + "_" + env.nextId();
    }

    private static void drop(HikariDataSource ds, String schema) {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        } catch (Exception e) {
            System.err.println("dropping schema " + schema + ": " + e);
        }
    }

    /** A runs layer with a started worker on a schema and topic of its own; closing drops both. */
    private static final class Measurement implements AutoCloseable {
        final Runs runs;
        final RunClock clock;
        final boolean ackObserved;
        private final Env env;
        private final HikariDataSource ds;
        private final String schema;
        private final Target target;

        Measurement(Env env, Bus bus, HikariDataSource ds) {
            this.env = env;
            this.ds = ds;
            this.schema = schema(env);
            String topic = "runs-" + env.nextId();
            RunsConfig config = RunsConfig.builder().schema(schema).topic(topic).consumer("bench-worker")
                    .workerOptions(SubscribeOptions.builder().concurrency(env.sizes.runsConcurrency())
                            .blockTime(Duration.ofMillis(100)).build())
                    .build();
            this.target = new Target(env.prefix("runs"), topic, config.group());
            this.clock = new RunClock(env.admin.client(), target.streamKey());
            this.runs = Runs.create(bus, ds, config);
            Subscription worker = runs.startWorker(run -> {
                clock.executing(run.runId().toString(), run.idempotencyKey());
                return List.of(Reply.assistant("ok"));
            });
            this.ackObserved = clock.observe(worker);
            Env.sleep(300);
        }

        /** Every run executed and every trigger acknowledged (a trigger is acked after its run is done). */
        void awaitDone(int total) throws Exception {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
            while (clock.executedCount() < total) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("only " + clock.executedCount() + " of " + total + " runs executed");
                }
                LockSupport.parkNanos(500_000);
            }
            while (env.admin.pending(target.streamKey(), target.group()) > 0) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("triggers still pending");
                }
                LockSupport.parkNanos(500_000);
            }
        }

        @Override
        public void close() {
            runs.close();
            clock.close();
            drop(ds, schema);
            env.admin.deleteMatching(target.keyPattern());
        }
    }
}
