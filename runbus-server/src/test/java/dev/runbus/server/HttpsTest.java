package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.testkit.TestCertificates;
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
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;

/** serve over HTTPS with PEM files openssl made, verified by a client that trusts only the test's CA. */
class HttpsTest {

    @Test
    void servesHttpsWithPemFilesAndAClientVerifiesIt() throws Exception {
        TestCertificates ca = TestCertificates.newCa("runbus test CA");
        TestCertificates.KeyPair server = ca.issue("DNS:localhost", "IP:127.0.0.1");
        Path cert = server.certificate();
        Path key = server.key();
        // openssl 3 writes PKCS#8 already; a key in the older PKCS#1 form is refused with the fix to apply.
        Path pkcs1 = ca.traditionalKey(server);

        try (TestServe serve = TestServe.start(Map.of(Setting.TLS_CERT, cert.toString(),
                Setting.TLS_KEY, key.toString()))) {
            assertThat(serve.base()).startsWith("https://");
            HttpClient trusting = HttpClient.newBuilder().sslContext(trusting(ca.caCertificate())).build();
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

        Map<Setting, String> oldKey = Map.of(Setting.TLS_CERT, cert.toString(), Setting.TLS_KEY, pkcs1.toString());
        assertThatThrownBy(() -> TestServe.start(oldKey)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(pkcs1.getFileName() + ": it is not PKCS#8")
                .hasMessageContaining("openssl pkcs8 -topk8 -nocrypt");
        Map<Setting, String> swapped = Map.of(Setting.TLS_CERT, key.toString(), Setting.TLS_KEY, cert.toString());
        assertThatThrownBy(() -> TestServe.start(swapped)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--tls-cert");
        TestCertificates.KeyPair another = ca.issue("DNS:localhost");
        assertThatThrownBy(() -> TestServe.start(Map.of(Setting.TLS_CERT, cert.toString(), Setting.TLS_KEY,
                another.key().toString()))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is not the key of the first certificate in --tls-cert");
        assertThatThrownBy(() -> TestServe.start(Map.of(Setting.TLS_CERT, cert.toString())))
                .hasMessage("--tls-cert and --tls-key go together: give both or neither");
        // Nothing of the key reaches a message.
        String keyText = Files.readString(key);
        String body = keyText.substring(keyText.indexOf('\n') + 1, keyText.indexOf('\n') + 40);
        assertThatThrownBy(() -> TestServe.start(swapped)).message().doesNotContain(body);
        ca.close();
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
}
