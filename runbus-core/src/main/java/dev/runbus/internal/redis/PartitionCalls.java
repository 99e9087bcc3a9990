package dev.runbus.internal.redis;

import dev.runbus.RunbusException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The calls a loop sent to Redis and has not handled yet, at most one per partition, each with a deadline of its
 * own (the command timeout from when it was sent). A loop that walks the partitions sends their calls without
 * waiting, waits a short while for the answers, and leaves the unanswered ones in flight: their partitions are
 * skipped until they are answered or their deadline passes, and the loop goes on with the others. On a cluster each
 * master has its own connection, so a stalled master holds up only the calls of its own partitions (docs/architecture.md, rule
 * 14). Used by one thread, the loop's.
 */
public final class PartitionCalls<T> {

    /** What became of a call, handed over on the loop's thread. */
    public interface Outcome<T> {
        void answered(int partition, T value);

        /** The call failed, or got no answer by its deadline (it may still run: rule 13). */
        void failed(int partition, Throwable error);
    }

    /** A call in flight; {@code round}: the {@link #awaitRound} round it was sent in. */
    private static final class Call<T> {
        final CompletableFuture<T> reply;
        final long deadlineNanos;
        final long round;
        /** Whether {@link #onLateAnswer} waits for its answer. */
        boolean watched;

        Call(CompletableFuture<T> reply, long deadlineNanos, long round) {
            this.reply = reply;
            this.deadlineNanos = deadlineNanos;
            this.round = round;
        }
    }

    private final Map<Integer, Call<T>> calls = new HashMap<>();
    /** The round of {@link #awaitRound} that calls sent now belong to. */
    private long round;
    private final long timeoutNanos;
    private final String what;
    private final Runnable onLateAnswer;

    /** {@code what} names the calls in errors ("keep-alive"). */
    public PartitionCalls(String what, long timeoutMillis) {
        this(what, timeoutMillis, null);
    }

    /**
     * Like {@link #PartitionCalls(String, long)}; {@code onLateAnswer} is run (on any thread) when a call left in flight
     * by {@link #await} is answered, so that the loop can hand the answer over at once instead of at its next round.
     */
    public PartitionCalls(String what, long timeoutMillis, Runnable onLateAnswer) {
        this.what = what;
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        this.onLateAnswer = onLateAnswer;
    }

    /** Whether a call of {@code partition} is in flight (answered but not handled yet counts). */
    public boolean inFlight(int partition) {
        return calls.containsKey(partition);
    }

    /** Sends a call for {@code partition}, which must have none in flight. A call that throws fails at once. */
    public void send(int partition, Supplier<CompletableFuture<T>> call) {
        if (calls.containsKey(partition)) {
            throw new IllegalStateException(what + " of partition " + partition + " is in flight already");
        }
        CompletableFuture<T> reply;
        try {
            reply = call.get();
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        calls.put(partition, new Call<>(reply, System.nanoTime() + timeoutNanos, round));
    }

    /**
     * Waits up to {@code waitNanos} for {@code partition}'s call; hands it to {@code outcome} and returns true when it
     * was answered, failed or is past its deadline, else returns false and leaves it in flight.
     */
    public boolean await(int partition, long waitNanos, Outcome<T> outcome) {
        Call<T> c = calls.get(partition);
        if (c == null) {
            return true;
        }
        long until = Math.min(System.nanoTime() + waitNanos, c.deadlineNanos);
        try {
            c.reply.get(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            if (System.nanoTime() - c.deadlineNanos < 0) {
                watch(c);
                return false;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            watch(c);
            return false;
        } catch (ExecutionException | RuntimeException e) {
            // handled below, from the reply
        }
        finish(partition, c, outcome);
        return true;
    }

    /** Runs {@link #onLateAnswer} when {@code c} is answered: at once if it was answered since the wait gave up. */
    private void watch(Call<T> c) {
        if (onLateAnswer != null && !c.watched) {
            c.watched = true;
            c.reply.whenComplete((value, failure) -> {
                if (failure == null) {
                    onLateAnswer.run();
                }
            });
        }
    }

    /**
     * Waits until every call in flight is answered or {@code untilNanos} (System.nanoTime) passed, handing over each
     * one answered, failed or past its deadline; the others stay in flight.
     */
    public void awaitAll(long untilNanos, Outcome<T> outcome) {
        for (int partition : new ArrayList<>(calls.keySet())) {
            await(partition, untilNanos - System.nanoTime(), outcome);
        }
    }

    /**
     * The wait of a loop that sends its calls in rounds: waits until the calls sent since the last round are answered
     * or {@code untilNanos} passed, or, when none was sent, until one call in flight is; then hands over every call
     * answered, failed or past its deadline. A call an earlier round left in flight is not waited for again: its
     * master stalls, and waiting for it every round would hold up the others' partitions as long each round.
     */
    public void awaitRound(long untilNanos, Outcome<T> outcome) {
        long current = round++;
        List<Integer> sent = new ArrayList<>();
        calls.forEach((partition, c) -> {
            if (c.round == current) {
                sent.add(partition);
            }
        });
        if (sent.isEmpty()) {
            awaitAny(untilNanos);
        }
        for (int partition : sent) {
            await(partition, untilNanos - System.nanoTime(), outcome);
        }
        finishDone(outcome);
    }

    /** Waits until one call in flight is done or past its deadline, or {@code untilNanos} passed. */
    private void awaitAny(long untilNanos) {
        if (calls.isEmpty()) {
            return;
        }
        long until = untilNanos;
        CompletableFuture<?>[] replies = new CompletableFuture<?>[calls.size()];
        int i = 0;
        for (Call<T> c : calls.values()) {
            replies[i++] = c.reply;
            until = c.deadlineNanos - until < 0 ? c.deadlineNanos : until;
        }
        try {
            CompletableFuture.anyOf(replies).get(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            // handed over by the caller, from each reply
        }
    }

    /** Hands over, without waiting, every call answered, failed or past its deadline. */
    public void finishDone(Outcome<T> outcome) {
        awaitAll(System.nanoTime(), outcome);
    }

    /** Gives up every call in flight (a close): each is handed over as failed. */
    void abandonAll(Outcome<T> outcome) {
        List<Integer> partitions = new ArrayList<>(calls.keySet());
        for (int partition : partitions) {
            Call<T> c = calls.remove(partition);
            c.reply.cancel(true);
            outcome.failed(partition, new RunbusException(what + " of partition " + partition + " abandoned"));
        }
    }

    private void finish(int partition, Call<T> c, Outcome<T> outcome) {
        calls.remove(partition);
        if (!c.reply.isDone()) {
            c.reply.cancel(true);
            outcome.failed(partition, new RunbusException(what + " of partition " + partition
                    + " got no answer within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms"));
            return;
        }
        T value;
        try {
            value = c.reply.join();
        } catch (RuntimeException e) {
            outcome.failed(partition, e.getCause() != null && !(e instanceof RunbusException) ? e.getCause() : e);
            return;
        }
        outcome.answered(partition, value);
    }
}
