package dev.runbus.server.logging;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.event.Level;

/**
 * {@code --log-format json}: one JSON object per line on stderr instead of slf4j-simple's text. Chosen before
 * the first logger is made ({@link #selectIfAsked}), because SLF4J binds its provider then, once per process.
 *
 * <p>Every line carries {@code time}, {@code level}, {@code logger}, {@code thread} and {@code message}, an
 * {@code error} with the stack trace when there is one, the process's own fields once known ({@link #process}:
 * topic, group, consumer) and the thread's MDC (the run worker puts {@code run_id} and {@code message_id} there
 * while a run's handler executes).
 */
public final class JsonLogs {

    /** The format's name in {@code --log-format} and {@code RUNBUS_LOG_FORMAT}. */
    public static final String JSON = "json";
    public static final String TEXT = "text";

    private static final Map<String, String> PROCESS = new ConcurrentHashMap<>();
    private static volatile Level threshold = Level.WARN;
    private static volatile boolean active;

    private JsonLogs() {
    }

    /**
     * Installs the JSON provider when {@code args} hold {@code --log-format json} (or {@code =json}) or the
     * environment {@code RUNBUS_LOG_FORMAT=json}, at {@code level} (RUNBUS_LOG_LEVEL's value, or null for warn).
     * Another value is left for the command's own check to refuse by name.
     */
    public static void selectIfAsked(String[] args, String fromEnvironment, String level) {
        String format = fromEnvironment;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--log-format") && i + 1 < args.length) {
                format = args[i + 1];
            } else if (args[i].startsWith("--log-format=")) {
                format = args[i].substring("--log-format=".length());
            }
        }
        if (format != null && format.trim().equalsIgnoreCase(JSON)) {
            threshold = parse(level);
            active = true;
            System.setProperty("slf4j.provider", JsonLogProvider.class.getName());
            // SLF4J would otherwise say, in text on stderr, that it loads the provider named here.
            System.setProperty("slf4j.internal.verbosity", "WARN");
        }
    }

    /** Whether this process writes JSON lines. */
    public static boolean active() {
        return active;
    }

    /**
     * Where the command writes what it tells its user on stderr ("stopping gracefully", an error): in JSON mode
     * each line becomes a JSON line of logger {@code runbus}, level ERROR for an error and INFO otherwise, written
     * whatever the level (text mode prints them always too).
     */
    public static PrintWriter commandOutput() {
        return new PrintWriter(new LineWriter(JsonLogs::command), true);
    }

    /** One line the command tells its user, as a JSON line. */
    public static void command(String line) {
        String text = line.startsWith("runbus: ") ? line.substring("runbus: ".length()) : line;
        boolean error = text.startsWith("error: ");
        JsonLines.write(error ? Level.ERROR : Level.INFO, "runbus", error ? text.substring("error: ".length()) : text,
                null);
    }

    /** Fields of this process on every later line (topic, group, consumer); null values are left out. */
    public static void process(Map<String, String> fields) {
        fields.forEach((k, v) -> {
            if (v != null && !v.isEmpty()) {
                PROCESS.put(k, v);
            }
        });
    }

    static Map<String, String> processFields() {
        return PROCESS;
    }

    static Level threshold() {
        return threshold;
    }

    private static Level parse(String level) {
        if (level == null || level.isBlank()) {
            return Level.WARN;
        }
        try {
            return Level.valueOf(level.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            return Level.WARN;
        }
    }
}
