package dev.runbus.runs.internal.sweep;

import dev.runbus.Bus;
import dev.runbus.runs.FlowOverride;
import dev.runbus.runs.internal.store.FlowOverrideStore;
import java.sql.SQLException;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sets the flow keys' overrides kept in PostgreSQL in Redis: one when it changes, all of them at a worker's start and
 * at every sweep, so that a Redis that lost its data gets them back. Setting a key what it has changes nothing there
 * (a rate set again does not start the key afresh), so applying them again is harmless.
 */
public final class FlowOverrideSync {

    private static final Logger log = LoggerFactory.getLogger(FlowOverrideSync.class);

    private final Bus bus;
    private final String topic;
    private final FlowOverrideStore store;

    public FlowOverrideSync(Bus bus, String topic, FlowOverrideStore store) {
        this.bus = bus;
        this.topic = topic;
        this.store = store;
    }

    /** Sets {@code flowKey}'s cap, rate and weight in Redis, each the override's or, where it has none, the workers'. */
    public void apply(String flowKey, FlowOverride o) {
        if (o.cap() == null) {
            bus.clearFlowCap(topic, flowKey);
        } else {
            bus.setFlowCap(topic, flowKey, o.cap());
        }
        if (o.rate() == null) {
            bus.clearFlowRate(topic, flowKey);
        } else {
            bus.setFlowRate(topic, flowKey, o.rate());
        }
        if (o.weight() == null) {
            bus.clearFlowWeight(topic, flowKey);
        } else {
            bus.setFlowWeight(topic, flowKey, o.weight());
        }
    }

    /**
     * Sets every stored override in Redis; returns how many keys it set. A key Redis refuses is reported and the
     * others go on; a PostgreSQL that cannot be read is reported, and nothing is set.
     */
    public int applyAll() {
        Map<String, FlowOverride> all;
        try {
            all = store.all();
        } catch (SQLException e) {
            log.warn("cannot read the flow overrides of topic {} ({}); Redis keeps the ones it has", topic,
                    e.getMessage());
            return 0;
        }
        int applied = 0;
        for (Map.Entry<String, FlowOverride> e : all.entrySet()) {
            try {
                apply(e.getKey(), e.getValue());
                applied++;
            } catch (RuntimeException refused) {
                log.warn("cannot set the flow override of key {} of topic {} in Redis ({}); the next sweep tries again",
                        e.getKey(), topic, refused.getMessage());
            }
        }
        return applied;
    }
}
