package dev.runbus.runs.internal.sweep;

import dev.runbus.Bus;
import dev.runbus.DeadLetter;
import dev.runbus.runs.RunsConfig;
import dev.runbus.runs.internal.store.Transactions;
import dev.runbus.runs.internal.worker.RunFailures;
import dev.runbus.runs.internal.worker.Triggers;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One step of each sweep, after it asked Redis which runs are live: every dead letter of the workers' group
 * since its checkpoint fails its run, if the run's current attempt is still the dead-lettered entry (the bus's
 * listener usually did already; this covers a listener's write that was lost), or names the dead letter on a run
 * its ordered worker failed already. No clock is compared, so the checkpoint may move past dead
 * letters that mark nothing: a replayed run, or one running on another trigger, stays as it is.
 *
 * <p>One checkpoint per partition: each partition has a dead-letter stream of its own, whose ids only grow, but
 * ids of different partitions come from different clocks (a cluster's masters). One checkpoint over the merged
 * listing, ordered by time, passed over a dead letter added later to a partition whose clock is behind, for
 * good; its run, found not live, was then republished and executed again instead of failed. The checkpoint of a
 * plain topic keeps its former name; a partitioned topic's single checkpoint of before is no longer read (its row
 * stays: the runtime role may not delete), so its partitions are read from the start once more (marking again
 * changes nothing) and any dead letter it passed over is reconciled.
 *
 * <p>A dead letter it cannot use (written by another tool, or without a group, an original stream id or a run
 * trigger) is skipped, counted and reported, and the checkpoint moves past it: one bad entry must not stop
 * every later sweep. Each page of dead letters is read from Redis first, then its marks and the checkpoint
 * are written in one short transaction.
 */
final class DeadLetterReconciler {

    private static final Logger log = LoggerFactory.getLogger(DeadLetterReconciler.class);
    private static final int PAGE = 200;

    /** What one reconciliation did. */
    record Result(int marked, int skipped) {
    }

    private final RunFailures failures;
    private final SweeperStore sweeps;
    private final Bus bus;
    private final RunsConfig config;
    /** The checkpoint of a plain topic; before, the one checkpoint of every topic. */
    private final String plainCheckpoint;

    DeadLetterReconciler(RunFailures failures, SweeperStore sweeps, Bus bus, RunsConfig config) {
        this.failures = failures;
        this.sweeps = sweeps;
        this.bus = bus;
        this.config = config;
        this.plainCheckpoint = "dead_letters_after:" + config.topic() + ":" + config.group();
    }

    /** The name of partition {@code p}'s checkpoint in a topic of {@code partitions}. */
    private String checkpoint(int partitions, int p) {
        return partitions == 1 ? plainCheckpoint : plainCheckpoint + "@" + p;
    }

    /** Reconciles on {@code c}, which is in auto-commit. */
    Result reconcile(Connection c) throws SQLException {
        int partitions = bus.deadLetters().partitions(config.topic());
        List<String> names = new ArrayList<>(partitions);
        for (int p = 0; p < partitions; p++) {
            names.add(checkpoint(partitions, p));
        }
        Map<String, String> places = sweeps.values(c, names);
        int marked = 0;
        List<String> skipped = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            String name = checkpoint(partitions, p);
            marked += reconcilePartition(c, p, name, places.get(name), skipped);
        }
        if (!skipped.isEmpty()) {
            log.warn("sweeper skipped {} dead letters of topic {} that it cannot use (written by another tool, or"
                    + " without a group, an original stream id or a run trigger): {}", skipped.size(), config.topic(),
                    skipped.size() <= 10 ? skipped : skipped.subList(0, 10) + " …");
        }
        return new Result(marked, skipped.size());
    }

    /** The dead letters of partition {@code p} after {@code after}, a page per transaction; returns those marked. */
    private int reconcilePartition(Connection c, int p, String checkpoint, String after, List<String> skipped)
            throws SQLException {
        int marked = 0;
        while (true) {
            List<DeadLetter> page = bus.deadLetters().listPartition(config.topic(), p, after, PAGE);
            if (page.isEmpty()) {
                return marked;
            }
            String last = page.get(page.size() - 1).id();
            marked += Transactions.in(c, tx -> {
                int n = 0;
                for (DeadLetter dl : page) {
                    if (reconcileOne(tx, dl, skipped)) {
                        n++;
                    }
                }
                sweeps.setValue(tx, checkpoint, last);
                return n;
            });
            after = last;
            if (page.size() < PAGE) {
                return marked;
            }
        }
    }

    /** Fails the run of one dead letter if it is the run's current attempt; adds what it cannot use to skipped. */
    private boolean reconcileOne(Connection c, DeadLetter dl, List<String> skipped) throws SQLException {
        if (isBlank(dl.group()) || isBlank(dl.originalStreamId())) {
            skipped.add(dl.id());
            return false;
        }
        if (!config.group().equals(dl.group()) || dl.replayedAs().isPresent()) {
            return false; // another group's, or sent back by a replay that set its run pending
        }
        Optional<UUID> runId = Triggers.runIdOf(dl.message());
        if (runId.isEmpty()) {
            skipped.add(dl.id());
            return false;
        }
        return failures.applyDeadLetter(c, runId.get(), dl.reason(), dl.id(), dl.originalStreamId())
                != RunFailures.DeadLetterMark.UNCHANGED;
    }

    private static boolean isBlank(String s) {
        return s == null || s.isBlank();
    }
}
