package dev.runbus.server.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.runs.RunsSchema;
import dev.runbus.server.DatabasePool;
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
 * Creates or upgrades the runs tables, as the migration role, and exits: for deployments whose serve and worker
 * processes run as a role that may not create tables (--no-migrate). Needs PostgreSQL only, not Redis.
 */
@Command(name = "migrate", mixinStandardHelpOptions = true,
        description = {"Create or upgrade the runs tables in --schema and exit; safe to repeat.",
                "Run it as the role that owns the schema; serve and worker then run as a role with --grant-to's "
                        + "rights and --no-migrate. Needs --database-url (no embedded database)."})
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
        if (!s.isSet(Setting.DATABASE_URL)) {
            throw new IllegalArgumentException("migrate needs --database-url (or RUNBUS_DATABASE_URL): the tables of an "
                    + "embedded database are made by serve itself");
        }
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
        return 0;
    }
}
