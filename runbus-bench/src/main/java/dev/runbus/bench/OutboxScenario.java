package dev.runbus.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.Reply;
import dev.runbus.runs.Runs;
import dev.runbus.runs.RunsConfig;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Scenario 15, opt-in: runs submitted in the caller's transaction ({@code Runs.within}, docs/runs.md), one per
 * transaction, one at a time, paced so that each finds the worker idle: the time from the caller's commit to the run's
 * handler start, on the notify path (the relay woken by the commit's NOTIFY, not its one-second poll).
 */
final class OutboxScenario {

    private OutboxScenario() {
    }

    record Result(int runs, double p50Millis, double p99Millis, double maxMillis) implements java.io.Serializable {
    }

    static Result run(Env env) throws Exception {
        int n = env.options.quick() ? 300 : 2_000;
        String schema = "runbus_bench_outbox_" + ProcessHandle.current().pid();
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(env.options.databaseUrl());
        hc.setMaximumPoolSize(8);
        hc.setPoolName("runbus-bench-outbox");
        // The handler hands each start over; the submitting thread waits for it without spinning (on two cores a
        // spinning waiter takes the CPU the relay and the worker need).
        java.util.concurrent.BlockingQueue<long[]> started = new java.util.concurrent.LinkedBlockingQueue<>();
        try (HikariDataSource ds = new HikariDataSource(hc);
             Bus bus = Bus.connect(BusConfig.builder(env.options.redisUri()).keyPrefix(env.prefix("outbox")).build())) {
            try {
                RunsConfig config = RunsConfig.builder().schema(schema).topic("outbox").consumer("bench").build();
                try (Runs runs = Runs.create(bus, ds, config)) {
                    runs.startWorker(run -> {
                        started.add(new long[] {Long.parseLong(run.input().substring(1)), System.nanoTime()});
                        return List.of(Reply.assistant("ok"));
                    });
                    runs.startSweeper(); // and with it the relay
                    long[] gaps = new long[n];
                    for (int i = 0; i < n; i++) {
                        String input = "r" + i;
                        long committed;
                        try (Connection c = ds.getConnection()) {
                            c.setAutoCommit(false);
                            runs.within(c).submit(NewRun.of("s", "u", input));
                            c.commit();
                            committed = System.nanoTime();
                        }
                        long[] start = started.poll(30, TimeUnit.SECONDS);
                        if (start == null || start[0] != i) {
                            throw new IllegalStateException("run " + input + " did not start within 30 s, or another"
                                    + " did: " + (start == null ? "none" : "r" + start[0]));
                        }
                        gaps[i] = start[1] - committed;
                    }
                    Arrays.sort(gaps);
                    Result r = new Result(n, gaps[n / 2] / 1e6, gaps[(int) (n * 0.99)] / 1e6, gaps[n - 1] / 1e6);
                    Progress.say("outbox: commit to handler start over %,d runs: p50 %.2f ms, p99 %.2f ms, max %.2f ms",
                            n, r.p50Millis(), r.p99Millis(), r.maxMillis());
                    return r;
                }
            } finally {
                try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
                    st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
                }
                env.admin.deleteMatching(env.prefix("outbox") + "*");
            }
        }
    }
}
