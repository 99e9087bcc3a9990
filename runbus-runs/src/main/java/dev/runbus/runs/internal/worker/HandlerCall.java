package dev.runbus.runs.internal.worker;

import dev.runbus.runs.Reply;
import dev.runbus.runs.RunCancellation;
import dev.runbus.runs.RunContext;
import dev.runbus.runs.RunHandler;
import dev.runbus.runs.internal.store.EffectStore;
import dev.runbus.runs.internal.store.RunStore;
import dev.runbus.runs.internal.store.StoredEffects;
import java.util.List;

/** One call of the run handler on an attempt, as both workers make it: its context, and a null answer refused. */
final class HandlerCall {

    private HandlerCall() {
    }

    /**
     * Runs the handler on the attempt and returns its replies; throws what the handler threw. {@code cancellation}
     * tells the handler of its run's cancel.
     */
    static List<Reply> execute(RunHandler handler, EffectStore effects, ProgressWrites progress,
                               RunCancellation cancellation, RunStore.Attempt a) throws Exception {
        List<Reply> replies = handler.execute(new RunContext(a.runId(), a.idempotencyKey(), a.sessionId(), a.userId(),
                a.input(), a.attempt(), new StoredEffects(effects, a.runId()),
                progress == null ? dev.runbus.runs.RunProgress.NONE : progress.of(a.runId()), cancellation));
        if (replies == null) {
            throw new IllegalStateException("RunHandler returned null instead of a list of replies");
        }
        CrashPoints.reach(CrashPoints.Point.AFTER_HANDLER_BEFORE_COMMIT);
        return replies;
    }
}
