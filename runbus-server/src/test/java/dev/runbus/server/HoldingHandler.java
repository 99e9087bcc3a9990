package dev.runbus.server;

import dev.runbus.runs.Reply;
import dev.runbus.runs.RunContext;
import dev.runbus.runs.RunHandler;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A test handler whose runs with input starting "hold" stay running until {@link #release()}, so that a test
 * can keep event streams open ("hold big" then replies 16 MiB); other inputs are answered at once. State is static: one test at a time uses it.
 */
public final class HoldingHandler implements RunHandler {

    /** The reply of a run whose input starts "hold big": more than a client's socket takes unread. */
    static final int BIG_REPLY = 16 << 20;

    private static volatile CountDownLatch gate = new CountDownLatch(1);

    static void reset() {
        gate = new CountDownLatch(1);
    }

    static void release() {
        gate.countDown();
    }

    @Override
    public List<Reply> execute(RunContext run) throws InterruptedException {
        if (run.input().startsWith("hold")) {
            gate.await(60, TimeUnit.SECONDS);
        }
        if (run.input().startsWith("hold big")) {
            return List.of(Reply.assistant("x".repeat(BIG_REPLY)));
        }
        return List.of(Reply.assistant("held:" + run.input()));
    }
}
