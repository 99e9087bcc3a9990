package dev.runbus.internal.admin;

import static dev.runbus.testkit.Deployment.LOCAL;
import static dev.runbus.testkit.Deployment.REDIS_62;
import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.BusListener;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.redis.RedisLink;
import dev.runbus.internal.scripts.ScriptCalls;
import dev.runbus.internal.telemetry.SafeListener;
import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.OnDeployments;
import dev.runbus.testkit.RedisTarget;
import io.lettuce.core.AclSetuserArgs;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;

/**
 * {@code retention.lua} and {@code trim_by_age.lua} one step at a time: seed a stream with explicit ids (old ones
 * in 1970, young ones now), groups, reads and acks; run one retention round; compare what is left. On the local
 * Redis 7 and on Redis 6.2 (XINFO GROUPS without lag).
 */
@OnDeployments({LOCAL, REDIS_62})
class RetentionScriptTest {

    private final String prefix = "test-retention-script-" + UUID.randomUUID();
    private final Keys keys = new Keys(prefix);
    private final List<Long> trimmedEvents = new ArrayList<>();
    private RedisLink link;
    private RedisClusterCommands<String, String> redis;

    @Parameter
    Deployment deployment;

    RedisTarget target() {
        return deployment.target();
    }

    @BeforeEach
    void connect() {
        link = RedisLink.open(target().uri(), Duration.ofSeconds(5));
        redis = target().redis();
    }

    @AfterEach
    void tearDown() {
        link.close();
        target().deleteKeys(prefix);
    }

    private Retention retention(Duration age, Duration deadLetterAge) {
        return retention(age, 0, deadLetterAge);
    }

    private Retention retention(Duration age, int keepLast, Duration deadLetterAge) {
        return retention(age, keepLast, deadLetterAge, link.version().hasAckedTrim());
    }

    /** {@code ackedTrim}: the server's {@code XTRIM … ACKED} (Redis 8.2) where it has it; false: the group scan. */
    private Retention retention(Duration age, int keepLast, Duration deadLetterAge, boolean ackedTrim) {
        return new Retention(ScriptCalls.auto(link.sync()), link.sync(), keys, age, keepLast, deadLetterAge, new SafeListener(new BusListener() {
            @Override
            public void onRetentionTrimmed(String topic, long entries) {
                trimmedEvents.add(entries);
            }

            @Override
            public void onDeadLettersTrimmed(String topic, long entries) {
                trimmedEvents.add(-entries);
            }
        }), ackedTrim);
    }

    private String stream(String topic) {
        return keys.stream(topic);
    }

    private void add(String key, String... ids) {
        for (String id : ids) {
            redis.xadd(key, new io.lettuce.core.XAddArgs().id(id), "type", "t", "payload", id);
        }
    }

    private void group(String key, String name, String from) {
        redis.xgroupCreate(XReadArgs.StreamOffset.from(key, from), name, XGroupCreateArgs.Builder.mkstream(true));
    }

    /** Reads {@code count} new entries as consumer c of {@code group}; returns their ids (left pending). */
    private List<String> read(String key, String group, int count) {
        List<String> ids = new ArrayList<>();
        for (StreamMessage<String, String> m : redis.xreadgroup(io.lettuce.core.Consumer.from(group, "c"),
                XReadArgs.Builder.count(count), XReadArgs.StreamOffset.lastConsumed(key))) {
            ids.add(m.getId());
        }
        return ids;
    }

    private List<String> ids(String key) {
        return redis.xrange(key, Range.create("-", "+")).stream().map(StreamMessage::getId).toList();
    }

    private static String now(long offsetMillis, int seq) {
        return (System.currentTimeMillis() + offsetMillis) + "-" + seq;
    }

