package dev.runbus.server.demo;

import dev.runbus.KeyPrefix;
import dev.runbus.server.DemoHandler;
import dev.runbus.server.Infrastructure;
import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Where a demo works: a key prefix and schema made fresh for it, and a topic, group and handler of its own,
 * never taken from the environment or config file. Those describe the deployment the demo may share a host
 * and servers with; taken from there, the demo's workers would join that deployment's group, its sweeper would
 * republish that deployment's runs, that deployment's workers would get its poison inputs, and the deployment's
 * handler would run over its made-up input. Removed after the demo, on whatever server holds it.
 */
public final class DemoNamespace {

    /** The demo's own settings, refused as flags: the report's figures hold only for these. */
    public static final List<Setting> OWN = List.of(Setting.KEY_PREFIX, Setting.SCHEMA, Setting.TOPIC,
            Setting.GROUP, Setting.HANDLER, Setting.HANDLER_PATH);

    private static final String PREFIX = "runbus-demo-";
    private static final String SCHEMA = "runbus_demo_";

    private DemoNamespace() {
    }

    /**
     * The demo's settings: key prefix {@code runbus-demo-<stamp>}, schema {@code runbus_demo_<stamp>}, topic
     * {@code demo-runs}, group {@code demo-workers}, {@link DemoHandler}, and a data folder only if
     * {@code --data-dir} was given (one from the environment may be the deployment's embedded data). Connection
     * settings (URLs, passwords) and tuning still come from wherever they were given.
     *
     * @throws IllegalArgumentException if one of the demo's own settings was given as a flag
     */
    public static Settings isolated(Settings resolved, long stamp) {
        for (Setting s : OWN) {
            if (resolved.source(s) == Settings.Source.FLAG) {
                throw new IllegalArgumentException("--" + s.key() + " cannot be given to demo: it always works in"
                        + " a namespace of its own (a fresh key prefix and schema, topic demo-runs, group"
                        + " demo-workers) and runs its own handler, whose failures its report checks");
            }
        }
        Map<Setting, String> own = new EnumMap<>(Setting.class);
        own.put(Setting.KEY_PREFIX, PREFIX + stamp);
        own.put(Setting.SCHEMA, SCHEMA + stamp);
        own.put(Setting.TOPIC, "demo-runs");
        own.put(Setting.GROUP, "demo-workers");
        own.put(Setting.HANDLER, DemoHandler.class.getName());
        // Its schema is new: it creates its tables, whatever a deployment's RUNBUS_MIGRATE says.
        own.put(Setting.MIGRATE, "true");
        if (resolved.source(Setting.DATA_DIR) != Settings.Source.FLAG) {
            own.put(Setting.DATA_DIR, "");
        }
        return resolved.with(own);
    }

    /**
     * Removes the demo's schema and keys, on whatever server holds them: one the demo did not start keeps them,
     * and an embedded one keeps them under a --data-dir. Each step is tried whatever the other did; returns what
     * could not be removed. Only names {@link #isolated} makes are ever removed.
     */
    static List<String> remove(Infrastructure infra, Settings settings) {
        List<String> left = new ArrayList<>();
        String schema = settings.get(Setting.SCHEMA);
        String prefix = settings.get(Setting.KEY_PREFIX);
        if (schema.matches(SCHEMA + "\\d+")) {
            try (Connection c = infra.dataSource().getConnection(); Statement st = c.createStatement()) {
                st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            } catch (SQLException | RuntimeException e) {
                left.add("schema " + schema + " (" + e.getMessage() + ")");
            }
        }
        if (prefix.matches(PREFIX + "\\d+")) {
            try {
                // With the password and trusted CAs the bus used, not the URL's alone.
                KeyPrefix.deleteAll(infra.redisConfig(settings)
                        .keyPrefix(prefix).build());
            } catch (RuntimeException e) {
                left.add("keys " + prefix + ":* (" + e.getMessage() + ")");
            }
        }
        return left;
    }
}
