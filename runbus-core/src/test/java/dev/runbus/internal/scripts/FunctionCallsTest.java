package dev.runbus.internal.scripts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.runbus.internal.admin.Retention;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.RedisLink;
import dev.runbus.internal.telemetry.SafeListener;
import dev.runbus.testkit.OwnRedis;
import io.lettuce.core.FlushMode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link FunctionCalls} on a server of the test's own that lacks the library: a call is sent again once the library
 * is loaded, and runs once; an in-order call (the periodic heartbeat) is not sent again, so that it cannot land
 * behind what its caller sent after it, and the library is loaded for the next one.
 */
class FunctionCallsTest {

    private final Keys keys = new Keys("test-fcalls");
    private OwnRedis server;
    private RedisLink link;
    private Scripts scripts;

    @BeforeEach
    void start() {
        server = OwnRedis.process();
        link = RedisLink.open(server.uri(), Duration.ofSeconds(5));
        assumeTrue(link.version().hasFunctions(), "functions need Redis 7; the server is " + link.version());
        ScriptCalls calls = ScriptCalls.auto(link.sync());
        assertThat(calls.functions()).isTrue();
        scripts = new Scripts(calls, link.sync(), link.async(), keys);
    }

    @AfterEach
    void stop() {
        if (link != null) {
            link.close();
        }
        server.close();
    }

    private List<String> libraries() {
        return server.redis().functionList().stream().map(l -> String.valueOf(l.get("library_name"))).toList();
    }

    @Test
    void aCallFindingNoLibraryLoadsItAndRunsOnce() throws Exception {
        assertThat(libraries()).isEmpty();
        Scripts.Schedule s = scripts.schedule("t", "id-1", true, 60_000, Map.of("f", "v".getBytes()))
                .get(5, TimeUnit.SECONDS);
        assertThat(s.dueMillis()).isGreaterThan(s.nowMillis());
        assertThat(libraries()).containsExactly(FunctionLibrary.runbus().name());
        assertThat(server.redis().zcard(keys.delayed("t"))).isEqualTo(1);

        server.redis().functionFlush(FlushMode.SYNC);
        assertThat(scripts.scheduled("t", 10)).extracting(Scripts.ScheduledRow::id).containsExactly("id-1");
        assertThat(libraries()).containsExactly(FunctionLibrary.runbus().name());
    }

    /**
     * Over {@code maxmemory} (noeviction), as under EVAL: acks and retention, which only remove, still run (a
     * function without flags would be refused whole), listing still reads, and scheduling, which grows memory,
     * is refused.
     */
    @Test
    void overMaxmemoryAcksRetentionAndListingRunAndSchedulingIsRefused() throws Exception {
        String stream = keys.stream("t");
        for (int i = 1; i <= 3; i++) {
            server.redis().xadd(stream, "f", "v" + i);
        }
        server.redis().xgroupCreate(io.lettuce.core.XReadArgs.StreamOffset.from(stream, "0"), "g");
        List<String> ids = server.redis().xreadgroup(io.lettuce.core.Consumer.from("g", "c"),
                io.lettuce.core.XReadArgs.StreamOffset.lastConsumed(stream)).stream().map(m -> m.getId()).toList();
        assertThat(scripts.scheduled("t", 10)).isEmpty(); // loads the library while there is room
        server.redis().configSet("maxmemory", "1");
        try {
            assertThat(scripts.ack(link.async(), "t", "g", ids).get(5, TimeUnit.SECONDS)).isEqualTo(3L);
            Retention retention = new Retention(ScriptCalls.auto(link.sync()), link.sync(), keys, Duration.ZERO, 0,
                    null, new SafeListener(dev.runbus.BusListener.NONE), link.version().hasAckedTrim());
            retention.round(List.of(Partitions.single("t")), true);
            assertThat(server.redis().xlen(stream)).as("retention trimmed what the group acked").isZero();
            assertThat(scripts.scheduled("t", 10)).isEmpty();
            assertThatThrownBy(() -> scripts.schedule("t", "id", true, 1000, Map.of("f", "v".getBytes()))
                    .get(5, TimeUnit.SECONDS)).hasMessageContaining("OOM");
        } finally {
            server.redis().configSet("maxmemory", "0");
        }
    }

    @Test
    void anInOrderCallFindingNoLibraryDoesNotRun_andTheNextOneDoes() throws Exception {
        String beats = keys.heartbeats("t", "g");
        assertThatThrownBy(() -> scripts.heartbeatAsync("t", "g", List.of("c1")).get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(ScriptNotRun.class)
                .hasMessageContaining("did not run");
        assertThat(server.redis().zscore(beats, "c1")).as("the refused call wrote nothing").isNull();
        assertThat(libraries()).containsExactly(FunctionLibrary.runbus().name());

        assertThat(scripts.heartbeatAsync("t", "g", List.of("c1")).get(5, TimeUnit.SECONDS)).containsExactly(-1L);
        assertThat(server.redis().zscore(beats, "c1")).isNotNull();
    }
}
