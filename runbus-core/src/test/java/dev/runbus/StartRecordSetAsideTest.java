package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TcpProxy;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Consumer;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A redelivered entry waits for its start record before its handler (a poison that kills its process must be
 * counted), but not on the runner: while the record is unanswered (its partition's master stalls) the entry waits
 * aside, still held, and the runner goes on with the other entries. Before, the runner waited up to the command
 * timeout, and every entry behind it with it. On the local Redis, behind a proxy that holds the replies of the
 * connection from the record's call on (the call runs; its answer comes late).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class StartRecordSetAsideTest {

    private final String prefix = "test-set-aside-" + UUID.randomUUID();
    private TcpProxy proxy;
    private Bus bus;

    @AfterEach
    void tearDown() {
        if (proxy != null) {
            proxy.releaseReplies();
        }
        if (bus != null) {
            bus.close();
        }
        if (proxy != null) {
            proxy.close();
        }
        RedisTarget.local().deleteKeys(prefix);
    }

    @Test
    void aRedeliveredEntryWhoseRecordIsUnanswered_waitsAside_whileTheRunnerRunsTheOthers() {
        var redis = RedisTarget.local().redis();
        String stream = prefix + ":{jobs}:stream";
        redis.xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), "g", XGroupCreateArgs.Builder.mkstream(true));
        String again = redis.xadd(stream, "type", "job", "payload", "again");
        // A consumer that died read it: c1's reclaimer takes it over, and its handler waits for its record.
        assertThat(redis.xreadgroup(Consumer.from("g", "dead"), XReadArgs.StreamOffset.lastConsumed(stream)))
                .hasSize(1);

        proxy = TcpProxy.before(RedisTarget.local().uri());
        // the records of entries (not the call without ids that loads the script at start)
        proxy.holdRepliesFrom(c -> c.get(0).equals("FCALL") && c.get(1).endsWith("_record_starts") && c.size() > 6);
        bus = Bus.connect(BusConfig.builder(proxy.uri()).keyPrefix(prefix).scriptMode(ScriptMode.FUNCTIONS)
                .commandTimeout(Duration.ofSeconds(60)).build());
        List<String> handled = new CopyOnWriteArrayList<>();
        bus.subscribe("jobs", "g", "c1", d -> handled.add(new String(d.message().payload(), StandardCharsets.UTF_8)),
                SubscribeOptions.builder().concurrency(1).batchSize(10).minIdle(Duration.ofSeconds(1))
                        .claimInterval(Duration.ofMillis(200)).blockTime(Duration.ofMillis(200)).build());
        Wait.until("the taken-over entry's record sent (its reply held)", Duration.ofSeconds(30),
                () -> proxy.matchedCommands() == 1);
        for (int i = 0; i < 5; i++) { // published beside the proxy; read by the read loop, on a connection of its own
            redis.xadd(stream, "type", "job", "payload", "new-" + i);
        }

        // The record's reply is held for good: before, the one runner waited up to the command timeout (60 s).
        Wait.until("the five new entries handled while the redelivered one's record is unanswered",
                Duration.ofSeconds(30), () -> handled.size() >= 5);
        assertThat(handled).as("handled while the record is unanswered").doesNotContain("again")
                .containsExactlyInAnyOrder("new-0", "new-1", "new-2", "new-3", "new-4");
        // its own record and those of the new entries (through the script: read with minIdle 1 s and a command
        // timeout of 60 s, none is written with the plain HSET)
        Wait.until("six start records sent", Duration.ofSeconds(30), () -> proxy.matchedCommands() == 6);

        proxy.releaseReplies();
        Wait.until("the redelivered entry handled once its record is answered", Duration.ofSeconds(30),
                () -> handled.contains("again"));
        assertThat(handled).hasSize(6);
        assertThat(proxy.matchedCommands()).as("records sent: its start was not recorded again").isEqualTo(6);
    }
}
