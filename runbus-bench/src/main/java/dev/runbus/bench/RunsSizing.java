package dev.runbus.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.Bus;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.Reply;
import dev.runbus.runs.Runs;
import dev.runbus.runs.RunsConfig;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * What one run costs: its rows and index entries in PostgreSQL, table by table and index by index, and its trigger
 * in Redis. Runs of a small input ({@value #INPUT_BYTES} characters) whose handler records one effect and returns
 * one reply of {@value #REPLY_BYTES} characters go through a real runs layer (submit, worker, completion) in a
 * scratch schema, whose tables are kept from autovacuum during the measurement so that the readings are repeatable:
 * <ol>
 *   <li>after {@code n} runs, before any vacuum: every run's row has three versions (inserted, running, done), and
 *       every index an entry for each (status and updated_at are indexed, so no update is HOT) — what a burst
 *       leaves until autovacuum has been;</li>
 *   <li>then {@value #ROUNDS} rounds of {@code n} runs, each followed by a {@code VACUUM}: the growth per run from
 *       the end of the first round to the end of the last, once each round reuses the space its predecessor's dead
 *       versions left — what a table under autovacuum grows by;</li>
 *   <li>after {@code VACUUM FULL}: the live rows alone, the floor.</li>
 * </ol>
 */
final class RunsSizing {

    static final int INPUT_BYTES = 100;
    static final int ROUNDS = 3;
    static final int REPLY_BYTES = 100;
    static final String TOPIC = "runs";
    static final String[] TABLES = {"runs", "messages", "run_effects"};

    /** Bytes per run of one relation (a table with its TOAST and maps, or an index) at the three readings. */
    record RelationRow(String relation, double burst, double steady, double live) {
    }

    record Result(String postgresVersion, int runs, List<RelationRow> relations, RedisSizing.Row trigger,
                  RedisSizing.Row delayedTrigger) {
    }

    private final Bus bus;
    private final RedisAdmin admin;
    private final String databaseUrl;
    private final String prefix;

    RunsSizing(Bus bus, RedisAdmin admin, String databaseUrl, String prefix) {
        this.bus = bus;
        this.admin = admin;
        this.databaseUrl = databaseUrl;
        this.prefix = prefix;
    }

    Result measure(int n) throws Exception {
        String schema = "rbsize_" + UUID.randomUUID().toString().substring(0, 8);
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(databaseUrl);
        hc.setMaximumPoolSize(8);
        hc.setPoolName("runbus-sizing");
        try (HikariDataSource ds = new HikariDataSource(hc)) {
            try {
                return measure(ds, schema, n);
            } finally {
                execute(ds, "DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            }
        }
    }

    private Result measure(HikariDataSource ds, String schema, int n) throws Exception {
        String stream = prefix + ":{" + TOPIC + "}:stream";
        String reply = "r".repeat(REPLY_BYTES);
        try (Runs runs = Runs.create(bus, ds, RunsConfig.builder().schema(schema).topic(TOPIC).consumer("sizing")
                .build())) {
            for (String t : TABLES) {
                execute(ds, "ALTER TABLE " + schema + "." + t
                        + " SET (autovacuum_enabled = false, toast.autovacuum_enabled = false)");
            }
            Map<String, Long> empty = sizes(ds, schema);

            // The first n runs' triggers, measured in slices as RedisSizing measures: the median of the slices.
            int slice = n / RedisSizing.REPEATS;
            int first = slice * RedisSizing.REPEATS;
            List<RedisSizing.Row> slices = new ArrayList<>();
            for (int r = 0; r < RedisSizing.REPEATS; r++) {
                Progress.say("PostgreSQL: %,d runs submitted (their triggers wait in the stream)", slice);
                long stream0 = admin.memoryUsage(stream);
                long server0 = admin.settledUsedMemory();
                submit(runs, slice, r * slice, Duration.ZERO);
                slices.add(new RedisSizing.Row("run trigger (stream entry of a run)", slice,
                        (admin.memoryUsage(stream) - stream0) / (double) slice,
                        (admin.settledUsedMemory() - server0) / (double) slice));
            }
            RedisSizing.Row trigger = RedisSizing.Row.median(slices);

            Progress.say("PostgreSQL: the worker runs them");
            runs.startWorker(run -> {
                run.effects().once("notify", key -> "sent");
                return List.of(Reply.assistant(reply));
            });
            RedisSizing.waitFor("runs done", () -> runs.counts().done() == first);
            Map<String, Long> burst = sizes(ds, schema);

            Progress.say("PostgreSQL: %d rounds of %,d runs, each followed by a VACUUM", ROUNDS, n);
            vacuum(ds, schema, "VACUUM");
            Map<String, Long> firstRound = null;
            for (int round = 1; round <= ROUNDS; round++) {
                submit(runs, n, first + (round - 1) * n, Duration.ZERO);
                long total = first + (long) round * n;
                RedisSizing.waitFor("runs done", () -> runs.counts().done() == total);
                vacuum(ds, schema, "VACUUM");
                if (round == 1) {
                    firstRound = sizes(ds, schema);
                }
            }
            Map<String, Long> steady = sizes(ds, schema);

            Progress.say("PostgreSQL: VACUUM FULL");
            vacuum(ds, schema, "VACUUM FULL");
            Map<String, Long> live = sizes(ds, schema);
            long runsMade = first + (long) ROUNDS * n;

            List<RelationRow> rows = new ArrayList<>();
            for (String relation : burst.keySet()) {
                rows.add(new RelationRow(relation, (burst.get(relation) - empty.get(relation)) / (double) first,
                        (steady.get(relation) - firstRound.get(relation)) / ((ROUNDS - 1.0) * n),
                        (live.get(relation) - empty.get(relation)) / (double) runsMade));
            }

            String delayed = prefix + ":{" + TOPIC + "}:delayed";
            slices.clear();
            for (int r = 0; r < RedisSizing.REPEATS; r++) {
                Progress.say("Redis: %,d delayed runs (their triggers in the delay set)", slice);
                long keys0 = admin.memoryUsage(delayed) + admin.memoryUsage(delayed + ":entries");
                long server0 = admin.settledUsedMemory();
                submit(runs, slice, (int) runsMade + r * slice, Duration.ofHours(1));
                slices.add(new RedisSizing.Row("scheduled run trigger (a delayed run)", slice,
                        (admin.memoryUsage(delayed) + admin.memoryUsage(delayed + ":entries") - keys0) / (double) slice,
                        (admin.settledUsedMemory() - server0) / (double) slice));
            }
            RedisSizing.Row delayedTrigger = RedisSizing.Row.median(slices);
            return new Result(version(ds), n, rows, trigger, delayedTrigger);
        }
    }

    /**
     * {@code n} runs numbered from {@code from}, due after {@code delay}, submitted from 8 threads (submissions share
     * group commits).
     */
    private static void submit(Runs runs, int n, int from, Duration delay) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int thread = t;
                done.add(threads.submit(() -> {
                    for (int i = from + thread; i < from + n; i += 8) {
                        runs.submit(NewRun.of("session-" + i % 100, "user-" + i % 1000, input(i)), delay);
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            threads.shutdown();
        }
    }

    /** {@value #INPUT_BYTES} characters, different for every run (its derived idempotency key hashes it). */
    static String input(int i) {
        String head = "input " + i + " ";
        return head + "x".repeat(INPUT_BYTES - head.length());
    }

    /**
     * Bytes of each table of the runs layer ({@code pg_table_size}: heap, TOAST, free space and visibility maps)
     * and of each of their indexes, by name.
     */
    private static Map<String, Long> sizes(HikariDataSource ds, String schema) throws SQLException {
        Map<String, Long> sizes = new LinkedHashMap<>();
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            for (String t : TABLES) {
                try (ResultSet rs = st.executeQuery("SELECT pg_table_size('" + schema + "." + t + "')")) {
                    rs.next();
                    sizes.put(t + " (table)", rs.getLong(1));
                }
                try (ResultSet rs = st.executeQuery("SELECT i.relname, pg_relation_size(i.oid) FROM pg_index x"
                        + " JOIN pg_class i ON i.oid = x.indexrelid WHERE x.indrelid = '" + schema + "." + t
                        + "'::regclass ORDER BY i.relname")) {
                    while (rs.next()) {
                        sizes.put(rs.getString(1) + " (index)", rs.getLong(2));
                    }
                }
            }
        }
        return sizes;
    }

    private static void vacuum(HikariDataSource ds, String schema, String vacuum) throws SQLException {
        for (String t : TABLES) {
            execute(ds, vacuum + " " + schema + "." + t);
        }
    }

    private static String version(HikariDataSource ds) throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SHOW server_version")) {
            rs.next();
            return rs.getString(1).split(" ")[0];
        }
    }

    private static void execute(HikariDataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }
}
