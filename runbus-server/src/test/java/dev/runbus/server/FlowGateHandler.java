package dev.runbus.server;

import dev.runbus.runs.Reply;
import dev.runbus.runs.RunContext;
import dev.runbus.runs.RunHandler;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test handler for {@link ServeFlowControlTest}: a run's input names its tenant ({@code <tenant>/<n>}); every run
 * waits for the gate, and the most runs of one tenant at once is kept. State is static: one test uses it.
 */
public final class FlowGateHandler implements RunHandler {

    static final Map<String, AtomicInteger> RUNNING = new ConcurrentHashMap<>();
    static final AtomicInteger MOST_OF_ONE_TENANT = new AtomicInteger();
    static final AtomicInteger STARTED = new AtomicInteger();
    private static final CountDownLatch GATE = new CountDownLatch(1);

    static void open() {
        GATE.countDown();
    }

    @Override
    public List<Reply> execute(RunContext run) throws InterruptedException {
        AtomicInteger running = RUNNING.computeIfAbsent(run.input().split("/")[0], t -> new AtomicInteger());
        MOST_OF_ONE_TENANT.accumulateAndGet(running.incrementAndGet(), Math::max);
        STARTED.incrementAndGet();
        try {
            GATE.await(60, TimeUnit.SECONDS);
        } finally {
            running.decrementAndGet();
        }
        return List.of(Reply.assistant("ran:" + run.input()));
    }
}
