package dev.runbus.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The flags of {@link Sizing}:
 *
 * <pre>
 * --redis URI          default $RUNBUS_REDIS_URL or redis://127.0.0.1:6379
 * --database JDBC-URL  default $RUNBUS_DATABASE_URL or jdbc:postgresql://127.0.0.1:5432/test?user=postgres
 * --entries N          messages per Redis measurement, default 10000 (a fifth of it for 10 KB payloads)
 * --runs N             runs per PostgreSQL measurement, default 10000
 * </pre>
 */
record SizingOptions(String redisUri, String databaseUrl, int entries, int runs) {

    static final int DEFAULT_ENTRIES = 10_000;
    static final int DEFAULT_RUNS = 10_000;

    SizingOptions {
        if (entries < 100) {
            throw new IllegalArgumentException("--entries must be at least 100, got " + entries);
        }
        if (runs < 100) {
            throw new IllegalArgumentException("--runs must be at least 100, got " + runs);
        }
    }

    static SizingOptions parse(String... args) {
        String redis = env("RUNBUS_REDIS_URL", "redis://127.0.0.1:6379");
        String database = env("RUNBUS_DATABASE_URL", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
        int entries = DEFAULT_ENTRIES;
        int runs = DEFAULT_RUNS;
        List<String> list = new ArrayList<>();
        for (String a : args) {
            // exec:java passes -Dexec.args as one string; split it here as a shell would, on blanks
            list.addAll(Arrays.asList(a.trim().split("\\s+")));
        }
        list.removeIf(String::isEmpty);
        for (int i = 0; i < list.size(); i++) {
            String flag = list.get(i);
            switch (flag) {
                case "--redis" -> redis = value(list, ++i, flag);
                case "--database" -> database = value(list, ++i, flag);
                case "--entries" -> entries = number(value(list, ++i, flag), flag);
                case "--runs" -> runs = number(value(list, ++i, flag), flag);
                case "--help", "-h" -> throw new IllegalArgumentException("usage");
                default -> throw new IllegalArgumentException("unknown flag: " + flag);
            }
        }
        return new SizingOptions(redis, database, entries, runs);
    }

    static String usage() {
        return "usage: Sizing [--redis URI] [--database JDBC-URL] [--entries N (default " + DEFAULT_ENTRIES
                + ")] [--runs N (default " + DEFAULT_RUNS + ")]";
    }

    private static String value(List<String> args, int i, String flag) {
        if (i >= args.size()) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return args.get(i);
    }

    private static int number(String v, String flag) {
        try {
            return Integer.parseInt(v.replace("_", ""));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + " must be a whole number, got '" + v + "'");
        }
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v;
    }
}
