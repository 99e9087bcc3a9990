package dev.runbus.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Token buckets per key on a clock the test moves, and the bound on how many keys they keep. */
class RateBucketsTest {

    final AtomicLong now = new AtomicLong(1_000_000_000L);

    @Test
    void aKeyPastItsBurstWaitsAndOtherKeysDoNot() {
        RateBuckets r = new RateBuckets(2, now::get, 100);
        assertThat(r.acquire("a")).isZero();
        assertThat(r.acquire("a")).isZero();
        long wait = r.acquire("a");
        assertThat(wait).isEqualTo(TimeUnit.MILLISECONDS.toNanos(500));
        assertThat(RateBuckets.retryAfterSeconds(wait)).isEqualTo(1);
        assertThat(r.acquire("b")).isZero();
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(500));
        assertThat(r.acquire("a")).isZero();
    }

    @Test
    void manyAddressesKeepAtMostMaxKeysBuckets() {
        RateBuckets r = new RateBuckets(10, now::get, 1_000);
        for (int i = 0; i < 100_000; i++) {
            r.acquire("address:10." + (i >> 16 & 255) + "." + (i >> 8 & 255) + "." + (i & 255));
            now.addAndGet(1_000);
        }
        assertThat(r.size()).isEqualTo(1_000);
    }

    @Test
    void theLeastRecentlyUsedKeyIsDroppedFirst() {
        RateBuckets r = new RateBuckets(1, now::get, 2);
        assertThat(r.acquire("busy")).isZero();
        r.acquire("idle");
        // busy is used again, so idle is the one dropped when a third key comes: busy keeps its empty bucket.
        assertThat(r.acquire("busy")).isPositive();
        r.acquire("new");
        assertThat(r.size()).isEqualTo(2);
        assertThat(r.acquire("busy")).isPositive();
    }

    @Test
    void zeroMeansNoLimitAndKeepsNothing() {
        RateBuckets r = new RateBuckets(0, now::get, 10);
        for (int i = 0; i < 1_000; i++) {
            assertThat(r.acquire("a" + i)).isZero();
        }
        assertThat(r.size()).isZero();
    }

    @Test
    void perMinuteAllowsItsBurstThenOneAttemptPerItsShareOfAMinute() {
        RateBuckets r = RateBuckets.perMinute(10, now::get, 100);
        for (int i = 0; i < 10; i++) {
            assertThat(r.acquire("127.0.0.1")).as("attempt " + (i + 1)).isZero();
        }
        long wait = r.acquire("127.0.0.1");
        assertThat(wait).isEqualTo(TimeUnit.SECONDS.toNanos(6));
        assertThat(RateBuckets.retryAfterSeconds(wait)).isEqualTo(6);
        assertThat(r.acquire("127.0.0.2")).isZero();
        now.addAndGet(TimeUnit.SECONDS.toNanos(6));
        assertThat(r.acquire("127.0.0.1")).isZero();
        assertThat(r.acquire("127.0.0.1")).isPositive();
    }
}
