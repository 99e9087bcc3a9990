package dev.runbus.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.BusListener;
import dev.runbus.SubscribeOptions;
import dev.runbus.internal.redis.RedisLink;
import dev.runbus.internal.telemetry.SafeListener;
import dev.runbus.testing.OneStream;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TcpProxy;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * First starts leave in batches, one HSET of a partition on the wire at a time, and a start withdrawn before its batch
 * left never reaches Redis (FirstStarts). On the local Redis, through a proxy that holds the first HSET's reply, so
 * that the starts recorded next find it on the wire; the proxy counts the HSETs sent.
 */
class FirstStartsTest {

    private static final long WAIT_SECONDS = 20;

    private OneStream one;
    private TcpProxy proxy;
    private RedisLink link;
    private FirstStarts firstStarts;

    @BeforeEach
    void connect() {
        one = new OneStream("test-first-starts");
        proxy = TcpProxy.before(RedisTarget.local().uri());
        link = RedisLink.open(proxy.uri(), Duration.ofSeconds(30));
        SubscriptionContext ctx = SubscriptionContext.of("g", "c1", one.partitions, one.keys,
                SubscribeOptions.defaults());
        firstStarts = new FirstStarts(ctx, one.scriptsOver(link), new SafeListener(BusListener.NONE));
        proxy.holdRepliesFrom(command -> command.get(0).equalsIgnoreCase("HSET"));
    }

    @AfterEach
    void tearDown() {
        proxy.releaseReplies();
        link.close();
        proxy.close();
        one.close();
    }

    @Test
    void startsRecordedWhileOneIsOnTheWireLeaveTogether() throws Exception {
        FirstStarts.Batch first = firstStarts.add(0, "1-1");
        FirstStarts.Batch second = firstStarts.add(0, "1-2");
        FirstStarts.Batch third = firstStarts.add(0, "1-3");
        assertThat(first.sent()).as("the first, sent at once").isTrue();
        assertThat(second).as("the next two, in one batch").isSameAs(third).isNotSameAs(first);
        assertThat(second.sent()).as("the batch behind the one on the wire, sent").isFalse();

        proxy.releaseReplies();
        second.reply().get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(first.reply()).isDone();
        assertThat(one.redis.hkeys(one.starts())).containsExactlyInAnyOrder("1-1", "1-2", "1-3");
        assertThat(proxy.matchedCommands()).as("HSETs sent").isEqualTo(2);
    }

    @Test
    void aStartWithdrawnBeforeItsBatchLeftNeverReachesRedis() throws Exception {
        FirstStarts.Batch first = firstStarts.add(0, "1-1");
        FirstStarts.Batch second = firstStarts.add(0, "1-2");
        firstStarts.add(0, "1-3");
        assertThat(firstStarts.withdraw(0, "1-2", second)).as("withdrawn from the batch not sent").isTrue();
        assertThat(firstStarts.withdraw(0, "1-1", first)).as("withdrawn from the batch on the wire").isFalse();

        proxy.releaseReplies();
        second.reply().get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(one.redis.hkeys(one.starts())).containsExactlyInAnyOrder("1-1", "1-3");
    }

    @Test
    void aBatchWhoseStartsWereAllWithdrawnSendsNothingAndFreesTheLane() throws Exception {
        FirstStarts.Batch first = firstStarts.add(0, "1-1");
        FirstStarts.Batch second = firstStarts.add(0, "1-2");
        assertThat(firstStarts.withdraw(0, "1-2", second)).isTrue();

        proxy.releaseReplies();
        first.reply().get(WAIT_SECONDS, TimeUnit.SECONDS);
        // Nothing left to send behind the first: the lane is free, and the next start leaves at once.
        FirstStarts.Batch next = firstStarts.add(0, "1-4");
        assertThat(next.sent()).isTrue();
        next.reply().get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(proxy.matchedCommands()).as("HSETs sent").isEqualTo(2);
        assertThat(one.redis.hkeys(one.starts())).containsExactlyInAnyOrder("1-1", "1-4");
    }
}
