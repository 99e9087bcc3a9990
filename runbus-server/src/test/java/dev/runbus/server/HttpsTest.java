package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** serve over HTTPS with PEM files openssl made, verified by a client that trusts only the test's CA. */
class HttpsTest {

    @TempDir
    static Path dir;

    @Test
    void servesHttpsWithPemFilesAndAClientVerifiesIt() throws Exception {
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=runbus test CA",
                "-keyout", "ca.key", "-out", "ca.pem");
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "server.key",
                "-out", "server.csr");
        Files.writeString(dir.resolve("san.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
        openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-days", "2", "-extfile", "san.ext", "-out", "server.pem");
        // openssl 3 writes PKCS#8 already; a key in the older PKCS#1 form is refused with the fix to apply.
        openssl("pkey", "-in", "server.key", "-traditional", "-out", "server-pkcs1.key");

        try (TestServe serve = TestServe.start(Map.of(Setting.TLS_CERT, dir.resolve("server.pem").toString(),
                Setting.TLS_KEY, dir.resolve("server.key").toString()))) {
            assertThat(serve.base()).startsWith("https://");
            HttpClient trusting = HttpClient.newBuilder().sslContext(trusting(dir.resolve("ca.pem"))).build();
            HttpResponse<String> health = trusting.send(HttpRequest.newBuilder(URI.create(serve.base() + "/health"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
            assertThat(health.sslSession()).isPresent();
            HttpResponse<String> created = trusting.send(HttpRequest.newBuilder(URI.create(serve.base() + "/v1/runs"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(HttpApiTest.runBody("over tls"))).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(created.statusCode()).isEqualTo(201);

            // The JVM's default trust store does not know the test's CA: the handshake is refused.
            HttpClient ordinary = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            assertThatThrownBy(() -> ordinary.send(HttpRequest.newBuilder(URI.create(serve.base() + "/health")).build(),
                    HttpResponse.BodyHandlers.ofString())).isInstanceOf(SSLHandshakeException.class);
            // Plain HTTP on the HTTPS port gets no API answer.
            HttpResponse<String> plain = null;
            try {
                plain = ordinary.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + serve.server.port()
                        + "/health")).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            } catch (java.io.IOException refused) {
                // the connection was closed: no answer at all
            }
            if (plain != null) {
                assertThat(plain.statusCode()).isEqualTo(400);
                assertThat(plain.body()).doesNotContain("\"status\"");
            }
        }

        Map<Setting, String> pkcs1 = Map.of(Setting.TLS_CERT, dir.resolve("server.pem").toString(),
                Setting.TLS_KEY, dir.resolve("server-pkcs1.key").toString());
        assertThatThrownBy(() -> TestServe.start(pkcs1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("server-pkcs1.key: it is not PKCS#8")
                .hasMessageContaining("openssl pkcs8 -topk8 -nocrypt");
        Map<Setting, String> swapped = Map.of(Setting.TLS_CERT, dir.resolve("server.key").toString(),
                Setting.TLS_KEY, dir.resolve("server.pem").toString());
        assertThatThrownBy(() -> TestServe.start(swapped)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--tls-cert");
        assertThatThrownBy(() -> TestServe.start(Map.of(Setting.TLS_CERT, dir.resolve("server.pem").toString())))
                .hasMessage("--tls-cert and --tls-key go together: give both or neither");
        // Nothing of the key reaches a message.
        String keyText = Files.readString(dir.resolve("server.key"));
        String body = keyText.substring(keyText.indexOf('\n') + 1, keyText.indexOf('\n') + 40);
        assertThatThrownBy(() -> TestServe.start(swapped)).message().doesNotContain(body);
    }

    private static SSLContext trusting(Path caPem) throws Exception {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(caPem)) {
            trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }

    private static void openssl(String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("openssl"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("openssl %s: %s", args[0], output).isZero();
    }
}
