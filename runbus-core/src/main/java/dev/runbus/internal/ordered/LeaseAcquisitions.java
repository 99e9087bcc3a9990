package dev.runbus.internal.ordered;

import dev.runbus.internal.redis.PartitionCalls;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * The lease acquisitions of an ordered consumer, sent without waiting, at most one per partition, each with a
 * deadline of its own ({@link PartitionCalls}): taking a partition whose master stalls holds up neither the renewals
 * of the other leases nor the membership (docs/architecture.md, rule 14). Each try carries an acquisition id, kept
 * until a call of it is answered: a call that got no answer may have taken the lease, and the next call of the same
 * try finds that lease and gets it as taken (lease_acquire.lua), instead of "held" until it expires. Used by one
 * thread at a time: the tick's, then the close's once the tick's thread ended.
 */
final class LeaseAcquisitions {

    /** Redis's answer to an acquisition of {@code name} sent at {@code sent} (System.nanoTime): the lease, or null. */
    record Answer(String name, long sent, String holder) {
    }

    private final OrderedScripts scripts;
    private final long leaseMillis;
    private final PartitionCalls<Answer> calls;
    /** The acquisition id of each partition's try that no answer settled yet. */
    private final Map<Integer, String> tries = new HashMap<>();
    private final PartitionCalls.Outcome<Answer> outcome;

    /** {@code outcome} hears of each answer (the lease, or null when another holds it) and of each failure. */
    LeaseAcquisitions(OrderedScripts scripts, long leaseMillis, long timeoutMillis,
                      PartitionCalls.Outcome<Answer> outcome) {
        this.scripts = scripts;
        this.leaseMillis = leaseMillis;
        this.calls = new PartitionCalls<>("lease acquisition", timeoutMillis);
        this.outcome = new PartitionCalls.Outcome<>() {
            @Override
            public void answered(int partition, Answer answer) {
                tries.remove(partition); // settled: the lease is known taken or held, and the next try is a new one
                outcome.answered(partition, answer);
            }

            @Override
            public void failed(int partition, Throwable error) {
                outcome.failed(partition, error); // may have run: the try goes on under the same id
            }
        };
    }

    boolean inFlight(int partition) {
        return calls.inFlight(partition);
    }

    /** Sends an acquisition of partition {@code partition} (named {@code name}), which must have none in flight. */
    void send(int partition, String name) {
        String acquisition = tries.computeIfAbsent(partition, p -> UUID.randomUUID().toString());
        long sent = System.nanoTime();
        calls.send(partition, () -> scripts.acquire(name, leaseMillis, acquisition)
                .thenApply(holder -> new Answer(name, sent, holder)));
    }

    /** Waits until every acquisition in flight is settled or {@code untilNanos} passed; hands each settled one over. */
    void awaitAll(long untilNanos) {
        calls.awaitAll(untilNanos, outcome);
    }

    /** Hands over, without waiting, the acquisitions settled since the last look. */
    void finishDone() {
        calls.finishDone(outcome);
    }
}
