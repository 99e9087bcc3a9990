package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.testkit.Wait;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code runbus dev} as a newcomer runs it, in a child JVM: its standard output is two export lines a shell
 * sources, whose URLs reach a Redis that answers PING and a PostgreSQL that answers SELECT 1; SIGTERM (what Ctrl-C
 * does) stops both, their processes end and their ports close. As root where PostgreSQL cannot run in a user
 * namespace, dev and demo refuse before starting anything, naming the ways out.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class DevCommandTest {

    private static final Duration PATIENCE = Duration.ofSeconds(120);

    private Path root;
    private final List<Process> started = new ArrayList<>();

    @BeforeEach
    void folder() throws IOException {
        root = Files.createTempDirectory("runbus-dev-test");
    }

    @AfterEach
    void cleanUp() throws IOException, InterruptedException {
        // SIGTERM first: a killed command would leave its Redis and PostgreSQL running.
        for (Process p : started) {
            p.destroy();
            if (!p.waitFor(PATIENCE.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
        try (Stream<Path> all = Files.walk(root)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @Test
    void devPrintsUrlsThatReachBothServers_andSigtermStopsThem_andADataDirKeepsTheDatabase() throws Exception {
        Path data = root.resolve("data");
        Dev first = Dev.start(this, "dev", "--data-dir", data.toString());
        Urls urls = first.awaitUrls();
        assertThat(ping(urls.redis())).isEqualTo("PONG");
        assertThat(selectOne(urls.database())).isEqualTo(1);
        try (Connection c = DriverManager.getConnection(urls.database())) {
            c.createStatement().execute("CREATE TABLE kept (n int)");
        }
        Servers running = first.servers(data);

        first.stop();
        assertThat(first.err()).contains("SIGTERM, stopping").contains("stopped embedded PostgreSQL")
                .contains("stopped embedded Redis").contains("runbus: stopped");
        running.assertGone();
        assertThat(data.resolve("postgres").resolve("PG_VERSION")).as("the data stays in --data-dir").exists();

        // Started again on the same folder: a new Redis, the same PostgreSQL data (its password kept beside it).
        Dev second = Dev.start(this, "dev", "--data-dir", data.toString());
        Urls again = second.awaitUrls();
        assertThat(ping(again.redis())).isEqualTo("PONG");
        try (Connection c = DriverManager.getConnection(again.database());
             ResultSet rs = c.createStatement().executeQuery("SELECT count(*) FROM kept")) {
            assertThat(rs.next()).isTrue();
        }
        Servers runningAgain = second.servers(data);
        second.stop();
        runningAgain.assertGone();
    }

    @Test
    void withoutADataDirItsTemporaryFolderIsRemovedOnStop() throws Exception {
        Dev dev = Dev.start(this, "dev");
        Urls urls = dev.awaitUrls();
        assertThat(selectOne(urls.database())).isEqualTo(1);
        Matcher m = Pattern.compile("data in (\\S+) \\(removed on exit\\)").matcher(dev.err());
        assertThat(m.find()).as(dev.err()).isTrue();
        Path data = Path.of(m.group(1));
        assertThat(data).isDirectory();
        Servers running = dev.servers(data);
        dev.stop();
        running.assertGone();
        assertThat(data).as("the temporary data folder").doesNotExist();
    }

    @Test
    void asRootWithoutUserNamespacesDevAndDemoRefuseBeforeStartingAnything() throws Exception {
        Assumptions.assumeTrue(new com.sun.security.auth.module.UnixSystem().getUid() == 0,
                "PostgreSQL runs as this user: only root needs a user namespace");
        // An unshare that fails as in a container whose seccomp profile refuses new user namespaces.
        Path bin = Files.createDirectory(root.resolve("bin"));
        Path unshare = bin.resolve("unshare");
        Files.writeString(unshare, "#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n");
        Files.setPosixFilePermissions(unshare, PosixFilePermissions.fromString("rwxr-xr-x"));
        String path = bin + ":" + System.getenv("PATH");
        for (String[] command : new String[][] {{"dev", "--data-dir", root.resolve("dev").toString()},
                {"demo", "--runs", "1", "--data-dir", root.resolve("demo").toString()}}) {
            Dev refused = Dev.startWithPath(this, path, command);
            assertThat(refused.process.waitFor(PATIENCE.toSeconds(), TimeUnit.SECONDS)).as(command[0]).isTrue();
            String err = refused.err();
            assertThat(refused.process.exitValue()).as(err).isEqualTo(1);
            assertThat(err).contains("cannot start as root").contains("unshare -U").contains("--user 1000")
                    .contains("user.max_user_namespaces");
            assertThat(err + refused.out()).as(command[0]).doesNotContain("started embedded");
            assertThat(root.resolve(command[0])).as("nothing made in the data folder").doesNotExist();
        }
    }

    private record Urls(String redis, String database) {
    }

    /** The embedded servers' processes and ports, found while they run. */
    private record Servers(long redisPid, int redisPort, long postgresPid, int postgresPort) {

        void assertGone() {
            Wait.until("Redis and PostgreSQL processes gone", PATIENCE,
                    () -> !alive(redisPid) && !alive(postgresPid));
            for (int port : new int[] {redisPort, postgresPort}) {
                assertThatThrownBy(() -> {
                    try (Socket s = new Socket()) {
                        s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
                    }
                }).as("port %d closed", port).isInstanceOf(ConnectException.class);
            }
        }

        private static boolean alive(long pid) {
            return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
        }
    }

    /** A runbus command in a child JVM, its standard output and error each in a file. */
    private static final class Dev {

        final Process process;
        final Path out;
        final Path err;

        private Dev(Process process, Path out, Path err) {
            this.process = process;
            this.out = out;
            this.err = err;
        }

        static Dev start(DevCommandTest test, String... args) throws IOException {
            return startWithPath(test, null, args);
        }

        /** With {@code path} as PATH (null: the test's). */
        static Dev startWithPath(DevCommandTest test, String path, String... args) throws IOException {
            List<String> command = Hermetic.runbus(args);
            Path out = Files.createTempFile(test.root, "out", ".txt");
            Path err = Files.createTempFile(test.root, "err", ".txt");
            ProcessBuilder b = Hermetic.child(new ProcessBuilder(command)).redirectOutput(out.toFile())
                    .redirectError(err.toFile());
            if (path != null) {
                b.environment().put("PATH", path);
            }
            Process p = b.start();
            test.started.add(p);
            return new Dev(p, out, err);
        }

        /** The two lines of standard output, sourced by a shell: what a user's shell would export. */
        Urls awaitUrls() throws Exception {
            Wait.until("two export lines on dev's output (stderr: " + err() + ")", PATIENCE,
                    () -> out().lines().count() >= 2 || !process.isAlive());
            assertThat(process.isAlive()).as(err()).isTrue();
            assertThat(out().lines().toList()).as("standard output").hasSize(2)
                    .allMatch(l -> l.startsWith("export RUNBUS_"));
            Process sh = new ProcessBuilder("sh", "-c", ". \"$1\" && printf '%s\\n%s\\n' \"$RUNBUS_REDIS_URL\""
                    + " \"$RUNBUS_DATABASE_URL\"", "sh", out.toString()).redirectErrorStream(true).start();
            List<String> exported = new String(sh.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines()
                    .toList();
            assertThat(sh.waitFor()).as(String.join("\n", exported)).isZero();
            assertThat(exported).hasSize(2);
            assertThat(exported.get(0)).startsWith("redis://:").contains("@127.0.0.1:");
            assertThat(exported.get(1)).startsWith("jdbc:postgresql://127.0.0.1:").contains("&password=");
            return new Urls(exported.get(0), exported.get(1));
        }

        /** Redis as the command's child process, PostgreSQL by its pid file in {@code data}. */
        Servers servers(Path data) throws IOException {
            Optional<ProcessHandle> redis = process.descendants().filter(p -> p.info().command()
                    .map(c -> c.contains("redis-server")).orElse(false)).findFirst();
            assertThat(redis).as("a Redis process started by dev").isPresent();
            List<String> pidFile = Files.readAllLines(data.resolve("postgres").resolve("postmaster.pid"));
            long postgresPid = Long.parseLong(pidFile.get(0).trim());
            assertThat(ProcessHandle.of(postgresPid)).as("the postmaster").isPresent();
            Urls urls = printed();
            URI redisUri = URI.create(urls.redis());
            URI databaseUri = URI.create(urls.database().substring("jdbc:".length()));
            return new Servers(redis.get().pid(), redisUri.getPort(), postgresPid, databaseUri.getPort());
        }

        /** The URLs as printed, without a shell. */
        private Urls printed() {
            List<String> lines = out().lines().toList();
            return new Urls(value(lines.get(0)), value(lines.get(1)));
        }

        private static String value(String exportLine) {
            return exportLine.substring(exportLine.indexOf("='") + 2, exportLine.length() - 1);
        }

        /** SIGTERM, as Ctrl-C's SIGINT: the same graceful stop. Waits for exit 0. */
        void stop() throws InterruptedException {
            process.destroy();
            assertThat(process.waitFor(PATIENCE.toSeconds(), TimeUnit.SECONDS)).as("dev stopped").isTrue();
            assertThat(process.exitValue()).as(err()).isZero();
        }

        String out() {
            return read(out);
        }

        String err() {
            return read(err);
        }

        private static String read(Path file) {
            try {
                return Files.readString(file, StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "";
            }
        }
    }

    private static String ping(String url) {
        RedisClient client = RedisClient.create(url);
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            return c.sync().ping();
        } finally {
            client.shutdown();
        }
    }

    private static int selectOne(String url) throws Exception {
        try (Connection c = DriverManager.getConnection(url);
             ResultSet rs = c.createStatement().executeQuery("SELECT 1")) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
