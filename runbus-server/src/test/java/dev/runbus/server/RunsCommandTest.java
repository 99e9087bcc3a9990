package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TestServers;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code runbus runs list} (the HTTP listing's filters, checks and cursor, from flags) and {@code runbus runs prune}
 * (finished runs before a time deleted in batches, with progress on stderr; never an unfinished one), on the
 * machine's PostgreSQL with runs written directly, so that their statuses and times are known.
 */
class RunsCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final String schema = TestServers.newSchema("rcmd");
    private final String prefix = "runs-cmd-" + UUID.randomUUID().toString().substring(0, 8);

    @BeforeEach
    void migrate() {
        Cli m = Cli.run("migrate", "--database-url", TestServers.databaseUrl(), "--schema", schema);
        assertThat(m.exitCode).as(m.err).isZero();
    }

    @AfterEach
    void drop() {
        TestServers.dropSchema(schema);
        RedisTarget.local().deleteKeys(prefix);
    }

    @Test
    void listWalksEveryRunNewestFirstAPageAtATime_andFilters() throws Exception {
        insert(7, "2026-01-01T00:00:00Z", "done", "u1", "s1", null);
        insert(3, "2026-01-02T00:00:00Z", "failed", "u2", "s1", "2026-01-02T00:01:00Z");
        insert(2, "2025-12-31T00:00:00Z", "pending", "u1", "s2", null);

        List<JsonNode> all = new ArrayList<>();
        String next = null;
        int pages = 0;
        do {
            Cli page = next == null ? cli("runs", "list", "--json", "--limit", "5")
                    : cli("runs", "list", "--json", "--limit", "5", "--after", next);
            assertThat(page.exitCode).as(page.err).isZero();
            JsonNode json = JSON.readTree(page.out);
            json.get("runs").forEach(all::add);
            next = json.get("next_cursor").isNull() ? null : json.get("next_cursor").asText();
            pages++;
        } while (next != null);
        assertThat(pages).isEqualTo(3);
        Set<String> ids = new HashSet<>();
        all.forEach(r -> ids.add(r.get("run_id").asText()));
        assertThat(ids).hasSize(12);
        assertThat(all.subList(0, 3)).allMatch(r -> r.get("status").asText().equals("failed"));
        assertThat(all.subList(10, 12)).allMatch(r -> r.get("status").asText().equals("pending"));

        assertThat(runs("--status", "done", "--user", "u1")).hasSize(7);
        assertThat(runs("--user", "u1", "--session", "s2")).hasSize(2);
        assertThat(runs("--created-after", "2025-12-31T12:00:00Z", "--created-before", "2026-01-01T12:00:00+00:00"))
                .hasSize(7);
        assertThat(runs("--status", "running")).isEmpty();

        Cli table = cli("runs", "list", "--limit", "2", "--status", "failed");
        assertThat(table.exitCode).as(table.err).isZero();
        assertThat(table.out).contains("id").contains("status").contains("failed").contains("u2");
        assertThat(table.lastLine()).startsWith("next page: --after ");
    }

    @Test
    void listRefusesEachBadFlagByName() {
        assertBad("--limit must be a number between 1 and 200", "--limit", "0");
        assertBad("--limit must be a number between 1 and 200", "--limit", "201");
        assertBad("--status must be one of pending, running, cancelling, done, failed, cancelled, expired", "--status",
                "lost");
        assertBad("--created-after must be an RFC 3339 time", "--created-after", "2026-01-01");
        assertBad("--user must not be empty", "--user", "");
        assertBad("--after must be a next_cursor as this listing returned it", "--after", "nonsense");
    }

    /** A run failed by PostgreSQL's count has no dead letter: replayed, it is pending with a new trigger. */
    @Test
    void replaySendsAFailedRunWithoutADeadLetterBackWithANewTrigger_andRefusesAnyOther() throws Exception {
        insert(1, "2026-01-01T00:00:00Z", "failed", "u1", "s1", "2026-01-01T00:00:01Z");
        String id = string("SELECT id FROM " + schema + ".runs");

        Cli replay = cli("runs", "replay", id, "--json");
        assertThat(replay.exitCode).as(replay.err).isZero();
        assertThat(JSON.readTree(replay.out).get("status").asText()).isEqualTo("pending");
        assertThat(string("SELECT status FROM " + schema + ".runs")).isEqualTo("pending");
        assertThat(RedisTarget.local().redis().xlen(prefix + ":{runs}:stream")).isEqualTo(1); // the new trigger

        Cli again = cli("runs", "replay", id);
        assertThat(again.exitCode).isEqualTo(2);
        assertThat(again.err).contains("run " + id + " is pending and cannot become pending");
        Cli unknown = cli("runs", "replay", UUID.randomUUID().toString());
        assertThat(unknown.exitCode).isEqualTo(2);
        assertThat(unknown.err).contains("no run ");
        Cli malformed = cli("runs", "replay", "run-1");
        assertThat(malformed.exitCode).isEqualTo(2);
        assertThat(malformed.err).contains("run id must be a UUID: run-1");
    }

    /** A pending run is cancelled, a running one cancelling (its worker tells its handler), a done one refused. */
    @Test
    void cancelCancelsAPendingRun_marksARunningOneCancelling_andRefusesADoneOne() throws Exception {
        insert(1, "2026-01-01T00:00:00Z", "pending", "u-pending", "s1", null);
        insert(1, "2026-01-01T00:00:00Z", "running", "u-running", "s1", null);
        insert(1, "2026-01-01T00:00:00Z", "done", "u-done", "s1", "2026-01-01T00:00:01Z");
        String pending = string("SELECT id FROM " + schema + ".runs WHERE user_id = 'u-pending'");
        String running = string("SELECT id FROM " + schema + ".runs WHERE user_id = 'u-running'");
        String done = string("SELECT id FROM " + schema + ".runs WHERE user_id = 'u-done'");

        Cli cancel = cli("runs", "cancel", pending, "--json");
        assertThat(cancel.exitCode).as(cancel.err).isZero();
        assertThat(JSON.readTree(cancel.out).get("status").asText()).isEqualTo("cancelled");
        assertThat(string("SELECT status FROM " + schema + ".runs WHERE id = '" + pending + "'")).isEqualTo("cancelled");

        Cli asked = cli("runs", "cancel", running);
        assertThat(asked.exitCode).as(asked.err).isZero();
        assertThat(asked.out).contains("cancelling");
        assertThat(string("SELECT status || ' ' || (cancel_requested_at IS NOT NULL) FROM " + schema
                + ".runs WHERE id = '" + running + "'")).isEqualTo("running true");
        Cli list = cli("runs", "list", "--json", "--status", "cancelling");
        assertThat(list.exitCode).as(list.err).isZero();
        assertThat(list.out).contains(running).doesNotContain(pending);

        Cli refused = cli("runs", "cancel", done);
        assertThat(refused.exitCode).isEqualTo(2);
        assertThat(refused.err).contains("run " + done + " is done and cannot become cancelled");
        Cli unknown = cli("runs", "cancel", UUID.randomUUID().toString());
        assertThat(unknown.exitCode).isEqualTo(2);
        assertThat(unknown.err).contains("no run ");
    }

    @Test
    void pruneDeletesFinishedRunsBeforeTheTimeInBatches_neverAnUnfinishedOne() throws Exception {
        insert(3, "2026-01-01T00:00:00Z", "done", "u1", "s1", "2026-01-01T00:00:01Z");
        insert(2, "2026-01-01T00:00:00Z", "failed", "u1", "s1", "2026-01-01T00:00:01Z");
        insert(1, "2026-01-01T00:00:00Z", "cancelled", "u1", "s1", "2026-01-01T00:00:01Z");
        insert(2, "2026-01-01T00:00:00Z", "pending", "u1", "s1", null);
        insert(1, "2026-01-01T00:00:00Z", "running", "u1", "s1", null);
        insert(2, "2026-03-01T00:00:00Z", "done", "u1", "s1", "2026-03-01T00:00:01Z");
        sql("INSERT INTO " + schema + ".messages (run_id, seq, role, content) SELECT id, 1, 'assistant', 'hi' FROM "
                + schema + ".runs WHERE status = 'done'");

        Cli dry = cli("runs", "prune", "--finished-before", "2026-02-01T00:00:00Z", "--dry-run", "--json");
        assertThat(dry.exitCode).as(dry.err).isZero();
        assertThat(JSON.readTree(dry.out).get("would_delete").asLong()).isEqualTo(6);
        assertThat(count("SELECT count(*) FROM " + schema + ".runs")).isEqualTo(11);

        Cli prune = cli("runs", "prune", "--finished-before", "2026-02-01T00:00:00Z", "--batch", "2", "--json");
        assertThat(prune.exitCode).as(prune.err).isZero();
        assertThat(JSON.readTree(prune.out).get("deleted").asLong()).isEqualTo(6); // stdout is the JSON alone
        assertThat(prune.err.lines().toList()).containsExactly(
                "deleting 6 runs finished before 2026-02-01T00:00:00Z, 2 per batch",
                "deleted 2 of 6", "deleted 3 of 6", "deleted 5 of 6", "deleted 6 of 6");
        assertThat(count("SELECT count(*) FROM " + schema + ".runs WHERE status IN ('pending', 'running')"))
                .isEqualTo(3);
        assertThat(count("SELECT count(*) FROM " + schema + ".runs WHERE status = 'done'")).isEqualTo(2);
        assertThat(count("SELECT count(*) FROM " + schema + ".runs")).isEqualTo(5);
        assertThat(count("SELECT count(*) FROM " + schema + ".messages")).isEqualTo(2);
    }

    @Test
    void pruneRefusesATimeInTheFuture_aTimeItCannotRead_andABatchOutOfRange() {
        Cli future = cli("runs", "prune", "--finished-before", "2999-01-01T00:00:00Z");
        assertThat(future.exitCode).isEqualTo(2);
        assertThat(future.err).contains("--finished-before 2999-01-01T00:00:00Z is in the future");
        Cli unreadable = cli("runs", "prune", "--finished-before", "last month");
        assertThat(unreadable.exitCode).isEqualTo(2);
        assertThat(unreadable.err).contains("--finished-before must be an RFC 3339 time").contains("30d");
        Cli batch = cli("runs", "prune", "--finished-before", "30d", "--batch", "0");
        assertThat(batch.exitCode).isEqualTo(2);
        assertThat(batch.err).contains("--batch must be between 1 and 10000, not 0");
        Cli missing = cli("runs", "prune");
        assertThat(missing.exitCode).isEqualTo(2);
        assertThat(missing.err).contains("--finished-before");
    }

    private void assertBad(String message, String... flags) {
        List<String> args = new ArrayList<>(List.of("runs", "list"));
        args.addAll(List.of(flags));
        Cli c = cli(args.toArray(new String[0]));
        assertThat(c.exitCode).as(c.err).isEqualTo(2);
        assertThat(c.err).contains("runbus: " + message);
    }

    private List<JsonNode> runs(String... flags) throws Exception {
        List<String> args = new ArrayList<>(List.of("runs", "list", "--json"));
        args.addAll(List.of(flags));
        Cli c = cli(args.toArray(new String[0]));
        assertThat(c.exitCode).as(c.err).isZero();
        List<JsonNode> out = new ArrayList<>();
        JSON.readTree(c.out).get("runs").forEach(out::add);
        return out;
    }

    private Cli cli(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--redis-url", RedisTarget.local().uri(), "--key-prefix", prefix,
                "--database-url", TestServers.databaseUrl(), "--schema", schema));
        return Cli.run(all.toArray(new String[0]));
    }

    private void insert(int n, String createdAt, String status, String user, String session, String finishedAt)
            throws Exception {
        sql("INSERT INTO " + schema + ".runs (id, idempotency_key, input_hash, session_id, user_id, input, status,"
                + " created_at, updated_at, finished_at) SELECT gen_random_uuid(), 'k-' || gen_random_uuid(), 'h', '"
                + session + "', '" + user + "', 'x', '" + status + "', '" + createdAt + "', '" + createdAt + "', "
                + (finishedAt == null ? "NULL" : "'" + finishedAt + "'") + " FROM generate_series(1, " + n + ")");
    }

    private static void sql(String statement) throws Exception {
        try (Connection c = DriverManager.getConnection(TestServers.databaseUrl()); Statement st = c.createStatement()) {
            st.execute(statement);
        }
    }

    private static String string(String query) throws Exception {
        try (Connection c = DriverManager.getConnection(TestServers.databaseUrl()); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(query)) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static long count(String query) throws Exception {
        try (Connection c = DriverManager.getConnection(TestServers.databaseUrl()); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(query)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
