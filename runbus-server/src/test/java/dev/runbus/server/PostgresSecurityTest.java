package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.runs.NewRun;
import dev.runbus.runs.Reply;
import dev.runbus.runs.RunStatus;
import dev.runbus.runs.Runs;
import dev.runbus.runs.StoredReply;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TestCertificates;
import dev.runbus.testkit.Wait;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * runbus through {@link Infrastructure} against a PostgreSQL that takes only TLS connections (pg_hba {@code hostssl}
 * lines only), with a certificate for {@code localhost} signed by a CA made here, and a role with a SCRAM password:
 * verify-full works end to end, and each mistake (another CA, another host name, no TLS, a wrong or missing
 * password) fails saying what is wrong, never showing the password.
 */
class PostgresSecurityTest {

    static final String APP_PASSWORD = "app-Pa55-" + UUID.randomUUID().toString().substring(0, 8);

    static Path dir;
    static TestCertificates ca;
    static TestCertificates otherCa;
    static EmbeddedPostgres pg;

    final String prefix = "rbpgsec-" + UUID.randomUUID().toString().substring(0, 8);
    Infrastructure infra;

    @BeforeAll
    static void startPostgresWithTls() throws Exception {
        dir = Files.createTempDirectory("runbus-pg-tls");
        ca = TestCertificates.newCa("runbus-test-ca");
        otherCa = TestCertificates.newCa("some-other-ca");
        TestCertificates.KeyPair server = ca.issue("DNS:localhost"); // not 127.0.0.1: see below
        Files.copy(ca.caCertificate(), dir.resolve("ca.pem"));
        Files.copy(otherCa.caCertificate(), dir.resolve("other-ca.pem"));
        Files.copy(server.certificate(), dir.resolve("server.crt"));
        Files.copy(server.key(), dir.resolve("server.key"));
        Files.setPosixFilePermissions(dir.resolve("server.key"), PosixFilePermissions.fromString("rw-------"));
        // TLS only, over TCP; the superuser without a password (the embedded server's own start-up check uses it),
        // every other role with SCRAM.
        Files.writeString(dir.resolve("pg_hba.conf"), String.join("\n",
                "local all all trust",
                "hostssl all postgres 127.0.0.1/32 trust",
                "hostssl all postgres ::1/128 trust",
                "hostssl all all 127.0.0.1/32 scram-sha-256",
                "hostssl all all ::1/128 scram-sha-256", ""));
        pg = EmbeddedPostgres.builder()
                .setServerConfig("ssl", "on")
                .setServerConfig("ssl_cert_file", dir.resolve("server.crt").toString())
                .setServerConfig("ssl_key_file", dir.resolve("server.key").toString())
                .setServerConfig("hba_file", dir.resolve("pg_hba.conf").toString())
                .start();
        try (Connection c = pg.getPostgresDatabase().getConnection(); Statement st = c.createStatement()) {
            st.execute("SET password_encryption = 'scram-sha-256'");
            st.execute("CREATE ROLE app LOGIN PASSWORD '" + APP_PASSWORD + "'");
            st.execute("CREATE SCHEMA app AUTHORIZATION app");
        }
    }

