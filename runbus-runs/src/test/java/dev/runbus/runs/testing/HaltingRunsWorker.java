package dev.runbus.runs.testing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.SubscribeOptions;
import dev.runbus.runs.Runs;
import java.time.Duration;

/**
 * A runs worker in a child JVM whose handler kills its process ({@code Runtime.halt}) on a run whose input is
 * {@code poison}, and echoes every other input. Prints {@code STARTED <input>} when a run handler starts,
 * {@code HANDLED <input>} when it returns, {@code READY} once the worker started.
 *
 * <p>Arguments: redis-uri key-prefix jdbc-url schema consumer concurrency batch-size max-deliveries
 */
public final class HaltingRunsWorker {

    public static void main(String[] args) throws Exception {
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(args[2]);
        hc.setMaximumPoolSize(4);
        Bus bus = Bus.connect(BusConfig.builder(args[0]).keyPrefix(args[1]).build());
        Runs runs = Runs.create(bus, new HikariDataSource(hc), RunsTestSupport.config(args[3], args[4],
                SubscribeOptions.builder().concurrency(Integer.parseInt(args[5])).batchSize(Integer.parseInt(args[6]))
                        .maxDeliveries(Integer.parseInt(args[7])).minIdle(Duration.ofSeconds(1))
                        .blockTime(Duration.ofMillis(200)).build()));
        runs.startWorker(run -> {
            say("STARTED " + run.input());
            if (run.input().equals("poison")) {
                Runtime.getRuntime().halt(1);
            }
            say("HANDLED " + run.input());
            return RunsTestSupport.ECHO.execute(run);
        });
        say("READY");
        Thread.sleep(Long.MAX_VALUE);
    }

    /** A line the parent reads, flushed at once: the process may be halted right after it. */
    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
