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
    /** Each live schedule's fires by outcome ({@link #OUTCOMES}), as its row counts them. */
    private final Map<String, AtomicLong[]> scheduleFires = new java.util.concurrent.ConcurrentHashMap<>();
    /** What the schedules' fires are counted by, in the order of {@link #scheduleFires}' arrays. */
    static final java.util.List<String> OUTCOMES = java.util.List.of("fired", "skipped_overlap", "missed", "caught_up");
    /** Told after each read: the meters follow the schedules that came and went. */
    private volatile Runnable afterRead = () -> {
    };
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
            readScheduleFires();
            postgresUp.set(1);
        } catch (RuntimeException | java.sql.SQLException e) {
            postgresUp.set(0);
            log.warn("reading the run counts of schema {} failed; the last values stay: {}", schema, e.toString());
        }
        try {
            afterRead.run();
        } catch (RuntimeException e) { // a meter that cannot be registered must not end the reads
            log.warn("registering the schedules' meters failed: {}", e.toString());
        }
    }

    /** The live schedules' counters: a small table, one row per schedule. */
    private void readScheduleFires() throws java.sql.SQLException {
        java.util.Set<String> seen = new java.util.HashSet<>();
        try (java.sql.Connection c = dataSource.getConnection();
             java.sql.PreparedStatement ps = c.prepareStatement("SELECT name, fired, skipped_overlap, missed, "
                     + "caught_up FROM " + schema + ".schedules WHERE deleted_at IS NULL");
             java.sql.ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                String name = rs.getString(1);
                seen.add(name);
                AtomicLong[] fires = scheduleFires.computeIfAbsent(name, n -> new AtomicLong[] {new AtomicLong(),
                    new AtomicLong(), new AtomicLong(), new AtomicLong()});
                for (int i = 0; i < fires.length; i++) {
                    fires[i].set(rs.getLong(i + 2));
                }
            }
        }
        scheduleFires.keySet().retainAll(seen);
    }

    /** The live schedules' fires by outcome, as last read. */
    Map<String, AtomicLong[]> scheduleFires() {
        return scheduleFires;
    }

    void afterRead(Runnable r) {
        afterRead = r;
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
