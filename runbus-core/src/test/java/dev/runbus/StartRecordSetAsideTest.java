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

        List<String> handled = subscribeBehindProxy(SubscribeOptions.builder().concurrency(1));
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

    /**
     * An entry that must run alone (started {@code maxDeliveries} times without an outcome) is not set aside while its
     * record is unanswered: it keeps its turn to run alone. Set aside, it gave the turn up with its start counted once
     * the record landed, and another entry that must run alone, the poison, could take the turn and kill the process
     * first: a start counted that never ran, and the entry dead-lettered as abandoned at its next delivery (loaded run
     * 62). Here two such entries are taken over; while the first one's record is unanswered, the second one's record
     * is not sent for ten times the set-aside wait (before, it was sent after the first was set aside, 200 ms on).
     */
    @Test
    void anEntryThatMustRunAlone_keepsItsTurnWhileItsRecordIsUnanswered() throws InterruptedException {
        var redis = RedisTarget.local().redis();
        String stream = prefix + ":{jobs}:stream";
        String starts = prefix + ":{jobs}:starts:g";
        redis.xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), "g", XGroupCreateArgs.Builder.mkstream(true));
        String a = redis.xadd(stream, "type", "job", "payload", "a");
        String b = redis.xadd(stream, "type", "job", "payload", "b");
        assertThat(redis.xreadgroup(Consumer.from("g", "dead"), XReadArgs.StreamOffset.lastConsumed(stream)))
                .hasSize(2);
        redis.hset(starts, a, "3"); // three starts without an outcome: the next delivery is the one alone
        redis.hset(starts, b, "3");

        List<String> handled = subscribeBehindProxy(SubscribeOptions.builder().concurrency(2).maxDeliveries(3));
        Wait.until("the first entry's record sent (its reply held)", Duration.ofSeconds(30),
                () -> proxy.matchedCommands() == 1);
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(10 * 200);
        while (System.nanoTime() - end < 0 && proxy.matchedCommands() == 1) {
            Thread.sleep(10); // looking for what must not happen within the bound
        }
        assertThat(proxy.matchedCommands()).as("records sent while the first is unanswered").isEqualTo(1);
        assertThat(handled).as("handled while the first one's record is unanswered").isEmpty();

        proxy.releaseReplies();
        Wait.until("both handled, each alone", Duration.ofSeconds(30), () -> handled.size() == 2);
        assertThat(handled).containsExactlyInAnyOrder("a", "b");
        assertThat(bus.deadLetters().count("jobs")).as("dead letters").isZero();
    }

    /**
     * c1 subscribed to jobs through a proxy that holds the replies of the connection that sends the first start record
     * of entries (not the call without ids that loads the script at start); returns the payloads handled.
     */
    private List<String> subscribeBehindProxy(SubscribeOptions.Builder options) {
        proxy = TcpProxy.before(RedisTarget.local().uri());
        proxy.holdRepliesFrom(c -> c.get(0).equals("FCALL") && c.get(1).endsWith("_record_starts") && c.size() > 6);
        bus = Bus.connect(BusConfig.builder(proxy.uri()).keyPrefix(prefix).scriptMode(ScriptMode.FUNCTIONS)
                .commandTimeout(Duration.ofSeconds(60)).build());
        List<String> handled = new CopyOnWriteArrayList<>();
        bus.subscribe("jobs", "g", "c1", d -> handled.add(new String(d.message().payload(), StandardCharsets.UTF_8)),
                options.batchSize(10).minIdle(Duration.ofSeconds(1)).claimInterval(Duration.ofMillis(200))
                        .blockTime(Duration.ofMillis(200)).build());
        return handled;
    }
}
