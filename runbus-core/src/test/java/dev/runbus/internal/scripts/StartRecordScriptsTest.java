package dev.runbus.internal.scripts;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.internal.redis.Entry;
import dev.runbus.testing.OneStream;
import io.lettuce.core.Consumer;
import io.lettuce.core.XAddArgs;
import io.lettuce.core.XClaimArgs;
import io.lettuce.core.XReadArgs;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The start record of an unordered group one call at a time, on the local Redis: {@code record_starts.lua} counts
 * at most one start per delivery the pending list counts, so the same call sent twice (its reply lost with the
 * connection, the client re-sending it) counts once; the readers ({@code read_own_pending.lua}) see the starts.
 */
class StartRecordScriptsTest {

    private OneStream one;

    @BeforeEach
    void connect() {
        one = new OneStream("test-start-record");
    }

    @AfterEach
    void tearDown() {
        one.close();
    }

    @Test
    void theSameCallSentTwiceCountsOneStart_andEachRedeliveryCountsOneMore() throws Exception {
        String id = one.redis.xadd(one.stream, "type", "x", "payload", "p");
        one.redis.xreadgroup(Consumer.from("g", "c1"), XReadArgs.StreamOffset.lastConsumed(one.stream));

        assertThat(record(id)).as("first delivery's start").isEqualTo(1);
        assertThat(record(id)).as("the same call again: already counted").isZero();
        // Redelivered (the pending list now counts 2): one more start counts, once.
        one.redis.xclaim(one.stream, Consumer.from("g", "c1"), XClaimArgs.Builder.minIdleTime(0), id);
        assertThat(record(id)).isEqualTo(1);
        assertThat(record(id)).isZero();

        // The own-pending re-read counts a delivery as the starts recorded plus this one: 2 + 1.
        assertThat(reread(id)).isEqualTo(3);
    }

    @Test
    void idsGivenOutOfStreamOrderAreEachRecorded() throws Exception {
        // The script takes the span it looks up from the first and the last id; the client sorts them as Redis
        // does (9 before 10, which a sort by text would put first).
        for (String id : List.of("5-9", "5-10", "6-1")) {
            one.redis.xadd(one.stream, new XAddArgs().id(id), Map.of("type", "x", "payload", "p"));
        }
        one.redis.xreadgroup(Consumer.from("g", "c1"), XReadArgs.StreamOffset.lastConsumed(one.stream));
        assertThat(Scripts.inStreamOrder(List.of("6-1", "5-10", "5-9"))).containsExactly("5-9", "5-10", "6-1");
        assertThat(one.scripts.recordStarts(one.partitions.name(0), "g", List.of("6-1", "5-10", "5-9"))
                .get(5, TimeUnit.SECONDS)).isEqualTo(3);
        assertThat(one.redis.hkeys(one.starts())).containsExactlyInAnyOrder("5-9", "5-10", "6-1");
    }

    @Test
    void aStartAddedWithAPlainIncrementByAnotherConsumerStillCounts() throws Exception {
        // docs/wire-format.md: a consumer of its own HINCRBYs the field before its handler starts.
        String id = one.redis.xadd(one.stream, "type", "x", "payload", "p");
        one.redis.xreadgroup(Consumer.from("g", "c1"), XReadArgs.StreamOffset.lastConsumed(one.stream));
        assertThat(record(id)).isEqualTo(1);
        one.redis.xclaim(one.stream, Consumer.from("g", "c1"), XClaimArgs.Builder.minIdleTime(0), id);
        one.redis.hincrby(one.starts(), id, 1);

        assertThat(reread(id)).as("two starts recorded, plus the re-read").isEqualTo(3);
        // The re-read was a delivery: the next start of it counts.
        assertThat(record(id)).isEqualTo(1);
        assertThat(record(id)).isZero();
        assertThat(reread(id)).isEqualTo(4);
    }

    @Test
    void anIdNoLongerPendingIsNotRecorded() throws Exception {
        String id = one.redis.xadd(one.stream, "type", "x", "payload", "p");
        one.redis.xreadgroup(Consumer.from("g", "c1"), XReadArgs.StreamOffset.lastConsumed(one.stream));
        one.redis.xack(one.stream, "g", id);

        assertThat(record(id)).isZero();
        assertThat(one.redis.exists(one.starts())).isZero();
    }

    @Test
    void aCallOfMoreIdsThanOneHashWriteTakesRecordsEachPendingOneOnce() throws Exception {
        // The script reads and writes the hash in slices of 1,000 ids: 2,500 ids, of which one was acked already.
        List<String> ids = new java.util.ArrayList<>();
        for (int i = 0; i < 2_500; i++) {
            ids.add(one.redis.xadd(one.stream, "type", "x", "payload", "p" + i));
        }
        one.redis.xreadgroup(Consumer.from("g", "c1"), XReadArgs.Builder.count(3_000),
                XReadArgs.StreamOffset.lastConsumed(one.stream));
        one.redis.xack(one.stream, "g", ids.get(1_700));

        assertThat(one.scripts.recordStarts(one.partitions.name(0), "g", ids).get(5, TimeUnit.SECONDS))
                .isEqualTo(2_499);
        assertThat(one.scripts.recordStarts(one.partitions.name(0), "g", ids).get(5, TimeUnit.SECONDS)).isZero();
        assertThat(one.redis.hlen(one.starts())).isEqualTo(2_499);
        assertThat(one.redis.hexists(one.starts(), ids.get(1_700))).isFalse();
    }

