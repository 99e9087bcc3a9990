package dev.runbus.internal;

import dev.runbus.DeadLetter;
import dev.runbus.Message;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** Moves a poison entry to its topic's dead-letter stream (atomically with its XACK) and reports it. */
final class DeadLetterMover {

    private final Scripts scripts;
    private final SafeListener listener;

    DeadLetterMover(Scripts scripts, SafeListener listener) {
        this.scripts = scripts;
        this.listener = listener;
    }

    /**
     * @param message the decoded message, for the listener; the script copies the entry's own fields
     * @return the dead letter, or empty when the entry was no longer pending (someone else finished it) or
     *     was trimmed meanwhile (then it is acked and reported as trimmed)
     */
    Optional<DeadLetter> move(SubscriptionContext ctx, String streamId, long deliveries, Message message,
                              String reason) {
        long now = System.currentTimeMillis();
        String bounded = OutcomePolicy.bounded(reason);
        String id = scripts.deadLetter(ctx.topic(), ctx.group(), streamId, ctx.consumer(), deliveries, bounded, now);
        if (id == null) {
            return Optional.empty();
        }
        if ("trimmed".equals(id)) {
            listener.onTrimmedWhilePending(ctx.topic(), ctx.group(), List.of(streamId));
            return Optional.empty();
        }
        DeadLetter dl = new DeadLetter(id, ctx.topic(), streamId, ctx.group(), ctx.consumer(), deliveries, bounded,
                Instant.ofEpochMilli(now), message, Optional.empty());
        listener.onDeadLetter(dl);
        return Optional.of(dl);
    }
}
