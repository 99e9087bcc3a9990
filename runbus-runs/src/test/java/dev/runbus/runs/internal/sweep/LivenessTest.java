package dev.runbus.runs.internal.sweep;

import static dev.runbus.testkit.Deployment.LOCAL;
import static dev.runbus.testkit.Deployment.REDIS_62;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.runbus.Bus;
import dev.runbus.RunbusException;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.OnDeployments;
import org.junit.jupiter.api.Test;

/** What the inspector's XPENDING answers when the stream or the group is gone, on the real Redis. */
@OnDeployments({LOCAL, REDIS_62})
class LivenessTest extends RunsTestSupport {

    LivenessTest(Deployment deployment) {
        super(deployment);
    }

    @Test
    void pendingEntryOfAMissingStreamOrGroup_isANoGroupError() {
        Bus bus = bus();
        RunbusException noStream = catchThrowableOfType(RunbusException.class,
                () -> bus.inspector().pendingEntry("runs", "run-workers", "1-0"));
        assertThat(Liveness.isNoGroup(noStream)).isTrue();

        redis.redis().xadd(stream(), java.util.Map.of("f", "v")); // a stream, still without the group
        RunbusException noGroup = catchThrowableOfType(RunbusException.class,
                () -> bus.inspector().pendingEntry("runs", "run-workers", "1-0"));
        assertThat(Liveness.isNoGroup(noGroup)).isTrue();

        assertThat(Liveness.isNoGroup(new RunbusException("reading pending entry 1-0 failed: Command timed out",
                new RuntimeException("Command timed out after 500 millisecond(s)")))).isFalse();
    }
}
