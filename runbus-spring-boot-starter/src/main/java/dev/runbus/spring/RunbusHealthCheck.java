package dev.runbus.spring;

import dev.runbus.Bus;
import dev.runbus.Inspector;
import dev.runbus.Subscription;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the {@code runbus} health indicator reports, apart from Actuator's types (whose package differs between
 * Boot 3 and 4). Up when Redis answers and every listener's read loop runs; each listener shows whether it reads,
 * and its group's pending entries, lag and dead letters,
 * and the last error of each background loop that failed is shown with its time (the loops keep trying).
 * Dead letters are a detail, not DOWN: the application is healthy, some messages are not, and the operator's
 * alert for them is {@code BusListener.onDeadLetterDepthRaised} / the dead-letter gauge.
 */
public final class RunbusHealthCheck {

    /** {@code up}: whether Redis answered; {@code details}: what the indicator shows. */
    public record Report(boolean up, Map<String, Object> details) {
    }

    private final Bus bus;
    private final RunbusListenerContainer listeners;

    public RunbusHealthCheck(Bus bus, RunbusListenerContainer listeners) {
        this.bus = bus;
        this.listeners = listeners;
    }

    public Report check() {
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
