package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.internal.delay.CrashPoints;
import dev.runbus.testing.DelayCrashChild;
import dev.runbus.testkit.ChildJvm;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A process killed (SIGKILL) at each point of the delay paths, in a child JVM ({@link DelayCrashChild}): around the
 * reschedule of a failed delivery (acked and scheduled in one script, so there is no point between the two) and
 * around the mover's move. A survivor bus takes over; nothing is lost, nothing doubled.
 */
class DelayCrashTest {

    private final String prefix = "test-delay-crash-" + UUID.randomUUID();
    private final String topic = "jobs";
    private final String logKey = prefix + ":log";
    private final String stream = prefix + ":{" + topic + "}:stream";
    private final String delayed = prefix + ":{" + topic + "}:delayed";
    private Bus survivor;

    RedisTarget target() {
        return RedisTarget.local();
    }

    @AfterEach
    void cleanUp() {
        if (survivor != null) {
            survivor.close();
        }
        target().deleteKeys(prefix);
    }

    private ChildJvm child(String mode, CrashPoints.Point point) throws Exception {
        ChildJvm c = ChildJvm.start(DelayCrashChild.class, target().uri(), prefix, topic, mode, point.name(), logKey);
        c.awaitLine("READY", Duration.ofSeconds(30));
        return c;
    }

    /** The survivor: consumer c2 of g, the same policy; records "<payload>#<attempt>@c2" and succeeds. */
    private void survive() {
        survivor = Bus.connect(BusConfig.builder(target().uri()).keyPrefix(prefix).build());
        survivor.subscribe(topic, "g", "c2", d -> target().redis().rpush(logKey,
                        new String(d.message().payload(), StandardCharsets.UTF_8) + "#" + d.attempt() + "@c2"),
                SubscribeOptions.builder().blockTime(Duration.ofMillis(300)).minIdle(Duration.ofSeconds(1))
                        .claimInterval(Duration.ofMillis(200)).retryPolicy(RetryPolicy.fixed(Duration.ofMillis(300)))
                        .maxDeliveries(3).build());
    }

    private List<String> log() {
        return target().redis().lrange(logKey, 0, -1);
    }

    @Test
    void killedBeforeTheRescheduleTheEntryStaysPendingAndIsTakenOverOnce() throws Exception {
        try (ChildJvm c = child("retry", CrashPoints.Point.BEFORE_RETRY_SCHEDULE)) {
            publish("m1");
            c.awaitLine("AT BEFORE_RETRY_SCHEDULE", Duration.ofSeconds(20));
            c.kill();
        }
        assertThat(target().redis().xpending(stream, "g").getCount()).as("still pending").isEqualTo(1);
        assertThat(target().redis().zcard(delayed)).as("nothing scheduled").isZero();
        survive();
        Wait.until("m1 handled by the survivor", Duration.ofSeconds(20), () -> log().size() == 2);
        assertThat(log()).containsExactly("m1#1@c1", "m1#2@c2");
        assertSettled();
        assertThat(target().redis().xlen(stream)).as("taken over in place: no copy").isEqualTo(1);
    }

    @Test
    void killedAfterTheRescheduleTheCopyIsMovedAndHandledOnce() throws Exception {
        try (ChildJvm c = child("retry", CrashPoints.Point.AFTER_RETRY_SCHEDULE)) {
            publish("m1");
            c.awaitLine("AT AFTER_RETRY_SCHEDULE", Duration.ofSeconds(20));
            c.kill();
        }
        assertThat(target().redis().xpending(stream, "g").getCount()).as("acked by the reschedule").isZero();
        assertThat(target().redis().zcard(delayed)).as("the copy scheduled").isEqualTo(1);
        survive();
        Wait.until("m1 handled by the survivor", Duration.ofSeconds(20), () -> log().size() == 2);
        assertThat(log()).containsExactly("m1#1@c1", "m1#2@c2");
        assertSettled();
        assertThat(target().redis().xlen(stream)).as("the entry and its one copy").isEqualTo(2);
    }

    @Test
    void killedBeforeTheMoveTheDueEntryIsMovedOnceBySurvivor() throws Exception {
        try (ChildJvm c = child("mover", CrashPoints.Point.BEFORE_MOVE)) {
            c.awaitLine("AT BEFORE_MOVE", Duration.ofSeconds(20));
            c.kill();
        }
        assertThat(target().redis().zcard(delayed)).as("still scheduled").isEqualTo(1);
        assertThat(target().redis().xlen(stream)).as("not yet in the stream").isZero();
        survive();
        Wait.until("d1 handled by the survivor", Duration.ofSeconds(20), () -> log().size() == 1);
        assertThat(log()).containsExactly("d1#1@c2");
        assertSettled();
        assertThat(target().redis().xlen(stream)).isEqualTo(1);
    }

    @Test
    void killedAfterTheMoveTheEntryIsInTheStreamOnce() throws Exception {
        try (ChildJvm c = child("mover", CrashPoints.Point.AFTER_MOVE)) {
            c.awaitLine("AT AFTER_MOVE", Duration.ofSeconds(20));
            c.kill();
        }
        assertThat(target().redis().zcard(delayed)).as("no longer scheduled").isZero();
        assertThat(target().redis().xlen(stream)).as("in the stream").isEqualTo(1);
        survive();
        Wait.until("d1 handled by the survivor", Duration.ofSeconds(20), () -> log().size() == 1);
        assertThat(log()).containsExactly("d1#1@c2");
        assertSettled();
        assertThat(target().redis().xlen(stream)).isEqualTo(1);
    }

    private void publish(String payload) {
        try (Bus bus = Bus.connect(BusConfig.builder(target().uri()).keyPrefix(prefix).build())) {
            bus.publisher().publish(topic, Message.of("t", payload.getBytes(StandardCharsets.UTF_8)));
        }
    }

    /** Nothing pending in g, nothing scheduled: no delivery is left to come. */
    private void assertSettled() {
        Wait.until("g has nothing pending", Duration.ofSeconds(10),
                () -> target().redis().xpending(stream, "g").getCount() == 0);
        assertThat(target().redis().zcard(delayed)).isZero();
        assertThat(target().redis().hlen(delayed + ":entries")).isZero();
    }
}
