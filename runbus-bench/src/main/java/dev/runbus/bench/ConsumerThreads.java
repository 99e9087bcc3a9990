package dev.runbus.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * C consumer loops on threads of their own, for the hand-written contenders. Each loop body runs until
 * {@link #close()}; a failing body is reported once and retried after a short pause, as a user's loop would.
 */
final class ConsumerThreads implements Contender.Consumers {

    /** One pass of a consumer loop: read a batch (blocking briefly), handle it, acknowledge it. */
    interface Loop {
        void once() throws Exception;
    }

    /** Makes the loop of consumer {@code i} and whatever it needs to release afterwards. */
    interface LoopFactory {
        Loop create(int i) throws Exception;
    }

    private final List<Thread> threads = new ArrayList<>();
    private final List<AutoCloseable> resources = new ArrayList<>();
    private volatile boolean running = true;

    ConsumerThreads(String name, int consumers, LoopFactory factory) throws Exception {
        for (int i = 0; i < consumers; i++) {
            Loop loop = factory.create(i);
            Thread t = new Thread(() -> run(loop), name + "-" + i);
            t.setDaemon(true);
            threads.add(t);
        }
        threads.forEach(Thread::start);
    }

    /** Closed after the loops stopped. */
    ConsumerThreads closing(AutoCloseable resource) {
        resources.add(resource);
        return this;
    }

    private void run(Loop loop) {
        boolean reported = false;
        while (running) {
            try {
                loop.once();
            } catch (Exception e) {
                if (!running) {
                    return;
                }
                if (!reported) {
                    System.err.println(Thread.currentThread().getName() + ": " + e);
                    reported = true;
                }
                try {
                    Thread.sleep(100);
                } catch (InterruptedException ie) {
                    return;
                }
            }
        }
    }

    @Override
    public void close() {
        running = false;
        for (Thread t : threads) {
            try {
                t.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (AutoCloseable r : resources) {
            try {
                r.close();
            } catch (Exception e) {
                System.err.println("closing " + r + ": " + e);
            }
        }
    }
}
