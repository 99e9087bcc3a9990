package dev.runbus.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Redis server of a test's own: a {@code redis-server} process on a free loopback port, keeping nothing on
 * disk. For tests that restart, pause or flush Redis, which must never do so to a server other tests share.
 *
 * <p>The binary is {@code RUNBUS_TEST_REDIS_SERVER} when set (a path, or {@code embedded}), else the installed
 * {@code redis-server} when there is one on the PATH, else the Linux build inside the embedded-redis artifact
 * (Redis 6.2), so a machine with only a JDK can run the tests.
 */
public final class RedisServerProcess implements AutoCloseable {

    private static final Duration START_TIMEOUT = Duration.ofSeconds(20);
    private static Path binary;
    private static Path embedded;

    private final Path executable;
    private final int port;
    private final Path dir;
    private final String configFile;
    private final List<String> extraArgs;
    /** Whether {@link #port} is a TLS port (and the plain one is off). */
    private final boolean tls;
    /** Added to the process's environment at each launch. */
    private final java.util.Map<String, String> environment = new java.util.HashMap<>();
    /** The CA that signs a TLS server's certificate; null for a plain one. */
    private Path caCertificate;
    private Process process;

    private RedisServerProcess(Path executable, int port, Path dir, String configFile, List<String> extraArgs,
                               boolean tls) {
        this.executable = executable;
        this.port = port;
        this.dir = dir;
        this.configFile = configFile;
        this.extraArgs = List.copyOf(extraArgs);
        this.tls = tls;
    }

    /** Starts a server on a free loopback port and waits until it answers PING. */
    public static RedisServerProcess start() {
        return start(binary(), null, List.of());
    }

    /**
     * Starts a server with more configuration, as {@code --name value} arguments (for example
     * {@code --cluster-enabled yes}); its files (a cluster's node table) go to its own temporary folder.
     */
    public static RedisServerProcess start(String... extraArgs) {
        return start(binary(), null, List.of(extraArgs));
    }

    /**
     * Starts a server that speaks TLS only, on a free loopback port, with {@code certificate} (signed by the CA
     * {@code caCertificate}), not asking clients for certificates; then the arguments.
     */
    public static RedisServerProcess startTls(TestCertificates.KeyPair certificate, Path caCertificate,
                                              String... extraArgs) {
        List<String> args = new ArrayList<>(List.of("--tls-cert-file", certificate.certificate().toString(),
                "--tls-key-file", certificate.key().toString(), "--tls-ca-cert-file", caCertificate.toString(),
                "--tls-auth-clients", "no"));
        args.addAll(List.of(extraArgs));
        RedisServerProcess p = start(binary(), null, args, true);
        p.caCertificate = caCertificate;
        return p;
    }

    /** The CA that signs this server's certificate, what a client must trust; null unless it speaks TLS. */
    public Path caCertificate() {
        return caCertificate;
    }

    /** Starts a server from a configuration file (which comes first on its command line), then the arguments. */
    public static RedisServerProcess startWith(String configFile, String... extraArgs) {
        return start(binary(), configFile, List.of(extraArgs));
    }

    /**
     * Starts the server binary {@code executable} (the arguments as for {@link #start(String...)}) with these
     * environment variables too: to run it under a preloaded library (libfaketime, for a server whose clock a test
     * steps).
     */
    public static RedisServerProcess startWithEnvironment(Path executable, java.util.Map<String, String> environment,
                                                          String... extraArgs) {
        return start(executable, null, List.of(extraArgs), false, environment);
    }

    /** Starts the Redis 6.2 inside the embedded-redis artifact, whatever is installed: its own reply shapes. */
    public static RedisServerProcess startEmbedded62() {
        return start(embeddedBinary(), null, List.of());
    }

    /**
     * A free port can be taken between the check and the server's bind, and a cluster node also binds its bus
     * port (port + 10000), which nobody checked: a start that fails on a port in use is tried on another.
     */
    private static RedisServerProcess start(Path executable, String configFile, List<String> extraArgs) {
        return start(executable, configFile, extraArgs, false);
    }

    private static RedisServerProcess start(Path executable, String configFile, List<String> extraArgs, boolean tls) {
        return start(executable, configFile, extraArgs, tls, java.util.Map.of());
    }

    private static RedisServerProcess start(Path executable, String configFile, List<String> extraArgs, boolean tls,
                                            java.util.Map<String, String> environment) {
        for (int attempt = 1; ; attempt++) {
            RedisServerProcess p;
            try {
                p = new RedisServerProcess(executable, freePort(), Files.createTempDirectory("runbus-test-redis-"),
                        configFile, extraArgs, tls);
                p.environment.putAll(environment);
            } catch (IOException e) {
                throw new IllegalStateException("cannot start a redis-server for the tests", e);
            }
            try {
                p.launch();
                return p;
            } catch (IllegalStateException e) {
                boolean portTaken = p.log().contains("Address already in use");
                p.close();
                if (!portTaken || attempt == 5) {
                    throw e;
                }
            }
        }
    }

