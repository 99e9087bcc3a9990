package dev.runbus.server.logging;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.MDC;
import org.slf4j.event.Level;

/** Writes one JSON log line to stderr: the fields {@link JsonLogs} documents, in that order. */
final class JsonLines {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private JsonLines() {
    }

    static void write(Level level, String logger, String message, Throwable throwable) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("time", Instant.now().toString());
        line.put("level", level.name());
        line.put("logger", logger);
        line.put("thread", Thread.currentThread().getName());
        line.put("message", message);
        line.putAll(JsonLogs.processFields());
        Map<String, String> mdc = MDC.getCopyOfContextMap();
        if (mdc != null) {
            line.putAll(mdc);
        }
        if (throwable != null) {
            StringWriter trace = new StringWriter();
            throwable.printStackTrace(new PrintWriter(trace));
            line.put("error", trace.toString());
        }
        String json;
        try {
            json = MAPPER.writeValueAsString(line);
        } catch (JsonProcessingException e) {
            json = "{\"level\":\"ERROR\",\"logger\":\"" + JsonLines.class.getName()
                    + "\",\"message\":\"a log line could not be written as JSON\"}";
        }
        PrintStream err = System.err;
        synchronized (err) {
            err.println(json);
        }
    }
}
