package dev.runbus.internal.ordered;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.internal.scripts.ScriptCalls;
import dev.runbus.testing.OneStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The lease scripts of an ordered group one call at a time, on the local Redis: {@code lease_acquire.lua} sent twice
 * for one acquisition (the first call's reply lost: it timed out, or the client sent it again after a reconnect)
 * answers the lease the first call took, renewed; every other acquisition finds it held.
 */
class LeaseScriptsTest {

    private static final long LEASE_MILLIS = 10_000;

    private OneStream one;
    private String name;
    private String leaseKey;

    @BeforeEach
    void connect() {
        one = new OneStream("test-lease");
        name = one.partitions.name(0);
        leaseKey = one.keys.lease(name, "g");
    }

    @AfterEach
    void tearDown() {
        one.close();
    }

    private OrderedScripts scriptsOf(String consumer) {
        return new OrderedScripts(ScriptCalls.auto(one.link.sync()), one.link.sync(), one.link.async(), one.keys, "g",
                consumer);
    }

    private static <T> T answer(CompletableFuture<T> call) throws Exception {
        return call.get(5, TimeUnit.SECONDS);
    }

    @Test
    void theSameAcquisitionSentTwice_getsTheLeaseItTook_renewed() throws Exception {
        OrderedScripts c = scriptsOf("c");
        String lease = answer(c.acquire(name, LEASE_MILLIS, "try-1"));
        assertThat(lease).isNotNull();
        one.redis.pexpire(leaseKey, 1_000); // most of the lease time has passed since the first call ran

        assertThat(answer(c.acquire(name, LEASE_MILLIS, "try-1"))).as("the same call again").isEqualTo(lease);
        assertThat(one.redis.pttl(leaseKey)).as("renewed from the second call").isGreaterThan(LEASE_MILLIS / 2);
        assertThat(answer(c.renew(name, lease, LEASE_MILLIS))).as("one lease, which its holder renews").isTrue();
    }

    @Test
    void anotherAcquisition_findsTheLeaseHeld_evenOfTheSameConsumer() throws Exception {
        String lease = answer(scriptsOf("c").acquire(name, LEASE_MILLIS, "try-1"));

        assertThat(answer(scriptsOf("c").acquire(name, LEASE_MILLIS, "try-2"))).as("the same consumer's next try")
                .isNull();
        assertThat(answer(scriptsOf("d").acquire(name, LEASE_MILLIS, "try-1"))).as("another consumer").isNull();
        assertThat(one.redis.get(leaseKey)).isEqualTo(lease);
    }

    @Test
    void aLeaseWithoutAnAcquisitionId_isHeldForEveryAcquisition() throws Exception {
        one.redis.psetex(leaseKey, LEASE_MILLIS, "7 c 1700000000000"); // as an earlier runbus wrote it

        assertThat(answer(scriptsOf("c").acquire(name, LEASE_MILLIS, "try-1"))).isNull();
        assertThat(one.redis.get(leaseKey)).isEqualTo("7 c 1700000000000");
    }

    @Test
    void aLeaseReleased_isTakenAgainUnderAHigherToken() throws Exception {
        OrderedScripts c = scriptsOf("c");
        String first = answer(c.acquire(name, LEASE_MILLIS, "try-1"));
        assertThat(answer(c.renew(name, first, 0))).as("released").isTrue();

        String second = answer(c.acquire(name, LEASE_MILLIS, "try-1"));
        assertThat(second).isNotNull();
        assertThat(LeaseValue.parse(second).token()).isGreaterThan(LeaseValue.parse(first).token());
    }
}