    @AfterAll
    static void stopPostgres() throws IOException {
        if (pg != null) {
            pg.close();
        }
        ca.close();
        otherCa.close();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @AfterEach
    void close() {
        if (infra != null) {
            infra.close();
        }
        RedisTarget.local().deleteKeys(prefix);
    }

    String url(String host, String query) {
        return "jdbc:postgresql://" + host + ":" + pg.getPort() + "/postgres?" + query;
    }

    String verifyFull(String user, String ca) {
        return url("localhost", "sslmode=verify-full&sslrootcert=" + dir.resolve(ca) + "&user=" + user);
    }

    Settings settings(String databaseUrl, Map<String, String> env, Map<Setting, String> more) {
        Map<Setting, String> flags = new EnumMap<>(Setting.class);
        flags.put(Setting.REDIS_URL, RedisTarget.local().uri());
        flags.put(Setting.DATABASE_URL, databaseUrl);
        flags.put(Setting.KEY_PREFIX, prefix);
        flags.put(Setting.SCHEMA, "app");
        flags.put(Setting.CONSUMER, "c1");
        flags.putAll(more);
        return Settings.resolve(flags, env, null);
    }

    Infrastructure start(Settings s) {
        infra = Infrastructure.start(s, true, false, new Metrics(), 4, new PrintWriter(Writer.nullWriter()));
        return infra;
    }

    /** Submits a run through the runs layer of {@code runbus serve} and waits for the worker to finish it. */
    void runEndToEnd(Settings s) {
        Runs runs = RunsFactory.create(start(s), s, "c1");
        try {
            runs.startWorker(run -> List.of(Reply.assistant("over tls: " + run.input())));
            UUID id = runs.submit(NewRun.of("s", "u", "hello " + UUID.randomUUID())).runId();
            Wait.until("run done", Duration.ofSeconds(30), () -> runs.get(id).orElseThrow().status() == RunStatus.DONE);
            assertThat(runs.replies(id)).extracting(StoredReply::content).singleElement().asString()
                    .startsWith("over tls: hello");
        } finally {
            runs.close();
        }
    }

    String query(String sql) throws Exception {
        try (Connection c = infra.dataSource().getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    @Test
    void runsOverVerifyFullTls_asARoleWithAPasswordFromTheEnvironment() throws Exception {
        runEndToEnd(settings(verifyFull("app", "ca.pem"), Map.of("RUNBUS_DATABASE_PASSWORD", APP_PASSWORD), Map.of()));
        assertThat(query("SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()")).isEqualTo("true");
        assertThat(query("SELECT current_user")).isEqualTo("app");
    }

    @Test
    void passwordFromAFile_firstLineOnly_overridesTheUrls() throws Exception {
        Path file = dir.resolve("password-" + UUID.randomUUID());
        Files.writeString(file, APP_PASSWORD + "\nnot part of it\n");
        start(settings(verifyFull("app", "ca.pem") + "&password=wrong-one", Map.of(),
                Map.of(Setting.DATABASE_PASSWORD_FILE, file.toString())));
        assertThat(query("SELECT current_user")).isEqualTo("app");
    }

    @Test
    void anotherCa_isRefused_sayingSo() {
        assertThatThrownBy(() -> start(settings(verifyFull("app", "other-ca.pem"),
                Map.of("RUNBUS_DATABASE_PASSWORD", APP_PASSWORD), Map.of())))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot connect to PostgreSQL at jdbc:postgresql://localhost:" + pg.getPort())
                .hasMessageContaining("its TLS certificate is not signed by a CA this process trusts (sslrootcert="
                        + dir.resolve("other-ca.pem") + ")")
                .satisfies(e -> System.out.println("another CA: " + e.getMessage()))
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(APP_PASSWORD));
    }

    @Test
    void aCertificateForAnotherHost_isRefused_sayingSo() {
        // The certificate names localhost only; 127.0.0.1 is the same server but not the name verify-full checks.
        assertThatThrownBy(() -> start(settings(url("127.0.0.1", "sslmode=verify-full&sslrootcert="
                + dir.resolve("ca.pem") + "&user=app"), Map.of("RUNBUS_DATABASE_PASSWORD", APP_PASSWORD), Map.of())))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("its TLS certificate does not name the host of the URL")
                .hasMessageContaining("127.0.0.1")
                .satisfies(e -> System.out.println("another host: " + e.getMessage()));
    }

    @Test
    void withoutTls_theServerTurnsTheConnectionAway() {
        assertThatThrownBy(() -> start(settings(url("localhost", "sslmode=disable&user=postgres"), Map.of(), Map.of())))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no pg_hba.conf entry").hasMessageContaining("no encryption");
    }

    @Test
    void aWrongPassword_isRefused_andNeitherPasswordIsShown() {
        String inUrl = "url-secret-" + UUID.randomUUID();
        String given = "wrong-" + UUID.randomUUID();
        assertThatThrownBy(() -> start(settings(verifyFull("app", "ca.pem") + "&password=" + inUrl,
                Map.of("RUNBUS_DATABASE_PASSWORD", given), Map.of())))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("password authentication failed for user \"app\"")
                .satisfies(e -> System.out.println("wrong password: " + e.getMessage()))
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(inUrl).doesNotContain(given));
    }

    @Test
    void runbusConfig_showsThatAPasswordIsSet_notThePassword() {
        Cli config = Cli.run(new Environment(Map.of("RUNBUS_DATABASE_PASSWORD", APP_PASSWORD),
                Hermetic.environment().workingDirectory()), "config", "--database-url", verifyFull("app", "ca.pem"));
        assertThat(config.exitCode).as(config.err).isZero();
        assertThat(config.out).contains("database-password").doesNotContain(APP_PASSWORD);
    }

    @Test
    void aMissingOrEmptyPasswordFile_isAUsageErrorNamingTheFile() throws IOException {
        Path missing = dir.resolve("no-such-password");
        assertThatThrownBy(() -> start(settings(verifyFull("app", "ca.pem"), Map.of(),
                Map.of(Setting.DATABASE_PASSWORD_FILE, missing.toString()))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--database-password-file " + missing + ": no such file");
        Path empty = Files.writeString(dir.resolve("empty-password"), "\n");
        assertThatThrownBy(() -> start(settings(verifyFull("app", "ca.pem"), Map.of(),
                Map.of(Setting.DATABASE_PASSWORD_FILE, empty.toString()))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--database-password-file " + empty + " is empty: its first line must be the PostgreSQL"
                        + " password");
        Map<String, String> env = new HashMap<>(Map.of("RUNBUS_DATABASE_PASSWORD", APP_PASSWORD));
        assertThatThrownBy(() -> start(settings(verifyFull("app", "ca.pem"), env,
                Map.of(Setting.DATABASE_PASSWORD_FILE, empty.toString()))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("given twice")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(APP_PASSWORD));
    }
}
