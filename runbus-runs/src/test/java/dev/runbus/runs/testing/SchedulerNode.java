package dev.runbus.runs.testing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.SubscribeOptions;
import dev.runbus.runs.Runs;
import dev.runbus.runs.Schedules;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A scheduler process in a child JVM for the schedules' kill test, on a clock the test sets: the time is the epoch
 * milliseconds written in {@code clock-file} (read at each look; the last value read while the file is being
 * rewritten). Prints {@code SCHEDULER <id>} (its name in the lease) once its scheduler runs.
 *
 * <p>Arguments: redis-uri key-prefix jdbc-url schema clock-file poll-millis lease-millis
 */
public final class SchedulerNode {

    /** A clock that reads the time from {@code file}, as epoch milliseconds. */
    public static Clock fromFile(Path file) {
        return new Clock() {
            private volatile long last;

            @Override
            public ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                try {
                    last = Long.parseLong(Files.readString(file).trim());
                } catch (IOException | NumberFormatException beingWritten) {
                    // keep the last time read
                }
                return Instant.ofEpochMilli(last);
            }
        };
    }

    public static void main(String[] args) throws Exception {
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(args[2]);
        hc.setMaximumPoolSize(4);
        Bus bus = Bus.connect(BusConfig.builder(args[0]).keyPrefix(args[1]).build());
        Runs runs = Runs.create(bus, new HikariDataSource(hc), RunsTestSupport.config(args[3], "scheduler",
                SubscribeOptions.builder().build()));
        Schedules schedules = runs.schedules(fromFile(Path.of(args[4])));
        schedules.startScheduler(Duration.ofMillis(Long.parseLong(args[5])), Duration.ofMillis(Long.parseLong(args[6])));
        System.out.println("SCHEDULER " + schedules.schedulerId().orElseThrow());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
