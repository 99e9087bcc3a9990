package dev.runbus.examples;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs a program of {@code runbus-examples/python} with the {@code python3} of the PATH, and gives back what it
 * printed. A machine without Python 3.8 or later fails the test that needs it, saying what to install: the Python
 * examples are part of what the suite proves, so they are never skipped.
 */
final class PythonScript {

    static final Path DIRECTORY = Path.of("python").toAbsolutePath();
    private static final long TIMEOUT_SECONDS = 60;

    /** What a finished program did: its exit code, its standard output and error. */
    record Result(int exitCode, String out, String err) {
        List<String> lines() {
            return out.lines().filter(l -> !l.isBlank()).toList();
        }
    }

    private PythonScript() {
    }

    /** The python3 of the PATH, checked to be 3.8 or later; an AssertionError naming what to install otherwise. */
    static Path python() throws IOException, InterruptedException {
        Path found = null;
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(dir.isEmpty() ? "." : dir, "python3");
            if (Files.isExecutable(candidate)) {
                found = candidate;
                break;
            }
        }
        if (found == null) {
            throw new AssertionError("no python3 on the PATH (" + System.getenv("PATH") + "): the Python examples of "
                    + "docs/wire-format.md need Python 3.8 or later (Debian/Ubuntu: apt-get install python3; ./test "
                    + "installs it when it runs as root)");
        }
        Process p = new ProcessBuilder(found.toString(), "-c",
                "import sys; print('%d.%d' % sys.version_info[:2]); sys.exit(0 if sys.version_info >= (3, 8) else 1)")
                .redirectErrorStream(true).start();
        String version = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new AssertionError(found + " is Python " + version + ": the Python examples need 3.8 or later");
        }
        return found;
    }

    /** Runs {@code script} with {@code args}, {@code stdin} as its input, and waits for it to end. */
    static Result run(String script, String stdin, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(python().toString(), DIRECTORY.resolve(script).toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(DIRECTORY.toFile());
        pb.environment().keySet().removeIf(k -> k.startsWith("RUNBUS_")); // the arguments alone say where to go
        pb.environment().put("PYTHONIOENCODING", "utf-8");
        pb.environment().put("PYTHONDONTWRITEBYTECODE", "1"); // no __pycache__ in the source tree
        Process p = pb.start();
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
        try (OutputStream in = p.getOutputStream()) {
            in.write(stdin.getBytes(StandardCharsets.UTF_8));
        }
        if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(script + " " + String.join(" ", args) + " did not end within " + TIMEOUT_SECONDS
                    + " s");
        }
        return new Result(p.exitValue(), out.join(), err.join());
    }

    private static String read(InputStream stream) {
        try {
            return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
