package dev.runbus.runs.internal.sweep;

import dev.runbus.Bus;
import dev.runbus.Message;
import dev.runbus.runs.RunsConfig;
import dev.runbus.runs.SweepResult;
import dev.runbus.runs.internal.store.FlowOverrideStore;
import dev.runbus.runs.internal.store.Transactions;
import dev.runbus.runs.internal.worker.RunFailures;
import dev.runbus.runs.internal.worker.Triggers;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds runs the stream forgot and triggers them again. Redis persistence is lossy (a publish or a whole
 * stream can vanish); PostgreSQL is not, so a run that is pending or running with nothing to show is
 * republished, and the guards absorb any duplicate this creates.
 *
 * <p>One sweep, on one connection holding an advisory lock (one sweeper at a time across processes):
 * <ol>
 *   <li>read, without locking them, up to {@code sweepBatch} unfinished runs untouched for
 *       {@code sweepThreshold} (and not waiting for a retry the bus scheduled, unless it is that overdue:
 *       {@code next_attempt_at}), in (updated_at, id) order after the last run the previous sweep examined, so
 *       that runs found live (which nothing touches while they run) do not fill every batch; a short page
 *       sends the next sweep back to the oldest;</li>
 *   <li>ask Redis which have a live delivery ({@link Liveness}): a running run whose stream entry is still
 *       pending, or a pending run whose trigger the group has not reached yet. If Redis cannot answer, the
 *       sweep stops here and republishes nothing;</li>
 *   <li>reconcile dead letters ({@link DeadLetterReconciler}): after asking Redis, so that a run whose entry
 *       was found gone because it was dead-lettered meanwhile is failed, not republished;</li>
 *   <li>mark the others republished, only those unchanged since they were read (one short transaction), then
 *       publish their triggers. A publish that fails leaves marked runs without a trigger: a later sweep
 *       finds them again. A run whose trigger cannot be built is neither marked nor published, but reported:
 *       one bad row does not stop the sweep.</li>
 * </ol>
 * No row lock is held across a Redis call, so a completion never waits for a sweep.
 */
public final class Sweeper {

    private static final Logger log = LoggerFactory.getLogger(Sweeper.class);

    private final DataSource dataSource;
    private final SweeperStore sweeps;
    private final DeadLetterReconciler deadLetters;
    private final Bus bus;
    private final RunsConfig config;
    private final String cursorName;
    /**
     * Set in Redis again at every sweep, whatever this process's own options: Redis may have lost them, and the
     * sweeper is whichever process holds the lock.
     */
    private final FlowOverrideSync overrides;

    public Sweeper(DataSource dataSource, RunFailures failures, Bus bus, RunsConfig config) {
        this.dataSource = dataSource;
        this.sweeps = new SweeperStore(config.schema());
        this.deadLetters = new DeadLetterReconciler(failures, sweeps, bus, config);
        this.bus = bus;
        this.config = config;
        this.cursorName = "runs_after:" + config.topic() + ":" + config.group();
        this.overrides = new FlowOverrideSync(bus, config.topic(),
                new FlowOverrideStore(dataSource, config.schema()));
    }

