package dev.runbus.internal.ordered;

import dev.runbus.internal.consume.SubscriptionContext;
import dev.runbus.internal.redis.PartitionCalls;
import dev.runbus.internal.telemetry.SafeListener;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which partitions of an ordered group this consumer owns. Every tick it renews its membership (and learns the
 * live members), reads who owns each partition, renews the leases it holds, hands over the partitions the
 * {@link Assignment} now gives to others, and takes the free ones it should own.
 *
 * <p>Timing, with lease time L and tick T = min(L/3, 1 s): a lease renewed by a call sent at time s lets this
 * consumer start work until s + L − L/5 on its own monotonic clock, while Redis keeps the lease until at least
 * s + L on its clock: a consumer that stopped renewing (crashed, paused, cut off) starts nothing after its
 * lease could have passed to another. A member that stops renewing drops out of the member list L after its
 * last renewal, and its partitions (only its: the assignment is sticky) are taken at the first tick after its
 * leases expired: within L + T of its death, also when another member is paused meanwhile (one that has not
 * renewed for two ticks is given nothing free, {@link Assignment}). A member that begins to close leaves the
 * members and frees its idle partitions at once, the others as their running entries end (taken within T);
 * one that joins gets the others' surplus within about two ticks plus the entry running on them.
 *
 * <p>Nothing a tick sends waits longer than a part of the tick ({@link #waitMillis}): renewals, acquisitions
 * ({@link LeaseAcquisitions}) and releases ({@link LeaseReleases}) each have a deadline of their own, so that a lease
 * moving on a stalled master holds up neither the other leases nor the membership (rule 14).
 */
final class PartitionOwnership implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(PartitionOwnership.class);
    private static final long STALE_SLACK_MILLIS = 250;

    private final SubscriptionContext ctx;
    private final OrderedScripts scripts;
    private final SafeListener listener;
    private final Consumer<OwnedPartition> acquired;
    private final long leaseMillis;
    private final long validNanos;
    /** A member whose last renewal is older than this (two ticks and a slack) gets no free partition. */
    private final long staleAfterMillis;
    private final long commandTimeoutMillis;
    private final Map<Integer, OwnedPartition> owned = new ConcurrentHashMap<>();
    /** Partitions lost while a handler still ran on them: not taken back here until it ended. */
    private final Map<Integer, OwnedPartition> lostRunning = new ConcurrentHashMap<>();
    /** Closing: leases are still renewed (handlers finish under them), but none is taken or handed over. */
    private volatile boolean closing;
    private volatile boolean leaving;
    /**
     * Renewals in flight, one per partition at most, each with its own deadline: a tick waits for their answers
     * {@link #waitMillis} at most, so that a stalled master delays neither the other partitions' renewals nor the
     * next tick (docs/architecture.md, rule 14). The tick's thread only.
     */
    private final PartitionCalls<Renewed> renewals;
    private final LeaseAcquisitions acquisitions;
    private final LeaseReleases releases;
    private final long waitMillis;
    /** The owners the last tick found; a partition whose lookup gets no answer keeps its owner here. */
    private Map<Integer, String> owners = Map.of();
    /** Ends the owned-partitions gauge, at {@link #leave}. */
    private final Runnable ownedGauge;

    /** A renewal's answer: whether the lease of {@code p}, renewed by a call sent at {@code sent}, is still held. */
    private record Renewed(OwnedPartition p, long sent, boolean held) {
    }

    private final PartitionCalls.Outcome<Renewed> renewalOutcome = new PartitionCalls.Outcome<>() {
        @Override
        public void answered(int partition, Renewed r) {
            renewed(r);
        }

        @Override
        public void failed(int partition, Throwable error) {
            // The lease runs out on its own if Redis stays away: nothing starts after that.
            listener.onLoopError("renewing the lease of " + ctx.name(partition) + " for " + ctx.describe(), error);
        }
    };

    private final PartitionCalls.Outcome<LeaseAcquisitions.Answer> acquisitionOutcome = new PartitionCalls.Outcome<>() {
        @Override
        public void answered(int partition, LeaseAcquisitions.Answer a) {
            if (a.holder() != null) {
                taken(partition, a);
            }
        }

        @Override
        public void failed(int partition, Throwable error) {
            // It may have taken the lease: the next try of the same acquisition gets it (lease_acquire.lua).
            listener.onLoopError("taking the lease of " + ctx.name(partition) + " for " + ctx.describe(), error);
        }
    };

    /** {@code acquired} hears of each partition taken, to schedule its catching up. */
    PartitionOwnership(SubscriptionContext ctx, OrderedScripts scripts, SafeListener listener,
                       Consumer<OwnedPartition> acquired, long commandTimeoutMillis) {
        this.commandTimeoutMillis = commandTimeoutMillis;
        this.ctx = ctx;
        this.scripts = scripts;
        this.listener = listener;
        this.acquired = acquired;
        this.leaseMillis = ctx.options().leaseTime().toMillis();
        this.validNanos = TimeUnit.MILLISECONDS.toNanos(leaseMillis - leaseMillis / 5);
        this.staleAfterMillis = 2 * tick(ctx.options().leaseTime()).toMillis() + STALE_SLACK_MILLIS;
        this.renewals = new PartitionCalls<>("lease renewal", commandTimeoutMillis);
        this.acquisitions = new LeaseAcquisitions(scripts, leaseMillis, commandTimeoutMillis, acquisitionOutcome);
        this.releases = new LeaseReleases(ctx, scripts, listener, commandTimeoutMillis);
        this.waitMillis = Math.min(commandTimeoutMillis, tick(ctx.options().leaseTime()).toMillis() / 4);
        this.ownedGauge = listener.meters().ownedPartitions(ctx.topic(), ctx.group(), ctx.consumer(), owned::size);
    }

    /** How often {@link #run} should be called. */
    static java.time.Duration tick(java.time.Duration leaseTime) {
        java.time.Duration third = leaseTime.dividedBy(3);
        return third.compareTo(java.time.Duration.ofSeconds(1)) < 0 ? third : java.time.Duration.ofSeconds(1);
    }

    /**
     * One tick. The leases are renewed first, so that nothing slower (the member list, the owners) delays them;
     * hand-overs and acquisitions are sent without waiting for more than {@link #waitMillis}.
     */
    @Override
    public void run() {
        if (leaving) {
            return;
        }
        renewals.finishDone(renewalOutcome); // answers that came after their tick stopped waiting
        acquisitions.finishDone();
        owned.values().forEach(this::renew);
        renewals.awaitAll(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis), renewalOutcome);
        if (closing) {
            return; // left the members at closing(): what it still holds, it renews until its handlers end
        }
        OrderedScripts.Members members = scripts.members(ctx.topic(), leaseMillis, staleAfterMillis, 2 * waitMillis);
        owners = scripts.owners(ctx.partitions(), waitMillis, owners);
        Set<Integer> target = Assignment.of(members.live(), members.stale(), owners, ctx.consumer(),
                ctx.partitions().count());
        for (OwnedPartition p : new ArrayList<>(owned.values())) {
            if (!target.contains(p.number) && owned.get(p.number) == p) {
                p.requestHandOver();
                handOverIfIdle(p);
            }
        }
        lostRunning.values().removeIf(p -> !p.isRunning());
        for (int n : target) {
            if (!owned.containsKey(n) && !lostRunning.containsKey(n) && !releases.inFlight(n)
                    && !acquisitions.inFlight(n) && !closing) {
                acquisitions.send(n, ctx.name(n));
            }
        }
        acquisitions.awaitAll(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis));
    }

    /**
     * A close begins: no lease is taken any more, the partitions no handler runs on are handed over at once, the
     * others as soon as their step ends, and this consumer leaves the members, so that the others take them at
     * their next tick instead of after the whole drain. The leases still held are renewed until {@link #leave}. It
     * leaves once the releases are answered, so that the others find those partitions free, or after
     * {@link #waitMillis} (a release to a stalled master is not waited for).
     */
    void closing() {
        closing = true;
        for (OwnedPartition p : owned()) {
            p.requestHandOver();
            handOverIfIdle(p);
        }
        releases.awaitAll(waitMillis);
        try {
            scripts.members(ctx.topic(), 0, 0, commandTimeoutMillis);
        } catch (RuntimeException e) {
            listener.onLoopError("leaving the members of " + ctx.describe(), e);
        }
    }

    private void renew(OwnedPartition p) {
        if (p.isEnded()) {
            owned.remove(p.number, p);
            return;
        }
        if (renewals.inFlight(p.number)) {
            return; // the last renewal is still unanswered: its master stalls
        }
        long sent = System.nanoTime();
        renewals.send(p.number, () -> scripts.renew(p.name, p.holder, leaseMillis)
                .thenApply(held -> new Renewed(p, sent, held)));
    }

    private void renewed(Renewed r) {
        OwnedPartition p = r.p();
        if (p.isEnded()) {
            return; // answered after the partition ended here
        }
        if (r.held()) {
            p.renewed(r.sent() + validNanos);
            acquired.accept(p); // a step that found the lease too old to start may run now
        } else {
            lost(p, "its lease expired or was taken");
        }
    }

    /**
     * The lease of {@code partition} was taken by a call sent at {@code a.sent()}. Taken while this consumer closes,
     * it is handed over at once (checked after it is owned: {@link #closing} hands over what is owned after it set
     * the flag).
     */
    private void taken(int partition, LeaseAcquisitions.Answer a) {
        OwnedPartition p = new OwnedPartition(partition, a.name(), a.holder(), a.sent() + validNanos,
                commandTimeoutMillis);
        owned.put(partition, p);
        listener.meters().leaseChanged(ctx.topic(), ctx.group(), "acquired");
        log.debug("{}: owns partition {} ({})", ctx.describe(), partition, a.holder());
        if (closing || leaving) {
            p.requestHandOver();
            handOverIfIdle(p);
            return;
        }
        acquired.accept(p);
    }

    /** A fenced call was refused, or the lease could not be renewed: the partition is another's now. */
    void lost(OwnedPartition p, String why) {
        p.end();
        if (p.isRunning()) {
            lostRunning.put(p.number, p);
        }
        if (owned.remove(p.number, p)) {
            listener.meters().leaseChanged(ctx.topic(), ctx.group(), "lost");
            log.warn("{}: lost partition {}: {}; its unfinished entries go to the next owner", ctx.describe(),
                    p.number, why);
        }
    }

    /** Hands the partition over if no runner is in a step on it; called again when the step ends. */
    void handOverIfIdle(OwnedPartition p) {
        if (p.handOverRequested() && p.endIfIdle() && owned.remove(p.number, p)) {
            releases.release(p);
        }
    }

    /**
     * Writes the retry record a partition owes (its periodic write had not succeeded yet), once, before its lease is
     * released; true when nothing is owed any more.
     */
    private boolean writeOwedRetry(OwnedPartition p) {
        if (!p.retryOwed()) {
            return true;
        }
        long left = TimeUnit.NANOSECONDS.toMillis(p.retryOwedUntil() - System.nanoTime());
        try {
            if (left > 0) {
                scripts.retryAt(p.name, p.holder, p.retryOwedFor(), left); // false: fenced off, another's partition
            }
            p.retryRecorded();
            return true;
        } catch (RuntimeException failed) {
            listener.onLoopError("recording the retry of " + p.retryOwedFor() + " on " + p.name + " of "
                    + ctx.describe(), failed);
            return false;
        }
    }

    /** The partitions owned now. */
    List<OwnedPartition> owned() {
        return new ArrayList<>(owned.values());
    }

    /**
     * Leaves the group: ends every partition, releases the leases and the membership, so that the others take
     * the partitions over at their next tick. A partition whose handler still runs (close gave up waiting for
     * it) keeps its lease until it expires, one lease time at most: the next owner does not start beside it
     * sooner, and its ack is refused after that. So does a partition whose head waits for a retry that Redis could
     * not be told of (its record is owed): the next owner, finding no record, would retry at once. Called once the
     * tick's thread ended: the acquisitions still on their way are awaited (their deadlines), and a lease they took is
     * released too.
     */
    void leave() {
        leaving = true;
        for (OwnedPartition p : owned()) {
            boolean keepLease = p.isRunning() || !writeOwedRetry(p);
            p.end();
            owned.remove(p.number, p);
            if (!keepLease) {
                releases.release(p);
            }
        }
        acquisitions.awaitAll(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(commandTimeoutMillis));
        releases.awaitAll(2 * commandTimeoutMillis);
        try {
            scripts.members(ctx.topic(), 0, 0, commandTimeoutMillis);
        } catch (RuntimeException e) {
            listener.onLoopError("leaving the members of " + ctx.describe(), e);
        }
        ownedGauge.run();
    }
}
