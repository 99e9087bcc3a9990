package dev.runbus.runs.internal.sweep;

import dev.runbus.Bus;
import dev.runbus.Message;
import dev.runbus.runs.RunsConfig;
import dev.runbus.runs.internal.store.OutboxStore;
import dev.runbus.runs.internal.store.Transactions;
import dev.runbus.runs.internal.worker.CrashPoints;
import dev.runbus.runs.internal.worker.Triggers;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes the triggers of runs submitted in callers' transactions (migration V014, {@code Runs.within}): it LISTENs
 * on the schema's channel, where {@code submit_run} NOTIFYs at each commit, and claims and publishes the marked runs
 * when woken, and at every poll interval besides (a notification sent while it was not listening is not lost: the
 * mark stays). A batch is claimed and published in one transaction, so a relay that dies or fails to publish leaves
 * the marks for the next, and two relays never claim one run; the sweeper publishes what no relay did.
 */
public final class OutboxRelay implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(OutboxRelay.class);
    /** Runs claimed and published per transaction. */
    static final int BATCH = 500;

    private final DataSource dataSource;
    private final Bus bus;
    private final RunsConfig config;
    private final OutboxStore store;
    private final long pollMillis;
    private final Thread thread;
    private volatile boolean closed;

    public OutboxRelay(DataSource dataSource, Bus bus, RunsConfig config, Duration poll) {
        this.dataSource = dataSource;
        this.bus = bus;
        this.config = config;
        this.store = new OutboxStore(config.schema());
        this.pollMillis = Math.max(1, poll.toMillis());
        this.thread = new Thread(this::run, "runbus-runs-relay");
        this.thread.setDaemon(true);
    }

    public OutboxRelay start() {
        thread.start();
        return this;
    }

    /**
     * Publishes the triggers of every marked run now, batch by batch; returns how many.
     *
     * @throws SQLException when PostgreSQL fails (the batch on the way keeps its marks)
     * @throws dev.runbus.RunbusException when Redis refuses the publish (likewise)
     */
    public int relayAll() throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return relayAll(c);
        }
    }

    /** {@link #relayAll()} on {@code c}, which is in auto-commit before and after. */
    private int relayAll(Connection c) throws SQLException {
        int total = 0;
        while (true) {
            int n = Transactions.in(c, this::relayBatch);
            total += n;
            if (n < BATCH) {
                return total;
            }
        }
    }

    private int relayBatch(Connection tx) throws SQLException {
        List<OutboxStore.Claimed> claimed = store.claim(tx, BATCH);
        if (!claimed.isEmpty()) {
            CrashPoints.reach(CrashPoints.Point.RELAY_AFTER_CLAIM_BEFORE_PUBLISH);
        }
        List<Message> triggers = new ArrayList<>(claimed.size());
        Map<OutboxStore.Claimed, Message> delayed = new java.util.LinkedHashMap<>();
        List<String> skipped = new ArrayList<>();
        for (OutboxStore.Claimed r : claimed) {
            try {
                Message trigger = Triggers.of(r.runId(), config.ordered() ? r.userId() : null, Map.of(),
                        r.flow().onlyIf(config.flowControlled()));
                if (r.delay().isZero()) {
                    triggers.add(trigger);
                } else {
                    delayed.put(r, trigger);
                }
            } catch (IllegalArgumentException e) {
                // A run no trigger can be built for (written by hand, or before a check existed): its mark goes, so
                // that it does not hold up the others batch after batch; the sweeper reports it as it reports its own.
                skipped.add(r.runId() + " (" + e.getMessage() + ")");
            }
        }
        if (!skipped.isEmpty()) {
            log.warn("relay cannot publish the triggers of {} runs of topic {}, left as they are (fix or delete them):"
                    + " {}", skipped.size(), config.topic(), skipped);
        }
        if (!triggers.isEmpty()) {
            // Before the marks are cleared: if the publish fails, the transaction rolls back and they stay.
            bus.publisher().publishAll(config.topic(), triggers);
        }
        // A delayed run's trigger waits in the delay set for what is left of its delay, and its scheduled id is kept
        // for a cancel, in the same transaction as the mark. Should it roll back after a publish, the run is relayed
        // again and its first trigger finds it started or finished, as any duplicate does.
        for (Map.Entry<OutboxStore.Claimed, Message> d : delayed.entrySet()) {
            String scheduledId = bus.publisher().publish(config.topic(), d.getValue(), d.getKey().delay());
            store.scheduled(tx, d.getKey().runId(), scheduledId);
        }
        return claimed.size();
    }

    private void run() {
        long pause = 100;
        while (!closed) {
            // One connection, listening and relaying: the relay never holds two of the pool's, and the connection
            // stops listening before it goes back to the pool (a pooled connection that still listened would keep
            // every notification it received, unread, for good).
            try (Connection c = dataSource.getConnection()) {
                c.setAutoCommit(true);
                try {
                    try (Statement st = c.createStatement()) {
                        st.execute("LISTEN " + OutboxStore.channel(config.schema()));
                    }
                    PGConnection pg = c.unwrap(PGConnection.class);
                    relayAll(c); // what was committed while nobody listened
                    pause = 100;
                    while (!closed) {
                        pg.getNotifications((int) Math.min(Integer.MAX_VALUE, pollMillis));
                        if (!closed) {
                            relayAll(c);
                        }
                    }
                } finally {
                    unlisten(c);
                }
            } catch (Throwable e) {
                if (closed) {
                    return;
                }
                // One bad turn never stops the relay: the marks stay, the next turn (or the sweeper) publishes them.
                log.warn("relaying the triggers of runs submitted in transactions failed; trying again in {} ms",
                        pause, e);
                try {
                    Thread.sleep(pause);
                } catch (InterruptedException interrupted) {
                    return;
                }
                pause = Math.min(5_000, pause * 2);
            }
        }
    }

    private static void unlisten(Connection c) {
        try (Statement st = c.createStatement()) {
            if (!c.getAutoCommit()) {
                c.rollback();
                c.setAutoCommit(true);
            }
            st.execute("UNLISTEN *");
        } catch (SQLException | RuntimeException e) {
            log.debug("the relay's connection could not stop listening; it is closed with the pool's next check", e);
        }
    }

    /** Stops the relay; a batch on its way ends first (its transaction commits or rolls back). */
    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
