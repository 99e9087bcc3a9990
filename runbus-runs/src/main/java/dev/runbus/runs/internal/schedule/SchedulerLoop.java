package dev.runbus.runs.internal.schedule;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.UUID;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler of one process: every poll it takes or renews the lease (one firer at a time across processes) and,
 * holding it, fires what is due ({@link Firing}). Runs until {@link #close}, which gives the lease up so that another
 * takes over at once; a failure of one pass is reported and the next pass tries again.
 */
public final class SchedulerLoop implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SchedulerLoop.class);

    private final DataSource dataSource;
    private final ScheduleStore store;
    private final Firing firing;
    private final Duration poll;
    private final Duration leaseTime;
    private final String holder = "scheduler-" + UUID.randomUUID();
    private final Thread thread;
    private volatile boolean closed;
    private volatile boolean leader;

    public SchedulerLoop(DataSource dataSource, String schema, Firing firing, Duration poll, Duration leaseTime) {
        this.dataSource = dataSource;
        this.store = new ScheduleStore(schema);
        this.firing = firing;
        this.poll = poll;
        this.leaseTime = leaseTime;
        this.thread = new Thread(this::loop, "runbus-runs-scheduler");
        this.thread.setDaemon(true);
    }

    public SchedulerLoop start() {
        thread.start();
        return this;
    }

    /** Whether this process held the lease at its last pass. */
    public boolean leader() {
        return leader;
    }

    public String holder() {
        return holder;
    }

    private void loop() {
        while (!closed) {
            try {
                OptionalLong token = acquire();
                boolean was = leader;
                leader = token.isPresent();
                if (leader != was) {
                    log.info("scheduler {} {} the lease{}", holder, leader ? "took" : "lost",
                            leader ? " (token " + token.getAsLong() + ")" : "");
                }
                if (leader) {
                    firing.fireDue(holder, token.getAsLong());
                }
            } catch (Throwable t) { // one failed pass (PostgreSQL away) must not end the scheduler
                log.error("scheduler pass failed; tried again in {} ms", poll.toMillis(), t);
            }
            try {
                Thread.sleep(poll.toMillis());
            } catch (InterruptedException e) {
                if (closed) {
                    break;
                }
            }
        }
    }

    /** Takes or renews the lease; empty when another holds it. */
    public OptionalLong acquire() throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            return store.acquire(c, holder, leaseTime);
        }
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        try {
            thread.join(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            store.release(c, holder);
        } catch (SQLException | RuntimeException e) {
            log.info("giving the scheduler's lease up failed ({}): another takes it when it expires", e.getMessage());
        }
    }
}
