package dev.runbus.runs.testing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.SubscribeOptions;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.Runs;
import dev.runbus.runs.RunsConfig;
import dev.runbus.runs.internal.worker.CrashPoints;
import java.time.Duration;

/**
 * A runs process in a child JVM for the crash tests. When it reaches the named crash point it prints
 * {@code AT <point>} and stops there, so that the test kills it with SIGKILL at exactly that point.
 *
 * <p>Arguments: redis-uri key-prefix jdbc-url schema crash-point role [input]
 * where role is {@code submit} (submit one run with the input), {@code worker} (run the echo handler,
 * or the failing one when the input is {@code poison}) or {@code relay} (submit one run with the input in a
 * transaction, commit it, and relay it: {@code Runs.relayOnce}).
 */
public final class RunsNode {

    public static void main(String[] args) throws Exception {
        String point = args[4];
        CrashPoints.install(p -> {
            if (p.name().equals(point)) {
                System.out.println("AT " + p.name());
                System.out.flush();
                try {
                    Thread.sleep(Long.MAX_VALUE);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(args[2]);
        hc.setMaximumPoolSize(4);
        Bus bus = Bus.connect(BusConfig.builder(args[0]).keyPrefix(args[1]).build());
        RunsConfig config = RunsTestSupport.config(args[3], "child", SubscribeOptions.builder().concurrency(1)
                .maxDeliveries("poison".equals(args.length > 6 ? args[6] : "") ? 1 : 3).minIdle(Duration.ofSeconds(1))
                .blockTime(Duration.ofMillis(200)).build());
        HikariDataSource pool = new HikariDataSource(hc);
        Runs runs = Runs.create(bus, pool, config);
        if (args[5].equals("relay")) {
            try (java.sql.Connection c = pool.getConnection()) {
                c.setAutoCommit(false);
                runs.within(c).submit(NewRun.of("s-child", "u-child", args.length > 6 ? args[6] : "hello"));
                c.commit();
            }
            System.out.println("COMMITTED");
            System.out.flush();
            runs.relayOnce();
            System.out.println("RELAYED");
        } else if (args[5].equals("submit")) {
            runs.submit(NewRun.of("s-child", "u-child", args.length > 6 ? args[6] : "hello"));
            System.out.println("SUBMITTED");
        } else {
            runs.startWorker("poison".equals(args.length > 6 ? args[6] : "") ? RunsTestSupport.ALWAYS_FAILS
                    : RunsTestSupport.ECHO);
            System.out.println("READY");
        }
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
