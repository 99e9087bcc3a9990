package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.Reply;
import dev.runbus.runs.RunContext;
import dev.runbus.runs.RunHandler;
import dev.runbus.runs.Runs;
import dev.runbus.runs.RunsConfig;
import dev.runbus.server.demo.DemoPlan;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TestServers;
import io.lettuce.core.Consumer;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code runbus demo} on a host configured for a deployment: RUNBUS_* variables or a runbus.properties naming the
 * deployment's key prefix, schema, topic, group and handler, and the same Redis and PostgreSQL. The demo must work
 * beside that deployment, never in it: its workers out of the deployment's group, its sweeper off the deployment's
 * runs, its poison inputs out of the deployment's stream, the deployment's handler not run.
 */
@Tag("slow")
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class DemoIsolationTest {

    /** The deployment's handler: counts its calls, which must stay at zero. */
    public static final class ProductionHandler implements RunHandler {
        static final AtomicInteger CALLS = new AtomicInteger();

        @Override
        public List<Reply> execute(RunContext run) {
            CALLS.incrementAndGet();
            return List.of(Reply.assistant("production"));
        }
    }

    private static final String DATABASE = DemoEndToEndTest.DATABASE;
    private final String id = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    private final String prefix = "rbprod-" + id;
    private final String schema = "prod_" + id;
    private final String topic = "prod-runs";
    private final String group = "prod-workers";

    @BeforeEach
    void aDeploymentWithAPendingRunAndAGroup() throws Exception {
        try (Bus bus = Bus.connect(BusConfig.builder(RedisTarget.local().uri()).keyPrefix(prefix).build());
             Runs runs = Runs.create(bus, dataSource(), RunsConfig.builder().schema(schema).topic(topic).group(group)
                     .build())) {
            runs.submit(new NewRun("s", "u", "a real request", "prod-1"));
        }
        RedisClusterCommands<String, String> redis = RedisTarget.local().redis();
        String stream = streamKey(redis);
        try {
            redis.xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), group, XGroupCreateArgs.Builder.mkstream());
        } catch (io.lettuce.core.RedisBusyException alreadyThere) {
            // the runs layer made it
        }
        List<StreamMessage<String, String>> taken = redis.xreadgroup(Consumer.from(group, "prod-host-1"),
                XReadArgs.Builder.count(1), XReadArgs.StreamOffset.lastConsumed(stream));
        assertThat(taken).as("a delivery pending in the deployment's group").hasSize(1);
        ProductionHandler.CALLS.set(0);
    }

    @AfterEach
    void removeTheDeployment() throws Exception {
        RedisTarget.local().deleteKeys(prefix);
        TestServers.dropSchema(schema);
    }

    @ParameterizedTest(name = "configured by {0}")
    @ValueSource(strings = {"environment", "config file"})
    void theDemoLeavesTheDeploymentAlone(String by, @TempDir Path dir) throws Exception {
        Map<String, String> deployment = Map.of("key-prefix", prefix, "schema", schema, "topic", topic, "group", group,
                "handler", ProductionHandler.class.getName(), "redis-url", RedisTarget.local().uri(),
                "database-url", DATABASE);
        Map<String, String> env = new HashMap<>();
        if (by.equals("environment")) {
            deployment.forEach((k, v) -> env.put("RUNBUS_" + k.toUpperCase().replace('-', '_'), v));
        } else {
            StringBuilder file = new StringBuilder();
            deployment.forEach((k, v) -> file.append(k).append('=').append(v).append('\n'));
            Files.writeString(dir.resolve(Environment.DEFAULT_CONFIG_FILE), file);
        }
        Map<String, Object> before = snapshot();

        Cli c = Cli.run(new Environment(env, dir), "demo", "--runs", "40", "--users", "5", "--poison-rate", "0.05",
                "--flaky-rate", "0.05", "--duplicate-rate", "0.05", "--seed", "7", "--no-progress");

        assertThat(c.exitCode).as(c.out + c.err).isZero();
        assertThat(ProductionHandler.CALLS.get()).as("runs of the deployment's handler").isZero();
        assertThat(snapshot()).as("the deployment's keys, stream, group, pending entries and runs").isEqualTo(before);
        // The demo's own invariants held (exit 0 says the report found none broken) on its own figures.
        DemoPlan plan = DemoPlan.create(40, 5, 0.05, 0.05, 0.05, 7);
        var summary = Json.MAPPER.readTree(c.lastLine());
        assertThat(summary.get("runs").asLong()).isEqualTo(plan.runs().size());
        assertThat(summary.get("failed").asLong()).isEqualTo(plan.poisonRuns());
        // And it left nothing of its own.
        Matcher m = Pattern.compile("key prefix (runbus-demo-\\d+), PostgreSQL schema (runbus_demo_\\d+)")
                .matcher(c.out);
        assertThat(m.find()).as(c.out).isTrue();
        assertThat(RedisTarget.local().redis().keys(m.group(1) + ":*")).isEmpty();
        assertThat(schemaExists(m.group(2))).isFalse();
    }

    /** Everything of the deployment a demo could have touched, in a form that compares with equals. */
    private Map<String, Object> snapshot() throws Exception {
        Map<String, Object> out = new TreeMap<>();
        RedisClusterCommands<String, String> redis = RedisTarget.local().redis();
        for (String key : redis.keys(prefix + ":*")) {
            String type = redis.type(key);
            out.put(key, type);
            if (type.equals("stream")) {
                out.put(key + " length", redis.xlen(key));
                for (Object g : redis.xinfoGroups(key)) {
                    out.put(key + " group", String.valueOf(g));
                }
                out.put(key + " pending", String.valueOf(redis.xpending(key, group)));
            }
        }
        List<String> rows = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(DATABASE);
             ResultSet rs = c.createStatement().executeQuery("SELECT id, status, attempts, updated_at, republished FROM " + schema
                     + ".runs ORDER BY id")) {
            while (rs.next()) {
                rows.add(rs.getString(1) + " " + rs.getString(2) + " " + rs.getInt(3) + " " + rs.getString(4) + " "
                        + rs.getInt(5));
            }
        }
        out.put("runs", rows);
        assertThat(rows).as("the deployment's pending run").hasSize(1).allMatch(r -> r.contains(" pending 0 "));
        assertThat(out).as("the deployment's stream").containsValue("stream");
        return out;
    }

    private String streamKey(RedisClusterCommands<String, String> redis) {
        return redis.keys(prefix + ":*").stream().filter(k -> redis.type(k).equals("stream")).findFirst()
                .orElseThrow(() -> new AssertionError("no stream under " + prefix));
    }

    private static org.postgresql.ds.PGSimpleDataSource dataSource() {
        org.postgresql.ds.PGSimpleDataSource ds = new org.postgresql.ds.PGSimpleDataSource();
        ds.setURL(DATABASE);
        return ds;
    }

    static boolean schemaExists(String name) {
        try (Connection db = DriverManager.getConnection(DATABASE);
             ResultSet rs = db.createStatement().executeQuery("SELECT count(*) FROM information_schema.schemata"
                     + " WHERE schema_name = '" + name + "'")) {
            rs.next();
            return rs.getLong(1) > 0;
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
