package dev.runbus.runs.testing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.RetryPolicy;
import dev.runbus.SubscribeOptions;
import dev.runbus.runs.RunHandler;
import dev.runbus.runs.Runs;
import java.time.Duration;

/**
 * An ordered runs worker in a child JVM, to be killed with SIGKILL mid-way. Prints {@code READY} once it
 * consumes.
 *
 * <p>Arguments: redis-uri key-prefix jdbc-url schema partitions consumer
 */
public final class OrderedRunsNode {

    /** Inputs ending in "poison" fail every attempt; ending in "flaky", their first. */
    public static final RunHandler HANDLER = run -> {
        if (run.input().endsWith("poison")) {
            throw new IllegalArgumentException("poison input " + run.input());
        }
        if (run.input().endsWith("flaky") && run.attempt() == 1) {
            throw new IllegalStateException("flaky input fails its first attempt");
        }
        return RunsTestSupport.ECHO.execute(run);
    };

    public static void main(String[] args) throws Exception {
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(args[2]);
        hc.setMaximumPoolSize(8);
        Bus bus = Bus.connect(BusConfig.builder(args[0]).keyPrefix(args[1])
                .partitions("runs", Integer.parseInt(args[4])).build());
        Runs runs = Runs.create(bus, new HikariDataSource(hc), RunsTestSupport.configBuilder(args[3], args[5],
                workerOptions()).ordered(true).retryPolicy(RETRY).build());
        runs.startWorker(HANDLER);
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }

    /**
     * How every worker of the ordered crash test retries a failed run: soon. A retry holds its partition (order), so
     * the default's 1 s would make most of the test's time a wait; the order under a crash is what it checks.
     */
    public static final RetryPolicy RETRY = RetryPolicy.fixed(Duration.ofMillis(100));

    /** The options of every worker of the ordered crash test, the parent's included. */
    public static SubscribeOptions workerOptions() {
        return SubscribeOptions.builder().concurrency(4).maxDeliveries(3).minIdle(Duration.ofSeconds(1))
                .blockTime(Duration.ofMillis(200)).claimInterval(Duration.ofMillis(100))
                .leaseTime(Duration.ofSeconds(2)).build();
    }
}
