package dev.runbus.server;

import dev.runbus.runs.Reply;
import dev.runbus.runs.RunContext;
import dev.runbus.runs.RunHandler;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.trace.Span;
import java.util.List;

/** A test handler that makes a span of its own, named {@code handle <run id>}, as an application's would. */
public final class TracedRunHandler implements RunHandler {

    @Override
    public List<Reply> execute(RunContext run) {
        Span span = GlobalOpenTelemetry.getTracer("test-handler").spanBuilder("handle " + run.runId()).startSpan();
        try {
            return List.of(Reply.assistant("traced:" + run.input()));
        } finally {
            span.end();
        }
    }
}
