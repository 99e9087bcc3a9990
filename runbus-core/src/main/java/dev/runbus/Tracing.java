package dev.runbus;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Whether and through what a bus carries OpenTelemetry trace context ({@link BusConfig#tracing()}).
 *
 * <p>With tracing on, a publish writes the W3C trace context ({@code traceparent}, {@code tracestate}) into
 * the message's headers and records a producer span, and each delivery's handler runs in a consumer span that
 * is a child of the message's context (docs/architecture.md, "Tracing"). {@link #OFF}, the default, touches no
 * OpenTelemetry class: an application without {@code opentelemetry-api} (an optional dependency) needs none,
 * and a bus without tracing pays nothing for it.
 *
 * <p>The OpenTelemetry types appear only in the signatures of {@link #openTelemetry(OpenTelemetry)},
 * {@link #global()} and {@link #openTelemetry()}, which the JVM resolves when they are called, not when this
 * class is loaded.
 */
public final class Tracing {

    /** No trace context: headers are left as they are and no span is made. The default. */
    public static final Tracing OFF = new Tracing("off", null);

    private final String description;
    /** Yields the {@code OpenTelemetry} instance; null when off. Typed loosely so that this class loads without it. */
    private final Supplier<Object> openTelemetry;

    private Tracing(String description, Supplier<Object> openTelemetry) {
        this.description = description;
        this.openTelemetry = openTelemetry;
    }

    /** Traces through {@code openTelemetry}: its propagators write and read the context, its tracer makes the spans. */
    public static Tracing openTelemetry(OpenTelemetry openTelemetry) {
        Objects.requireNonNull(openTelemetry, "openTelemetry");
        return new Tracing("OpenTelemetry " + openTelemetry, () -> openTelemetry);
    }

    /**
     * Traces through {@link GlobalOpenTelemetry}, read once when the bus connects: the instance the OpenTelemetry
     * Java agent installs, or one the application set before connecting the bus. While none is set this is
     * OpenTelemetry's no-op, whose propagators write nothing (and reading the global makes it the no-op for good,
     * as OpenTelemetry does for any reader: set it before connecting the bus).
     */
    public static Tracing global() {
        return new Tracing("GlobalOpenTelemetry", GlobalOpenTelemetry::get);
    }

    public boolean isOff() {
        return openTelemetry == null;
    }

    /**
     * The instance traces go through (for {@link #global()} the global's at the time of the call).
     *
     * @throws IllegalStateException when tracing is {@link #OFF}
     */
    public OpenTelemetry openTelemetry() {
        if (openTelemetry == null) {
            throw new IllegalStateException("tracing is off");
        }
        return (OpenTelemetry) openTelemetry.get();
    }

    @Override
    public String toString() {
        return description;
    }
}
