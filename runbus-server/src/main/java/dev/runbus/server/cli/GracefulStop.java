package dev.runbus.server.cli;

import dev.runbus.server.logging.JsonLogs;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * How serve, worker and demo learn that they should stop: SIGTERM or SIGINT (Ctrl-C). The signals are caught,
 * not left to the JVM, because the JVM would answer them by running every shutdown hook at once: a hook of
 * ours draining the worker alongside any other stopping the servers it drains into. Caught, they only wake the
 * command's own thread, which stops everything in order and then exits normally (0 after a clean drain).
 * A shutdown hook stays as the fallback for an exit that is not one of these signals (SIGHUP, System.exit
 * elsewhere): it asks for the same stop and waits until the command has finished it.
 */
final class GracefulStop implements AutoCloseable {

    private static final String[] SIGNALS = {"TERM", "INT"};

    private final CountDownLatch requested = new CountDownLatch(1);
    private final CountDownLatch finished = new CountDownLatch(1);
    private final Map<Signal, SignalHandler> previous = new HashMap<>();
    private final Thread hook;
    private final Runnable onRequest;
    private volatile String reason;

    private GracefulStop(Duration hookWait, Runnable onRequest) {
        this.onRequest = onRequest;
        for (String name : SIGNALS) {
            try {
                Signal signal = new Signal(name);
                previous.put(signal, Signal.handle(signal, s -> request("SIG" + s.getName())));
            } catch (IllegalArgumentException e) {
                // The JVM keeps this signal (-Xrs, or a platform without it); the shutdown hook still stops us.
            }
        }
        hook = new Thread(() -> {
            request("JVM shutdown");
            try {
                finished.await(hookWait.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "runbus-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /**
     * Starts listening for the stop signals.
     *
     * @param hookWait how long the fallback shutdown hook lets the command finish its stop
     */
    static GracefulStop install(Duration hookWait) {
        return new GracefulStop(hookWait, () -> { });
    }

    /** As {@link #install(Duration)}, and runs {@code onRequest} once when a stop is asked for. */
    static GracefulStop install(Duration hookWait, Runnable onRequest) {
        return new GracefulStop(hookWait, onRequest);
    }

    private synchronized void request(String why) {
        if (reason != null) {
            if (why.startsWith("SIG")) {
                // A second Ctrl-C: whoever sends it wants out now, even if a start-up or a drain hangs.
                String line = "runbus: " + why + " again: exiting at once, without finishing the stop (an"
                        + " embedded Redis or PostgreSQL may be left running)";
                if (JsonLogs.active()) {
                    JsonLogs.command(line);
                } else {
                    System.err.println(line);
                }
                System.err.flush();
                Runtime.getRuntime().halt(130);
            }
            return;
        }
        reason = why;
        requested.countDown();
        onRequest.run();
    }

    /** Blocks until a stop is asked for; returns what asked (e.g. {@code SIGTERM}). */
    String await() throws InterruptedException {
        requested.await();
        return reason;
    }

    /** Whether a stop was asked for already. */
    boolean requested() {
        return requested.getCount() == 0;
    }

    /** The stop is done: the fallback hook may let the JVM go, and the signals are the JVM's again. */
    @Override
    public void close() {
        finished.countDown();
        previous.forEach((signal, handler) -> {
            try {
                Signal.handle(signal, handler);
            } catch (IllegalArgumentException ignored) {
                // could not have been installed either
            }
        });
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException alreadyShuttingDown) {
            // the hook is running and returns now that finished is counted down
        }
    }
}
