package dev.runbus.runs.internal.meters;

import dev.runbus.runs.RunStatus;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/** The runs layer's meters on a Micrometer registry; docs/metrics.md lists them. */
final class MicrometerRunMeters implements RunMeters {

    private final Counter created;
    private final Counter deduplicated;
    private final Timer done;
    private final Counter republished;
    private final RunCountReader counts;

    private MicrometerRunMeters(MeterRegistry registry, RunCountReader counts) {
        this.counts = counts;
        this.created = submitted(registry, "true");
        this.deduplicated = submitted(registry, "false");
        this.done = Timer.builder("runbus.run.duration").description("Time from a run's submission to its completion")
                .tag("status", RunStatus.DONE.sql()).register(registry);
        for (RunStatus s : RunStatus.values()) {
            Gauge.builder("runbus.runs", counts.count(s), Number::doubleValue).description("Runs by status")
                    .tag("status", s.sql()).register(registry);
        }
        Gauge.builder("runbus.runs.failed.without.dead.letter", counts.failedWithoutDeadLetter(), Number::doubleValue)
                .description("Failed runs that name no dead letter: an alert on dead letters does not see them")
                .register(registry);
        this.republished = Counter.builder("runbus.sweeper.republished")
                .description("Runs the sweeper republished because Redis no longer had their triggers").register(registry);
        Gauge.builder("runbus.postgres.up", counts.postgresUp(), Number::doubleValue)
                .description("Whether PostgreSQL answered the last read of the run counts (1) or not (0)")
                .register(registry);
        this.registry = registry;
        counts.afterRead(this::syncSchedules);
        syncSchedules();
    }

    private final MeterRegistry registry;
    /** The meters of each schedule registered, removed with it. */
    private final java.util.Map<String, java.util.List<Meter>> scheduleMeters = new java.util.HashMap<>();

    /**
     * Registers the fires of the schedules that appeared since the last read, and removes those of the schedules
     * deleted: {@code runbus.schedule.fires{schedule, outcome}}, the counters of each schedule's row.
     */
    private synchronized void syncSchedules() {
        var fires = counts.scheduleFires();
        for (var e : fires.entrySet()) {
            if (scheduleMeters.containsKey(e.getKey())) {
                continue;
            }
            java.util.List<Meter> meters = new java.util.ArrayList<>();
            for (int i = 0; i < RunCountReader.OUTCOMES.size(); i++) {
                meters.add(FunctionCounter.builder("runbus.schedule.fires", e.getValue()[i], Number::doubleValue)
                        .description("A schedule's fires by outcome: fired, skipped_overlap, missed, caught_up")
                        .tag("schedule", e.getKey()).tag("outcome", RunCountReader.OUTCOMES.get(i))
                        .register(registry));
            }
            scheduleMeters.put(e.getKey(), meters);
        }
        scheduleMeters.entrySet().removeIf(e -> {
            if (fires.containsKey(e.getKey())) {
                return false;
            }
            e.getValue().forEach(registry::remove);
            return true;
        });
    }

    static RunMeters create(Object registry, RunCountReader counts) {
        return new MicrometerRunMeters((MeterRegistry) registry, counts);
    }

    private static Counter submitted(MeterRegistry registry, String created) {
        return Counter.builder("runbus.runs.submitted")
                .description("Runs submitted, by whether the submission created the run").tag("created", created)
                .register(registry);
    }

    @Override
    public void submitted(boolean isNew) {
        (isNew ? created : deduplicated).increment();
    }

    @Override
    public void completed(Duration sinceSubmit) {
        done.record(sinceSubmit);
    }

    @Override
    public void republished(int runs) {
        republished.increment(runs);
    }

    @Override
    public void close() {
        counts.close();
    }
}
