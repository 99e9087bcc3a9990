package dev.runbus.internal.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A loop's calls per partition: answered ones handed over, unanswered ones left in flight until their deadline. */
class PartitionCallsTest {

    private final List<String> outcomes = new ArrayList<>();
    private final PartitionCalls.Outcome<String> record = new PartitionCalls.Outcome<>() {
        @Override
        public void answered(int partition, String value) {
            outcomes.add(partition + " answered " + value);
        }

        @Override
        public void failed(int partition, Throwable error) {
            outcomes.add(partition + " failed: " + error.getMessage());
        }
    };

    @Test
    void anUnansweredCallStaysInFlightWhileTheOthersAreHandedOver() {
        PartitionCalls<String> calls = new PartitionCalls<>("test call", 60_000);
        CompletableFuture<String> stalled = new CompletableFuture<>();
        calls.send(0, () -> stalled);
        calls.send(1, () -> CompletableFuture.completedFuture("one"));
        calls.send(2, () -> CompletableFuture.failedFuture(new IllegalStateException("refused")));

        long started = System.nanoTime();
        calls.awaitAll(started + TimeUnit.MILLISECONDS.toNanos(50), record);

        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).isLessThan(5_000);
        assertThat(outcomes).containsExactlyInAnyOrder("1 answered one", "2 failed: refused");
        assertThat(calls.inFlight(0)).isTrue();
        assertThat(calls.inFlight(1)).isFalse();
        assertThatThrownBy(() -> calls.send(0, () -> CompletableFuture.completedFuture("again")))
                .isInstanceOf(IllegalStateException.class);

        stalled.complete("late");
        calls.finishDone(record);
        assertThat(outcomes).contains("0 answered late");
        assertThat(calls.inFlight(0)).isFalse();
    }

    /**
     * A loop that sends in rounds (the ordered read loop) waits for what each round sent: a call an earlier round left
     * in flight (its master stalls) is handed over when it answers, never waited for again, or every round would cost
     * the whole wait and the other partitions' calls would go out that much less often.
     */
    @Test
    void aRoundWaitsForItsOwnCallsNotAgainForOneAnEarlierRoundLeftInFlight() {
        PartitionCalls<String> calls = new PartitionCalls<>("test call", 600_000);
        CompletableFuture<String> stalled = new CompletableFuture<>();
        calls.send(0, () -> stalled);
        calls.send(1, () -> CompletableFuture.completedFuture("first"));
        calls.awaitRound(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50), record);
        assertThat(outcomes).containsExactly("1 answered first");

        // The next round, asked to wait up to five minutes: it sent one call, which is answered, so it returns at once.
        calls.send(1, () -> CompletableFuture.completedFuture("second"));
        long started = System.nanoTime();
        calls.awaitRound(started + TimeUnit.MINUTES.toNanos(5), record);

        assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started)).isLessThan(60);
        assertThat(outcomes).containsExactly("1 answered first", "1 answered second");
        assertThat(calls.inFlight(0)).isTrue();

        // A round that sent nothing waits for the first answer among those in flight, and hands it over.
        CompletableFuture.delayedExecutor(100, TimeUnit.MILLISECONDS).execute(() -> stalled.complete("late"));
        calls.awaitRound(System.nanoTime() + TimeUnit.MINUTES.toNanos(5), record);
        assertThat(outcomes).containsExactly("1 answered first", "1 answered second", "0 answered late");
        assertThat(calls.inFlight(0)).isFalse();
    }

    @Test
    void aCallPastItsDeadlineFailsAndIsCancelled() {
        PartitionCalls<String> calls = new PartitionCalls<>("test call", 20);
        CompletableFuture<String> stalled = new CompletableFuture<>();
        calls.send(3, () -> stalled);

        assertThat(calls.await(3, TimeUnit.SECONDS.toNanos(5), record)).isTrue(); // waits no longer than the deadline

        assertThat(outcomes).containsExactly("3 failed: test call of partition 3 got no answer within 20 ms");
        assertThat(stalled).isCancelled();
        assertThat(calls.inFlight(3)).isFalse();
    }

    @Test
    void aCallThatThrowsWhenSentFailsAlone() {
        PartitionCalls<String> calls = new PartitionCalls<>("test call", 1_000);
        calls.send(0, () -> {
            throw new IllegalStateException("not connected");
        });
        calls.send(1, () -> CompletableFuture.completedFuture("fine"));

        calls.finishDone(record);

        assertThat(outcomes).containsExactlyInAnyOrder("0 failed: not connected", "1 answered fine");
    }
}
