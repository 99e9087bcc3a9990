package dev.runbus.internal.consume;

import dev.runbus.internal.redis.PartitionCalls;
import dev.runbus.internal.redis.RetryBackoff;
import dev.runbus.internal.redis.Slots;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings each partition of a subscription to where its new entries may be read: its group exists on the stream, and
 * this consumer's own pending entries there (from an earlier run) were re-read and handed to the dispatcher
 * (docs/architecture.md, rule 6). Each partition goes on its own (rule 14): its calls are sent without waiting, each
 * with the command timeout as deadline ({@link PartitionCalls}), and a step waits {@value #WAIT_MILLIS} ms at most for
 * them; a partition whose master does not answer is tried again, backing off, and reported, while the others are
 * re-read, then read, meanwhile. Used by the read loop's thread; {@link #reread} by the reclaimer's too.
 */
final class PartitionStartup {

    private static final Logger log = LoggerFactory.getLogger(PartitionStartup.class);
    /** How long a step waits for the calls it sent before it leaves them in flight. */
    static final long WAIT_MILLIS = 200;
    private static final String START = "0";
    /** The longest an idle step sleeps with no call in flight: waiting for room, or for a partition to try again. */
    private static final long IDLE_MILLIS = 20;

    private final SubscriptionContext ctx;
    private final Scripts scripts;
    private final ReadLoop.GroupCreator groups;
    private final Slots slots;
    private final Dispatcher dispatcher;
    private final SafeListener listener;
    private final int partitions;
    private final int share;
    private final PartitionCalls<Void> creations;
    private final PartitionCalls<Scripts.ReadResult> rereads;
    /** Whether the group is known to exist on each partition's stream. */
    private final boolean[] groupExists;
    /** 1 once a partition's own pending entries were re-read (the reclaimer reads it too). */
    private final AtomicIntegerArray reread;
    /** Where each partition's re-read goes on: after this id. */
    private final String[] after;
    /** Slots each partition's re-read in flight holds. */
    private final int[] room;
    /** When each partition that failed may be tried again (System.nanoTime). */
    private final long[] retryAt;
    private final RetryBackoff[] backoff;
    private final List<Integer> all;
    /** Every partition readable and no call in flight: the steady state, where a step has nothing to do. */
    private boolean settled;

    private final PartitionCalls.Outcome<Void> created = new PartitionCalls.Outcome<>() {
        @Override
        public void answered(int partition, Void nothing) {
            groupExists[partition] = true;
            backoff[partition].reset();
        }

        @Override
        public void failed(int partition, Throwable error) {
            retryLater(partition, "creating group " + ctx.group() + " on " + ctx.name(partition), error);
        }
    };

    private final PartitionCalls.Outcome<Scripts.ReadResult> read = new PartitionCalls.Outcome<>() {
        @Override
        public void answered(int partition, Scripts.ReadResult r) {
            slots.release(room[partition] - r.entries().size());
            room[partition] = 0;
            backoff[partition].reset();
            if (!r.trimmed().isEmpty()) {
                listener.onTrimmedWhilePending(ctx.topic(), ctx.group(), ctx.qualify(partition, r.trimmed()));
            }
            dispatcher.accept(r.entries(), slots);
            if (r.lastId() == null) {
                after[partition] = START;
                reread.set(partition, 1);
            } else {
                after[partition] = r.lastId();
            }
        }

        @Override
        public void failed(int partition, Throwable error) {
            slots.release(room[partition]);
            room[partition] = 0;
            if (missingGroup(error)) {
                log.warn("group {} of {} is missing; creating it again", ctx.group(), ctx.name(partition));
                groupExists[partition] = false;
                return;
            }
            retryLater(partition, "re-reading the own pending entries of " + ctx.name(partition), error);
        }
    };

    /** {@code groupsCreated}: the partitions whose group the subscribe found or created. */
    PartitionStartup(SubscriptionContext ctx, Scripts scripts, ReadLoop.GroupCreator groups, Slots slots,
                     Dispatcher dispatcher, SafeListener listener, long commandTimeoutMillis, Set<Integer> groupsCreated) {
        this.ctx = ctx;
        this.scripts = scripts;
        this.groups = groups;
        this.slots = slots;
        this.dispatcher = dispatcher;
        this.listener = listener;
        this.partitions = ctx.partitions().count();
        this.share = Math.max(1, ctx.options().batchSize() / partitions);
        this.creations = new PartitionCalls<>("group creation", commandTimeoutMillis);
        this.rereads = new PartitionCalls<>("own pending re-read", commandTimeoutMillis);
        this.groupExists = new boolean[partitions];
        this.reread = new AtomicIntegerArray(partitions);
        this.after = new String[partitions];
        this.room = new int[partitions];
        this.retryAt = new long[partitions];
        this.backoff = new RetryBackoff[partitions];
        List<Integer> every = new ArrayList<>(partitions);
        long now = System.nanoTime();
        for (int p = 0; p < partitions; p++) {
            every.add(p);
            groupExists[p] = groupsCreated.contains(p);
            after[p] = START;
            retryAt[p] = now;
            backoff[p] = new RetryBackoff();
        }
        this.all = List.copyOf(every);
    }

    /** Whether partition {@code p}'s own pending entries were re-read: only then may the reclaimer take its entries. */
    boolean reread(int p) {
        return reread.get(p) == 1;
    }

    /** The partitions whose new entries may be read: own pending entries re-read, group there. */
    List<Integer> readable() {
        if (settled) {
            return all;
        }
        List<Integer> out = new ArrayList<>(partitions);
        for (int p = 0; p < partitions; p++) {
            if (groupExists[p] && reread(p)) {
                out.add(p);
            }
        }
        return out;
    }

    /**
     * A read found the group missing on a stream, without saying which: each partition's group is created again (an
     * existing one is left as it is). What was re-read stays re-read.
     */
    void groupsMissing() {
        java.util.Arrays.fill(groupExists, false);
        settled = false;
    }

    /**
     * One step: hands over the calls answered since, sends the next call of each partition not readable yet (its
     * group, or its next own pending entries) and waits up to {@value #WAIT_MILLIS} ms for them. When {@code idle}
     * (nothing else for the loop to do) and it sent nothing, it waits as long for the calls left in flight, or, with
     * none, up to {@value #IDLE_MILLIS} ms for room or for a partition to try again. Never throws.
     */
    void step(boolean idle) {
        if (settled) {
            return;
        }
        creations.finishDone(created);
        rereads.finishDone(read);
        long now = System.nanoTime();
        List<Integer> sent = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            if (groupExists[p] && reread(p) || creations.inFlight(p) || rereads.inFlight(p) || now - retryAt[p] < 0) {
                continue;
            }
            if (send(p)) {
                sent.add(p);
            }
        }
        long until = now + TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS);
        for (int p : sent) {
            await(p, until - System.nanoTime());
        }
        settled = sent.isEmpty() && !anyInFlight() && readable().size() == partitions;
        if (idle && sent.isEmpty()) {
            if (anyInFlight()) {
                creations.awaitAll(until, created);
                rereads.awaitAll(until, read);
            } else {
                pauseUntilRetry(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(IDLE_MILLIS));
            }
        }
    }

    private boolean anyInFlight() {
        for (int p = 0; p < partitions; p++) {
            if (creations.inFlight(p) || rereads.inFlight(p)) {
                return true;
            }
        }
        return false;
    }

    /** Sends partition {@code p}'s next call; false when there was no room for its entries. */
    private boolean send(int p) {
        if (!groupExists[p]) {
            creations.send(p, () -> groups.ensureGroupAsync(ctx.name(p), ctx.group()));
            return true;
        }
        int taken = slots.takeFree(share);
        if (taken == 0) {
            return false; // all held by handlers: tried again next step
        }
        room[p] = taken;
        String from = after[p];
        rereads.send(p, () -> scripts.readOwnPendingAsync(ctx.partitions(), p, ctx.group(), ctx.consumer(), from,
                taken));
        return true;
    }

    private void await(int p, long waitNanos) {
        if (creations.inFlight(p)) {
            creations.await(p, waitNanos, created);
        } else {
            rereads.await(p, waitNanos, read);
        }
    }

    /** Sleeps until the first partition waiting to try again may, or {@code untilNanos}, whichever comes first. */
    private void pauseUntilRetry(long untilNanos) {
        long wake = untilNanos;
        long now = System.nanoTime();
        for (int p = 0; p < partitions; p++) {
            if (!(groupExists[p] && reread(p)) && retryAt[p] - now > 0 && retryAt[p] - wake < 0) {
                wake = retryAt[p];
            }
        }
        long pause = TimeUnit.NANOSECONDS.toMillis(wake - now);
        if (pause > 0) {
            try {
                Thread.sleep(pause); // nothing to do before then
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void retryLater(int p, String what, Throwable error) {
        long pause = backoff[p].next();
        retryAt[p] = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pause);
        log.warn("{} for {} failed; trying again in {} ms", what, ctx.describe(), pause, error);
        listener.onLoopError(what + " for " + ctx.describe(), error);
    }

    private static boolean missingGroup(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (String.valueOf(t.getMessage()).contains("NOGROUP")) {
                return true;
            }
        }
        return false;
    }
}
