package dev.runbus.runs.internal.sweep;

import dev.runbus.Bus;
import dev.runbus.runs.FlowOverride;
import dev.runbus.runs.internal.store.FlowOverrideStore;
import java.sql.SQLException;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sets the flow keys' overrides kept in PostgreSQL in Redis: one as it is written, all of them at a worker's start
 * and at every sweep, so that a Redis that lost its data gets them back. Each runs under the overrides' lock
 * ({@link FlowOverrideStore#locked}): a sweep reads and sets them while no write is between its row and its Redis
 * step. Setting a key what it has changes nothing in Redis (a rate set again does not start the key afresh); keys set
 * back to the workers' limits are not set again.
 */
public final class FlowOverrideSync {

    private static final Logger log = LoggerFactory.getLogger(FlowOverrideSync.class);
    /** Rows read at a time when setting them all. */
    static final int PAGE = 1_000;

    private final Bus bus;
    private final String topic;
    private final FlowOverrideStore store;

    public FlowOverrideSync(Bus bus, String topic, FlowOverrideStore store) {
        this.bus = bus;
        this.topic = topic;
        this.store = store;
    }

    /**
     * Writes {@code flowKey}'s override and sets it in Redis, under the lock; returns whether Redis has it now (false:
     * stored, and the next sweep sets it).
     */
    public boolean set(String flowKey, FlowOverride o) throws SQLException {
        return store.locked(c -> {
            store.put(c, flowKey, o);
            try {
                apply(flowKey, o);
                return true;
            } catch (RuntimeException e) {
                log.warn("the flow override of key {} of topic {} is stored but not set in Redis ({}); the next sweep "
                        + "sets it", flowKey, topic, e.getMessage());
                return false;
            }
        });
    }

    /** Sets {@code flowKey}'s cap, rate and weight in Redis, each the override's or, where it has none, the workers'. */
    private void apply(String flowKey, FlowOverride o) {
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
     * Sets every stored override in Redis, a page of rows at a time, under the lock; returns how many keys it set. A
     * key Redis refuses is reported and the others go on; a PostgreSQL that fails is reported, and what is left is
     * set by the next sweep.
     */
    public int applyAll() {
        try {
            return store.locked(c -> {
                int applied = 0;
                String after = null;
                while (true) {
                    Map<String, FlowOverride> page = store.page(c, after, PAGE);
                    for (Map.Entry<String, FlowOverride> e : page.entrySet()) {
                        after = e.getKey();
                        try {
                            apply(e.getKey(), e.getValue());
                            applied++;
                        } catch (RuntimeException refused) {
                            log.warn("cannot set the flow override of key {} of topic {} in Redis ({}); the next sweep"
                                    + " tries again", e.getKey(), topic, refused.getMessage());
                        }
                    }
                    if (page.size() < PAGE) {
                        return applied;
                    }
                }
            });
        } catch (SQLException e) {
            log.warn("cannot read the flow overrides of topic {} ({}); Redis keeps the ones it has", topic,
                    e.getMessage());
            return 0;
        }
    }
}