    private String log() {
        try {
            return Files.readString(dir.resolve("redis.log"));
        } catch (IOException e) {
            return "";
        }
    }

    public int port() {
        return port;
    }

    /** {@code redis://127.0.0.1:port}, or {@code rediss://…} for a TLS server. */
    public String uri() {
        return (tls ? "rediss" : "redis") + "://127.0.0.1:" + port;
    }

    /** Kills the server (SIGKILL: nothing is saved) and starts a new one on the same port, empty. */
    public synchronized void restart() {
        kill();
        launch();
    }

    /** Stops the process (SIGSTOP): connections stay open, commands get no answer until {@link #resume()}. */
    public synchronized void pause() {
        signal("STOP");
    }

    public synchronized void resume() {
        signal("CONT");
    }

    @Override
    public synchronized void close() {
        kill();
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException ignored) {
            // a temporary folder left behind
        }
    }

    private void launch() {
        List<String> cmd = new ArrayList<>(List.of(executable.toString()));
        if (configFile != null) {
            cmd.add(configFile);
        }
        cmd.addAll(List.of("--port", String.valueOf(tls ? 0 : port),
                "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no",
                "--dir", dir.toString(), "--logfile", dir.resolve("redis.log").toString()));
        if (tls) {
            cmd.addAll(List.of("--tls-port", String.valueOf(port)));
            try {
                Files.deleteIfExists(dir.resolve("redis.log")); // readiness is read from it: a fresh one per launch
            } catch (IOException e) {
                throw new IllegalStateException("cannot remove the old log in " + dir, e);
            }
        }
        cmd.addAll(extraArgs);
        try {
            ProcessBuilder builder = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD);
            builder.environment().putAll(environment);
            process = builder.start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start " + cmd, e);
        }
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        // A TLS port cannot be probed with a plain PING; the log says when the server listens.
        while (tls ? !log().contains("Ready to accept connections") : !answersPing("127.0.0.1", port, 200)) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                process.destroyForcibly();
                throw new IllegalStateException("redis-server on port " + port + " did not start; see "
                        + dir.resolve("redis.log"));
            }
            pauseBriefly();
        }
    }

    private void kill() {
        if (process == null) {
            return;
        }
        signal("CONT"); // a stopped process cannot die until it runs again
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        process = null;
    }

    private void signal(String name) {
        if (process == null || !process.isAlive()) {
            return;
        }
        try {
            Process kill = new ProcessBuilder(Files.isExecutable(Path.of("/bin/kill")) ? "/bin/kill" : "kill", "-" + name, String.valueOf(process.pid())).start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot signal redis-server", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while signalling redis-server", e);
        }
    }

    /** True when a Redis server at host:port answers PING within the timeout. */
    static boolean answersPing(String host, int port, int timeoutMillis) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, port), timeoutMillis);
            s.setSoTimeout(timeoutMillis);
            OutputStream out = s.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            byte[] reply = new byte[64];
            int n = in.read(reply);
            // +PONG, or -NOAUTH from a server that wants a password: either way a Redis answers there.
            return n > 0 && (reply[0] == '+' || reply[0] == '-');
        } catch (IOException e) {
            return false;
        }
    }

    /** The installed redis-server, or the one inside the embedded-redis artifact, copied out once. */
    static synchronized Path binary() {
        if (binary != null) {
            return binary;
        }
        String chosen = System.getenv().getOrDefault("RUNBUS_TEST_REDIS_SERVER", "");
        if (!chosen.isEmpty() && !chosen.equals("embedded")) {
            return binary = Path.of(chosen);
        }
        for (String dir : chosen.isEmpty() ? System.getenv().getOrDefault("PATH", "").split(":") : new String[0]) {
            Path candidate = Path.of(dir, "redis-server");
            if (Files.isExecutable(candidate)) {
                return binary = candidate;
            }
        }
        return binary = embeddedBinary();
    }

    /** The Linux build of Redis 6.2 inside the embedded-redis artifact, copied out once. */
    static synchronized Path embeddedBinary() {
        if (embedded != null) {
            return embedded;
        }
        String arch = System.getProperty("os.arch");
        String resource = arch.equals("aarch64") || arch.equals("arm64") ? "/redis-server-6.2.7-linux-arm64"
                : arch.equals("x86") || arch.equals("i386") ? "/redis-server-6.2.7-linux-386"
                : "/redis-server-6.2.6-v5-linux-amd64";
        try (InputStream in = redis.embedded.RedisServer.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("no " + resource + " in the embedded-redis artifact");
            }
            Path file = Files.createTempFile("runbus-redis-server-", "");
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            file.toFile().setExecutable(true);
            file.toFile().deleteOnExit();
            return embedded = file;
        } catch (IOException e) {
            throw new IllegalStateException("cannot copy the embedded redis-server out", e);
        }
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void pauseBriefly() {
        try {
            Thread.sleep(20); // polling a process that is starting; not synchronisation between test threads
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting redis-server", e);
        }
    }
}