    @Test
    void idsWhoseSpanHoldsManyEntriesOfOtherConsumersAreEachRecordedOnce() throws Exception {
        // One XPENDING over the span of the call's ids, bounded by 2 × ids + 16 entries: here 50 entries pending
        // for another consumer lie between the two ids, so the bounded reply misses the second and the script
        // looks it up on its own. The ids are given highest first: the span is taken from their values.
        String first = one.redis.xadd(one.stream, "type", "x", "payload", "first");
        one.redis.xreadgroup(Consumer.from("g", "c1"), XReadArgs.Builder.count(1),
                XReadArgs.StreamOffset.lastConsumed(one.stream));
        for (int i = 0; i < 50; i++) {
            one.redis.xadd(one.stream, "type", "x", "payload", "other" + i);
        }
        one.redis.xreadgroup(Consumer.from("g", "c2"), XReadArgs.Builder.count(50),
                XReadArgs.StreamOffset.lastConsumed(one.stream));
        String last = one.redis.xadd(one.stream, "type", "x", "payload", "last");
        one.redis.xreadgroup(Consumer.from("g", "c1"), XReadArgs.StreamOffset.lastConsumed(one.stream));

        List<String> ids = List.of(last, first);
        assertThat(one.scripts.recordStarts(one.partitions.name(0), "g", ids).get(5, TimeUnit.SECONDS)).isEqualTo(2);
        assertThat(one.scripts.recordStarts(one.partitions.name(0), "g", ids).get(5, TimeUnit.SECONDS)).isZero();
        assertThat(one.redis.hlen(one.starts())).isEqualTo(2);
        for (String id : ids) { // one start, at the first delivery: 1 + 2^32 × 1
            assertThat(one.redis.hget(one.starts(), id)).isEqualTo(String.valueOf(1 + (1L << 32)));
        }
    }

    @Test
    void aFirstStartWrittenWithoutTheScriptIsTheOneTheScriptWrites() throws Exception {
        // Entries read as new get their first start with a plain HSET (Scripts.recordFirstStarts); the script and the
        // readers must take it as the script's own: one start at the first delivery, the same call again adding none,
        // a redelivery one more.
        String bySet = one.redis.xadd(one.stream, "type", "x", "payload", "a");
        String byScript = one.redis.xadd(one.stream, "type", "x", "payload", "b");
        one.redis.xreadgroup(Consumer.from("g", "c1"), XReadArgs.StreamOffset.lastConsumed(one.stream));
        String key = one.starts();

        assertThat(one.scripts.recordFirstStarts(one.partitions.name(0), "g", List.of(bySet)).get(5, TimeUnit.SECONDS))
                .as("fields added").isEqualTo(1);
        assertThat(record(byScript)).isEqualTo(1);
        assertThat(one.redis.hget(key, bySet)).isEqualTo(one.redis.hget(key, byScript))
                .isEqualTo(String.valueOf(1 + (1L << 32)));
        assertThat(record(bySet)).as("the script finds that delivery counted").isZero();
        assertThat(one.scripts.recordFirstStarts(one.partitions.name(0), "g", List.of(bySet)).get(5, TimeUnit.SECONDS))
                .as("the same call sent again adds no field").isZero();

        one.redis.xclaim(one.stream, Consumer.from("g", "c1"), XClaimArgs.Builder.minIdleTime(0), bySet);
        assertThat(record(bySet)).as("a redelivery's start").isEqualTo(1);
        Scripts.ReadResult r = one.scripts.readOwnPending(one.partitions, 0, "g", "c1", "0", 10);
        assertThat(r.entries()).extracting(Entry::streamId, Entry::deliveries)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(bySet, 3L),
                        org.assertj.core.groups.Tuple.tuple(byScript, 2L));
    }

    @Test
    void aCallWithoutIdsRecordsNothing() throws Exception {
        // What a subscription sends at start to put the script into the node's cache (Scripts.loadRecordStarts).
        assertThat(one.scripts.recordStarts(one.partitions.name(0), "g", List.of()).get(5, TimeUnit.SECONDS)).isZero();
        assertThat(one.redis.exists(one.starts())).isZero();
    }

    private long record(String id) throws Exception {
        return one.scripts.recordStarts(one.partitions.name(0), "g", List.of(id)).get(5, TimeUnit.SECONDS);
    }

    private long reread(String id) {
        Scripts.ReadResult r = one.scripts.readOwnPending(one.partitions, 0, "g", "c1", "0", 10);
        assertThat(r.entries()).extracting(Entry::streamId).containsExactly(id);
        return r.entries().get(0).deliveries();
    }
}