    @Test
    void trimsToTheOldestPendingEntryOfAnyGroup() {
        String key = stream("orders");
        add(key, "1000-1", "1000-2", "1000-3", "1000-4", "1000-5");
        group(key, "fast", "0");
        group(key, "slow", "0");
        redis.xack(key, "fast", read(key, "fast", 5).toArray(new String[0]));
        List<String> slow = read(key, "slow", 3); // 1000-1..3 pending
        redis.xack(key, "slow", slow.get(0));

        Retention.Result peek = retention(Duration.ZERO, null).peek("orders");
        assertThat(peek.neededFrom()).isEqualTo("1000-2");
        assertThat(peek.heldBy()).isEqualTo("slow");
        retention(Duration.ZERO, null).round(List.of(Partitions.single("orders")), true);

        assertThat(ids(key)).containsExactly("1000-2", "1000-3", "1000-4", "1000-5");
        assertThat(trimmedEvents).containsExactly(1L);
    }

    /**
     * Entries every group acknowledged behind one still pending: the group scan keeps them (the stream begins at the
     * oldest entry a group needs); {@code XTRIM … ACKED} on Redis 8.2 and later trims them, so an entry stuck
     * pending holds back only itself. Either way the pending entry and the unread ones stay.
     */
    @Test
    void acknowledgedEntriesBehindAPendingOne_goWhereTheServerTrimsWhatWasAcked() {
        String key = stream("orders");
        add(key, "1000-1", "1000-2", "1000-3", "1000-4", "1000-5");
        group(key, "fast", "0");
        group(key, "slow", "0");
        redis.xack(key, "fast", read(key, "fast", 5).toArray(new String[0]));
        read(key, "slow", 4);
        redis.xack(key, "slow", "1000-1", "1000-3", "1000-4"); // 1000-2 pending, 1000-5 not read

        retention(Duration.ZERO, null).round(List.of(Partitions.single("orders")), true);

        if (link.version().hasAckedTrim()) {
            assertThat(ids(key)).containsExactly("1000-2", "1000-5");
            assertThat(trimmedEvents).containsExactly(3L);
        } else {
            assertThat(ids(key)).containsExactly("1000-2", "1000-3", "1000-4", "1000-5");
            assertThat(trimmedEvents).containsExactly(1L);
        }
        // The scan, on every server: the same stream, nothing more to trim.
        retention(Duration.ZERO, 0, null, false).round(List.of(Partitions.single("orders")), true);
        assertThat(ids(key)).startsWith("1000-2").endsWith("1000-5");
    }

    /**
     * An entry stuck pending and the retention age together: on Redis 8.2 and later the acknowledged entries behind
     * the stuck one go only as far as the age allows; the young ones stay, acknowledged or not.
     */
    @Test
    void behindAPendingEntryTheRetentionAgeStillKeepsYoungEntries() {
        String key = stream("orders");
        String young1 = now(-60_000, 0);
        String young2 = now(-60_000, 1);
        add(key, "1000-1", "1000-2", "1000-3", young1, young2);
        group(key, "g", "0");
        read(key, "g", 5);
        redis.xack(key, "g", "1000-2", "1000-3", young1, young2); // 1000-1 stuck pending

        retention(Duration.ofMinutes(10), null).round(List.of(Partitions.single("orders")), true);

        if (link.version().hasAckedTrim()) {
            assertThat(ids(key)).containsExactly("1000-1", young1, young2);
            assertThat(trimmedEvents).containsExactly(2L);
        } else {
            assertThat(ids(key)).containsExactly("1000-1", "1000-2", "1000-3", young1, young2);
            assertThat(trimmedEvents).isEmpty();
        }
    }

    /**
     * With {@code retentionKeepLast}, every server gets the group scan: the entries behind a stuck one stay even where
     * the server has {@code XTRIM … ACKED}, and the newest n are kept.
     */
    @Test
    void keepingTheNewestTrimsNothingBehindAPendingEntryOnAnyServer() {
        String key = stream("orders");
        add(key, "1000-1", "1000-2", "1000-3", "1000-4", "1000-5", "1000-6");
        group(key, "g", "0");
        read(key, "g", 6);
        redis.xack(key, "g", "1000-1", "1000-3", "1000-4", "1000-5", "1000-6"); // 1000-2 stuck pending

        retention(Duration.ZERO, 2, null).round(List.of(Partitions.single("orders")), true);

        assertThat(ids(key)).containsExactly("1000-2", "1000-3", "1000-4", "1000-5", "1000-6");
        assertThat(trimmedEvents).containsExactly(1L);
    }

