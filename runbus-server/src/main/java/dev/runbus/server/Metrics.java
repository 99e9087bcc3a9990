package dev.runbus.server;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.List;

/**
 * The registry behind {@code /metrics}: the bus's and the runs layer's meters (docs/metrics.md) register here,
 * and {@link #scrape()} renders them in Prometheus's text format, beside the JVM's and the process's meters once
 * {@link #bindJvmAndProcess()} was called. Everything that needs Redis or PostgreSQL is read by the bus and the
 * runs layer on loops of their own: a scrape reads memory only, so a stalled server cannot hang it.
 */
public final class Metrics implements AutoCloseable {

    /** What {@link #scrape()} returns: Prometheus's text format, version 0.0.4. */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private JvmGcMetrics gc;

    /** Where the bus and the runs layer register their meters. */
    public MeterRegistry registry() {
        return registry;
    }

    /**
     * Adds Micrometer's JVM binders (memory, garbage collection, threads, class loading) and process binders
     * (processor, uptime, file descriptors); once. For the process that serves {@code /metrics}: a command that
     * does not would only hold the garbage collector's listeners.
     */
    public synchronized Metrics bindJvmAndProcess() {
        if (gc == null) {
            gc = new JvmGcMetrics();
            for (MeterBinder b : List.of(new JvmMemoryMetrics(), gc, new JvmThreadMetrics(), new ClassLoaderMetrics(),
                    new ProcessorMetrics(), new UptimeMetrics(), new FileDescriptorMetrics())) {
                b.bindTo(registry);
            }
        }
        return this;
    }

    /** The exposition text of every meter. */
    public String scrape() {
        return registry.scrape();
    }

    @Override
    public synchronized void close() {
        if (gc != null) {
            gc.close();
        }
        registry.close();
    }
}
