package dev.runbus.server;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import redis.embedded.core.RedisServerBuilder;

/**
 * A Redis server process that only {@link #close()} stops. The embedded-redis library's own {@code start()}
 * registers a JVM shutdown hook that stops Redis; JVM hooks run at once, so on SIGTERM that hook would stop Redis
 * while serve is still draining into it. Here the library only provides the binary and its config file, and
 * runbus starts the process itself, after everything that uses it stopped. Started in a session of its own
 * (setsid) where the system has it, so that Ctrl-C in a terminal, which signals the whole foreground process
 * group, reaches runbus only and not Redis behind its back.
 */
final class EmbeddedRedis implements AutoCloseable {

    private static final Path SETSID = Path.of("/usr/bin/setsid");

    private final Process process;

    private EmbeddedRedis(Process process) {
        this.process = process;
    }

    /** Starts Redis on 127.0.0.1:{@code port}, keeping nothing on disk, and returns once it accepts connections. */
    static EmbeddedRedis start(int port, Path dir) throws IOException {
        List<String> command = new ArrayList<>();
        if (Files.isExecutable(SETSID)) {
            command.add(SETSID.toString());
        }
        command.addAll(new RedisServerBuilder().port(port).bind("127.0.0.1").setting("save \"\"")
                .setting("appendonly no").setting("dir " + dir.toAbsolutePath()).buildCommandArgs());
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        StringBuilder seen = new StringBuilder();
        String line;
        while ((line = r.readLine()) != null) {
            if (line.contains("Ready to accept connections")) {
                drain(r);
                return new EmbeddedRedis(p);
            }
            seen.append(line).append('\n');
        }
        p.destroyForcibly();
        throw new IOException("embedded Redis did not start on port " + port + ":\n" + seen);
    }

    /** Redis's output must be read or it blocks once the pipe is full. */
    private static void drain(BufferedReader r) {
        Thread t = new Thread(() -> {
            try {
                while (r.readLine() != null) {
                    // discarded: runbus reports Redis's state itself
                }
            } catch (IOException ignored) {
                // Redis stopped
            }
        }, "embedded-redis-output");
        t.setDaemon(true);
        t.start();
    }

    /** SIGTERM, which Redis answers by stopping; SIGKILL if it has not within 10 s. */
    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
