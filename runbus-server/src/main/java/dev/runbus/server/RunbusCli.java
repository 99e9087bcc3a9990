package dev.runbus.server;

import dev.runbus.server.cli.Commands;
import dev.runbus.server.logging.JsonLogs;
import picocli.CommandLine;

/**
 * The {@code runbus} command. Exit codes: 0 success, 1 failure (a server unreachable, a broken invariant),
 * 2 bad usage or bad input. Errors go to stderr and name what is wrong.
 */
public final class RunbusCli {

    private RunbusCli() {
    }

    public static void main(String[] args) {
        configureLogging(args);
        // serve and worker return from their command once they have stopped in order, so every command ends
        // here; exiting explicitly ends threads of libraries that would otherwise keep the JVM up.
        System.exit(commandLine().execute(args));
    }

    /**
     * RUNBUS_LOG_LEVEL sets the level (default warn); the demo keeps to errors unless told otherwise, so that
     * its expected dead letters do not drown the progress bar. {@code --log-format json} (or RUNBUS_LOG_FORMAT)
     * writes JSON lines instead of text ({@link JsonLogs}); it is chosen here, before the first logger exists.
     */
    private static void configureLogging(String[] args) {
        String format = System.getenv("RUNBUS_LOG_FORMAT");
        if (format != null && !format.isBlank() && !format.trim().equalsIgnoreCase(JsonLogs.JSON)
                && !format.trim().equalsIgnoreCase(JsonLogs.TEXT)) {
            System.err.println("runbus: RUNBUS_LOG_FORMAT must be text or json, got '" + format + "'");
            System.exit(2);
        }
        JsonLogs.selectIfAsked(args, format, System.getenv("RUNBUS_LOG_LEVEL"));
        String key = "org.slf4j.simpleLogger.defaultLogLevel";
        if (System.getProperty(key) != null) {
            return;
        }
        String env = System.getenv("RUNBUS_LOG_LEVEL");
        if (env != null && !env.isBlank()) {
            System.setProperty(key, env.trim().toLowerCase(java.util.Locale.ROOT));
        } else if (args.length > 0 && args[0].equals("demo")) {
            System.setProperty(key, "error");
        }
    }

    public static CommandLine commandLine() {
        return Commands.commandLine();
    }
}
