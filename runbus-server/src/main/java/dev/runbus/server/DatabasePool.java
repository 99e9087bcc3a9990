package dev.runbus.server;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLException;

/**
 * The pool of PostgreSQL connections: URL, password (from the environment or a file, never a flag), timeouts,
 * and start-up errors a person can act on, with no secret in them.
 */
public final class DatabasePool {

    /**
     * How long a caller waits for a connection before it fails. HikariCP's default, 30 s, held every submission
     * 30 s when PostgreSQL was down; 3 s turns that into a fast 503 and is still long for a healthy pool, where a
     * connection comes back in milliseconds (a pool that is merely busy for 3 s is overloaded, and saying so is
     * right too).
     */
    public static final Duration CONNECTION_TIMEOUT = Duration.ofSeconds(3);
    /**
     * How long a statement may wait for PostgreSQL's answer (the driver's {@code socketTimeout}): without it, a
     * statement sent just before the server became unreachable without closing the connection (a partition, a
     * host gone) waits for TCP to give up, many minutes, and with it every run write queued behind it. 30 s is far
     * above what a runs statement takes; migrations lift it for their own connection. A {@code socketTimeout} in
     * the URL wins.
     */
    public static final Duration SOCKET_TIMEOUT = Duration.ofSeconds(30);
    /**
     * pgjdbc reads "user:password@" as part of the host and fails as if the server were unreachable. Neither "://"
     * nor "@" in this text: every message is masked on its way out, from the URL's "://" to the message's last "@".
     */
    private static final String USER_INFO_REFUSED = "a JDBC URL takes the user and password as parameters "
            + "(?user=NAME, the password in RUNBUS_DATABASE_PASSWORD or --database-password-file), not before the "
            + "host";
    /** How long checking an idle connection before handing it out may take; below the connection timeout. */
    static final Duration VALIDATION_TIMEOUT = Duration.ofSeconds(2);
    /**
     * How long start-up tries to make the first connection before it gives up, when the server may yet answer
     * (refused, unreachable); a refusal that will not change (password, certificate) fails at once.
     */
    static final Duration START_TIMEOUT = Duration.ofSeconds(10);

    private DatabasePool() {
    }

    /**
     * Opens the pool and its first connection.
     *
     * @throws IllegalStateException "cannot connect to PostgreSQL at URL (password masked): what went wrong"
     */
    public static HikariDataSource open(Settings s, String jdbcUrl, int poolSize) {
        return open(jdbcUrl, password(s), poolSize);
    }

    /** Opens the pool with {@code password} (the embedded server's) in place of the settings' one. */
    static HikariDataSource open(String jdbcUrl, Optional<String> password, int poolSize) {
        if (hasUserInfo(jdbcUrl)) {
            throw new IllegalStateException("cannot connect to PostgreSQL at " + Settings.mask(jdbcUrl) + ": "
                    + USER_INFO_REFUSED);
        }
        HikariConfig hc = new HikariConfig();
        // The password given apart replaces the URL's: the driver would prefer the URL's.
        hc.setJdbcUrl(password.isPresent() ? withoutPassword(jdbcUrl) : jdbcUrl);
        password.ifPresent(hc::setPassword);
        hc.setMaximumPoolSize(poolSize);
        hc.setPoolName("runbus");
        hc.setConnectionTimeout(CONNECTION_TIMEOUT.toMillis());
        hc.setValidationTimeout(VALIDATION_TIMEOUT.toMillis());
        hc.addDataSourceProperty("socketTimeout", String.valueOf(SOCKET_TIMEOUT.toSeconds()));
        // One attempt per pool: this loop, not the pool, decides whether another attempt can help.
        hc.setInitializationFailTimeout(1);
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (true) {
            try {
                return new HikariDataSource(hc);
            } catch (RuntimeException e) {
                // A server still starting (compose, a failover) may answer soon; a refused password, certificate
                // or database will not, and waiting would only hide the reason for START_TIMEOUT.
                if (isPermanent(e) || System.nanoTime() > deadline) {
                    throw new IllegalStateException("cannot connect to PostgreSQL at " + Settings.mask(jdbcUrl) + ": "
                            + describe(e, jdbcUrl, password), e);
                }
                pauseBeforeRetry();
            }
        }
    }

    /** @throws IllegalArgumentException naming {@code --database-url} (masked) when it holds user:password@ */
    static void checkUrl(String jdbcUrl) {
        if (hasUserInfo(jdbcUrl)) {
            throw new IllegalArgumentException("--database-url " + Settings.mask(jdbcUrl) + ": " + USER_INFO_REFUSED);
        }
    }

