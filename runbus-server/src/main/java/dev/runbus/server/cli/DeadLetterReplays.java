package dev.runbus.server.cli;

import dev.runbus.DeadLetter;
import dev.runbus.DeadLetterAlreadyReplayedException;
import dev.runbus.DeadLetters;
import dev.runbus.NoSuchDeadLetterException;
import dev.runbus.runs.IllegalRunTransitionException;
import dev.runbus.runs.RunNotFoundException;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code dlq replay --all} and {@code --since}: every dead letter of a topic not replayed yet (dead since a time),
 * each replayed the way {@code dlq replay ID} replays one, a page at a time, with progress on stderr.
 *
 * <p>Two passes over each partition's dead letters, through {@link DeadLetters#listPartition}. The first counts what
 * there is to replay and notes where each partition's dead letters end; the second replays them, oldest first, and
 * stops at that end. So a dead letter made while the command runs (a replayed message failing again) is not replayed
 * by the same command, which could otherwise chase its own tail; and a partition's dead letters go back to their
 * partition (their key's) in the order they died, one partition after another, as many single replays in that order
 * would. Each dead letter is replayed at most once: a replay is recorded in Redis with it, and one replayed meanwhile
 * by someone else is skipped. A command stopped half-way (Redis or PostgreSQL failed) can be run again: what it
 * replayed is skipped then.
 */
final class DeadLetterReplays {

    /** Dead letters read per page; a progress line after each page of the second pass. */
    static final int PAGE = 500;

    /** How one dead letter is replayed: what it became (a stream id, or a run sent back to pending). */
    interface OneReplay {
        /**
         * @throws DeadLetterAlreadyReplayedException, NoSuchDeadLetterException, IllegalRunTransitionException,
         *                                             RunNotFoundException, DlqCommand.NotTheRunsDeadLetter: skipped,
         *                                             with the reason
         */
        String replay(DeadLetter d);
    }

    /** What the first pass found. */
    record Plan(long deadLetters, long toReplay, long replayedBefore, long older, long runTriggers,
                List<Optional<String>> lastIds) {
    }

    /** What the second pass did; {@code notReplayed} is each dead letter skipped for its state, with why. */
    record Result(long replayed, long replayedBefore, long older, List<Map<String, Object>> notReplayed) {
    }

    private final DeadLetters deadLetters;
    private final String topic;
    private final Instant since;
    private final PrintWriter progress;

    /** @param since only dead letters that died at or after it; null for all */
    DeadLetterReplays(DeadLetters deadLetters, String topic, Instant since, PrintWriter progress) {
        this.deadLetters = deadLetters;
        this.topic = topic;
        this.since = since;
        this.progress = progress;
    }

    Plan plan() {
        long total = 0;
        long toReplay = 0;
        long replayedBefore = 0;
        long older = 0;
        long runTriggers = 0;
        List<Optional<String>> lastIds = new ArrayList<>();
        for (int p = 0; p < deadLetters.partitions(topic); p++) {
            String after = null;
            while (true) {
                List<DeadLetter> page = deadLetters.listPartition(topic, p, after, PAGE);
                if (page.isEmpty()) {
                    break;
                }
                for (DeadLetter d : page) {
                    total++;
                    if (d.replayedAs().isPresent()) {
                        replayedBefore++;
                    } else if (isOlder(d)) {
                        older++;
                    } else {
                        toReplay++;
                        if (DlqCommand.runOf(d).isPresent()) {
                            runTriggers++;
                        }
                    }
                }
                after = page.get(page.size() - 1).id();
            }
            lastIds.add(Optional.ofNullable(after));
        }
        return new Plan(total, toReplay, replayedBefore, older, runTriggers, lastIds);
    }

    Result replay(Plan plan, OneReplay one) {
        progress.printf(Locale.ROOT, "%,d dead letters of topic %s to replay (of %,d: %,d replayed before%s)%n",
                plan.toReplay(), topic, plan.deadLetters(), plan.replayedBefore(),
                since == null ? "" : String.format(Locale.ROOT, ", %,d dead before %s", plan.older(), since));
        long replayed = 0;
        long replayedBefore = 0;
        long older = 0;
        List<Map<String, Object>> notReplayed = new ArrayList<>();
        for (int p = 0; p < plan.lastIds().size(); p++) {
            Optional<String> last = plan.lastIds().get(p);
            String after = null;
            boolean more = last.isPresent();
            while (more) {
                List<DeadLetter> page = deadLetters.listPartition(topic, p, after, PAGE);
                more = !page.isEmpty();
                for (DeadLetter d : page) {
                    if (compareIds(d.id(), last.get()) > 0) {
                        more = false; // dead since the first pass
                        break;
                    }
                    if (d.replayedAs().isPresent()) {
                        replayedBefore++;
                    } else if (isOlder(d)) {
                        older++;
                    } else {
                        String why = replayOne(d, one);
                        if (why == null) {
                            replayed++;
                        } else {
                            notReplayed.add(Map.of("id", d.id(), "reason", why));
                        }
                    }
                    after = d.id();
                }
                if (!page.isEmpty()) {
                    progress.printf(Locale.ROOT, "replayed %,d of %,d%n", replayed, plan.toReplay());
                }
            }
        }
        return new Result(replayed, replayedBefore, older, notReplayed);
    }

    /** Null when replayed; else why not, for a dead letter whose state changed since it was listed. */
    private static String replayOne(DeadLetter d, OneReplay one) {
        try {
            one.replay(d);
            return null;
        } catch (DeadLetterAlreadyReplayedException | NoSuchDeadLetterException | IllegalRunTransitionException
                 | RunNotFoundException | DlqCommand.NotTheRunsDeadLetter e) {
            return e.getMessage();
        }
    }

    private boolean isOlder(DeadLetter d) {
        return since != null && d.deadAt().isBefore(since);
    }

    /**
     * The order of two dead-letter ids of one partition: by their stream ids ({@code <ms>-<seq>}, unsigned), the
     * partition suffix ({@code @3}) being the same.
     */
    static int compareIds(String a, String b) {
        String[] x = streamId(a).split("-", 2);
        String[] y = streamId(b).split("-", 2);
        int c = Long.compareUnsigned(Long.parseUnsignedLong(x[0]), Long.parseUnsignedLong(y[0]));
        return c != 0 ? c : Long.compareUnsigned(Long.parseUnsignedLong(x[1]), Long.parseUnsignedLong(y[1]));
    }

    private static String streamId(String id) {
        int at = id.indexOf('@');
        return at < 0 ? id : id.substring(0, at);
    }
}
