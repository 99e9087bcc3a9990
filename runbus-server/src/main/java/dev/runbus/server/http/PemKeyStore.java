package dev.runbus.server.http;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An in-memory key store made from the PEM files {@code --tls-cert} (the certificate chain, server first) and
 * {@code --tls-key} (its private key, unencrypted PKCS#8: {@code -----BEGIN PRIVATE KEY-----}), the forms
 * openssl and certificate managers write. Errors name the file and what is wrong, never the key.
 */
final class PemKeyStore {

    static final char[] PASSWORD = "runbus".toCharArray();
    private static final Pattern PKCS8 = Pattern.compile(
            "-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");

    private PemKeyStore() {
    }

    static KeyStore load(Path certFile, Path keyFile) {
        List<? extends Certificate> chain = certificates(certFile);
        PrivateKey key = privateKey(keyFile);
        if (!belongTogether(key, chain.get(0))) {
            throw new IllegalArgumentException("--tls-key " + keyFile + " is not the key of the first certificate in"
                    + " --tls-cert " + certFile + " (the server's certificate comes first, then its issuers)");
        }
        try {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            ks.setKeyEntry("runbus", key, PASSWORD, chain.toArray(new Certificate[0]));
            return ks;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException("--tls-key " + keyFile + " does not go with the certificate in "
                    + "--tls-cert " + certFile + ": " + e.getMessage());
        }
    }

    /** Whether the key signs what the certificate's public key verifies: a key of another pair would start a
     *  server whose every handshake fails. */
    private static boolean belongTogether(PrivateKey key, Certificate certificate) {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            default -> key.getAlgorithm(); // Ed25519, EdDSA
        };
        try {
            byte[] probe = "runbus".getBytes(StandardCharsets.US_ASCII);
            java.security.Signature signer = java.security.Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(probe);
            byte[] signature = signer.sign();
            java.security.Signature verifier = java.security.Signature.getInstance(algorithm);
            verifier.initVerify(certificate.getPublicKey());
            verifier.update(probe);
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    private static List<? extends Certificate> certificates(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            List<? extends Certificate> chain = List.copyOf(CertificateFactory.getInstance("X.509")
                    .generateCertificates(in));
            if (chain.isEmpty()) {
                throw new IllegalArgumentException("--tls-cert " + file + " holds no certificate");
            }
            return chain;
        } catch (IOException e) {
            throw new IllegalArgumentException("--tls-cert " + file + " cannot be read: " + e);
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("--tls-cert " + file + " is not a PEM certificate chain: "
                    + e.getMessage());
        }
    }

    private static PrivateKey privateKey(Path file) {
        String pem;
        try {
            pem = Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new IllegalArgumentException("--tls-key " + file + " cannot be read: " + e);
        }
        Matcher m = PKCS8.matcher(pem);
        if (!m.find()) {
            String hint = pem.contains("ENCRYPTED PRIVATE KEY") ? "it is encrypted"
                    : pem.contains("RSA PRIVATE KEY") || pem.contains("EC PRIVATE KEY") ? "it is not PKCS#8"
                    : "it holds no -----BEGIN PRIVATE KEY----- block";
            throw new IllegalArgumentException("--tls-key " + file + ": " + hint + "; convert it with openssl"
                    + " pkcs8 -topk8 -nocrypt -in KEY -out KEY.pkcs8");
        }
        byte[] der = Base64.getMimeDecoder().decode(m.group(1));
        for (String algorithm : List.of("RSA", "EC", "Ed25519", "EdDSA")) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException notThisOne) {
                // try the next algorithm
            }
        }
        throw new IllegalArgumentException("--tls-key " + file + ": not an RSA, EC or Ed25519 private key");
    }
}
