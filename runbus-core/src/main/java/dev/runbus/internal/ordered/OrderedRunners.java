package dev.runbus.internal.ordered;

import dev.runbus.internal.telemetry.SafeListener;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code concurrency} runners taking partitions that have work: so different partitions run in parallel and one
 * partition never runs on two runners at once ({@link OwnedPartition#schedule} hands a partition to one queue
 * or runner at a time, and only while no runner has it). A runner keeps a partition for its next step while no
 * other partition waits. A runner never dies of an exception nor of an interrupt; it ends only on
 * {@link #stop}.
 */
final class OrderedRunners {

    private static final Logger log = LoggerFactory.getLogger(OrderedRunners.class);

    private final String describe;
    private final int count;
    private final Predicate<OwnedPartition> step;
    private final SafeListener listener;
    private final BlockingQueue<OwnedPartition> ready = new LinkedBlockingQueue<>();
    /** Queued once per runner by {@link #stop}: a runner waiting for a partition ends at once. Never run. */
    private final OwnedPartition wakeUp = new OwnedPartition(-1, "wake-up", "", 0, 0);
    private final CountDownLatch done;
    private volatile boolean started;
    private volatile boolean stopping;

    /** {@code step} runs one step of a partition and says whether the partition was scheduled for another. */
    OrderedRunners(String describe, int count, Predicate<OwnedPartition> step, SafeListener listener) {
        this.describe = describe;
        this.count = count;
        this.step = step;
        this.listener = listener;
        this.done = new CountDownLatch(count);
    }

    void start(Executor executor) {
        started = true;
        for (int i = 0; i < count; i++) {
            try {
                executor.execute(this::runner);
            } catch (RejectedExecutionException e) {
                for (int unstarted = i; unstarted < count; unstarted++) {
                    done.countDown();
                }
                throw new IllegalStateException("the executor of " + describe + " rejected a handler task", e);
            }
        }
    }

    /** Queues the partition for a step if it has work and is not queued or running already. */
    void offer(OwnedPartition p) {
        if (!stopping && p.schedule()) {
            ready.add(p);
        }
    }

    private void runner() {
        try {
            while (!stopping) {
                OwnedPartition p;
                try {
                    p = ready.poll(50, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    continue; // from outside (a handler's flag is cleared after its call): run on until stopped
                }
                if (p == wakeUp) {
                    return;
                }
                // A partition with more to do stays on this runner while no other partition waits: no hand-off
                // to another thread between two entries of one partition.
                while (p != null && step.test(p)) {
                    if (stopping) {
                        break;
                    }
                    if (!ready.isEmpty()) {
                        ready.add(p);
                        break;
                    }
                }
            }
        } catch (Throwable unexpected) {
            log.error("{}: a partition runner ended unexpectedly", describe, unexpected);
            listener.onLoopError("partition runner " + describe, unexpected);
        } finally {
            done.countDown();
        }
    }

    /** No new step starts; waits for the steps running. Returns false if they did not end in time. */
    boolean stop(long timeoutMillis) throws InterruptedException {
        stopping = true;
        ready.clear();
        for (int i = 0; i < count; i++) {
            ready.add(wakeUp);
        }
        return !started || done.await(timeoutMillis, TimeUnit.MILLISECONDS);
    }
}
