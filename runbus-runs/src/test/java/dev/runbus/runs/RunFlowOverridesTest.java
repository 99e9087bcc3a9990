package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.Bus;
import dev.runbus.FlowRate;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Flow keys' overrides kept in PostgreSQL ({@link Runs#setFlowOverride}, docs/flow-control.md, "Overrides that
 * outlive Redis"): set in Redis at once, and again at every sweep, so that a Redis that lost them gets them back;
 * setting them again changes nothing there (a rate set again does not start its key afresh).
 */
class RunFlowOverridesTest extends RunsTestSupport {

    private static final String TOPIC = "runs";

    private String caps() {
        return prefix + ":{" + TOPIC + "}:flow:caps";
    }

    private String field(String name) {
        return redis.redis().hget(caps(), name);
    }

    @Test
    void anOverrideIsSetInRedisAtOnce_andEverySweepSetsItAgain_afterRedisLostIt() {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().flowCap(1).build());
        runs.startWorker(ECHO);
        FlowOverride premium = FlowOverride.none().withCap(3).withRate(FlowRate.perSecond(50).withBurst(5))
                .withWeight(2);
        assertThat(runs.setFlowOverride("tenant-7", premium)).as("set in Redis").isTrue();

        assertThat(field("tenant-7")).as("cap").isEqualTo("3");
        assertThat(field("\0rate\0tenant-7")).as("rate's interval, ms").isNotNull();
        assertThat(Double.parseDouble(field("\0weight\0tenant-7"))).isEqualTo(2.0);
        assertThat(runs.flowOverrides(null, 100)).containsExactly(Map.entry("tenant-7", premium));

        // Set again by a sweep while Redis has it: the key's rate state is left as it is.
        redis.redis().hset(prefix + ":{" + TOPIC + "}:flow:tat", "tenant-7", "123456789");
        assertThat(runs.sweepOnce().ran()).isTrue();
        assertThat(redis.redis().hget(prefix + ":{" + TOPIC + "}:flow:tat", "tenant-7")).as("not started afresh")
                .isEqualTo("123456789");

        // Redis lost them: the next sweep sets them again.
        redis.redis().hdel(caps(), "tenant-7", "\0rate\0tenant-7", "\0burst\0tenant-7", "\0weight\0tenant-7");
        assertThat(runs.sweepOnce().ran()).isTrue();
        assertThat(field("tenant-7")).isEqualTo("3");
        assertThat(field("\0burst\0tenant-7")).isEqualTo("5");
        assertThat(Double.parseDouble(field("\0weight\0tenant-7"))).isEqualTo(2.0);

        runs.clearFlowOverride("tenant-7");
        assertThat(field("tenant-7")).isNull();
        assertThat(field("\0rate\0tenant-7")).isNull();
        assertThat(field("\0weight\0tenant-7")).isNull();
        assertThat(runs.flowOverrides(null, 100)).isEmpty();
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".flow_overrides WHERE cap IS NULL"
                + " AND rate_permits IS NULL AND weight IS NULL")).as("kept, all NULL").isEqualTo(1);
    }

    /** A worker that starts sets the stored overrides before its subscription lets waiting triggers in. */
    @Test
    void aWorkerStartingSetsTheStoredOverridesFirst() {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().flowCap(1).build());
        runs.setFlowOverride("tenant-7", FlowOverride.none().withCap(0));
        redis.redis().del(caps());
        runs.startWorker(ECHO);
        assertThat(field("tenant-7")).as("set again at the worker's start").isEqualTo("0");
    }

    /**
     * The sweeper is whichever process holds its lock: one whose own workers set no flow control (a serve) sets the
     * stored overrides again too.
     */
    @Test
    void aSweepOfAProcessWithoutFlowControl_setsTheStoredOverridesAgain() {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        assertThat(runs.setFlowOverride("tenant-7", FlowOverride.none().withCap(4))).isTrue();
        redis.redis().hdel(caps(), "tenant-7");
        assertThat(runs.sweepOnce().ran()).isTrue();
        assertThat(field("tenant-7")).isEqualTo("4");
    }

    @Test
    void badOverridesAreRefused_andNothingIsStored() {
        Runs runs = runs(bus(), "w1", workerOptions().flowCap(1).build());
        assertThatThrownBy(() -> runs.setFlowOverride("", FlowOverride.none().withCap(1)))
                .isInstanceOf(InvalidRunException.class).hasMessageContaining("flowKey");
        assertThatThrownBy(() -> FlowOverride.none().withCap(-1)).isInstanceOf(InvalidRunException.class)
                .hasMessageContaining("cap");
        assertThatThrownBy(() -> FlowOverride.none().withWeight(0)).isInstanceOf(InvalidRunException.class)
                .hasMessageContaining("weight");
        assertThatThrownBy(() -> FlowOverride.none().withRate(FlowRate.of(1, java.time.Duration.ofNanos(1_000_500))))
                .isInstanceOf(InvalidRunException.class).hasMessageContaining("microseconds");
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".flow_overrides")).isZero();
    }
}
