package dev.runbus.internal.delay;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.RedisLink;
import dev.runbus.internal.scripts.ScriptCalls;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.testkit.RedisTarget;
import io.lettuce.core.Consumer;
import io.lettuce.core.XClaimArgs;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The delay scripts one call at a time, on the local Redis: {@code retry_later.lua} acts only for the entry's
 * owner, and {@code move_due.lua} sets aside a scheduled entry it cannot append instead of stopping on it.
 */
class DelayScriptsTest {

    private final String prefix = "test-delay-scripts-" + UUID.randomUUID();
    private final Keys keys = new Keys(prefix);
    private RedisLink link;
    private Scripts scripts;
    private RedisClusterCommands<String, String> redis;

    RedisTarget target() {
        return RedisTarget.local();
    }

    @BeforeEach
    void connect() {
        link = RedisLink.open(target().uri(), Duration.ofSeconds(5));
        scripts = new Scripts(ScriptCalls.auto(link.sync()), link.sync(), link.async(), keys);
        redis = target().redis();
    }

    @AfterEach
    void tearDown() {
        link.close();
        target().deleteKeys(prefix);
    }

    @Test
    void aRetryByAConsumerThatNoLongerOwnsTheEntryDoesNothing() throws Exception {
        String stream = keys.stream("t");
        redis.xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), "g", XGroupCreateArgs.Builder.mkstream(true));
        String id = redis.xadd(stream, "type", "x", "payload", "p");
        redis.xreadgroup(Consumer.from("g", "c1"), XReadArgs.StreamOffset.lastConsumed(stream));
        // c1 paused past min-idle; c2 took the entry over and is running it.
        redis.xclaim(stream, Consumer.from("g", "c2"), XClaimArgs.Builder.minIdleTime(0), id);

        String byOldOwner = scripts.retryLater("t", "g", "c1", id, 100, 1, "copy-1", null).get(5, TimeUnit.SECONDS);

        assertThat(byOldOwner).as("not pending under c1: nothing done").isNull();
        assertThat(redis.xpending(stream, "g").getConsumerMessageCount()).containsOnlyKeys("c2");
        assertThat(redis.zcard(keys.delayed("t"))).isZero();

        String byOwner = scripts.retryLater("t", "g", "c2", id, 100, 1, "copy-2", null).get(5, TimeUnit.SECONDS);
        assertThat(byOwner).as("the owner's reschedule: its due time").matches("\\d{13}");
        assertThat(redis.xpending(stream, "g").getCount()).isZero();
        assertThat(redis.zrange(keys.delayed("t"), 0, -1)).containsExactly("copy-2");
    }

    @Test
    void anEntryThatCannotBeAppendedIsSetAsideAsADeadLetterAndTheRestMoves() throws Exception {
        String delayed = keys.delayed("t");
        String entries = keys.delayedEntries("t");
        // Written by hand by another program: not MessagePack, an odd number of values, and one good entry.
        redis.hset(entries, "bad-1", "not msgpack");
        redis.zadd(delayed, 1, "bad-1");
        redis.eval("redis.call('HSET', KEYS[1], 'bad-2', cmsgpack.pack({'type', 'x', 'payload'}))",
                io.lettuce.core.ScriptOutputType.INTEGER, new String[] {entries});
        redis.zadd(delayed, 2, "bad-2");
        scripts.schedule("t", "good", false, 3, java.util.Map.of("type", "x".getBytes(),
                "payload", "p".getBytes())).get(5, TimeUnit.SECONDS);

        Scripts.Moved m = scripts.moveDue("t", "t", 10).get(5, TimeUnit.SECONDS);

        assertThat(m.moved()).isEqualTo(1);
        assertThat(m.setAside()).isEqualTo(2);
        assertThat(redis.xlen(keys.stream("t"))).isEqualTo(1);
        assertThat(redis.zcard(delayed)).isZero();
        assertThat(redis.hlen(entries)).isZero();
        List<io.lettuce.core.StreamMessage<String, String>> dead = redis.xrange(keys.deadLetters("t"),
                io.lettuce.core.Range.create("-", "+"));
        assertThat(dead).extracting(e -> e.getBody().get("dl:scheduled_id")).containsExactly("bad-1", "bad-2");
        assertThat(dead).allSatisfy(e -> assertThat(e.getBody().get("dl:reason")).startsWith("cannot move"));
    }

    @Test
    void aDueEntryWhoseFieldsAreMissingIsSetAsideAsADeadLetterNotDroppedAndOnlyOnceWhenRunTwice() throws Exception {
        String delayed = keys.delayed("t");
        redis.zadd(delayed, 1, "no-fields"); // the delay set names it, the entries hash does not

        Scripts.Moved first = scripts.moveDue("t", "t", 10).get(5, TimeUnit.SECONDS);
        Scripts.Moved again = scripts.moveDue("t", "t", 10).get(5, TimeUnit.SECONDS);

        assertThat(first.moved()).isZero();
        assertThat(first.setAside()).isEqualTo(1);
        assertThat(again.setAside()).as("the same call again finds nothing to set aside").isZero();
        assertThat(redis.zcard(delayed)).isZero();
        List<io.lettuce.core.StreamMessage<String, String>> dead = redis.xrange(keys.deadLetters("t"),
                io.lettuce.core.Range.create("-", "+"));
        assertThat(dead).singleElement().satisfies(e -> {
            assertThat(e.getBody()).containsEntry("dl:scheduled_id", "no-fields").containsEntry("dl:topic", "t");
            assertThat(e.getBody().get("dl:reason")).contains("fields are missing");
        });
        assertThat(first.deadLetters()).extracting(Scripts.SetAside::deadLetterId).containsExactly(dead.get(0).getId());
    }
}
