package dev.runbus.internal.scripts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.runbus.ScriptMode;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.RedisLink;
import dev.runbus.testkit.RedisClusterProcess;
import dev.runbus.testkit.RedisServerProcess;
import io.lettuce.core.FlushMode;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A master that lost the function library, while another master is stopped (SIGSTOP, no failover): the calls to the
 * master that answers "Function not found" load the library there and run, without waiting for the stopped one
 * (docs/architecture.md, rule 14). Before, the library was loaded on every master and the call waited for all of
 * them: it failed once the stopped master's load timed out. The three ways a call is sent: waited for (as the
 * scheduled-entry listing), without waiting (a schedule) and in order (a heartbeat, which is not sent again: the next
 * one runs).
 */
class FunctionReloadBesideAStalledMasterTest {

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(5);

    private final Keys keys = new Keys("test-fcall-stalled");
    private RedisClusterProcess cluster;
    private RedisLink link;
    private Scripts scripts;

    @BeforeEach
    void start() {
        // No replica, and a node timeout longer than the test: the stopped master is neither failed over nor marked
        // failed, so its slots just get no answer.
        cluster = RedisClusterProcess.startWithoutReplicas(3, "--cluster-node-timeout", "60000",
                "--cluster-require-full-coverage", "no");
        link = RedisLink.open("redis-cluster://" + cluster.seeds(), COMMAND_TIMEOUT);
        assumeTrue(link.version().hasFunctions(), "functions need Redis 7; the cluster is " + link.version());
        FunctionCalls calls = (FunctionCalls) ScriptCalls.choose(ScriptMode.FUNCTIONS, link.version());
        LibraryLoads.ensure(calls.library(), link.masters(), COMMAND_TIMEOUT.toMillis()); // as at connect: every master has it
        scripts = new Scripts(calls, link.sync(), link.async(), keys);
    }

    @AfterEach
    void stop() {
        cluster.masters().forEach(RedisServerProcess::resume);
        if (link != null) {
            link.close();
        }
        cluster.close();
    }

    @Test
    void callsToAMasterThatLostTheLibraryRunWhileAnotherMasterIsStopped() throws Exception {
        RedisServerProcess healthy = cluster.masters().get(0);
        RedisServerProcess stopped = cluster.masters().get(1);
        String name = nameOnMaster(0);
        stopped.pause(); // resumed after the test

        flushFunctions(healthy);
        long start = System.nanoTime();
        assertThat(scripts.scheduled(name, 10)).as("listed while the other master is stopped").isEmpty();
        assertWithinCommandTimeout(start);

        flushFunctions(healthy);
        start = System.nanoTime();
        Scripts.Schedule s = scripts.schedule(name, "id-1", true, 60_000, Map.of("f", "v".getBytes()))
                .get(3 * COMMAND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(s.dueMillis()).isGreaterThan(s.nowMillis());
        assertWithinCommandTimeout(start);

        flushFunctions(healthy);
        start = System.nanoTime();
        assertThatThrownBy(() -> scripts.heartbeatAsync(name, "g", List.of("c1"))
                .get(3 * COMMAND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(ScriptNotRun.class);
        assertThat(scripts.heartbeatAsync(name, "g", List.of("c1"))
                .get(3 * COMMAND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)).containsExactly(-1L);
        assertWithinCommandTimeout(start);

        List<Map<String, Object>> libraries = RedisClusterProcess.call(healthy, r -> r.functionList());
        assertThat(libraries).as("the library again on the master").hasSize(1);
    }

    private static void flushFunctions(RedisServerProcess master) {
        RedisClusterProcess.call(master, r -> r.functionFlush(FlushMode.SYNC));
    }

    private static void assertWithinCommandTimeout(long startNanos) {
        assertThat(Duration.ofNanos(System.nanoTime() - startNanos)).as("how long the call took")
                .isLessThan(COMMAND_TIMEOUT);
    }

    /** A partition name whose keys lie in the slots of master {@code i}. */
    private String nameOnMaster(int i) {
        for (int n = 0; ; n++) {
            if (cluster.masterIndexOf(SlotHash.getSlot("{t" + n + "}")) == i) {
                return "t" + n;
            }
        }
    }
}
