package dev.runbus.internal;

import java.nio.file.Path;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.util.Optional;
import javax.net.ssl.SSLException;

/**
 * Says in one sentence why a TLS connection to Redis failed. Lettuce reports "Unable to connect to host:port"
 * and buries the reason several causes down (in the JDK's words: "PKIX path building failed", "No subject
 * alternative names matching ..."), where an operator looking at a failed start would not find it.
 */
final class TlsFailure {

    private TlsFailure() {
    }

    /** The reason, if {@code e} failed in a TLS handshake; empty for any other failure. */
    static Optional<String> explain(Throwable e, Path trustedCa) {
        String trusted = trustedCa == null ? "the JVM's trust store" : "the CA certificates in " + trustedCa;
        Throwable tls = null;
        for (Throwable t = e; t != null && t.getCause() != t; t = t.getCause()) {
            if (t instanceof CertPathBuilderException || t instanceof CertPathValidatorException) {
                return Optional.of("TLS: Redis's certificate is not signed by a trusted CA (trusted: " + trusted
                        + "): " + t.getMessage());
            }
            if (t instanceof CertificateException && t.getMessage() != null
                    && t.getMessage().toLowerCase(java.util.Locale.ROOT).contains("match")) {
                return Optional.of("TLS: Redis's certificate does not name the host connected to (its subject"
                        + " alternative names must hold the URL's host name or IP address): " + t.getMessage());
            }
            if (tls == null && (t instanceof SSLException || t instanceof CertificateException)) {
                tls = t;
            }
        }
        return tls == null ? Optional.empty() : Optional.of("TLS handshake failed: " + tls.getMessage());
    }
}
