package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.server.embedded.EmbeddedPostgresServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The embedded Redis and PostgreSQL that demo and serve start without URLs give another account on the same host
 * nothing without a secret: Redis wants a password and has no CONFIG (no way to write files where it likes),
 * PostgreSQL wants the superuser's password, PostgreSQL's binaries come from a folder only this user may enter,
 * and serve refuses them on a non-loopback address unless asked for by name.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class EmbeddedServersTest {

    static Infrastructure infra;

    @BeforeAll
    static void startEmbedded() {
        infra = Infrastructure.start(Settings.resolve(Map.of(), Map.of(), null), true, true, new Metrics(), 2,
                new PrintWriter(Writer.nullWriter()));
    }

    @AfterAll
    static void stop() {
        if (infra != null) {
            infra.close();
        }
    }

    @Test
    void embeddedRedisRefusesAClientWithoutThePassword() throws Exception {
        URI uri = URI.create(infra.redisUri());
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 5_000);
            s.setSoTimeout(10_000);
            assertThat(command(s, "PING")).startsWith("-NOAUTH");
            assertThat(command(s, "KEYS *")).startsWith("-NOAUTH");
        }
    }

    @Test
    void embeddedRedisHasNoConfigModuleDebugOrSave() throws Exception {
        URI uri = URI.create(infra.redisUri());
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 5_000);
            s.setSoTimeout(10_000);
            // Even with the password (the bus's own connection), the commands that write files or load code are gone.
            assertThat(command(s, "AUTH " + new String(infra.embeddedRedisPassword()))).isEqualTo("+OK");
            assertThat(command(s, "PING")).isEqualTo("+PONG");
            for (String c : new String[] {"CONFIG GET dir", "MODULE LIST", "DEBUG SLEEP 0", "SAVE", "BGSAVE",
                    "BGREWRITEAOF"}) {
                assertThat(command(s, c)).as(c).startsWith("-ERR unknown command");
            }
        }
    }

    @Test
    void embeddedPostgresRefusesAConnectionWithoutThePassword() {
        String url = infra.jdbcUrl();
        assertThat(url).doesNotContain("password");
        assertThatThrownBy(() -> DriverManager.getConnection(url).close()).isInstanceOf(SQLException.class)
                .hasMessageContaining("password");
        assertThatThrownBy(() -> DriverManager.getConnection(url + "&password=postgres").close())
                .isInstanceOf(SQLException.class).hasMessageContaining("password authentication failed");
    }

    @Test
    void theBusAndThePoolGetIn() throws Exception {
        try (var c = infra.dataSource().getConnection(); var rs = c.createStatement().executeQuery("SELECT 1")) {
            assertThat(rs.next()).isTrue();
        }
        assertThat(infra.bus().inspector().streams()).isNotNull();
    }

    @Test
    void postgresBinariesComeFromAFolderOnlyThisUserMayEnter() throws Exception {
        Path home = EmbeddedPostgresServer.workingDirectory();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(home))).isEqualTo("rwx------");
        assertThat(Files.getOwner(home).getName()).isEqualTo(System.getProperty("user.name"));
        try (var listing = Files.list(home.resolve("binaries"))) {
            assertThat(listing.map(p -> p.getFileName().toString())).anyMatch(n -> n.startsWith("PG-"));
        }
    }

    @Test
    void aWorkingDirectoryOthersMayWriteIsRefused() throws Exception {
        Path open = Files.createTempDirectory("runbus-open");
        try {
            Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
            assertThatThrownBy(() -> EmbeddedPostgresServer.checkPrivate(open))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining(open.toString())
                    .hasMessageContaining("chmod 700");
        } finally {
            Files.delete(open);
        }
    }

    @Test
    void serveOnANonLoopbackAddressRefusesEmbeddedServersUnlessAskedFor() {
        Cli c = Cli.run("serve", "--host", "0.0.0.0", "--port", "0", "--insecure-no-auth");
        assertThat(c.exitCode).as(c.err).isEqualTo(2);
        assertThat(c.err).contains("0.0.0.0").contains("embedded").contains("--redis-url")
                .contains("--database-url").contains("--embedded");
    }

    @Test
    void serveOnANonLoopbackAddressStartsEmbeddedServersWhenAskedFor() throws Exception {
        Map<Setting, String> flags = new EnumMap<>(Setting.class);
        flags.put(Setting.HOST, "0.0.0.0");
        flags.put(Setting.PORT, "0");
        flags.put(Setting.INSECURE_NO_AUTH, "true");
        flags.put(Setting.EMBEDDED, "true");
        StringBuilderWriter log = new StringBuilderWriter();
        try (RunbusServer server = RunbusServer.start(Settings.resolve(flags, Map.of(), null), new PrintWriter(log))) {
            assertThat(server.infrastructure().isEmbedded()).isTrue();
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", server.port()), 5_000);
                s.setSoTimeout(10_000);
                OutputStream out = s.getOutputStream();
                out.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                        .getBytes(StandardCharsets.US_ASCII));
                out.flush();
                String status = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII))
                        .readLine();
                assertThat(status).contains("200");
            }
        }
        assertThat(log.toString()).contains("started embedded Redis").contains("stopped embedded Redis");
    }

    /** Sends one inline command, returns the first line of the reply. */
    private static String command(Socket s, String command) throws Exception {
        s.getOutputStream().write((command + "\r\n").getBytes(StandardCharsets.UTF_8));
        s.getOutputStream().flush();
        StringBuilder line = new StringBuilder();
        int b;
        while ((b = s.getInputStream().read()) != -1 && b != '\n') {
            if (b != '\r') {
                line.append((char) b);
            }
        }
        return line.toString();
    }

    private static final class StringBuilderWriter extends Writer {
        private final StringBuilder text = new StringBuilder();

        @Override
        public synchronized void write(char[] cbuf, int off, int len) {
            text.append(cbuf, off, len);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }

        @Override
        public synchronized String toString() {
            return text.toString();
        }
    }
}