    /**
     * Told the server has {@code XTRIM … ACKED} when it does not (a replica of an older version promoted after the
     * connect): the script's call is refused and it scans the groups instead, trimming what they allow.
     */
    @Test
    void aServerThatRefusesAckedTrimIsScanned() {
        String key = stream("orders");
        add(key, "1000-1", "1000-2", "1000-3");
        group(key, "g", "0");
        read(key, "g", 2);
        redis.xack(key, "g", "1000-1");

        retention(Duration.ZERO, 0, null, true).round(List.of(Partitions.single("orders")), true);

        assertThat(ids(key)).containsExactly("1000-2", "1000-3");
        assertThat(trimmedEvents).containsExactly(1L);
    }

    @Test
    void keepsEntriesAGroupHasNotReadYet() {
        String key = stream("orders");
        add(key, "1000-1", "1000-2", "1000-3", "1000-4");
        group(key, "fast", "0");
        group(key, "slow", "0");
        redis.xack(key, "fast", read(key, "fast", 4).toArray(new String[0]));
        redis.xack(key, "slow", read(key, "slow", 2).toArray(new String[0])); // 1000-3, 1000-4 not read

        retention(Duration.ZERO, null).round(List.of(Partitions.single("orders")), true);

        assertThat(ids(key)).containsExactly("1000-3", "1000-4");
        Retention.Result peek = retention(Duration.ZERO, null).peek("orders");
        assertThat(peek.neededFrom()).isEqualTo("1000-3");
        assertThat(peek.heldBy()).isEqualTo("slow");
    }

    @Test
    void aStreamEveryGroupIsDoneWithIsTrimmedEmptyWithoutAnAge() {
        String key = stream("orders");
        add(key, "1000-1", "1000-2");
        group(key, "g", "0");
        redis.xack(key, "g", read(key, "g", 2).toArray(new String[0]));

        retention(Duration.ZERO, null).round(List.of(Partitions.single("orders")), true);

        assertThat(ids(key)).isEmpty();
        assertThat(retention(Duration.ZERO, null).peek("orders").neededFrom()).isEqualTo("1000-3");
    }

    @Test
    void theRetentionAgeKeepsYoungEntriesEvenWhenEveryGroupIsDone() {
        String key = stream("orders");
        String young1 = now(-60_000, 0);
        String young2 = now(-60_000, 1);
        add(key, "1000-1", "1000-2", young1, young2);
        group(key, "g", "0");
        redis.xack(key, "g", read(key, "g", 4).toArray(new String[0]));

        retention(Duration.ofMinutes(10), null).round(List.of(Partitions.single("orders")), true);

        assertThat(ids(key)).containsExactly(young1, young2);
        assertThat(trimmedEvents).containsExactly(2L);
    }

    @Test
    void theNewestEntriesAreKeptWhenAskedWhateverTheirAge() {
        String key = stream("orders");
        add(key, "1000-1", "1000-2", "1000-3", "1000-4", "1000-5");
        group(key, "g", "0");
        redis.xack(key, "g", read(key, "g", 5).toArray(new String[0]));

        retention(Duration.ZERO, 2, null).round(List.of(Partitions.single("orders")), true);
        assertThat(ids(key)).containsExactly("1000-4", "1000-5");

        retention(Duration.ZERO, 3, null).round(List.of(Partitions.single("orders")), true);
        assertThat(ids(key)).as("fewer than 3 left: nothing more trimmed").containsExactly("1000-4", "1000-5");
        assertThat(trimmedEvents).containsExactly(3L);
    }

