package dev.runbus.internal.redis;

import java.nio.file.Path;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
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

    /**
     * The reason, if {@code e} failed in a TLS handshake; empty for any other failure. A cluster client's failure
     * holds each seed's as a suppressed exception, so those are searched too.
     */
    static Optional<String> explain(Throwable e, Path trustedCa) {
        String trusted = trustedCa == null ? "the JVM's trust store" : "the CA certificates in " + trustedCa;
        List<Throwable> all = new ArrayList<>();
        collect(e, all);
        for (Throwable t : all) {
            if (t instanceof CertPathBuilderException || t instanceof CertPathValidatorException) {
                return Optional.of("TLS: Redis's certificate is not signed by a trusted CA (trusted: " + trusted
                        + "): " + t.getMessage());
            }
        }
        for (Throwable t : all) {
            if (t instanceof CertificateException && t.getMessage() != null
                    && t.getMessage().toLowerCase(Locale.ROOT).contains("match")) {
                return Optional.of("TLS: Redis's certificate does not name the host connected to (its subject"
                        + " alternative names must hold the URL's host name or IP address): " + t.getMessage());
            }
        }
        for (Throwable t : all) {
            if (t instanceof SSLException || t instanceof CertificateException) {
                return Optional.of("TLS handshake failed: " + t.getMessage());
            }
        }
        return Optional.empty();
    }

    /** {@code t}, its causes and their suppressed exceptions, depth first; each once. */
    private static void collect(Throwable t, List<Throwable> out) {
        if (t == null || out.size() > 100 || out.stream().anyMatch(seen -> seen == t)) {
            return;
        }
        out.add(t);
        for (Throwable s : t.getSuppressed()) {
            collect(s, out);
        }
        collect(t.getCause(), out);
    }
}
