package dev.runbus.examples;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.SubscribeOptions;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.Reply;
import dev.runbus.runs.Runs;
import dev.runbus.runs.RunsConfig;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A quick local figure for runs (the benchmark module measures properly): N runs submitted by several
 * threads, executed by a no-op handler that returns one reply, through submit → handler → replies + done →
 * ack. Prints runs per second from the first submit to the last run done.
 *
 * <p>Usage: {@code RunsThroughput [--redis URI] [--database JDBC-URL] [--runs 20000] [--concurrency 16]
 * [--submitters 8] [--preload]}; --preload submits everything before the worker starts, to measure the worker
 * alone. The URLs default as {@link ExampleServers} says.
 */
public final class RunsThroughput {

    public static void main(String[] args) throws Exception {
        String redis = ExampleServers.redisUrl();
        String database = ExampleServers.databaseUrl();
        int total = 20_000;
        int concurrency = 16;
        int submitters = 8;
        boolean preload = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--redis": redis = args[++i]; break;
                case "--database": database = args[++i]; break;
                case "--runs": total = Integer.parseInt(args[++i]); break;
                case "--concurrency": concurrency = Integer.parseInt(args[++i]); break;
                case "--submitters": submitters = Integer.parseInt(args[++i]); break;
                case "--preload": preload = true; break;
                default:
                    System.err.println("unknown option " + args[i]);
                    System.exit(2);
            }
        }
        String schema = "runbus_tp_" + ProcessHandle.current().pid();
        String prefix = "runbus-runs-throughput-" + ProcessHandle.current().pid();
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(database);
        hc.setMaximumPoolSize(concurrency + submitters + 2);
        try (HikariDataSource ds = new HikariDataSource(hc);
             Bus bus = Bus.connect(BusConfig.builder(redis).keyPrefix(prefix).build())) {
            RunsConfig config = RunsConfig.builder().schema(schema).consumer("tp-1")
                    .workerOptions(SubscribeOptions.builder().concurrency(concurrency).blockTime(Duration.ofMillis(100))
                            .build()).build();
            try (Runs runs = Runs.create(bus, ds, config)) {
                if (!preload) {
                    runs.startWorker(run -> List.of(Reply.assistant("ok")));
                }
                ExecutorService pool = Executors.newFixedThreadPool(submitters);
                AtomicInteger next = new AtomicInteger();
                final int n = total;
                long start = System.nanoTime();
                for (int s = 0; s < submitters; s++) {
                    pool.execute(() -> {
                        for (int i = next.getAndIncrement(); i < n; i = next.getAndIncrement()) {
                            runs.submit(new NewRun("session-" + (i % 50), "user-" + (i % 50), "input " + i, "k-" + i));
                        }
                    });
                }
                pool.shutdown();
                pool.awaitTermination(10, TimeUnit.MINUTES);
                long submitted = System.nanoTime();
                if (preload) {
                    runs.startWorker(run -> List.of(Reply.assistant("ok")));
                }
                while (done(ds, schema) < n) {
                    Thread.sleep(5);
                }
                long end = System.nanoTime();
                System.out.printf("submit: %,d runs by %d threads in %.2f s = %,.0f runs/s%n", n, submitters,
                        (submitted - start) / 1e9, n / ((submitted - start) / 1e9));
                long from = preload ? submitted : start;
                System.out.printf("runs: %,d runs %s -> handler -> replies + done -> ack in %.2f s = %,.0f runs/s "
                        + "(worker concurrency %d, no-op handler)%n", n, preload ? "(preloaded)" : "submit",
                        (end - from) / 1e9, n / ((end - from) / 1e9), concurrency);
            } finally {
                try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
                    st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
                }
            }
        } finally {
            ExampleKeys.deleteAll(redis, prefix);
        }
    }

    private static long done(HikariDataSource ds, String schema) throws Exception {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM " + schema + ".runs WHERE status = 'done'")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
