package dev.runbus.server;

import dev.runbus.KeyPrefix;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Every typed setting with the check its value must pass, so that a command can check them all before it starts
 * anything: a typo in {@code --min-idle} found after an embedded PostgreSQL started costs seconds and, on a
 * failed stop, leaves processes behind. The checks are the readers the commands use later ({@link
 * Settings#integer}, {@link Settings#duration} ...), so the two cannot disagree.
 */
final class SettingChecks {

    /** Whole numbers and their least value. */
    private static final Map<Setting, Integer> INTEGERS = Map.ofEntries(Map.entry(Setting.CONCURRENCY, 1),
            Map.entry(Setting.PARTITIONS, 1), Map.entry(Setting.MAX_DELIVERIES, 1), Map.entry(Setting.PORT, 0),
            Map.entry(Setting.MAX_BODY, 1), Map.entry(Setting.MAX_HEADER_SIZE, 1024),
            Map.entry(Setting.MAX_EVENT_STREAMS, 1), Map.entry(Setting.SUBMIT_RATE, 0),
            Map.entry(Setting.READ_RATE, 0), Map.entry(Setting.MAX_IN_FLIGHT_PER_CALLER, 1),
            Map.entry(Setting.MAX_IN_FLIGHT, 1), Map.entry(Setting.SIGN_IN_RATE, 0));

    /**
     * Highest --max-in-flight: with the pool of routes without credentials (an eighth more), 25 of Jetty's 250
     * threads stay free.
     */
    static final int MAX_IN_FLIGHT = 200;

    private static final List<Setting> DURATIONS = List.of(Setting.MIN_IDLE, Setting.CLAIM_INTERVAL,
            Setting.SWEEP_INTERVAL, Setting.SWEEP_THRESHOLD, Setting.RETENTION_AGE, Setting.SHUTDOWN_TIMEOUT,
            Setting.CANCEL_GRACE, Setting.EXECUTION_TIMEOUT, Setting.REQUEST_TIMEOUT, Setting.IDLE_TIMEOUT,
            Setting.METER_REFRESH, Setting.REDIS_TIMEOUT, Setting.API_STATEMENT_TIMEOUT, Setting.FLOW_PRIORITY_AGING);

    /** Durations that must be more than zero, besides being durations: with 0s no Redis command could succeed. */
    private static final List<Setting> POSITIVE_DURATIONS = List.of(Setting.REDIS_TIMEOUT);

    private static final List<Setting> OPTIONAL_DURATIONS = List.of(Setting.DEAD_LETTER_RETENTION);

    private static final List<Setting> BOOLEANS = List.of(Setting.MIGRATE, Setting.ORDERED, Setting.INSECURE_NO_AUTH,
            Setting.EMBEDDED);

    /** Files that must exist and be readable when the setting names one. */
    private static final List<Setting> FILES = List.of(Setting.REDIS_PASSWORD_FILE, Setting.DATABASE_PASSWORD_FILE,
            Setting.REDIS_TLS_CA, Setting.TLS_CERT, Setting.TLS_KEY, Setting.API_TOKENS_FILE);

    private SettingChecks() {
    }

    /** @throws IllegalArgumentException naming every setting that is wrong, one per line */
    static void validate(Settings s) {
        List<String> errors = new ArrayList<>();
        INTEGERS.keySet().stream().sorted().forEach(k -> check(errors, () -> s.integer(k, INTEGERS.get(k))));
        if (errors.isEmpty() && s.integer(Setting.PORT, 0) > 65_535) {
            errors.add("--port must be at most 65535, got " + s.get(Setting.PORT));
        }
        if (errors.isEmpty() && s.integer(Setting.MAX_IN_FLIGHT, 1) > MAX_IN_FLIGHT) {
            // Jetty's pool has 250 threads: those above the cap answer /health and the refusals past it.
            errors.add("--max-in-flight must be at most " + MAX_IN_FLIGHT + " (Jetty has 250 threads, and some must"
                    + " stay free to answer /health and refuse the rest), got " + s.get(Setting.MAX_IN_FLIGHT));
        }
        DURATIONS.forEach(k -> check(errors, () -> s.duration(k)));
        POSITIVE_DURATIONS.forEach(k -> check(errors, () -> positive(s, k)));
        OPTIONAL_DURATIONS.forEach(k -> check(errors, () -> s.optionalDuration(k)));
        BOOLEANS.forEach(k -> check(errors, () -> s.bool(k)));
        check(errors, () -> s.retryPolicy(Setting.RETRY));
        try {
            KeyPrefix.check(s.get(Setting.KEY_PREFIX));
        } catch (IllegalArgumentException e) {
            errors.add("--key-prefix: " + e.getMessage());
        }
        for (Setting f : FILES) {
            if (s.isSet(f)) {
                String problem = fileProblem(Path.of(s.get(f)), "file");
                if (problem == null && Files.isDirectory(Path.of(s.get(f)))) {
                    problem = "is a folder, not a file";
                }
                if (problem != null) {
                    errors.add("--" + f.key() + " " + s.get(f) + ": " + problem);
                }
            }
        }
        for (String entry : HandlerPath.entries(s.get(Setting.HANDLER_PATH))) {
            String problem = fileProblem(Path.of(entry), "jar or folder");
            if (problem != null) {
                errors.add("--handler-path " + entry + ": " + problem);
            }
        }
        if (s.isSet(Setting.PUBLIC_URL)) {
            check(errors, () -> dev.runbus.server.http.PublicUrl.parse(s.get(Setting.PUBLIC_URL)));
        }
        if (s.isSet(Setting.TLS_CERT) != s.isSet(Setting.TLS_KEY)) {
            errors.add("--tls-cert and --tls-key go together: give both or neither");
        }
        if (errors.isEmpty()) {
            readLater(s, errors);
        }
        if (!errors.isEmpty()) {
            throw new IllegalArgumentException(String.join(System.lineSeparator() + "runbus: ", errors));
        }
    }

    /**
     * What the commands read only once they have servers, read here by the same code: the bus's configuration (the
     * Redis URL, its password, how to run scripts, the TLS CA, the runs topic), the database's password and URL, the
     * runs layer's configuration. Found later, a bad value would cost an embedded server's start. After the checks
     * above, whose values these readers read again.
     */
    private static void readLater(Settings s, List<String> errors) {
        String redisUrl = s.get(Setting.REDIS_URL);
        // Without a URL the embedded Redis serves, on 127.0.0.1 without TLS.
        check(errors, () -> Infrastructure.busConfig(s, redisUrl.isEmpty() ? "redis://127.0.0.1" : redisUrl, null)
                .build());
        check(errors, () -> DatabasePool.password(s));
        if (s.isSet(Setting.DATABASE_URL)) {
            check(errors, () -> DatabasePool.checkUrl(s.get(Setting.DATABASE_URL)));
        }
        check(errors, () -> RunsFactory.config(s, null));
    }

    /**
     * Why {@code path} cannot be read, in words (missing, out of reach, not readable by this user), or null when
     * it can; {@code what} names what it should be ("file", "jar or folder").
     */
    private static String fileProblem(Path path, String what) {
        if (Files.notExists(path)) {
            return "no such " + what;
        }
        if (!Files.exists(path)) {
            return "cannot be reached: a folder on its way may not be searched by this user";
        }
        if (!Files.isReadable(path)) {
            return "exists, but this user may not read it";
        }
        return null;
    }

    /** Refuses zero; a value that is no duration at all is left to the check of {@code DURATIONS}, said once. */
    private static void positive(Settings s, Setting k) {
        Duration d;
        try {
            d = s.duration(k);
        } catch (IllegalArgumentException saidAlready) {
            return;
        }
        if (d.isZero()) {
            throw new IllegalArgumentException("--" + k.key() + " must be more than 0s, got " + s.get(k));
        }
    }

    private static void check(List<String> errors, Runnable read) {
        try {
            read.run();
        } catch (IllegalArgumentException e) {
            errors.add(e.getMessage());
        }
    }
}
