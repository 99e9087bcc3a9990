package dev.runbus.spring;

/**
 * Runs a graceful stop on a thread of its own and then tells Spring it is done: the lifecycle processor waits for
 * the callback up to {@code spring.lifecycle.timeout-per-shutdown-phase}, and the beans of one phase stop at once
 * instead of one after the other.
 */
final class BackgroundStop {

    private BackgroundStop() {
    }

    static void run(String threadName, Runnable stop, Runnable callback) {
        Thread t = new Thread(() -> {
            try {
                stop.run();
            } finally {
                callback.run();
            }
        }, threadName);
        t.setDaemon(true);
        t.start();
    }
}
