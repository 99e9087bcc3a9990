package dev.runbus.spring;

import dev.runbus.Bus;
import dev.runbus.Subscription;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Starts a subscription per listener method once the context is refreshed, and stops them in Boot's graceful
 * shutdown: each subscription stops reading, lets its running handlers finish (up to the listener's
 * {@code shutdownTimeout}) and flushes its acknowledgements, on a thread of its own so that Boot's
 * {@code spring.lifecycle.timeout-per-shutdown-phase} bounds the wait. It stops in an early phase, before the
 * bus closes and before the DataSource a handler may use.
 */
public class RunbusListenerContainer implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(RunbusListenerContainer.class);

    /** Late in start, early in stop: after the beans handlers use are up, before they go down. */
    public static final int PHASE = Integer.MAX_VALUE - 1000;

    private final Bus bus;
    private final Supplier<List<ListenerEndpoint>> endpoints;
    private final List<Subscription> subscriptions = new ArrayList<>();
    private final LoopErrors loopErrors = new LoopErrors(java.time.Clock.systemUTC());
    private AutoCloseable loopErrorsHandle;
    private volatile boolean running;

    RunbusListenerContainer(Bus bus, Supplier<List<ListenerEndpoint>> endpoints) {
        this.bus = bus;
        this.endpoints = endpoints;
    }

    @Override
    public synchronized void start() {
        loopErrorsHandle = bus.addListener(loopErrors);
        for (ListenerEndpoint e : endpoints.get()) {
            subscriptions.add(bus.subscribe(e.topic(), e.group(), e.consumer(), e.handler(), e.options()));
            log.info("runbus: {} consumes {} in group {} as {}", e.handler(), e.topic(), e.group(), e.consumer());
        }
        running = true;
    }

    @Override
    public void stop() {
        closeAll();
    }

    @Override
    public void stop(Runnable callback) {
        BackgroundStop.run("runbus-listeners-stop", this::closeAll, callback);
    }

    /**
     * Closes the subscriptions side by side: each waits up to its own {@code shutdownTimeout} for its handlers, and
     * one after the other those waits would add up past Boot's shutdown phase.
     */
    private synchronized void closeAll() {
        List<Thread> closers = new ArrayList<>(subscriptions.size());
        for (Subscription s : subscriptions) {
            Thread t = new Thread(() -> close(s), "runbus-listener-close-" + s.topic() + "/" + s.group());
            t.start();
            closers.add(t);
        }
        boolean interrupted = false;
        for (Thread t : closers) {
            while (t.isAlive()) {
                try {
                    t.join();
                } catch (InterruptedException e) {
                    interrupted = true; // the closes go on regardless; the flag is restored below
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        subscriptions.clear();
        if (loopErrorsHandle != null) {
            try {
                loopErrorsHandle.close();
            } catch (Exception e) {
                log.debug("runbus: removing the loop-error listener failed", e);
            }
            loopErrorsHandle = null;
        }
        running = false;
    }

    private static void close(Subscription s) {
        try {
            s.close();
        } catch (RuntimeException e) {
            log.warn("runbus: closing the subscription of {} in {} failed", s.topic(), s.group(), e);
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }

    /** The last error of each background loop that failed since the start, with its time. */
    Map<String, LoopErrors.LastError> loopErrors() {
        return loopErrors.snapshot();
    }

    /** The subscriptions running now. */
    public synchronized List<Subscription> subscriptions() {
        return List.copyOf(subscriptions);
    }
}
