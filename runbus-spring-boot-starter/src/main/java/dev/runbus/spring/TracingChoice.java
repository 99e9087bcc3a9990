package dev.runbus.spring;

import dev.runbus.Tracing;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.util.ClassUtils;

/**
 * The {@link Tracing} that {@code runbus.tracing} names. OFF touches no OpenTelemetry class; GLOBAL and BEAN need
 * opentelemetry-api (optional for runbus), and say so when it is missing rather than failing on a missing class.
 */
final class TracingChoice {

    private static final String OPEN_TELEMETRY = "io.opentelemetry.api.OpenTelemetry";

    private TracingChoice() {
    }

    static Tracing of(RunbusProperties.TracingKind kind, BeanFactory beans) {
        if (kind == RunbusProperties.TracingKind.OFF) {
            return Tracing.OFF;
        }
        if (!ClassUtils.isPresent(OPEN_TELEMETRY, TracingChoice.class.getClassLoader())) {
            throw new IllegalStateException("runbus.tracing=" + kind.name().toLowerCase(java.util.Locale.ROOT)
                    + " needs io.opentelemetry:opentelemetry-api on the class path");
        }
        return kind == RunbusProperties.TracingKind.GLOBAL ? Tracing.global() : OpenTelemetryLookup.tracing(beans);
    }
}
