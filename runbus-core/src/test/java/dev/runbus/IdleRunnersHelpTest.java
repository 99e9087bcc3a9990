package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A read batch reaches a subscription's runners in chunks, one wake-up per chunk rather than per entry. An entry
 * must not wait behind a slow handler of its chunk while another runner has nothing to do: a free runner takes it.
 * (Found as a delayed entry handled 2 s late, behind a 2 s handler, in {@code DeadMasterIsolationTest}.)
 */
class IdleRunnersHelpTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    /** Longer than every wait of the test: the slow handler returns when the test lets it go, not before. */
    private static final Duration SLOW = Duration.ofSeconds(60);
    private static final int ENTRIES = 20;
    private static final int CONCURRENCY = 4;

    final RedisTarget target = RedisTarget.local();
    Bus bus;
    String prefix;

    @BeforeEach
    void connect() {
        prefix = "rbhelp-" + UUID.randomUUID().toString().substring(0, 8);
        bus = Bus.connect(BusConfig.builder(target.uri()).keyPrefix(prefix).build());
    }

    @AfterEach
    void close() {
        bus.close();
        target.deleteKeys(prefix);
    }

    @Test
    void entriesChunkedBehindASlowHandler_runOnTheFreeRunners_once() throws InterruptedException {
        // Published before the subscription starts, so its first read takes all 20: four chunks of five, the slow
        // entry first in the first chunk, four entries behind it.
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < ENTRIES; i++) {
            messages.add(Message.builder(i == 0 ? "slow" : "fast", ("m" + i).getBytes(StandardCharsets.UTF_8))
                    .build());
        }
        bus.publisher().publishAll("t", messages);
        CountDownLatch slowRunning = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch othersDone = new CountDownLatch(ENTRIES - 1);
        Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
        Subscription s = bus.subscribe("t", "g", "c1", d -> {
            runs.computeIfAbsent(d.message().id(), k -> new AtomicInteger()).incrementAndGet();
            if (d.message().type().equals("slow")) {
                slowRunning.countDown();
                release.await(SLOW.toMillis(), TimeUnit.MILLISECONDS);
            } else {
                othersDone.countDown();
            }
        }, SubscribeOptions.builder().concurrency(CONCURRENCY).batchSize(100).build());
        try {
            assertThat(slowRunning.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("the slow handler started").isTrue();
            assertThat(othersDone.await(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                    .as("the %d other entries ran while the slow handler still ran (%d left)", ENTRIES - 1,
                            othersDone.getCount())
                    .isTrue();
        } finally {
            release.countDown();
        }
        Wait.until("every entry handled and acked", WAIT, () -> runs.size() == ENTRIES && target.redis()
                .xpending(prefix + ":{t}:stream", "g", Range.create("-", "+"), Limit.from(100)).isEmpty());
        assertThat(runs.values()).as("handler calls per entry").allMatch(n -> n.get() == 1);
        s.close();
    }
}