    /**
     * Whether the URL's authority (between {@code //} and the next {@code /} or {@code ?}) names a user. Kept to that
     * span so that an {@code @} in a parameter or a database name is never refused; a password holding {@code /} ends
     * the span early and goes to the driver, which fails on it as before.
     */
    static boolean hasUserInfo(String jdbcUrl) {
        int start = jdbcUrl.indexOf("//");
        if (start < 0) {
            return false;
        }
        int end = start + 2;
        while (end < jdbcUrl.length() && jdbcUrl.charAt(end) != '/' && jdbcUrl.charAt(end) != '?') {
            end++;
        }
        return jdbcUrl.substring(start + 2, end).contains("@");
    }

    private static void pauseBeforeRetry() {
        try {
            Thread.sleep(500);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while connecting to PostgreSQL", e);
        }
    }

    /**
     * Refused for a reason that stays: authentication or pg_hba (SQLState class 28), no such database (3D000),
     * TLS (a handshake or certificate failure, a host name the certificate does not name), a URL no JDBC driver
     * takes.
     */
    static boolean isPermanent(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SSLException || t instanceof CertPathBuilderException
                    || t instanceof CertPathValidatorException) {
                return true;
            }
            if (t instanceof SQLException) {
                String state = ((SQLException) t).getSQLState();
                String message = String.valueOf(t.getMessage());
                if (state != null && (state.startsWith("28") || state.equals("3D000"))
                        || message.startsWith("No suitable driver") // DriverManager: no driver takes the URL
                        || message.contains("could not be verified by hostnameverifier")
                        || message.contains("SSL")) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * RUNBUS_DATABASE_PASSWORD, or the first line of --database-password-file; empty when neither is set (the URL's
     * password, or none, then applies).
     *
     * @throws IllegalArgumentException when both are set, or the file is missing, unreadable or empty
     */
    public static Optional<String> password(Settings s) {
        return SecretSettings.read(s, Setting.DATABASE_PASSWORD, Setting.DATABASE_PASSWORD_FILE, "PostgreSQL");
    }

    /** The URL without its {@code password=} parameter. */
    static String withoutPassword(String jdbcUrl) {
        int q = jdbcUrl.indexOf('?');
        if (q < 0) {
            return jdbcUrl;
        }
        List<String> kept = new ArrayList<>();
        for (String param : jdbcUrl.substring(q + 1).split("&")) {
            if (!param.toLowerCase(java.util.Locale.ROOT).startsWith("password=") && !param.isEmpty()) {
                kept.add(param);
            }
        }
        return jdbcUrl.substring(0, q) + (kept.isEmpty() ? "" : "?" + String.join("&", kept));
    }

    /**
     * What went wrong, in the words of the failure nearest its root that a person can act on, with the URL and
     * the password taken out wherever the driver or the pool quoted them.
     */
    static String describe(Throwable failure, String jdbcUrl, Optional<String> password) {
        String reason = null;
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof CertPathBuilderException || t instanceof CertPathValidatorException) {
                reason = "its TLS certificate is not signed by a CA this process trusts (sslrootcert"
                        + param(jdbcUrl, "sslrootcert").map(v -> "=" + v).orElse(" is not set") + "): " + t.getMessage();
                break;
            }
            if (t instanceof SQLException || t instanceof SSLException) {
                reason = t.getMessage(); // the deepest one wins: the pool's wrapper says less than the driver
            }
        }
        if (reason == null) {
            reason = failure.getMessage();
        }
        if (reason != null && reason.contains("could not be verified by hostnameverifier")) {
            reason = "its TLS certificate does not name the host of the URL (sslmode=verify-full checks it): " + reason;
        }
        return scrub(String.valueOf(reason), jdbcUrl, password);
    }

    private static Optional<String> param(String jdbcUrl, String name) {
        int q = jdbcUrl.indexOf('?');
        if (q >= 0) {
            for (String p : jdbcUrl.substring(q + 1).split("&")) {
                if (p.startsWith(name + "=")) {
                    return Optional.of(p.substring(name.length() + 1));
                }
            }
        }
        return Optional.empty();
    }

    /** The text with the raw URL masked and the password (given apart, or in the URL) replaced by ****. */
    static String scrub(String text, String jdbcUrl, Optional<String> password) {
        String out = text.replace(jdbcUrl, Settings.mask(jdbcUrl));
        List<String> secrets = new ArrayList<>();
        password.ifPresent(secrets::add);
        param(jdbcUrl, "password").ifPresent(secrets::add);
        for (String secret : secrets) {
            if (!secret.isEmpty()) {
                out = out.replace(secret, "****");
            }
        }
        return out;
    }
}
