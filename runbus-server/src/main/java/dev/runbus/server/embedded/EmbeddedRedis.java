package dev.runbus.server.embedded;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import redis.embedded.core.ExecutableProvider;

/**
 * A Redis server process that only {@link #close()} stops. The embedded-redis library's own {@code start()}
 * registers a JVM shutdown hook that stops Redis; JVM hooks run at once, so on SIGTERM that hook would stop Redis
 * while serve is still draining into it. Here the library only provides the binary and its config file, and
 * runbus starts the process itself, after everything that uses it stopped. Started in a session of its own
 * (setsid) where the system has it, so that Ctrl-C in a terminal, which signals the whole foreground process
 * group, reaches runbus only and not Redis behind its back.
 *
 * <p>Another account on this host gets nothing from it: it asks for a random password ({@code requirepass}; the bus
 * gets it in-process), and the commands that write files where a client says or load code ({@code CONFIG},
 * {@code MODULE}, {@code DEBUG}, the {@code SAVE} family, {@code REPLICAOF}, which replaces the data set with
 * another server's) are renamed away: runbus sends none of them (the ACL lists in docs/security.md hold every
 * command it sends), and Redis 6.2, the embedded version, has no ACL rule that keeps them from the default user.
 * The password is in a 0600 config file in Redis's own folder, never on a command line.
 */
public final class EmbeddedRedis implements AutoCloseable {

    private static final Path SETSID = Path.of("/usr/bin/setsid");

    private final Process process;

    private EmbeddedRedis(Process process) {
        this.process = process;
    }

    /** Commands runbus never sends that let a client write files, load code or replace the data. */
    static final List<String> RENAMED = List.of("CONFIG", "MODULE", "DEBUG", "SAVE", "BGSAVE", "BGREWRITEAOF",
            "REPLICAOF", "SLAVEOF");

    /** The library's Redis binary for this machine, copied out of the jar. */
    private static java.io.File binary() {
        try {
            return ExecutableProvider.newJarResourceProvider().get();
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException(EmbeddedBinaries.missing("Redis", System.getProperty("os.name") + " "
                    + System.getProperty("os.arch")), e);
        }
    }

    /**
     * Starts Redis on 127.0.0.1:{@code port} with {@code password}, keeping nothing on disk, and returns once it
     * accepts connections.
     */
    public static EmbeddedRedis start(int port, Path dir, String password) throws IOException {
        List<String> config = new ArrayList<>(List.of("port " + port, "bind 127.0.0.1", "protected-mode yes",
                "requirepass " + password, "save \"\"", "appendonly no", "dir \"" + dir.toAbsolutePath() + "\""));
        RENAMED.forEach(c -> config.add("rename-command " + c + " \"\""));
        Path file = dir.resolve("redis.conf");
        // Made private before the password is in it, then put in place whole.
        Path tmp = Files.createTempFile(dir, ".redis", ".tmp",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.write(tmp, config, StandardCharsets.UTF_8);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        List<String> command = new ArrayList<>();
        if (Files.isExecutable(SETSID)) {
            command.add(SETSID.toString());
        }
        // The library copies the binary into a new 0700 temporary folder of its own.
        command.add(binary().getAbsolutePath());
        command.add(file.toAbsolutePath().toString());
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
