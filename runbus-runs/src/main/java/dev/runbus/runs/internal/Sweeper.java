package dev.runbus.runs.internal;

import dev.runbus.Bus;
import dev.runbus.DeadLetter;
import dev.runbus.Inspector;
import dev.runbus.Message;
import dev.runbus.runs.RunStatus;
import dev.runbus.runs.RunsConfig;
import dev.runbus.runs.SweepResult;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds runs the stream forgot and triggers them again. Redis persistence is lossy (a publish or a whole
 * stream can vanish); PostgreSQL is not, so a run that is pending or running with nothing to show is
 * republished, and the guards absorb any duplicate this creates.
 *
 * <p>One sweep, in one transaction under an advisory lock (one sweeper at a time across processes):
 * <ol>
 *   <li>reconcile dead letters: every dead letter of the workers' group since the last sweep marks its run
 *       failed (the bus's listener usually did already; this covers a crash in between);</li>
 *   <li>take up to {@code sweepBatch} unfinished runs untouched for {@code sweepThreshold};</li>
 *   <li>leave alone those with a live delivery: a running run whose stream entry is still pending, or a
 *       pending run whose trigger the group has not reached yet;</li>
 *   <li>republish the others and count them.</li>
 * </ol>
 */
public final class Sweeper {

    private static final Logger log = LoggerFactory.getLogger(Sweeper.class);
    /** Tolerated difference between the PostgreSQL and Redis clocks when comparing times with stream ids. */
    static final long CLOCK_MARGIN_MILLIS = 1000;
    private static final int DEAD_LETTER_PAGE = 200;

    private final RunStore store;
    private final SweeperStore sweeps;
    private final Bus bus;
    private final RunsConfig config;

    public Sweeper(RunStore store, Bus bus, RunsConfig config) {
        this.store = store;
        this.sweeps = new SweeperStore(store.schema());
        this.bus = bus;
        this.config = config;
    }

    public SweepResult sweepOnce() throws SQLException {
        try (Connection c = store.dataSource().getConnection()) {
            c.setAutoCommit(false);
            try {
                if (!sweeps.trySweeperLock(c)) {
                    c.rollback();
                    return SweepResult.SKIPPED;
                }
                int reconciled = reconcileDeadLetters(c);
                List<SweeperStore.Candidate> candidates = sweeps.candidates(c, config.sweepThreshold(), config.sweepBatch());
                Liveness liveness = candidates.isEmpty() ? null : Liveness.read(bus.inspector(), config);
                List<UUID> republish = new ArrayList<>();
                int live = 0;
                for (SweeperStore.Candidate cand : candidates) {
                    if (liveness.isLive(cand)) {
                        live++;
                    } else {
                        republish.add(cand.runId());
                    }
                }
                if (!republish.isEmpty()) {
                    List<Message> triggers = new ArrayList<>(republish.size());
                    republish.forEach(id -> triggers.add(Triggers.of(id)));
                    bus.publisher().publishAll(config.topic(), triggers);
                    sweeps.markRepublished(c, republish);
                    log.info("sweeper republished {} runs", republish.size());
                }
                c.commit();
                return new SweepResult(true, reconciled, candidates.size(), live, republish.size());
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        }
    }

    private int reconcileDeadLetters(Connection c) throws SQLException {
        String checkpoint = "dead_letters_after:" + config.topic() + ":" + config.group();
        String after = sweeps.sweeperValue(c, checkpoint).orElse(null);
        String start = after;
        int marked = 0;
        while (true) {
            List<DeadLetter> page = bus.deadLetters().list(config.topic(), after, DEAD_LETTER_PAGE);
            for (DeadLetter dl : page) {
                after = dl.id();
                if (!dl.group().equals(config.group()) || dl.replayedAs().isPresent()) {
                    continue;
                }
                Optional<UUID> runId = Triggers.runIdOf(dl.message());
                if (runId.isPresent() && store.markFailed(c, runId.get(), dl.reason(), dl.id(), dl.deadAt())) {
                    marked++;
                }
            }
            if (page.size() < DEAD_LETTER_PAGE) {
                break;
            }
        }
        if (after != null && !after.equals(start)) {
            sweeps.setSweeperValue(c, checkpoint, after);
        }
        return marked;
    }

    /** What Redis knows about deliveries, read once per sweep. */
    static final class Liveness {
        private final Inspector inspector;
        private final RunsConfig config;
        private final long lastDeliveredMillis;
        private final long lastPublishedMillis;

        private Liveness(Inspector inspector, RunsConfig config, long lastDeliveredMillis, long lastPublishedMillis) {
            this.inspector = inspector;
            this.config = config;
            this.lastDeliveredMillis = lastDeliveredMillis;
            this.lastPublishedMillis = lastPublishedMillis;
        }

        static Liveness read(Inspector inspector, RunsConfig config) {
            long delivered = -1;
            for (Inspector.GroupInfo g : inspector.groups(config.topic())) {
                if (g.name().equals(config.group())) {
                    delivered = millisOf(g.lastDeliveredId());
                }
            }
            long published = inspector.stream(config.topic()).map(s -> millisOf(s.lastId())).orElse(-1L);
            return new Liveness(inspector, config, delivered, published);
        }

        boolean isLive(SweeperStore.Candidate cand) {
            if (cand.status() == RunStatus.RUNNING && cand.streamId() != null) {
                try {
                    return inspector.pendingEntry(config.topic(), config.group(), cand.streamId()).isPresent();
                } catch (RuntimeException groupGone) {
                    return false;
                }
            }
            // Pending: its trigger (published at about updatedAt) is live if the stream has entries from then
            // on and the group has not delivered that far yet.
            long since = cand.updatedAt().toEpochMilli() - CLOCK_MARGIN_MILLIS;
            return lastPublishedMillis >= since && lastDeliveredMillis < since;
        }

        private static long millisOf(String streamId) {
            if (streamId == null) {
                return -1;
            }
            int dash = streamId.indexOf('-');
            return Long.parseLong(dash < 0 ? streamId : streamId.substring(0, dash));
        }
    }
}
