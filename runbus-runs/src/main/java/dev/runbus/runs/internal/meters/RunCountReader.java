package dev.runbus.runs.internal.meters;

import dev.runbus.runs.RunCounts;
import dev.runbus.runs.RunStatus;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the run counts ({@link RunCounts}, cheap by design) on a thread of its own and keeps the last values, so
 * that a scrape reads memory and never waits for PostgreSQL; {@link #postgresUp} tells whether the last read
 * answered.
 */
public final class RunCountReader implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RunCountReader.class);

    private final DataSource dataSource;
    private final String schema;
    private final Map<RunStatus, AtomicLong> byStatus = new EnumMap<>(RunStatus.class);
    private final AtomicLong failedWithoutDeadLetter = new AtomicLong();
    private final AtomicLong postgresUp = new AtomicLong(1);
    private final ScheduledExecutorService loop = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "runbus-run-counts");
        t.setDaemon(true);
        return t;
    });

    public RunCountReader(DataSource dataSource, String schema) {
        this.dataSource = dataSource;
        this.schema = schema;
        for (RunStatus s : RunStatus.values()) {
            byStatus.put(s, new AtomicLong());
        }
    }

    /** Reads now, then every {@code interval}. */
    public RunCountReader start(Duration interval) {
        loop.scheduleWithFixedDelay(this::read, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
        return this;
    }

    private void read() {
        try {
            RunCounts counts = RunCounts.read(dataSource, schema);
            counts.asMap().forEach((status, n) -> byStatus.get(status).set(n));
            failedWithoutDeadLetter.set(counts.failedWithoutDeadLetter());
            postgresUp.set(1);
        } catch (RuntimeException e) {
            postgresUp.set(0);
            log.warn("reading the run counts of schema {} failed; the last values stay: {}", schema, e.toString());
        }
    }

    AtomicLong count(RunStatus status) {
        return byStatus.get(status);
    }

    AtomicLong failedWithoutDeadLetter() {
        return failedWithoutDeadLetter;
    }

    AtomicLong postgresUp() {
        return postgresUp;
    }

    @Override
    public void close() {
        loop.shutdownNow();
    }
}