    public SweepResult sweepOnce() throws SQLException {
        SweepResult result;
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            if (!sweeps.trySweeperLock(c)) {
                return SweepResult.SKIPPED;
            }
            try {
                result = sweepHoldingTheLock(c);
            } finally {
                sweeps.releaseSweeperLock(c);
            }
        }
        // After the sweep's connection went back: setting the overrides takes one of its own, and a sweep must not
        // hold two of the pool's at once.
        overrides.applyAll();
        return result;
    }

    private SweepResult sweepHoldingTheLock(Connection c) throws SQLException {
        // Before the candidates: a run that expired is not republished.
        int expired = sweeps.expireOverdue(c, config.sweepBatch());
        if (expired > 0) {
            log.info("sweeper expired {} runs not started before their expiry", expired);
        }
        Optional<SweeperStore.Cursor> after = sweeps.value(c, cursorName).flatMap(SweeperStore.Cursor::parse);
        List<SweeperStore.Candidate> candidates = sweeps.candidates(c, config.sweepThreshold(), after,
                config.sweepBatch());
        List<SweeperStore.Candidate> lost = new ArrayList<>();
        if (!candidates.isEmpty()) {
            Liveness liveness = Liveness.read(bus.inspector(), config);
            liveness.prepare(candidates);
            for (SweeperStore.Candidate cand : candidates) {
                boolean live;
                try {
                    live = liveness.isLive(cand);
                } catch (IllegalArgumentException e) {
                    // A row Redis cannot be asked about (a stream id of another partition count, a hand-written
                    // flow key): left alone rather than stopping every sweep at it, or republished on a guess.
                    log.warn("sweeper cannot tell whether run {} is live, left alone: {}", cand.runId(),
                            e.getMessage());
                    live = true;
                }
                if (!live) {
                    lost.add(cand);
                }
            }
        }
        // After asking Redis, not before: an entry XPENDING no longer found because it was dead-lettered
        // meanwhile has its dead letter in the stream by now (the move and its ack are one script). Failing its
        // run here changes its updated_at, so the mark below, which takes only runs unchanged since they were
        // read, does not republish it.
        DeadLetterReconciler.Result reconciled = deadLetters.reconcile(c);
        Map<UUID, Message> triggers = triggersOf(lost);
        List<SweeperStore.Candidate> publishable = lost.stream().filter(l -> triggers.containsKey(l.runId())).toList();
        List<SweeperStore.Republish> republish = Transactions.in(c,
                tx -> markAndMoveOn(tx, candidates, publishable));
        if (!republish.isEmpty()) {
            bus.publisher().publishAll(config.topic(), republish.stream().map(r -> triggers.get(r.runId())).toList());
            log.info("sweeper republished {} runs", republish.size());
        }
        return new SweepResult(true, reconciled.marked(), reconciled.skipped(), candidates.size(),
                candidates.size() - lost.size(), republish.size(), lost.size() - publishable.size(), expired);
    }

    /**
     * The trigger of each lost run, built before any is marked: one that cannot be built (an ordered run whose
     * user id is too long to be a message key, from before submissions refused it) is left out, unmarked, and
     * reported, instead of failing the sweep after its page was marked (every later sweep failed the same way, so
     * no lost run of that page was republished again). Ordered runs' triggers are keyed by the user, so they reach
     * the user's partition (behind later runs' triggers; OrderedRunWorker defers those).
     */
    private Map<UUID, Message> triggersOf(List<SweeperStore.Candidate> lost) {
        Map<UUID, Message> triggers = new HashMap<>();
        List<String> skipped = new ArrayList<>();
        for (SweeperStore.Candidate l : lost) {
            try {
                triggers.put(l.runId(), Triggers.of(l.runId(), config.ordered() ? l.userId() : null, Map.of(),
                        l.flow().onlyIf(config.flowControlled())));
            } catch (IllegalArgumentException e) {
                skipped.add(l.runId() + " (" + e.getMessage() + ")");
            }
        }
        if (!skipped.isEmpty()) {
            log.warn("sweeper cannot republish {} runs of topic {}, left as they are (fix or delete them): {}",
                    skipped.size(), config.topic(), skipped.size() <= 10 ? skipped : skipped.subList(0, 10) + " …");
        }
        return triggers;
    }

    /** Marks the lost runs republished and moves the cursor past this page. */
    private List<SweeperStore.Republish> markAndMoveOn(Connection c, List<SweeperStore.Candidate> candidates,
                                                       List<SweeperStore.Candidate> lost) throws SQLException {
        List<SweeperStore.Republish> marked = lost.isEmpty() ? List.of() : sweeps.markRepublished(c, lost);
        boolean fullPage = candidates.size() == config.sweepBatch();
        sweeps.setValue(c, cursorName, fullPage ? candidates.get(candidates.size() - 1).cursor().text() : "");
        return marked;
    }
}