    @Test
    void keepingTheNewestTrimsTheOldestEntriesBothBoundsAllowHoweverTheirCountsCompare() {
        // keep 3 of 10; the group's bound lets 2 go (fewer than the 7 keeping allows): 2 trimmed
        String key = stream("a");
        for (int i = 1; i <= 10; i++) {
            add(key, "1000-" + i);
        }
        group(key, "g", "0");
        redis.xack(key, "g", read(key, "g", 2).toArray(new String[0]));
        retention(Duration.ZERO, 3, null).round(List.of(Partitions.single("a")), true);
        assertThat(ids(key)).hasSize(8).startsWith("1000-3");

        // keep 3 of 5, all acked: keeping allows 2, fewer than the group's bound
        String key2 = stream("b");
        add(key2, "1000-1", "1000-2", "1000-3", "1000-4", "1000-5");
        group(key2, "g", "0");
        redis.xack(key2, "g", read(key2, "g", 5).toArray(new String[0]));
        retention(Duration.ZERO, 3, null).round(List.of(Partitions.single("b")), true);
        assertThat(ids(key2)).containsExactly("1000-3", "1000-4", "1000-5");

        // keep 3 of 10, all acked: a backlog over twice the kept count, 7 trimmed in one round
        String key3 = stream("c");
        for (int i = 1; i <= 10; i++) {
            add(key3, "1000-" + i);
        }
        group(key3, "g", "0");
        redis.xack(key3, "g", read(key3, "g", 10).toArray(new String[0]));
        retention(Duration.ZERO, 3, null).round(List.of(Partitions.single("c")), true);
        assertThat(ids(key3)).containsExactly("1000-8", "1000-9", "1000-10");

        // keep 3 of 10, 5 acked: the group's bound (6) and keeping (7) cross over the backlog branch
        String key4 = stream("d");
        for (int i = 1; i <= 10; i++) {
            add(key4, "1000-" + i);
        }
        group(key4, "g", "0");
        redis.xack(key4, "g", read(key4, "g", 5).toArray(new String[0]));
        retention(Duration.ZERO, 3, null).round(List.of(Partitions.single("d")), true);
        assertThat(ids(key4)).hasSize(5).startsWith("1000-6");
        assertThat(trimmedEvents).containsExactly(2L, 2L, 7L, 5L);
    }

    @Test
    void keepingTheNewestNeverKeepsLessThanAGroupNeeds() {
        String key = stream("orders");
        add(key, "1000-1", "1000-2", "1000-3", "1000-4");
        group(key, "g", "0");
        read(key, "g", 1); // 1000-1 pending

        retention(Duration.ZERO, 1, null).round(List.of(Partitions.single("orders")), true);

        assertThat(ids(key)).containsExactly("1000-1", "1000-2", "1000-3", "1000-4");
    }

    @Test
    void aStreamWithoutGroupsIsNeverTrimmed() {
        String key = stream("orders");
        add(key, "1000-1", "1000-2");

        retention(Duration.ZERO, null).round(List.of(Partitions.single("orders")), true);

        assertThat(ids(key)).containsExactly("1000-1", "1000-2");
        Retention.Result peek = retention(Duration.ZERO, null).peek("orders");
        assertThat(peek.neededFrom()).isNull();
        assertThat(peek.heldBy()).isNull();
        assertThat(trimmedEvents).isEmpty();
    }

    @Test
    void aMissingStreamIsNoError() {
        retention(Duration.ZERO, null).round(List.of(Partitions.single("nothing")), true);
        assertThat(redis.exists(stream("nothing"))).isZero();
    }

    @Test
    void idsBeyondWhatALuaNumberHoldsCompareAndIncrementExactly() {
        // 2^53 + 1 is not a double: compared or incremented as numbers, these ids would blur into one another.
        String key = stream("orders");
        add(key, "1000-9007199254740993", "1000-9007199254740994", "1000-9007199254740995",
                "1000-18446744073709551615", "1001-0");
        group(key, "g", "0");
        group(key, "h", "0");
        redis.xack(key, "g", read(key, "g", 5).toArray(new String[0]));
        redis.xack(key, "h", read(key, "h", 1).toArray(new String[0])); // last delivered 1000-9007199254740993

        Retention.Result peek = retention(Duration.ZERO, null).peek("orders");
        assertThat(peek.neededFrom()).isEqualTo("1000-9007199254740994");
        retention(Duration.ZERO, null).round(List.of(Partitions.single("orders")), true);
        assertThat(ids(key)).containsExactly("1000-9007199254740994", "1000-9007199254740995",
                "1000-18446744073709551615", "1001-0");

        redis.xack(key, "h", read(key, "h", 3).toArray(new String[0])); // last delivered 1000-(2^64-1)
        assertThat(retention(Duration.ZERO, null).peek("orders").neededFrom()).isEqualTo("1001-0");
        retention(Duration.ZERO, null).round(List.of(Partitions.single("orders")), true);
        assertThat(ids(key)).containsExactly("1001-0");
    }

