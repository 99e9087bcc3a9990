package dev.runbus.internal.consume;

import dev.runbus.internal.redis.Partitions;
import dev.runbus.internal.scripts.Scripts;
import dev.runbus.internal.telemetry.SafeListener;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sweeps an unordered group's start records, one partition at a time side by side, each with its own deadline:
 * removes the fields whose entries are no longer pending (sweep_starts.lua says how they can be left behind). The
 * janitor runs it for each group this bus subscribes to.
 */
public final class StartRecordSweep {

    private static final Logger log = LoggerFactory.getLogger(StartRecordSweep.class);
    /** Fields a call looks at: a page of HSCAN, each with an XPENDING of one id. */
    static final int PAGE = 200;

    private final Scripts scripts;
    private final SafeListener listener;
    private final long timeoutMillis;

    public StartRecordSweep(Scripts scripts, SafeListener listener, long timeoutMillis) {
        this.scripts = scripts;
        this.listener = listener;
        this.timeoutMillis = timeoutMillis;
    }

    /** Sweeps every partition's record of {@code group} once through; returns how many fields it removed. */
    public long sweep(Partitions partitions, String group) {
        List<String> names = partitions.names();
        List<String> cursors = new ArrayList<>(names.size());
        names.forEach(n -> cursors.add("0"));
        long removed = 0;
        boolean first = true;
        while (first || cursors.stream().anyMatch(c -> !c.equals("0"))) {
            // one page of each partition still being scanned, sent together, each awaited to its own deadline
            List<CompletableFuture<Scripts.SweepPage>> pages = new ArrayList<>(names.size());
            for (int p = 0; p < names.size(); p++) {
                pages.add(first || !cursors.get(p).equals("0") ? send(names.get(p), group, cursors.get(p)) : null);
            }
            first = false;
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
            for (int p = 0; p < names.size(); p++) {
                if (pages.get(p) == null) {
                    continue;
                }
                Scripts.SweepPage page = await(pages.get(p), deadline, names.get(p), group);
                cursors.set(p, page == null ? "0" : page.cursor()); // a failed partition is left for the next round
                removed += page == null ? 0 : page.removed();
            }
        }
        if (removed > 0) {
            log.info("removed {} start-record fields of {}/{} whose entries are no longer pending", removed,
                    partitions.topic(), group);
        }
        return removed;
    }

    private CompletableFuture<Scripts.SweepPage> send(String name, String group, String cursor) {
        try {
            return scripts.sweepStarts(name, group, cursor, PAGE);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private Scripts.SweepPage await(CompletableFuture<Scripts.SweepPage> page, long deadline, String name,
                                    String group) {
        try {
            return page.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (ExecutionException | TimeoutException e) {
            listener.onLoopError("start-record sweep of " + name + "/" + group, e);
            return null;
        }
    }
}
