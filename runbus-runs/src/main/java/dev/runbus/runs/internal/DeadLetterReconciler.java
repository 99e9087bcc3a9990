package dev.runbus.runs.internal;

import dev.runbus.Bus;
import dev.runbus.DeadLetter;
import dev.runbus.runs.RunsConfig;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
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

    DeadLetterReconciler(RunFailures failures, SweeperStore sweeps, Bus bus, RunsConfig config) {
        this.failures = failures;
        this.sweeps = sweeps;
        this.bus = bus;
        this.config = config;
    }

    /** Reconciles on {@code c}, which is in auto-commit. */
    Result reconcile(Connection c) throws SQLException {
        String checkpoint = "dead_letters_after:" + config.topic() + ":" + config.group();
        String after = sweeps.value(c, checkpoint).orElse(null);
        int marked = 0;
        List<String> skipped = new ArrayList<>();
        while (true) {
            List<DeadLetter> page = bus.deadLetters().list(config.topic(), after, PAGE);
            if (page.isEmpty()) {
                break;
            }
            marked += SweeperStore.inTransaction(c, tx -> {
                int n = 0;
                for (DeadLetter dl : page) {
                    if (reconcileOne(tx, dl, skipped)) {
                        n++;
                    }
                }
                sweeps.setValue(tx, checkpoint, page.get(page.size() - 1).id());
                return n;
            });
            after = page.get(page.size() - 1).id();
            if (page.size() < PAGE) {
                break;
            }
        }
        if (!skipped.isEmpty()) {
            log.warn("sweeper skipped {} dead letters of topic {} that it cannot use (written by another tool, or"
                    + " without a group, an original stream id or a run trigger): {}", skipped.size(), config.topic(),
                    skipped.size() <= 10 ? skipped : skipped.subList(0, 10) + " …");
        }
        return new Result(marked, skipped.size());
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
