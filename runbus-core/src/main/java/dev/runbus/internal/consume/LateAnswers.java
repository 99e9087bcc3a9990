package dev.runbus.internal.consume;

import dev.runbus.internal.redis.Entry;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes the entries of a read or a claim whose answer came after its loop stopped waiting for it (a stalled master, a
 * slow network) safe to hand on. Until the answer came they were pending under this consumer, neither held nor kept
 * alive, their idle time running since Redis ran the call: another consumer may have claimed them meanwhile, or could
 * before this consumer's keep-alive first renews them. So they are renewed first, as the keep-alive renews held
 * entries (keep_alive.lua: XCLAIM to this consumer with JUSTID, of those it still owns; deleted ones are acked), and
 * only those still this consumer's are handed on, their idle time just restarted. The renewal is awaited as long as a
 * call is ({@value Reclaimer#WAIT_MILLIS} ms); when it gets no answer by then, the entries are left pending, unheld,
 * for a takeover (another consumer's or this one's), which a renewal that still runs only postpones.
 */
final class LateAnswers {

    private static final Logger log = LoggerFactory.getLogger(LateAnswers.class);

    private final SubscriptionContext ctx;
    private final Scripts scripts;
    private final SafeListener listener;

    LateAnswers(SubscriptionContext ctx, Scripts scripts, SafeListener listener) {
        this.ctx = ctx;
        this.scripts = scripts;
        this.listener = listener;
    }

    /**
     * Renews {@code entries}, all of {@code partition}, which a late {@code call} brought; returns those still this
     * consumer's, to be handed on at once. Waits up to {@value Reclaimer#WAIT_MILLIS} ms.
     */
    List<Entry> renew(String call, int partition, List<Entry> entries) {
        if (entries.isEmpty()) {
            return entries;
        }
        List<String> ids = entries.stream().map(Entry::streamId).toList();
        Scripts.KeepAliveResult r;
        try {
            r = scripts.keepAlive(ctx.name(partition), ctx.group(), ctx.consumer(), ids)
                    .get(Reclaimer.WAIT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            log.info("{}: {} entries of a {} answered late are left for a takeover: their renewal got no answer "
                    + "within {} ms", ctx.describe(), ids.size(), call, Reclaimer.WAIT_MILLIS);
            return List.of();
        } catch (ExecutionException e) {
            listener.onLoopError("renewing the entries of a late " + call + " for " + ctx.describe(), e.getCause());
            return List.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
        if (!r.trimmed().isEmpty()) {
            listener.onTrimmedWhilePending(ctx.topic(), ctx.group(), ctx.qualify(partition, r.trimmed()));
        }
        if (!r.lost().isEmpty()) {
            log.info("{}: {} entries of a {} answered late were taken over meanwhile; they are not run here",
                    ctx.describe(), r.lost().size(), call);
        }
        Set<String> gone = new HashSet<>(r.lost());
        gone.addAll(r.trimmed());
        return gone.isEmpty() ? entries : entries.stream().filter(e -> !gone.contains(e.streamId())).toList();
    }
}
