package dev.runbus.internal.ordered;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The fenced acks of one ordered partition that were sent and not yet answered, oldest first, each with the
 * key of its entry. They travel on one connection, so Redis applies them in the order sent, and an ack can only
 * have been applied if every earlier one was.
 *
 * <p>The next entry's handler may start while acks are on the way, unless one of them is for an entry of the
 * same key (or either has no key): then it waits for that answer first. So a key's next entry never runs
 * before its previous entry's ack is known to be applied, and a crash or a lost lease can only make the next
 * owner run again entries whose acks never landed, in order, and never an entry of a key after a later entry
 * of that key ran. Entries of different keys overlap with an ack's round trip; that round trip is what one
 * ack per entry would otherwise add to every entry.
 */
final class AckWindow {

    private record Sent(String key, CompletableFuture<Long> reply) {
    }

    private final ArrayDeque<Sent> sent = new ArrayDeque<>();
    private final String partition;
    private final long timeoutMillis;

    /** How long a reply is awaited. */
    long timeoutMillis() {
        return timeoutMillis;
    }

    AckWindow(String partition, long timeoutMillis) {
        this.partition = partition;
        this.timeoutMillis = timeoutMillis;
    }

    synchronized void add(String key, CompletableFuture<Long> reply) {
        sent.add(new Sent(key, reply));
    }

    /** Waits until the entry of {@code key} (null: no key) may run; throws if an ack it waited for failed. */
    void awaitBefore(String key) throws OrderedScripts.Fenced {
        Sent last = null;
        synchronized (this) {
            for (Iterator<Sent> it = sent.descendingIterator(); it.hasNext(); ) {
                Sent s = it.next();
                if (key == null || s.key() == null || Objects.equals(key, s.key())) {
                    last = s;
                    break;
                }
            }
        }
        if (last != null) {
            awaitThrough(last);
        }
        settleAnswered();
    }

    /** Waits for every ack sent; throws if one failed. */
    void awaitAll() throws OrderedScripts.Fenced {
        Sent last;
        synchronized (this) {
            last = sent.peekLast();
        }
        if (last != null) {
            awaitThrough(last);
        }
    }

    /**
     * Completes, without an outcome, once every ack sent so far is answered or failed, or after the timeout: what a
     * release waits for, without a thread waiting on it. (Acks of one connection are answered in the order sent.)
     */
    CompletableFuture<Void> answered() {
        Sent last;
        synchronized (this) {
            last = sent.peekLast();
        }
        if (last == null) {
            return CompletableFuture.completedFuture(null);
        }
        return last.reply().handle((acked, failed) -> (Void) null)
                .completeOnTimeout(null, timeoutMillis, TimeUnit.MILLISECONDS);
    }

    /** Forgets every ack sent: whatever they did, what is still pending is what the partition starts over from. */
    synchronized void clear() {
        sent.clear();
    }

    /** Waits for {@code last} and checks it and every earlier ack, which were answered before it. */
    private void awaitThrough(Sent last) throws OrderedScripts.Fenced {
        try {
            last.reply().get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for an ack of " + partition, e);
        } catch (ExecutionException | TimeoutException e) {
            // checked below, with the earlier ones
        }
        while (true) {
            Sent s;
            synchronized (this) {
                s = sent.peek();
                if (s == null) {
                    return;
                }
                if (!s.reply().isDone()) {
                    // answered out of order cannot happen on one connection; treat it as a failure to be safe
                    throw new IllegalStateException("an ack of " + partition + " was not answered in "
                            + timeoutMillis + " ms");
                }
                sent.poll();
            }
            check(s);
            if (s == last) {
                return;
            }
        }
    }

    /** Checks and forgets the acks already answered at the head. */
    private void settleAnswered() throws OrderedScripts.Fenced {
        while (true) {
            Sent s;
            synchronized (this) {
                s = sent.peek();
                if (s == null || !s.reply().isDone()) {
                    return;
                }
                sent.poll();
            }
            check(s);
        }
    }

    private void check(Sent s) throws OrderedScripts.Fenced {
        long acked;
        try {
            acked = s.reply().join();
        } catch (RuntimeException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new IllegalStateException("an ack of " + partition + " failed: " + cause.getMessage(), cause);
        }
        if (acked < 0) {
            throw new OrderedScripts.Fenced(partition);
        }
    }
}
