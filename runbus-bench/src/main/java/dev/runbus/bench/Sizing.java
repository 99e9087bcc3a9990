package dev.runbus.bench;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

/**
 * The figures of docs/sizing.md, measured: Redis memory per stream entry, scheduled entry, pending entry and dead
 * letter ({@link RedisSizing}), and PostgreSQL bytes per run with its trigger in Redis ({@link RunsSizing}). Works
 * under a key prefix and in a schema of its own, both removed at the end, and prints the tables as markdown. Run it
 * on a quiet Redis: the {@code used_memory} column counts the whole server.
 *
 * <pre>
 * mvn -q -B install -DskipTests &amp;&amp; mvn -q -B -pl runbus-bench exec:java -Dexec.mainClass=dev.runbus.bench.Sizing
 * </pre>
 *
 * Flags (with {@code -Dexec.args="…"}): see {@link SizingOptions}.
 */
public final class Sizing {

    /** Message rates of the retention table, per second. */
    static final int[] RATES = {10, 100, 1000};

    private Sizing() {
    }

    public static void main(String[] args) throws Exception {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            // A line for each failed handler and dead letter would bury the figures.
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "error");
        }
        SizingOptions options;
        try {
            options = SizingOptions.parse(args);
        } catch (IllegalArgumentException e) {
            if (!"usage".equals(e.getMessage())) {
                System.err.println(e.getMessage());
            }
            System.err.println(SizingOptions.usage());
            System.exit(2);
            return;
        }
        String prefix = "rbsize-" + UUID.randomUUID().toString().substring(0, 8);
        List<RedisSizing.Row> redisRows;
        RunsSizing.Result runs;
        String redisVersion;
        try (RedisAdmin admin = new RedisAdmin(options.redisUri());
             Bus bus = Bus.connect(BusConfig.builder(options.redisUri()).keyPrefix(prefix).retention(false).build())) {
            redisVersion = admin.serverVersion();
            try {
                redisRows = new RedisSizing(bus, admin, prefix).measure(options.entries());
                runs = new RunsSizing(bus, admin, options.databaseUrl(), prefix).measure(options.runs());
            } finally {
                Progress.say("removed %,d keys under %s", admin.deleteMatching(prefix + ":*"), prefix);
            }
        }
        print(redisVersion, redisRows, runs);
    }

    private static void print(String redisVersion, List<RedisSizing.Row> redisRows, RunsSizing.Result runs) {
        StringBuilder md = new StringBuilder();
        md.append("\n### Redis ").append(redisVersion).append(": bytes per message (median of ")
                .append(RedisSizing.REPEATS).append(" measurements)\n\n")
                .append("| what | messages per measurement | MEMORY USAGE of its keys | used_memory of the server"
                        + " (least–most) |\n")
                .append("|---|---:|---:|---:|\n");
        for (RedisSizing.Row r : redisRows) {
            row(md, r);
        }
        row(md, runs.trigger());
        row(md, runs.delayedTrigger());

        md.append("\n### Retention: what an hour of acknowledged entries holds (used_memory per entry x rate x 3600)\n\n")
                .append("| entries |");
        for (int rate : RATES) {
            md.append(String.format(Locale.ROOT, " %,d/s |", rate));
        }
        md.append("\n|---|").append("---:|".repeat(RATES.length)).append('\n');
        for (RedisSizing.Row r : redisRows) {
            if (r.what().startsWith("stream entry")) {
                hour(md, r);
            }
        }
        hour(md, runs.trigger());

        md.append("\n### PostgreSQL ").append(runs.postgresVersion()).append(": bytes per run (input ")
                .append(RunsSizing.INPUT_BYTES).append(" characters, one reply of ").append(RunsSizing.REPLY_BYTES)
                .append(String.format(Locale.ROOT, " characters, one effect; %,d runs per round)\n\n", runs.runs()))
                .append("| relation | after a round, before any vacuum | growth per run, a VACUUM after each round"
                        + " | live rows only (VACUUM FULL) |\n")
                .append("|---|---:|---:|---:|\n");
        double[] total = new double[3];
        for (RunsSizing.RelationRow r : runs.relations()) {
            md.append(String.format(Locale.ROOT, "| `%s` | %,.0f | %,.0f | %,.0f |%n", r.relation(), r.burst(),
                    r.steady(), r.live()));
            total[0] += r.burst();
            total[1] += r.steady();
            total[2] += r.live();
        }
        md.append(String.format(Locale.ROOT, "| **total** | **%,.0f** | **%,.0f** | **%,.0f** |%n", total[0], total[1],
                total[2]));
        System.out.print(md);
    }

    private static void row(StringBuilder md, RedisSizing.Row r) {
        md.append(String.format(Locale.ROOT, "| %s | %,d | %,.0f | %,.0f (%,.0f–%,.0f) |%n", r.what(), r.messages(),
                r.keyBytes(), r.serverBytes(), r.serverMin(), r.serverMax()));
    }

    /** Bytes in MB or GB (10^6, 10^9), as a server's memory is read. */
    static String human(double bytes) {
        return bytes >= 1e9 ? String.format(Locale.ROOT, "%.1f GB", bytes / 1e9)
                : String.format(Locale.ROOT, "%.0f MB", bytes / 1e6);
    }

    private static void hour(StringBuilder md, RedisSizing.Row r) {
        md.append("| ").append(r.what()).append(" |");
        for (int rate : RATES) {
            md.append(' ').append(human(r.serverBytes() * rate * 3600)).append(" |");
        }
        md.append('\n');
    }
}