    @Test
    void everyPartitionIsTrimmed() {
        Partitions topic = new Partitions("orders", 3);
        for (String name : topic.names()) {
            add(stream(name), "1000-1", "1000-2");
            group(stream(name), "g", "0");
            redis.xack(stream(name), "g", read(stream(name), "g", 1).toArray(new String[0]));
        }

        retention(Duration.ZERO, null).round(List.of(topic), true);

        for (String name : topic.names()) {
            assertThat(ids(stream(name))).as(name).containsExactly("1000-2");
        }
        assertThat(trimmedEvents).containsExactly(3L);
    }

    @Test
    void aFailingPartitionIsReportedAndTheOthersAreStillTrimmed() {
        // A user whose ACL does not reach partition 0's keys: its script fails there (NOPERM), for real.
        Partitions topic = new Partitions("orders", 3);
        String user = "retention-test-" + UUID.randomUUID();
        AclSetuserArgs acl = AclSetuserArgs.Builder.on().addPassword("pw").allCommands();
        for (int p = 1; p < 3; p++) {
            acl = acl.keyPattern(prefix + ":{" + topic.name(p) + "}:*");
        }
        redis.aclSetuser(user, acl);
        for (String name : topic.names()) {
            add(stream(name), "1000-1", "1000-2");
            group(stream(name), "g", "0");
            redis.xack(stream(name), "g", read(stream(name), "g", 2).toArray(new String[0]));
        }
        List<String> errors = new ArrayList<>();
        String uri = target().uri().replace("redis://", "redis://" + user + ":pw@");
        try (RedisLink limited = RedisLink.open(uri, Duration.ofSeconds(5))) {
            new Retention(ScriptCalls.auto(limited.sync()), limited.sync(), keys, Duration.ZERO, 0, null, new SafeListener(new BusListener() {
                @Override
                public void onLoopError(String loop, Throwable error) {
                    errors.add(loop + ": " + error.getMessage());
                }
            }), limited.version().hasAckedTrim()).round(List.of(topic), true);
        } finally {
            redis.aclDeluser(user);
        }

        assertThat(errors).singleElement().asString().startsWith(Retention.LOOP).contains(topic.name(0));
        assertThat(ids(stream(topic.name(0)))).hasSize(2);
        assertThat(ids(stream(topic.name(1)))).isEmpty();
        assertThat(ids(stream(topic.name(2)))).isEmpty();
    }

    @Test
    void deadLettersAreTrimmedByAgeOnlyWhenOptedIn() {
        String dead = keys.deadLetters("orders");
        String young = now(-1_000, 0);
        add(dead, "1000-1", "1000-2", young);

        retention(Duration.ZERO, null).round(List.of(Partitions.single("orders")), true);
        assertThat(ids(dead)).containsExactly("1000-1", "1000-2", young);

        retention(Duration.ZERO, Duration.ofMinutes(5)).round(List.of(Partitions.single("orders")), false);
        assertThat(ids(dead)).containsExactly(young);
        assertThat(trimmedEvents).containsExactly(-2L);
    }

    @Test
    void streamsAreLeftAloneWhenOnlyDeadLetterRetentionRuns() {
        String key = stream("orders");
        add(key, "1000-1");
        group(key, "g", "0");
        redis.xack(key, "g", read(key, "g", 1).toArray(new String[0]));

        retention(Duration.ZERO, Duration.ofMinutes(5)).round(List.of(Partitions.single("orders")), false);

        assertThat(ids(key)).containsExactly("1000-1");
    }
}
