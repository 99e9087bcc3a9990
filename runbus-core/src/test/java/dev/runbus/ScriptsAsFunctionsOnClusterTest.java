package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.runbus.testkit.RedisClusterProcess;
import dev.runbus.testkit.RedisServerProcess;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import io.lettuce.core.FlushMode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The function library on a Redis Cluster, the tests' own: each master keeps its own functions, so a master that
 * lost them (FUNCTION FLUSH here; a new node, a slot moved to a node without them, a restart without persistence
 * alike) answers "Function not found", and the bus loads the library on that master and sends the call again.
 * Also: {@link ScriptLibrary#load} loads every master, as {@code runbus migrate} does.
 */
class ScriptsAsFunctionsOnClusterTest {

    /**
     * The loops' errors but timeouts: a renewal or a call that outlived its wait on a busy host is reported and
     * tried again, and says nothing of what these tests check; anything Redis refused stays in.
     */
    private static final java.util.function.Predicate<String> TIMEOUTS_ASIDE = e -> !e.contains("timed out");

    private final String prefix = "test-fcall-cluster-" + UUID.randomUUID().toString().substring(0, 8);
    private Bus bus;

    private static List<RedisServerProcess> masters() {
        return RedisTarget.clusterProcess().masters();
    }

    private static String seeds() {
        return "redis-cluster://" + RedisTarget.clusterProcess().seeds();
    }

    private static boolean loadedOn(RedisServerProcess node) {
        List<Map<String, Object>> libraries = RedisClusterProcess.call(node,
                redis -> redis.functionList(ScriptLibrary.name()));
        return libraries.stream().anyMatch(l -> ScriptLibrary.name().equals(String.valueOf(l.get("library_name"))));
    }

    private static void flushFunctions() {
        masters().forEach(m -> RedisClusterProcess.call(m, redis -> redis.functionFlush(FlushMode.SYNC)));
    }

    @AfterEach
    void cleanUp() {
        if (bus != null) {
            bus.close();
        }
        RedisTarget.cluster().deleteKeys(prefix);
    }

    @Test
    void migrateLoadsEveryMaster_andABusMendsMastersThatLostTheLibrary() {
        assumeTrue(Integer.parseInt(RedisTarget.cluster().version().split("\\.")[0]) >= 7, "functions need Redis 7");
        flushFunctions();
        ScriptLibrary.Loaded loaded = ScriptLibrary.load(BusConfig.builder(seeds()).build());
        assertThat(loaded.loadedOn()).hasSize(masters().size());
        assertThat(masters()).allMatch(ScriptsAsFunctionsOnClusterTest::loadedOn);

        List<String> loopErrors = new CopyOnWriteArrayList<>();
        bus = Bus.connect(BusConfig.builder(seeds()).keyPrefix(prefix).partitions("orders", 6)
                .listener(new BusListener() {
                    @Override
                    public void onLoopError(String loop, Throwable error) {
                        loopErrors.add(loop + ": " + error.getMessage());
                    }
                }).build());
        Set<String> handled = ConcurrentHashMap.newKeySet();
        bus.subscribe("orders", "g", "c", d -> handled.add(d.message().key()),
                SubscribeOptions.builder().blockTime(Duration.ofMillis(200)).build());
        bus.subscribe("orders", "og", "o", d -> handled.add("ordered " + d.message().key()),
                SubscribeOptions.builder().blockTime(Duration.ofMillis(200)).ordered(true)
                        .leaseTime(Duration.ofSeconds(2)).build());
        publish(0, 12);
        Wait.until("12 keys handled by both groups", Duration.ofSeconds(20), () -> handled.size() == 24);

        flushFunctions(); // the running bus's loops may load it again at once: no check in between
        publish(12, 12);
        Wait.until("24 keys handled by both groups", Duration.ofSeconds(20), () -> handled.size() == 48);
        Wait.until("every entry acked", Duration.ofSeconds(10), () -> bus.inspector().pending("orders", "g", 100)
                .isEmpty() && bus.inspector().pending("orders", "og", 100).isEmpty());
        assertThat(masters()).as("the masters holding the topic's partitions have the library again")
                .allMatch(ScriptsAsFunctionsOnClusterTest::loadedOn);
        assertThat(loopErrors).filteredOn(TIMEOUTS_ASIDE).as("errors of the bus's loops").isEmpty();
    }

    private void publish(int from, int n) {
        for (int i = from; i < from + n; i++) {
            bus.publisher().publish("orders", Message.of("m", "m".getBytes(StandardCharsets.UTF_8)).withKey("k" + i));
        }
    }
}
