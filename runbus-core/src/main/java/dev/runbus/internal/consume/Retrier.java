package dev.runbus.internal.consume;

import dev.runbus.Delivery;
import dev.runbus.internal.delay.CrashPoints;
import dev.runbus.internal.delay.DelayMover;
import dev.runbus.internal.delay.ScheduledIds;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import java.util.List;

/**
 * Retries a failed delivery later under the subscription's {@link dev.runbus.RetryPolicy} (when it is not on-idle): acks the
 * entry and schedules its copy, for this group, with the attempts made so far, in one script
 * ({@code retry_later.lua}), then tells the bus's delay mover when the copy is due. Without waiting: {@code done}
 * runs when Redis answered, or the call failed. A call that fails leaves the entry pending: it is taken over after
 * {@code minIdle} like any failed entry, and its delivery count goes on from there.
 */
final class Retrier {

    private final SubscriptionContext ctx;
    private final Scripts scripts;
    private final DelayMover mover;
    private final SafeListener listener;

    Retrier(SubscriptionContext ctx, Scripts scripts, DelayMover mover, SafeListener listener) {
        this.ctx = ctx;
        this.scripts = scripts;
        this.mover = mover;
        this.listener = listener;
    }

    /** True when failed deliveries go through the delay set rather than waiting for {@code minIdle}. */
    boolean delays() {
        return !ctx.options().retryPolicy().isOnIdle();
    }

    /** Reschedules entry {@code streamId} of {@code partition}, failed in delivery {@code d}. */
    void retryLater(int partition, String streamId, Delivery d, Runnable done) {
        long delay = ctx.options().retryDelay(d).toMillis();
        String name = ctx.name(partition);
        try {
            CrashPoints.reach(CrashPoints.Point.BEFORE_RETRY_SCHEDULE);
            scripts.retryLater(name, ctx.group(), ctx.consumer(), streamId, delay, d.attempt(), ScheduledIds.next(),
                            null)
                    .whenComplete((due, error) -> {
                        try {
                            CrashPoints.reach(CrashPoints.Point.AFTER_RETRY_SCHEDULE);
                            if (error != null) {
                                listener.onLoopError("retry later " + ctx.describe(), error);
                            } else if ("trimmed".equals(due)) {
                                listener.onTrimmedWhilePending(ctx.topic(), ctx.group(),
                                        List.of(ctx.qualify(partition, streamId)));
                            } else if (due != null) {
                                mover.hint(name, delay);
                            }
                        } finally {
                            done.run();
                        }
                    });
        } catch (RuntimeException e) {
            listener.onLoopError("retry later " + ctx.describe(), e);
            done.run();
        }
    }
}
