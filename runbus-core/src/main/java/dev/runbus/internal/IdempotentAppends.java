package dev.runbus.internal;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.XAddArgs;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code IDMP} option of {@code XADD} (Redis 8.6), for every append of one bus: each carries the bus's
 * producer id and a number of its own, and the server keeps, per stream and producer, the newest numbers it
 * appended. Lettuce re-sends a command that was written but not answered when its connection drops; an
 * {@code XADD} re-sent that way, after the server had appended it, then appends nothing and is answered the
 * first entry's id. Without it the same publish appends the message twice (at-least-once, which consumers
 * absorb; this removes the repeat at its source).
 *
 * <p>The window is the server's: per stream and producer the newest {@code IDMP-MAXSIZE} numbers (default 100),
 * each for {@code IDMP-DURATION} (default 100 s). A re-send is recognised when fewer than that many later
 * appends of the same producer reached the same stream between it and its original: commands written on the
 * same connection before the drop (publishing threads waiting on it, a batch). A producer id per connection
 * (the bus's shared one and its batch connection) keeps one from taking the other's window. What the window
 * means at runbus's rates: docs/architecture.md, "Idempotent appends".
 *
 * <p>Used when the server said it is Redis 8.6 or later at connect. A server that refuses the option (a
 * replica of an older version promoted, or a cluster part-way through an upgrade: "Invalid stream ID", since an
 * older {@code XADD} takes {@code IDMP} for the entry id, and appends nothing) turns it off for this bus, and the
 * append is sent again without it.
 */
final class IdempotentAppends {

    private static final Logger log = LoggerFactory.getLogger(IdempotentAppends.class);

    private final String producer;
    private final AtomicLong next = new AtomicLong();
    private volatile boolean on;

    /** @param serverHasIt whether the server said at connect that it takes {@code IDMP} */
    IdempotentAppends(boolean serverHasIt) {
        byte[] random = new byte[8];
        ThreadLocalRandom.current().nextBytes(random);
        this.producer = "runbus-" + HexFormat.of().formatHex(random);
        this.on = serverHasIt;
    }

    /** Whether appends carry {@code IDMP} now. */
    boolean on() {
        return on;
    }

    /**
     * The arguments of one append on the connection named {@code connection}: {@code IDMP} with a fresh number,
     * and a cap of about {@code maxLenApprox} entries when positive. A new object each time: Lettuce keeps the
     * arguments with the command it may re-send, which must carry the same number.
     */
    XAddArgs next(String connection, long maxLenApprox) {
        XAddArgs args = new XAddArgs().idmp(producer + connection, Long.toString(next.incrementAndGet(), 36));
        return maxLenApprox > 0 ? args.maxlen(maxLenApprox).approximateTrimming(true) : args;
    }

    /**
     * The producer id and a fresh number for one park on the connection named {@code connection}: flow.lua parks
     * with {@code XADD … IDMP} on them. A new pair each time, kept with the call Lettuce may re-send.
     */
    String[] nextPark(String connection) {
        return new String[] {producer + connection, Long.toString(next.incrementAndGet(), 36)};
    }

    /**
     * Whether {@code failure} is a server refusing the option; if so, appends carry it no more (logged once).
     * Such a refusal appended nothing, so the caller sends the append again without it.
     */
    boolean refusedBy(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof RedisCommandExecutionException && t.getMessage() != null
                    && (t.getMessage().contains("Invalid stream ID") || t.getMessage().contains("syntax error"))) {
                if (on) {
                    on = false;
                    log.warn("the Redis server refused XADD's IDMP option ({}): appends are sent without it from now "
                            + "on, so an append re-sent after a lost reply may be appended twice", t.getMessage());
                }
                return true;
            }
        }
        return false;
    }
}
