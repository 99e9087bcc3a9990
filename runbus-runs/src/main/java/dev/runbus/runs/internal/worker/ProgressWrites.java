package dev.runbus.runs.internal.worker;

import dev.runbus.runs.RunProgress;
import dev.runbus.runs.internal.store.ErrorText;
import dev.runbus.runs.internal.store.ProgressStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's progress reports ({@code RunContext.progress}): each run's latest is kept here and all are written
 * together once a second, so a handler that reports in a tight loop costs one row write a second, and never waits.
 * Progress is informative: a write that fails is reported and the next report is written at the next turn.
 */
public final class ProgressWrites implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ProgressWrites.class);
    static final long EVERY_MILLIS = 1_000;

    private final ProgressStore store;
    private final Map<UUID, ProgressStore.Report> latest = new ConcurrentHashMap<>();
    private final ScheduledExecutorService loop;

    public ProgressWrites(ProgressStore store) {
        this.store = store;
        this.loop = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "runbus-runs-progress");
            t.setDaemon(true);
            return t;
        });
        loop.scheduleWithFixedDelay(this::flushSafely, EVERY_MILLIS, EVERY_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** Where the handler of run {@code runId} reports. */
    public RunProgress of(UUID runId) {
        return (percent, details) -> {
            if (percent < 0 || percent > 100) {
                throw new IllegalArgumentException("progress is 0 to 100 percent, not " + percent);
            }
            latest.put(runId, new ProgressStore.Report(runId, percent, ErrorText.clean(details)));
        };
    }

    private void flushSafely() {
        try {
            flush();
        } catch (Throwable t) {
            // One bad turn never stops the loop: the reports taken are lost, the next ones are written.
            log.warn("writing the progress of running runs failed; the next reports are written in a second", t);
        }
    }

    /** Writes what was reported since the last flush; the reports taken are gone whatever happens. */
    void flush() throws java.sql.SQLException {
        if (latest.isEmpty()) {
            return;
        }
        List<ProgressStore.Report> reports = new ArrayList<>();
        for (UUID id : List.copyOf(latest.keySet())) {
            ProgressStore.Report r = latest.remove(id);
            if (r != null) {
                reports.add(r);
            }
        }
        if (!reports.isEmpty()) {
            store.write(reports);
        }
    }

    /** Writes what is left, then stops. */
    @Override
    public void close() {
        loop.shutdown();
        try {
            loop.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        flushSafely();
    }
}
