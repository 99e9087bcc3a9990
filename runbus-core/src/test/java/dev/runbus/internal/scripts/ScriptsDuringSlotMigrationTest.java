package dev.runbus.internal.scripts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.RunbusException;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.RedisLink;
import dev.runbus.internal.redis.Replies;
import dev.runbus.internal.redis.WireFormat;
import dev.runbus.testkit.RedisClusterProcess;
import dev.runbus.testkit.RedisServerProcess;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Consumer;
import io.lettuce.core.Range;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Scripts on a Redis Cluster whose slot is being migrated ({@code CLUSTER SETSLOT … MIGRATING / IMPORTING}, as
 * {@code redis-cli --cluster reshard} does). A script that names a key the slot's keys do not include yet (the
 * {@code :dead} stream, a dead-letter call record, an empty delay set) is answered {@code TRYAGAIN} by the source
 * or the target until the slot has moved: neither Lettuce nor Redis retries it. {@link ScriptCalls} does, with
 * backoff, for a bounded time.
 */
class ScriptsDuringSlotMigrationTest {

    private static RedisClusterProcess cluster;

    private final String prefix = "test-migrating-" + UUID.randomUUID().toString().substring(0, 8);
    private final Keys keys = new Keys(prefix);
    private RedisLink link;
    private Scripts scripts;

    @BeforeAll
    static void startCluster() {
        cluster = RedisClusterProcess.start(3);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @BeforeEach
    void connect() {
        link = RedisLink.open("redis-cluster://" + cluster.seeds(), Duration.ofSeconds(5));
        scripts = new Scripts(ScriptCalls.auto(link.sync()), link.sync(), link.async(), keys);
    }

    @AfterEach
    void close() {
        link.close();
    }

    @Test
    void aDeadLetterMoveWhoseDeadStreamDoesNotExistYetIsRetriedOnTryAgainAndRunsOnceTheSlotMoved() throws Exception {
        String name = "dl-" + UUID.randomUUID();
        String stream = keys.stream(name);
        var redis = link.sync();
        redis.xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), "g", XGroupCreateArgs.Builder.mkstream(true));
        String id = Replies.str(redis.xadd(stream, "type", WireFormat.utf8("x")));
        redis.xreadgroup(Consumer.from("g", "c"), XReadArgs.StreamOffset.lastConsumed(stream));
        int slot = SlotHash.getSlot(stream);
        RedisServerProcess source = masterOf(slot);
        RedisServerProcess target = otherMaster(source);
        long before = tryAgains();
        cluster.beginSlotMigration(slot, source, target);

        // The stream is on the source, the dead-letter stream and the call record nowhere: TRYAGAIN.
        CompletableFuture<String> move = scripts.deadLetter("t", name, "g", id, "c", 3, "boom", 1, "token-1",
                60_000, null);
        Wait.until("the move answered TRYAGAIN at least twice", Duration.ofSeconds(5),
                () -> move.isDone() || tryAgains() >= before + 2);
        assertThat(move).as("still retrying while the slot migrates").isNotDone();
        cluster.finishSlotMigration(slot, source, target);

        String deadLetterId = move.get(10, TimeUnit.SECONDS);
        long pending = RedisClusterProcess.call(target, r -> r.xpending(stream, "g").getCount());
        assertThat(pending).isZero();
        List<io.lettuce.core.StreamMessage<String, String>> dead = RedisClusterProcess.call(target,
                r -> r.xrange(keys.deadLetters(name), Range.create("-", "+")));
        assertThat(dead).singleElement().satisfies(e -> {
            assertThat(e.getId()).isEqualTo(deadLetterId);
            assertThat(e.getBody()).containsEntry("dl:stream_id", id).containsEntry("dl:reason", "boom");
        });
    }

    @Test
    void aSyncScriptOnAnEmptyDelaySetIsRetriedOnTryAgainAndAnswersOnceTheSlotMoved() throws Exception {
        String name = "list-" + UUID.randomUUID();
        int slot = SlotHash.getSlot(keys.delayed(name));
        RedisServerProcess source = masterOf(slot);
        RedisServerProcess target = otherMaster(source);
        long before = tryAgains();
        cluster.beginSlotMigration(slot, source, target);

        CompletableFuture<List<Scripts.ScheduledRow>> listing = CompletableFuture.supplyAsync(
                () -> scripts.scheduled(name, 10));
        Wait.until("the listing answered TRYAGAIN at least twice", Duration.ofSeconds(5),
                () -> listing.isDone() || tryAgains() >= before + 2);
        assertThat(listing).as("still retrying while the slot migrates").isNotDone();
        cluster.finishSlotMigration(slot, source, target);

        assertThat(listing.get(10, TimeUnit.SECONDS)).isEmpty();
    }

    @Test
    void aScriptAnsweredTryAgainLongerThanTheRetryBudgetFailsNamingIt() {
        String name = "stuck-" + UUID.randomUUID();
        int slot = SlotHash.getSlot(keys.delayed(name));
        RedisServerProcess source = masterOf(slot);
        RedisServerProcess target = otherMaster(source);
        cluster.beginSlotMigration(slot, source, target);
        try {
            long start = System.nanoTime();
            assertThatThrownBy(() -> scripts.scheduled(name, 10)).isInstanceOf(RunbusException.class)
                    .hasMessageContaining("TRYAGAIN");
            long tookMillis = (System.nanoTime() - start) / 1_000_000;
            assertThat(tookMillis).as("retried for the budget, then the error surfaced")
                    .isBetween(ScriptCalls.TRYAGAIN_BUDGET_MILLIS - 300, ScriptCalls.TRYAGAIN_BUDGET_MILLIS + 3_000);

            long asyncStart = System.nanoTime();
            CompletableFuture<Scripts.Moved> moving = scripts.moveDue("t", name, 10);
            assertThat(moving).failsWithin(Duration.ofSeconds(10)).withThrowableThat()
                    .withMessageContaining("TRYAGAIN");
            assertThat((System.nanoTime() - asyncStart) / 1_000_000).isGreaterThanOrEqualTo(
                    ScriptCalls.TRYAGAIN_BUDGET_MILLIS - 300);
        } finally {
            cluster.finishSlotMigration(slot, source, target);
        }
    }

    /** TRYAGAIN answers of every master so far ({@code INFO errorstats}). */
    private static long tryAgains() {
        long n = 0;
        for (RedisServerProcess m : cluster.masters()) {
            String info = RedisClusterProcess.call(m, r -> r.info("errorstats"));
            for (String line : info.split("\r?\n")) {
                if (line.startsWith("errorstat_TRYAGAIN:count=")) {
                    n += Long.parseLong(line.substring("errorstat_TRYAGAIN:count=".length()).trim());
                }
            }
        }
        return n;
    }

    private static RedisServerProcess otherMaster(RedisServerProcess source) {
        return cluster.masters().stream().filter(m -> m != source).findFirst().orElseThrow();
    }

    private static RedisServerProcess masterOf(int slot) {
        for (RedisServerProcess m : cluster.masters()) {
            List<Object> slots = RedisClusterProcess.call(m, RedisCommands::clusterSlots);
            String myId = RedisClusterProcess.call(m, RedisCommands::clusterMyId);
            for (Object o : slots) {
                List<?> range = (List<?>) o;
                long from = (Long) range.get(0);
                long to = (Long) range.get(1);
                List<?> master = (List<?>) range.get(2);
                if (slot >= from && slot <= to && master.size() > 2 && myId.equals(master.get(2))) {
                    return m;
                }
            }
        }
        throw new IllegalStateException("no master owns slot " + slot);
    }
}
