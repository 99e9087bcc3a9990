package dev.runbus.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The counting behind the caps on requests in flight, and that it keeps no entry for a caller with none. */
class RequestsInFlightTest {

    @Test
    void aCallerPastItsCapIsRefusedAndOthersAreNot() {
        RequestsInFlight f = new RequestsInFlight(2, 10);
        assertThat(f.acquire("a")).isEqualTo(RequestsInFlight.Outcome.ADMITTED);
        assertThat(f.acquire("a")).isEqualTo(RequestsInFlight.Outcome.ADMITTED);
        assertThat(f.acquire("a")).isEqualTo(RequestsInFlight.Outcome.CALLER_AT_CAP);
        assertThat(f.acquire("b")).isEqualTo(RequestsInFlight.Outcome.ADMITTED);
        assertThat(f.total()).isEqualTo(3);
        f.release("a");
        assertThat(f.acquire("a")).isEqualTo(RequestsInFlight.Outcome.ADMITTED);
    }

    @Test
    void theOverallCapRefusesEveryoneUntilAPlaceIsGivenBack() {
        RequestsInFlight f = new RequestsInFlight(5, 3);
        f.acquire("a");
        f.acquire("b");
        f.acquire("c");
        assertThat(f.acquire("d")).isEqualTo(RequestsInFlight.Outcome.SERVER_AT_CAP);
        assertThat(f.acquire("a")).isEqualTo(RequestsInFlight.Outcome.SERVER_AT_CAP);
        assertThat(f.total()).isEqualTo(3);
        f.release("b");
        assertThat(f.acquire("d")).isEqualTo(RequestsInFlight.Outcome.ADMITTED);
    }

    @Test
    void manyAddressesLeaveNoEntriesOnceTheirRequestsEnd() {
        RequestsInFlight f = new RequestsInFlight(4, 100);
        for (int i = 0; i < 100_000; i++) {
            String address = "address:10." + (i >> 16 & 255) + "." + (i >> 8 & 255) + "." + (i & 255);
            assertThat(f.acquire(address)).isEqualTo(RequestsInFlight.Outcome.ADMITTED);
            assertThat(f.callers()).isLessThanOrEqualTo(100);
            f.release(address);
        }
        assertThat(f.callers()).isZero();
        assertThat(f.total()).isZero();
    }

    @Test
    void theMapNeverHoldsMoreCallersThanTheOverallCap() {
        RequestsInFlight f = new RequestsInFlight(1, 50);
        for (int i = 0; i < 10_000; i++) {
            f.acquire("address:" + i);
        }
        assertThat(f.callers()).isEqualTo(50);
        assertThat(f.total()).isEqualTo(50);
    }
}
