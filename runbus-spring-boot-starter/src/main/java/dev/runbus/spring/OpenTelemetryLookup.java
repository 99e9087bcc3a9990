package dev.runbus.spring;

import dev.runbus.Tracing;
import io.opentelemetry.api.OpenTelemetry;
import org.springframework.beans.factory.BeanFactory;

/** Loaded only when opentelemetry-api is on the class path: tracing through the application's OpenTelemetry bean. */
final class OpenTelemetryLookup {

    private OpenTelemetryLookup() {
    }

    static Tracing tracing(BeanFactory beans) {
        OpenTelemetry openTelemetry = beans.getBeanProvider(OpenTelemetry.class).getIfUnique();
        if (openTelemetry == null) {
            throw new IllegalStateException("runbus.tracing=bean needs one io.opentelemetry.api.OpenTelemetry bean,"
                    + " and the application has none or several: define one, or use runbus.tracing=global");
        }
        return Tracing.openTelemetry(openTelemetry);
    }
}
