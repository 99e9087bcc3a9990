package dev.runbus.internal.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The readers' topology refreshes: one on its way at a time, and one per interval, however often they are asked. */
class TopologyRefreshTest {

    private static final long INTERVAL = TimeUnit.MILLISECONDS.toNanos(500);

    private final List<CompletableFuture<Void>> started = new ArrayList<>();
    private long now = 1_000;
    private final TopologyRefresh refresh = new TopologyRefresh(() -> {
        CompletableFuture<Void> f = new CompletableFuture<>();
        started.add(f);
        return f;
    }, INTERVAL, () -> now);

    @Test
    void askedAgainWhileARefreshIsOnItsWay_startsNoOther() {
        refresh.run();
        now += 10 * INTERVAL;
        for (int i = 0; i < 100; i++) {
            refresh.run();
        }
        assertThat(started).hasSize(1);
    }

    @Test
    void askedWithinTheIntervalOfTheLastStart_startsNoOther_andAfterItOne() {
        refresh.run();
        started.get(0).complete(null);
        now += INTERVAL - 1;
        refresh.run();
        assertThat(started).hasSize(1);

        now += 1;
        refresh.run();
        refresh.run();
        assertThat(started).hasSize(2);
    }

    @Test
    void aRefreshThatFailed_letsTheNextOneStart() {
        refresh.run();
        started.get(0).completeExceptionally(new IllegalStateException("no node answered"));
        now += INTERVAL;
        refresh.run();
        assertThat(started).hasSize(2);
    }
}
