package dev.runbus.spring;

import dev.runbus.Bus;
import dev.runbus.Inspector;
import dev.runbus.Subscription;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What the {@code runbus} health indicator reports, apart from Actuator's types (whose package differs between
 * Boot 3 and 4). Up when Redis answers and every listener's read loop runs; each listener shows whether it reads,
 * and its group's pending entries, lag and dead letters,
 * and the last error of each background loop that failed is shown with its time (the loops keep trying).
 * Dead letters are a detail, not DOWN: the application is healthy, some messages are not, and the operator's
 * alert for them is {@code BusListener.onDeadLetterDepthRaised} / the dead-letter gauge.
 *
 * <p>A check takes at most its timeout ({@code runbus.health.timeout}): the Redis reads run on a thread of their
 * own, and a check that does not get their answer in time reports DOWN instead of waiting for each command's
 * timeout in turn (one per listener and more). The reads go on until Redis answers or their commands time out; a
 * check made meanwhile waits for those same reads rather than starting more, so a stalled Redis holds one thread,
 * however often the health is asked for. PostgreSQL is not read.
 */
public final class RunbusHealthCheck {

    /** {@code up}: whether Redis answered; {@code details}: what the indicator shows. */
    public record Report(boolean up, Map<String, Object> details) {
    }

    private final Bus bus;
    private final RunbusListenerContainer listeners;
    private final Duration timeout;
    /** The reads of the last check; still running when Redis has not answered them yet. */
    private CompletableFuture<Report> reads;

    /** A check bounded by the default {@code runbus.health.timeout}. */
    public RunbusHealthCheck(Bus bus, RunbusListenerContainer listeners) {
        this(bus, listeners, new RunbusProperties.Health().getTimeout());
    }

    public RunbusHealthCheck(Bus bus, RunbusListenerContainer listeners, Duration timeout) {
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("runbus.health.timeout must be positive, got " + timeout);
        }
        this.bus = bus;
        this.listeners = listeners;
        this.timeout = timeout;
    }

    public Report check() {
        CompletableFuture<Report> pending;
        synchronized (this) {
            if (reads == null || reads.isDone()) {
                reads = CompletableFuture.supplyAsync(this::read, RunbusHealthCheck::onOwnThread);
            }
            pending = reads;
        }
        try {
            return pending.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return down("Redis did not answer within " + timeout.toMillis() + " ms (runbus.health.timeout)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return down("interrupted while waiting for Redis");
        } catch (ExecutionException e) {
            return down(e.getCause().getClass().getName() + ": " + e.getCause().getMessage());
        }
    }

    private static void onOwnThread(Runnable reads) {
        Thread t = new Thread(reads, "runbus-health");
        t.setDaemon(true);
        t.start();
    }

    private Report down(String error) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("error", error);
        addLoopErrors(details);
        return new Report(false, details);
    }

    private Report read() {
        Map<String, Object> details = new LinkedHashMap<>();
        try {
            // One read that needs Redis even when nothing is subscribed.
            bus.inspector().stream("runbus-health-probe");
            Map<String, Object> subs = new LinkedHashMap<>();
            boolean allReading = true;
            for (Subscription s : listeners.subscriptions()) {
                subs.put(s.topic() + "/" + s.group(), subscription(s));
                allReading &= s.isReading();
            }
            details.put("listeners", subs);
            details.put("listening", listeners.isRunning());
            addLoopErrors(details);
            // A listener whose read loop ended while the application runs reads nothing more: that is DOWN.
            return new Report(!listeners.isRunning() || allReading, details);
        } catch (RuntimeException e) {
            details.put("error", e.getClass().getName() + ": " + e.getMessage());
            addLoopErrors(details);
            return new Report(false, details);
        }
    }

    private void addLoopErrors(Map<String, Object> details) {
        if (!listeners.loopErrors().isEmpty()) {
            details.put("lastLoopErrors", listeners.loopErrors());
        }
    }

    private Map<String, Object> subscription(Subscription s) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("consumer", s.consumer());
        d.put("reading", s.isReading());
        d.put("inFlight", s.inFlight());
        for (Inspector.GroupInfo g : bus.inspector().groups(s.topic())) {
            if (g.name().equals(s.group())) {
                d.put("pending", g.pending());
                d.put("lag", g.lag());
            }
        }
        d.put("deadLetters", bus.deadLetters().count(s.topic()));
        return d;
    }
}
