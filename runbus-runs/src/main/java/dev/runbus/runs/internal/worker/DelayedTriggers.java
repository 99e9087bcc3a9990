package dev.runbus.runs.internal.worker;

import dev.runbus.Bus;
import dev.runbus.Message;
import dev.runbus.runs.internal.store.RunStore;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes a delayed run's trigger into the bus's delay set (due on the Redis server's clock, like any delayed
 * publish) and records its scheduled id on the run, so that a cancel can take it out again. The run is committed
 * first, with its due time in {@code next_attempt_at}: if either step fails, the sweeper publishes the trigger
 * once that time is overdue, and a cancelled run's trigger that could not be taken out is acked without a run.
 */
final class DelayedTriggers {

    private static final Logger log = LoggerFactory.getLogger(DelayedTriggers.class);

    private final RunStore store;
    private final Bus bus;
    private final String topic;

    DelayedTriggers(RunStore store, Bus bus, String topic) {
        this.store = store;
        this.bus = bus;
        this.topic = topic;
    }

    void schedule(UUID runId, Message trigger, Duration delay) {
        String scheduledId;
        try {
            scheduledId = bus.publisher().publish(topic, trigger, delay);
        } catch (RuntimeException e) {
            log.warn("run {} is stored but its delayed trigger could not be scheduled ({}); the sweeper will publish"
                    + " it once it is due", runId, e.getMessage());
            return;
        }
        try {
            store.scheduled(runId, scheduledId);
        } catch (SQLException e) {
            log.warn("run {}: its trigger is scheduled as {} but the id could not be stored ({}); cancelling the run"
                    + " will leave the trigger to be acked when due", runId, scheduledId, e.getMessage());
        }
    }
}
