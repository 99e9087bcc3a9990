package dev.runbus.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A Java main class run in a child JVM on the test classpath, killable with SIGKILL. */
public final class ChildJvm implements AutoCloseable {

    private final Process process;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    /** Reads the child's output into {@link #lines}; it ends once the child has ended and its output is read. */
    private final Thread reader;

    /** When the JDK saw the process end (µs since the epoch, the machine's clock). */
    private final java.util.concurrent.CompletableFuture<Long> exitedAtMicros;

    private ChildJvm(Process process) {
        this.process = process;
        this.exitedAtMicros = process.onExit().thenApply(p -> java.time.temporal.ChronoUnit.MICROS.between(
                java.time.Instant.EPOCH, java.time.Instant.now()));
        this.reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // the process died
            }
        }, "child-output");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * A child lives for seconds and runs a little code: the client compiler alone and the serial collector start it
     * in about a quarter of the time on a busy two-core machine (1.8 s instead of 5 to 8 s to a subscribed consumer),
     * and leave the cores to the tests beside it instead of to C2 compiler and parallel GC threads.
     */
    private static final List<String> QUICK_START = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
            "-XX:-UsePerfData");

    public static ChildJvm start(Class<?> main, String... args) throws IOException {
        return start(System.getProperty("java.class.path"), main, args);
    }

    /** Like {@link #start(Class, String...)} on {@code classpath} instead of the test's. */
    public static ChildJvm start(String classpath, Class<?> main, String... args) throws IOException {
        List<String> command = javaCommandOn(classpath);
        command.add(main.getName());
        command.addAll(List.of(args));
        return new ChildJvm(new ProcessBuilder(command).redirectErrorStream(true).start());
    }

    /**
     * The start of a command line that runs a child JVM as {@link #start} does (this JVM's {@code java}, started
     * quickly) on the test's class path, with {@code options} before it; the caller adds the main class and its
     * arguments. For a child a test runs through a {@link ProcessBuilder} of its own.
     */
    public static List<String> javaCommand(String... options) {
        return javaCommandOn(System.getProperty("java.class.path"), options);
    }

    private static List<String> javaCommandOn(String classpath, String... options) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(QUICK_START);
        command.addAll(List.of(options));
        command.addAll(List.of("-cp", classpath));
        return command;
    }

    /** The output lines so far. */
    public List<String> lines() {
        return List.copyOf(lines);
    }

    /**
     * The shortest wait for a child's output: a JVM that starts, connects and subscribes took over 20 s on a two-core
     * machine running other work beside the tests. A deadline only bounds how long a failure takes to show.
     */
    static final Duration PATIENCE = Duration.ofSeconds(90);

    /** Waits for an output line starting with the prefix and returns it; {@code timeout} is at least {@link #PATIENCE}. */
    public String awaitLine(String prefix, Duration timeout) {
        return awaitLine(prefix, timeout, l -> true);
    }

    /** Waits for an output line starting with the prefix that also satisfies {@code ok}, and returns it. */
    public String awaitLine(String prefix, Duration timeout, java.util.function.Predicate<String> ok) {
        try {
            Wait.until("child output line starting with '" + prefix + "' that matches",
                    timeout.compareTo(PATIENCE) < 0 ? PATIENCE : timeout,
                    () -> lines.stream().anyMatch(l -> l.startsWith(prefix) && ok.test(l)));
        } catch (AssertionError timedOut) {
            throw new AssertionError(timedOut.getMessage() + "; " + whereItIs(), timedOut);
        }
        return lines.stream().filter(l -> l.startsWith(prefix) && ok.test(l)).findFirst().orElseThrow();
    }

    /**
     * The child's output so far and, if it is still running, its threads: SIGQUIT makes a JVM print a dump of every
     * thread on its standard output and go on, so a child that is stuck says where.
     */
    private String whereItIs() {
        if (!process.isAlive()) {
            return "the child exited with " + process.exitValue() + "; its output: " + String.join("\n", lines);
        }
        int before = lines.size();
        try {
            signal("-QUIT");
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            int seen = -1;
            // the dump ends with the JNI and heap summary; wait until lines stop coming, or 10 s
            while (System.nanoTime() < deadline && lines.size() != seen) {
                seen = lines.size();
                Thread.sleep(500);
            }
        } catch (IOException | InterruptedException e) {
            return "the child is running; its output: " + String.join("\n", lines) + " (no thread dump: " + e + ")";
        }
        List<String> all = lines();
        return "the child is running; its output before the dump: " + all.subList(0, before)
                + "\nits threads:\n" + String.join("\n", all.subList(before, all.size()));
    }

    /**
     * When the process ended, as the JDK's process reaper saw it (µs since the epoch, on the machine's clock): soon
     * after the death, unlike the return of {@link #kill} or {@link #terminate}, which also start a process to send
     * the signal and read the child's last output. {@code Long.MAX_VALUE} while it runs.
     */
    public long exitedAtMicros() {
        return process.isAlive() ? Long.MAX_VALUE : exitedAtMicros.join(); // set on the reaper's thread, maybe late
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** Waits up to {@code timeout} for the process to end by itself; true if it did. */
    public boolean awaitExit(Duration timeout) throws InterruptedException {
        return process.waitFor(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    /** SIGSTOP: the process stops where it is, as in a long GC pause; {@link #resume} lets it go on. */
    public void pause() throws IOException, InterruptedException {
        signal("-STOP");
    }

    /** SIGCONT after {@link #pause}. */
    public void resume() throws IOException, InterruptedException {
        signal("-CONT");
    }

    /**
     * SIGTERM, and waits for the process to end: its shutdown hooks run (a graceful close), and what it writes
     * meanwhile is read into {@link #lines} (the signal is sent with {@code kill}, not {@link Process#destroy}, which
     * also closes this end of the child's output: the lines a closing child writes would be lost, though what they
     * report, such as a handler's end and its ack, happened). Past {@code timeout}, {@link #kill}.
     */
    public void terminate(Duration timeout) throws InterruptedException {
        sendOrDie("-TERM");
        if (!process.waitFor(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
            kill();
            return;
        }
        reader.join(PATIENCE.toMillis());
    }

    private void signal(String signal) throws IOException, InterruptedException {
        if (!process.isAlive()) {
            return;
        }
        int exit = new ProcessBuilder("/bin/kill", signal, Long.toString(process.pid())).start().waitFor();
        if (exit != 0 && process.isAlive()) {
            throw new IOException("kill " + signal + " " + process.pid() + " exited with " + exit);
        }
    }

    /** {@link #signal}, or the JDK's forcible end when the signal cannot be sent (then the pipe closes with it). */
    private void sendOrDie(String signal) throws InterruptedException {
        try {
            signal(signal);
        } catch (IOException e) {
            process.destroyForcibly();
        }
    }

    /**
     * SIGKILL: no shutdown hook, no graceful close, nothing acked. Returns once the child has ended and everything it
     * wrote has been read, so that {@link #lines} then holds its whole output: a line written just before it died (or
     * before a condition the test saw held) may still be in the pipe when the process is already gone. The signal is
     * sent with {@code kill}: {@link Process#destroyForcibly} would close this end of the pipe with the lines in it.
     */
    public void kill() throws InterruptedException {
        sendOrDie("-KILL");
        process.waitFor();
        reader.join(PATIENCE.toMillis());
    }

    @Override
    public void close() throws InterruptedException {
        kill();
    }
}
