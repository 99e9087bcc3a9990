package dev.runbus.server.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.BusConfig;
import dev.runbus.ScriptLibrary;
import dev.runbus.runs.RunsSchema;
import dev.runbus.server.DatabasePool;
import dev.runbus.server.RedisAccess;
import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Creates or upgrades the runs tables, as the migration role, and loads runbus's Redis function library, as a
 * Redis user allowed {@code +function|load}, then exits: for deployments whose serve and worker processes run as a
 * role that may not create tables (--no-migrate) and as Redis users that may call runbus's functions but not load
 * them ({@code +fcall} only). Each half runs when its URL is given.
 */
@Command(name = "migrate", mixinStandardHelpOptions = true,
        description = {"Create or upgrade the runs tables in --schema (with --database-url) and load runbus's Redis "
                + "function library on every master (with --redis-url), then exit; safe to repeat.",
                "Run it as the role that owns the schema and a Redis user allowed +function|load; serve and worker "
                        + "then run as a role with --grant-to's rights and --no-migrate, and as Redis users with +fcall "
                        + "(no +eval). Needs --database-url or --redis-url, or both (no embedded servers)."})
final class MigrateCommand extends BaseCommand {

    @Option(names = "--ordered", description = "also create the index that runs in per-user order (--ordered) need")
    boolean ordered;

    @Option(names = "--grant-to", paramLabel = "ROLE", description = "then grant ROLE what serve and worker need and "
            + "nothing more (SELECT, INSERT, UPDATE on the runs tables; no DELETE, no CREATE), and print the GRANTs")
    String grantTo;

    @Override
    void collectMore(Map<Setting, String> flags) {
        ConnectionOptions.put(flags, Setting.ORDERED, ordered ? "true" : null);
    }

    @Override
    public Integer call() throws SQLException {
        Settings s = settings();
        boolean database = s.isSet(Setting.DATABASE_URL);
        boolean redis = s.isSet(Setting.REDIS_URL) && !s.get(Setting.REDIS_URL).isEmpty();
        if (!database && !redis) {
            throw new IllegalArgumentException("migrate needs --database-url (or RUNBUS_DATABASE_URL) for the runs "
                    + "tables, or --redis-url (or RUNBUS_REDIS_URL) for runbus's Redis function library, or both: the "
                    + "embedded servers are set up by serve itself");
        }
        if (redis) {
            loadFunctions(s);
        }
        if (database) {
            migrateTables(s);
        }
        return 0;
    }

    /** Loads runbus's function library on every master that lacks it; Redis 6.2 has none, and needs none. */
    private void loadFunctions(Settings s) {
        ScriptLibrary.Loaded r = ScriptLibrary.load(RedisAccess.apply(s, BusConfig.builder(s.get(Setting.REDIS_URL)))
                .build());
        if (!r.functions()) {
            out().println("Redis has no functions (before 7.0): runbus sends its scripts with EVAL there; nothing "
                    + "to load");
        } else if (r.loadedOn().isEmpty()) {
            out().println("function library " + r.library() + " is loaded already on " + String.join(", ",
                    r.presentOn()));
        } else {
            out().println("function library " + r.library() + " loaded on " + String.join(", ", r.loadedOn())
                    + (r.presentOn().isEmpty() ? "" : " (already on " + String.join(", ", r.presentOn()) + ")"));
        }
    }

    private void migrateTables(Settings s) throws SQLException {
        String schema = s.get(Setting.SCHEMA);
        String grants = grantTo == null ? null : RunsSchema.runtimeGrants(schema, grantTo); // a bad role fails first
        try (HikariDataSource db = DatabasePool.open(s, s.get(Setting.DATABASE_URL), 2)) {
            List<String> applied = RunsSchema.migrate(db, schema, s.bool(Setting.ORDERED));
            out().println(applied.isEmpty() ? "schema " + schema + " is at version " + RunsSchema.version()
                    + " already" : "schema " + schema + " migrated to version " + RunsSchema.version() + ": applied "
                    + String.join(", ", applied));
            if (grants != null) {
                try (Connection c = db.getConnection(); Statement st = c.createStatement()) {
                    st.execute(grants);
                }
                out().println("granted to " + grantTo + ":");
                out().println(grants.strip());
            }
        }
    }
}
