package dev.runbus.runs.testing;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.SubscribeOptions;
import dev.runbus.runs.Reply;
import dev.runbus.runs.RunHandler;
import dev.runbus.runs.Runs;
import dev.runbus.runs.RunsConfig;
import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TestServers;
import io.lettuce.core.Range;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** A real PostgreSQL schema and a real Redis key prefix per test, and the handlers the tests use. */
public abstract class RunsTestSupport {

    /** Two replies that name the input. */
    public static final RunHandler ECHO = run -> List.of(Reply.assistant("echo:" + run.input()),
            new Reply("tool", "done:" + run.input()));

    public static final RunHandler ALWAYS_FAILS = run -> {
        throw new IllegalArgumentException("cannot handle input " + run.input());
    };

    /** The Redis of this class's tests. */
    protected final RedisTarget redis;
    protected String schema;
    protected String prefix;
    protected final List<AutoCloseable> closeables = new ArrayList<>();

    /** On the machine's Redis. */
    protected RunsTestSupport() {
        this(Deployment.LOCAL);
    }

    /**
     * On {@code deployment}: a class whose tests depend on what Redis answers (reply shapes, errors) runs them on
     * the embedded Redis 6.2 as well ({@link dev.runbus.testkit.OnDeployments}, which hands the deployment here).
     */
    protected RunsTestSupport(Deployment deployment) {
        this.redis = deployment.target();
    }

    @BeforeEach
    void createSchemaAndPrefix() {
        schema = TestServers.newSchema("rt");
        prefix = "rbrun-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @AfterEach
    void dropEverything() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        redis.deleteKeys(prefix);
        TestServers.dropSchema(schema);
    }

    public static RunsConfig config(String schema, String consumer, SubscribeOptions worker) {
        return configBuilder(schema, consumer, worker).build();
    }

    /** The tests' configuration, to change one more option. */
    public static RunsConfig.Builder configBuilder(String schema, String consumer, SubscribeOptions worker) {
        return RunsConfig.builder().schema(schema).consumer(consumer).workerOptions(worker)
                .sweepThreshold(Duration.ofMillis(500)).sweepInterval(Duration.ofMillis(200));
    }

    protected static SubscribeOptions.Builder workerOptions() {
        return SubscribeOptions.builder().blockTime(Duration.ofMillis(200)).minIdle(Duration.ofSeconds(1))
                .claimInterval(Duration.ofMillis(100)).concurrency(4);
    }

    protected Bus bus() {
        return bus(redis.uri());
    }

    protected Bus bus(String uri) {
        Bus b = Bus.connect(BusConfig.builder(uri).keyPrefix(prefix).build());
        closeables.add(b);
        return b;
    }

    protected Runs runs(Bus bus, String consumer, SubscribeOptions worker) {
        return runs(bus, config(schema, consumer, worker));
    }

    protected Runs runs(Bus bus, RunsConfig config) {
        Runs r = Runs.create(bus, runsDataSource(), config);
        closeables.add(r);
        return r;
    }

    /**
     * Where the {@link Runs} made by {@link #runs} keep their runs: the test JVM's shared pool, unless a class has a
     * pool of its own.
     */
    protected DataSource runsDataSource() {
        return TestDatabase.pool();
    }

    protected String stream() {
        return prefix + ":{runs}:stream";
    }

    protected String deadLetterStream() {
        return prefix + ":{runs}:dead";
    }

    /** Pretends the run has not moved for a minute, so that the sweeper looks at it. */
    protected void age(UUID runId) {
        execute("UPDATE " + schema + ".runs SET updated_at = now() - interval '1 minute' WHERE id = '"
                + runId + "'");
    }

    /**
     * A run committed whose trigger never reached Redis (as after a crash between the two, or a Redis that
     * lost it), untouched for {@code age}.
     */
    protected UUID lostRun(String input, Duration age) {
        UUID id = UUID.randomUUID();
        execute("INSERT INTO " + schema + ".runs (id, idempotency_key, input_hash, session_id, user_id,"
                + " input, updated_at) VALUES ('" + id + "', 'lost-" + id + "', 'hash', 's', 'u', '" + input
                + "', now() - interval '" + age.toMillis() + " milliseconds')");
        return id;
    }

    public static void execute(String sql) {
        try (var c = TestDatabase.pool().getConnection(); var st = c.createStatement()) {
            st.execute(sql);
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    protected long republishedOf(UUID runId) {
        return TestDatabase.count("SELECT republished FROM " + schema + ".runs WHERE id = '" + runId + "'");
    }

    /**
     * Runs whose first attempt started before a run of the same user submitted earlier had finished (an
     * unfinished one counts as never finished; an expired one as finished at its expiry, after which it could never
     * start): 0 when per-user order held. Written independently of the code under test, from the stored timestamps
     * only.
     */
    public static long orderViolations(String schema) {
        String end = "CASE WHEN e.status = 'expired' THEN LEAST(e.expires_at, e.finished_at) ELSE e.finished_at END";
        return TestDatabase.count("SELECT count(*) FROM " + schema + ".runs r WHERE r.started_at IS NOT NULL"
                + " AND EXISTS (SELECT 1 FROM " + schema + ".runs e WHERE e.user_id = r.user_id"
                + " AND e.submit_seq < r.submit_seq AND (e.finished_at IS NULL OR " + end + " > r.started_at))");
    }

    /**
     * What {@code dead_letter.lua} writes for a poison trigger (docs/wire-format.md): the dead letter, then the
     * ack, with no listener told, as when the process that moved it died before its listener's write.
     */
    protected void deadLetterWithoutListeners(String entry) {
        var original = redis.redis().xrange(stream(), Range.create(entry, entry)).get(0).getBody();
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("dl:topic", "runs");
        fields.put("dl:stream_id", entry);
        fields.put("dl:group", "run-workers");
        fields.put("dl:consumer", "w1");
        fields.put("dl:deliveries", "3");
        fields.put("dl:reason", "poison");
        fields.put("dl:at", String.valueOf(System.currentTimeMillis()));
        fields.putAll(original);
        redis.redis().xadd(prefix + ":{runs}:dead", fields);
        redis.redis().xack(stream(), "run-workers", entry);
    }

    protected long replyRows(UUID runId) {
        return TestDatabase.count("SELECT count(*) FROM " + schema + ".messages WHERE run_id = '" + runId + "'");
    }
}
