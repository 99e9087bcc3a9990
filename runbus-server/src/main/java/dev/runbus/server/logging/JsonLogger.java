package dev.runbus.server.logging;

import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;

/** One logger of {@link JsonLogs}: each call that passes the level is one JSON line on stderr. */
final class JsonLogger extends LegacyAbstractLogger {

    private static final long serialVersionUID = 1L;
    /** Jetty says much at info about its own start and stop; text logs keep it at warn too. */
    private static final String QUIET = "org.eclipse.jetty";

    JsonLogger(String name) {
        this.name = name;
    }

    @Override
    public boolean isTraceEnabled() {
        return enabled(Level.TRACE);
    }

    @Override
    public boolean isDebugEnabled() {
        return enabled(Level.DEBUG);
    }

    @Override
    public boolean isInfoEnabled() {
        return enabled(Level.INFO);
    }

    @Override
    public boolean isWarnEnabled() {
        return enabled(Level.WARN);
    }

    @Override
    public boolean isErrorEnabled() {
        return true;
    }

    private boolean enabled(Level level) {
        Level threshold = name.startsWith(QUIET) && JsonLogs.threshold().toInt() < Level.WARN.toInt()
                ? Level.WARN : JsonLogs.threshold();
        return level.toInt() >= threshold.toInt();
    }

    @Override
    protected String getFullyQualifiedCallerName() {
        return null;
    }

    @Override
    protected void handleNormalizedLoggingCall(Level level, Marker marker, String pattern, Object[] arguments,
                                               Throwable throwable) {
        JsonLines.write(level, name, MessageFormatter.basicArrayFormat(pattern, arguments), throwable);
    }
}
