package dev.runbus.server;

import dev.runbus.testkit.ChildJvm;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What a test gives the runbus command instead of the developer's machine: no environment variables and a
 * working directory with no {@code runbus.properties}. The README tells users to export {@code RUNBUS_*}
 * variables and keep a config file where they run the command; a test must not pick those up.
 */
final class Hermetic {

    private static final Path EMPTY_DIRECTORY = emptyDirectory();

    private Hermetic() {
    }

    static Environment environment() {
        return new Environment(Map.of(), EMPTY_DIRECTORY);
    }

    /** A child process started from a test: no RUNBUS_* variable of the developer's, run in an empty folder. */
    static ProcessBuilder child(ProcessBuilder builder) {
        builder.environment().keySet().removeIf(name -> name.startsWith("RUNBUS_"));
        return builder.directory(EMPTY_DIRECTORY.toFile());
    }

    /**
     * The command line of {@code runbus args} in a child JVM on the test's class path, started quickly (the client
     * compiler alone, the serial collector: {@link ChildJvm}), with {@code jvmOptions} before the class path.
     */
    static List<String> runbus(List<String> jvmOptions, String... args) {
        List<String> command = new ArrayList<>(ChildJvm.javaCommand(jvmOptions.toArray(String[]::new)));
        command.add(RunbusCli.class.getName());
        command.addAll(List.of(args));
        return command;
    }

    static List<String> runbus(String... args) {
        return runbus(List.of(), args);
    }

    private static Path emptyDirectory() {
        try {
            Path dir = Files.createTempDirectory("runbus-test-cwd");
            dir.toFile().deleteOnExit();
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
