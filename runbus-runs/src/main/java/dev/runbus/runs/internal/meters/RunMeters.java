package dev.runbus.runs.internal.meters;

import java.time.Duration;

/**
 * What the runs layer measures, without Micrometer's types: {@link #NONE} unless {@code RunsConfig.meterRegistry}
 * is set, so that Micrometer's classes load only then ({@code micrometer-core} is an optional dependency).
 */
public interface RunMeters extends AutoCloseable {

    RunMeters NONE = new RunMeters() {
    };

    /**
     * The meters of a runs layer: {@link #NONE} without a registry. Micrometer's classes load only past the null
     * check.
     *
     * @param registry a {@code io.micrometer.core.instrument.MeterRegistry}, or null
     */
    static RunMeters of(Object registry, RunCountReader counts) {
        return registry == null ? NONE : MicrometerRunMeters.create(registry, counts);
    }

    /** A submission created a run ({@code created}) or found the run its idempotency key names. */
    default void submitted(boolean created) {
    }

    /** A run was completed, {@code sinceSubmit} after it was submitted (PostgreSQL's clock, both ends). */
    default void completed(Duration sinceSubmit) {
    }

    /** A sweep republished {@code runs} runs whose triggers Redis no longer had (lost data, a lost publish). */
    default void republished(int runs) {
    }

    @Override
    default void close() {
    }
}
