package dev.runbus.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Certificates for TLS tests, made with {@code openssl} in a temporary folder: a CA, and server certificates it
 * signs for whatever names a test asks. Short-lived (2 days) and thrown away with the folder on {@link #close}.
 */
public final class TestCertificates implements AutoCloseable {

    /** A certificate and its private key (PEM files). */
    public record KeyPair(Path certificate, Path key) {
    }

    private final Path dir;
    private final KeyPair ca;
    private int issued;

    private TestCertificates(Path dir, String caName) {
        this.dir = dir;
        this.ca = new KeyPair(dir.resolve(caName + ".crt"), dir.resolve(caName + ".key"));
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=" + caName,
                "-keyout", ca.key().toString(), "-out", ca.certificate().toString());
    }

    /** A new CA of its own, in a new temporary folder. */
    public static TestCertificates newCa(String name) {
        try {
            return new TestCertificates(Files.createTempDirectory("runbus-test-tls-"), name);
        } catch (IOException e) {
            throw new IllegalStateException("cannot create a folder for test certificates", e);
        }
    }

    /** The CA's certificate: what a client trusts. */
    public Path caCertificate() {
        return ca.certificate();
    }

    /**
     * A server certificate signed by this CA with these subject alternative names, as openssl writes them
     * ({@code IP:127.0.0.1}, {@code DNS:localhost}).
     */
    public KeyPair issue(String... subjectAltNames) {
        String name = "server-" + (++issued);
        Path csr = dir.resolve(name + ".csr");
        Path ext = dir.resolve(name + ".ext");
        KeyPair out = new KeyPair(dir.resolve(name + ".crt"), dir.resolve(name + ".key"));
        try {
            Files.writeString(ext, "subjectAltName=" + String.join(",", subjectAltNames) + "\n");
        } catch (IOException e) {
            throw new IllegalStateException("cannot write " + ext, e);
        }
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=runbus test server",
                "-keyout", out.key().toString(), "-out", csr.toString());
        openssl("x509", "-req", "-in", csr.toString(), "-CA", ca.certificate().toString(), "-CAkey",
                ca.key().toString(), "-CAcreateserial", "-days", "2", "-extfile", ext.toString(),
                "-out", out.certificate().toString());
        return out;
    }

    /** {@code pair}'s key in the older PKCS#1 form ({@code BEGIN RSA PRIVATE KEY}), as older tools write it. */
    public Path traditionalKey(KeyPair pair) {
        Path out = dir.resolve(pair.key().getFileName() + ".pkcs1");
        openssl("pkey", "-in", pair.key().toString(), "-traditional", "-out", out.toString());
        return out;
    }

    private void openssl(String... args) {
        List<String> cmd = new ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        Path log = dir.resolve("openssl.log");
        try {
            Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IllegalStateException("openssl failed: " + cmd + "\n" + Files.readString(log));
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + cmd + " (is openssl installed?)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running openssl", e);
        }
    }

    @Override
    public void close() {
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException ignored) {
            // a temporary folder left behind
        }
    }
}
