package dev.runbus.internal.consume;

import dev.runbus.DeadLetter;
import dev.runbus.Message;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves a subscription's poison entries to its topic's dead-letter stream (each atomically with its XACK) and
 * reports them, on a thread of its own: the thread that decided a move queues it and goes on, and the moves
 * queued together are sent pipelined, then awaited. Each move's {@code done} runs when Redis answered, or
 * when the move failed or its answer did not come within the command timeout; that is when the entry's slot
 * is released, before the moves are reported. Listeners hear of dead letters on this thread (after close, on the
 * closing thread), never on the client's I/O thread.
 *
 * <p>A move that fails leaves its entry pending: the reclaimer finds it past the limit and dead-letters it
 * as abandoned. A move whose answer came too late may still have been made (the script is atomic and checks
 * that the entry is pending, so it is never made twice); its dead letter is then not reported to listeners,
 * and the runs layer's sweeper reconciles it. A move whose answer was lost with its connection is sent again
 * by the client when it reconnects; each move carries a token of its own, so the script answers that second
 * send as it answered the first, and the move is reported once.
 */
public final class DeadLetterMover implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DeadLetterMover.class);
    /** How long Redis keeps what a move did, for a second send of the same move; far beyond any resend. */
    private static final long REMEMBER_MILLIS = TimeUnit.MINUTES.toMillis(10);

    /**
     * One entry of one partition to move; {@code fence} (null: none) is the lease an ordered consumer must still
     * hold. {@code done} runs exactly once, after the move succeeded or failed.
     */
    public record Move(int partition, String streamId, long deliveries, Message message, String reason,
                Scripts.Fence fence, Runnable done) {
        public Move {
            reason = OutcomePolicy.bounded(reason); // what the dead letter stores, and what listeners hear
        }
    }

    /** Queued by {@link #close()} so that the thread, waiting for moves, sees the close at once; never made. */
    private static final Move WAKE_UP = new Move(-1, "", 0, null, "", null, () -> { });

    private final SubscriptionContext ctx;
    private final Scripts scripts;
    private final SafeListener listener;
    private final long timeoutMillis;
    /** For the time a dead letter records. */
    private final Clock clock;
    private final BlockingQueue<Move> queue = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile boolean closed;

    public DeadLetterMover(SubscriptionContext ctx, Scripts scripts, SafeListener listener, long timeoutMillis, Clock clock) {
        this.ctx = ctx;
        this.clock = clock;
        this.scripts = scripts;
        this.listener = listener;
        this.timeoutMillis = timeoutMillis;
        this.thread = new Thread(this::run, "runbus-deadletter-" + ctx.describe());
        this.thread.setDaemon(true);
    }

    /** Starts the thread; with the subscription, so that a subscription that never starts leaves none behind. */
    public void start() {
        thread.start();
    }

    /** Queues a move. After {@link #close()} the move is made on the caller's thread. */
    void move(Move m) {
        if (closed) {
            moveAll(List.of(m));
            return;
        }
        queue.add(m);
        if (closed && queue.remove(m)) { // closed meanwhile, after the thread's last look
            moveAll(List.of(m));
        }
    }

    private void run() {
        List<Move> batch = new ArrayList<>();
        while (true) {
            Move first;
            try {
                first = queue.poll(50, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (first != null) {
                batch.add(first);
            }
            takeQueued(batch);
            if (batch.isEmpty() && closed) {
                // One more look: a move queued by a caller that had not yet seen the close.
                takeQueued(batch);
                if (batch.isEmpty()) {
                    return;
                }
            }
            if (!batch.isEmpty()) {
                moveAll(batch);
                batch.clear();
            }
        }
    }

    /** Adds the queued moves to {@code batch}, without the close's wake-up. */
    private void takeQueued(List<Move> batch) {
        queue.drainTo(batch);
        batch.removeIf(m -> m == WAKE_UP);
    }

    /**
     * Sends every move, then waits for each answer in turn and runs its {@code done}; reports the moves made after
     * that. The slots are freed first because reporting can cost round trips of its own (the dead-letter alarm's
     * {@code SET NX}, a listener's work), which the next entries should not wait for.
     */
    private void moveAll(List<Move> moves) {
        long now = clock.millis();
        List<CompletableFuture<String>> replies = new ArrayList<>(moves.size());
        for (Move m : moves) {
            try {
                replies.add(send(m, now));
            } catch (RuntimeException e) {
                replies.add(CompletableFuture.failedFuture(e));
            }
        }
        String[] answers = new String[moves.size()];
        for (int i = 0; i < moves.size(); i++) {
            Move m = moves.get(i);
            try {
                answers[i] = replies.get(i).get(timeoutMillis, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                listener.onLoopError("dead-letter " + ctx.describe(), e);
            } catch (Exception e) {
                listener.onLoopError("dead-letter " + ctx.describe(), e.getCause() != null ? e.getCause() : e);
            } finally {
                m.done().run();
            }
        }
        for (int i = 0; i < moves.size(); i++) {
            report(moves.get(i), answers[i], now); // a failed move's answer is null: nothing to report
        }
    }

    private CompletableFuture<String> send(Move m, long now) {
        return scripts.deadLetter(ctx.topic(), ctx.name(m.partition()), ctx.group(), m.streamId(), ctx.consumer(),
                m.deliveries(), m.reason(), now, UUID.randomUUID().toString(),
                Math.max(REMEMBER_MILLIS, 2 * timeoutMillis), m.fence());
    }

    /**
     * Makes one move on the caller's thread and reports it, for an ordered partition, which must know the move
     * was made before it goes on. Returns the script's answer ({@link Scripts#deadLetter}); throws when the move
     * failed or its answer did not come in time (the entry may then be moved or still pending). {@code done} is
     * not run.
     */
    public String moveNow(Move m) throws Exception {
        long now = clock.millis();
        String id = send(m, now).get(timeoutMillis, TimeUnit.MILLISECONDS);
        report(m, id, now);
        return id;
    }

    private void report(Move m, String id, long atMillis) {
        if (id == null || "fenced".equals(id)) { // no longer pending, or no longer this consumer's partition
            return;
        }
        String streamId = ctx.qualify(m.partition(), m.streamId());
        if ("trimmed".equals(id)) {
            listener.onTrimmedWhilePending(ctx.topic(), ctx.group(), List.of(streamId));
            return;
        }
        DeadLetter dl = new DeadLetter(ctx.qualify(m.partition(), id), ctx.topic(), streamId, ctx.group(),
                ctx.consumer(), m.deliveries(), m.reason(), Instant.ofEpochMilli(atMillis), m.message(),
                Optional.empty());
        listener.onDeadLetter(dl);
    }

    /** Makes the queued moves, then stops the thread (waiting at most the command timeout for it). */
    @Override
    public void close() {
        closed = true;
        queue.add(WAKE_UP);
        try {
            thread.join(timeoutMillis + 1_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            log.warn("{}: dead-letter moves still running after {} ms; those not made stay pending", ctx.describe(),
                    timeoutMillis);
        }
    }
}
