package dev.runbus.runs.internal.worker;

import dev.runbus.BusListener;
import dev.runbus.DeadLetter;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Marks a run failed when the bus dead-letters its trigger, if that trigger is still the run's current
 * attempt (see {@link RunFailures#applyDeadLetter}): so a duplicate or late call changes nothing. An ordered
 * run's worker fails the run itself before the bus moves the trigger ({@link OrderedRunWorker}); then this only
 * names the dead letter on the run. The bus calls
 * listeners on its own threads, which must not wait on I/O, so the PostgreSQL write happens on a thread of
 * its own. If the process dies before the write, the sweeper's dead-letter reconciliation does it.
 */
public final class FailedRunMarker implements BusListener, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(FailedRunMarker.class);

    private final RunFailures failures;
    private final String topic;
    private final String group;
    private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "runbus-runs-failed-marker");
        t.setDaemon(true);
        return t;
    });

    public FailedRunMarker(RunFailures failures, String topic, String group) {
        this.failures = failures;
        this.topic = topic;
        this.group = group;
    }

    @Override
    public void onDeadLetter(DeadLetter dl) {
        if (!topic.equals(dl.topic()) || !group.equals(dl.group())) {
            return;
        }
        Triggers.runIdOf(dl.message()).ifPresent(runId -> thread.execute(() -> {
            CrashPoints.reach(CrashPoints.Point.AFTER_DEAD_LETTER_BEFORE_FAILED);
            try {
                switch (failures.applyDeadLetter(runId, dl.reason(), dl.id(), dl.originalStreamId())) {
                    case FAILED -> log.warn("run {} failed: {}", runId, dl.reason());
                    case ATTACHED -> log.debug("run {}, failed by its worker, names its dead letter {}", runId, dl.id());
                    case UNCHANGED -> log.debug("dead letter {} of run {} is not its current attempt (or the run is"
                            + " finished): no change", dl.id(), runId);
                }
            } catch (Exception e) {
                log.warn("could not mark run {} failed now; the sweeper will", runId, e);
            }
        }));
    }

    @Override
    public void close() {
        thread.shutdown();
        try {
            thread.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
