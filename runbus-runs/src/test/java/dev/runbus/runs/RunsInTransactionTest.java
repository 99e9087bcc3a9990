package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.Bus;
import dev.runbus.runs.internal.worker.CrashPoints;
import dev.runbus.runs.testing.RunsNode;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.ChildJvm;
import dev.runbus.testkit.Wait;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Runs submitted in the caller's own transaction ({@link Runs#within}, the schema's {@code submit_run}): written
 * there, published by a relay once it commits, never if it rolls back; no Redis call inside the transaction.
 */
// Above the longest wait stretched by a busy machine's load (Wait: up to four times 120 s).
@Timeout(value = 10, unit = java.util.concurrent.TimeUnit.MINUTES)
class RunsInTransactionTest extends RunsTestSupport {

    static final Duration WAIT = Duration.ofSeconds(60);

    private final Map<String, AtomicInteger> executions = new ConcurrentHashMap<>();

    private final RunHandler counting = run -> {
        executions.computeIfAbsent(run.input(), k -> new AtomicInteger()).incrementAndGet();
        return List.of(Reply.assistant("ok"));
    };

    private static Connection inTransaction() throws SQLException {
        Connection c = TestDatabase.pool().getConnection();
        c.setAutoCommit(false);
        return c;
    }

    private long rows(String where) {
        return TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE " + where);
    }

    @Test
    void aRunWrittenInTheCallersTransaction_isPublishedOnlyOnceItCommits_andRunsOnce() throws Exception {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().build());
        runs.startWorker(counting);
        UUID id;
        try (Connection c = inTransaction()) {
            id = runs.within(c).submit(NewRun.of("s", "u", "committed")).runId();
            assertThat(rows("id = '" + id + "'")).as("not visible outside the transaction").isZero();
            assertThat(runs.relayOnce()).as("nothing to relay before the commit").isZero();
            c.commit();
        }
        assertThat(rows("id = '" + id + "' AND outbox")).as("marked for the relay").isEqualTo(1);
        assertThat(runs.relayOnce()).isEqualTo(1);
        assertThat(runs.relayOnce()).as("relayed once").isZero();
        Wait.until("done", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.DONE);
        assertThat(executions.get("committed")).hasValue(1);
        assertThat(runs.get(id).orElseThrow().attempts()).isEqualTo(1);
    }

    /**
     * A delayed run submitted in a transaction: the relay schedules its trigger in the delay set for what is left of
     * the delay, records where for a cancel, and the run starts no sooner than its due time by PostgreSQL's clock. Its
     * expiry and timeout are written with it.
     */
    @Test
    void aDelayedRunSubmittedInATransaction_waitsInTheDelaySet_andStartsWhenDue() throws Exception {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().build());
        runs.startWorker(counting);
        UUID id;
        UUID cancelled;
        try (Connection c = inTransaction()) {
            id = runs.within(c).submit(NewRun.of("s", "u", "later").withExpireAfter(Duration.ofMinutes(5))
                    .withTimeout(Duration.ofMinutes(1)), Duration.ofSeconds(2)).runId();
            cancelled = runs.within(c).submit(NewRun.of("s", "u", "never"), Duration.ofMinutes(30)).runId();
            assertThatThrownBy(() -> runs.within(c).submit(NewRun.of("s", "u", "x"), Duration.ofDays(31)))
                    .isInstanceOf(InvalidRunException.class).hasMessageContaining("delay");
            c.commit();
        }
        assertThat(runs.relayOnce()).isEqualTo(2);
        assertThat(bus.scheduled().count("runs")).as("both triggers wait in the delay set").isEqualTo(2);
        assertThat(rows("id = '" + cancelled + "' AND scheduled_id IS NOT NULL")).isEqualTo(1);
        assertThat(runs.cancel(cancelled)).isEqualTo(RunStatus.CANCELLED);
        Wait.until("the delay set holds only the first", WAIT, () -> bus.scheduled().count("runs") == 1);
        Wait.until("done", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.DONE);
        assertThat(rows("id = '" + id + "' AND started_at >= created_at + interval '2 seconds'"))
                .as("started no sooner than due").isEqualTo(1);
        assertThat(rows("id = '" + id + "' AND expires_at = created_at + interval '5 minutes' AND timeout_ms = 60000"))
                .isEqualTo(1);
        assertThat(executions.get("later")).hasValue(1);
        assertThat(executions).doesNotContainKey("never");
    }

    /**
     * A relay process SIGKILLed between its claim and its publish: its transaction dies with it, the run's mark
     * stays, and another relay publishes the run's trigger; the run executes once.
     */
    @Test
    @org.junit.jupiter.api.Tag("chaos")
    void aRelayKilledBetweenItsClaimAndItsPublish_leavesTheRunToAnother() throws Exception {
        try (ChildJvm child = ChildJvm.start(RunsNode.class, redis.uri(), prefix, TestDatabase.URL, schema,
                CrashPoints.Point.RELAY_AFTER_CLAIM_BEFORE_PUBLISH.name(), "relay", "relayed by another")) {
            child.awaitLine("AT RELAY_AFTER_CLAIM_BEFORE_PUBLISH", WAIT);
            child.kill();
        }
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().build());
        Wait.until("the killed relay's transaction rolled back: the mark is back", WAIT,
                () -> rows("outbox AND input = 'relayed by another'") == 1);
        assertThat(redis.redis().exists(stream())).as("the killed relay published nothing").isZero();
        runs.startWorker(counting);
        assertThat(runs.relayOnce()).isEqualTo(1);
        Wait.until("done", WAIT, () -> rows("status = 'done'") == 1);
        assertThat(executions.get("relayed by another")).hasValue(1);
        assertThat(runs.relayOnce()).isZero();
    }

    @Test
    void aRolledBackTransaction_leavesNoRunAndNoTrigger() throws Exception {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().build());
        try (Connection c = inTransaction()) {
            runs.within(c).submit(NewRun.of("s", "u", "rolled back"));
            c.rollback();
        }
        assertThat(runs.relayOnce()).isZero();
        assertThat(rows("true")).isZero();
        assertThat(redis.redis().exists(stream())).as("no trigger was ever published").isZero();
    }

    /**
     * The relay started with the sweeper is woken by the commit's NOTIFY: 10,000 submits in 1,000 transactions, 30 %
     * of them rolled back at random; the runs are the committed ones exactly, each executed once, and no trigger of a
     * rolled-back run reaches the stream, also after two sweeps.
     */
    @Test
    void thousandsOfTransactions_someRolledBack_runExactlyTheCommittedOnesOnce() throws Exception {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().concurrency(16).build());
        runs.startWorker(counting);
        runs.startSweeper();
        Random random = new Random(41);
        Set<String> committed = new HashSet<>();
        Set<UUID> rolledBack = new HashSet<>();
        for (int t = 0; t < 1_000; t++) {
            boolean rollback = random.nextInt(100) < 30;
            List<UUID> ids = new ArrayList<>();
            try (Connection c = inTransaction()) {
                for (int i = 0; i < 10; i++) {
                    String input = "t" + t + "-" + i;
                    ids.add(runs.within(c).submit(NewRun.of("s", "u", input).withKey(input)).runId());
                    if (!rollback) {
                        committed.add(input);
                    }
                }
                if (rollback) {
                    c.rollback();
                    rolledBack.addAll(ids);
                } else {
                    c.commit();
                }
            }
        }
        Wait.until(committed.size() + " runs done", WAIT.multipliedBy(2),
                () -> rows("status = 'done'") == committed.size());
        runs.sweepOnce();
        runs.sweepOnce();
        assertThat(rows("true")).as("the committed runs exactly").isEqualTo(committed.size());
        assertThat(executions.keySet()).isEqualTo(committed);
        assertThat(executions.values()).as("each executed once").allMatch(n -> n.get() == 1);
        Set<String> published = new HashSet<>();
        redis.redis().xrange(stream(), io.lettuce.core.Range.create("-", "+"))
                .forEach(m -> published.add(m.getBody().get("id")));
        assertThat(published).as("no trigger of a rolled-back run")
                .doesNotContainAnyElementsOf(rolledBack.stream().map(UUID::toString).toList());
    }

    @Test
    void anyLanguageSubmitsThroughTheSqlFunction_andItsKeysAreTheJavaSides() throws Exception {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().build());
        runs.startWorker(counting);
        UUID fromJava = runs.submit(NewRun.of("s", "u", "same").withKey("k-1").withFlowKey("t")).runId();
        UUID fromSql;
        try (Connection c = inTransaction();
             PreparedStatement ps = c.prepareStatement("SELECT run_id, created FROM " + schema
                     + ".submit_run(p_session_id => 's', p_user_id => 'u', p_input => 'same',"
                     + " p_idempotency_key => 'k-1', p_flow_key => 't')")) {
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                fromSql = rs.getObject(1, UUID.class);
                assertThat(rs.getBoolean(2)).as("the same submission: not created again").isFalse();
            }
            c.commit();
        }
        assertThat(fromSql).isEqualTo(fromJava);
        try (Connection c = inTransaction()) {
            assertThatThrownBy(() -> runs.within(c).submit(NewRun.of("s", "u", "other").withKey("k-1")
                    .withFlowKey("t"))).isInstanceOf(IdempotencyConflictException.class)
                    .satisfies(e -> assertThat(((IdempotencyConflictException) e).existingRunId())
                            .isEqualTo(fromJava));
            c.rollback();
        }
        try (Connection c = inTransaction();
             PreparedStatement ps = c.prepareStatement("SELECT run_id FROM " + schema
                     + ".submit_run('s', 'u', 'from sql', p_priority => 12)")) {
            assertThatThrownBy(ps::executeQuery).isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("RB400"))
                    .hasMessageContaining("priority");
            c.rollback();
        }
        UUID plain;
        try (Connection c = inTransaction();
             PreparedStatement ps = c.prepareStatement("SELECT run_id FROM " + schema
                     + ".submit_run('s', 'u', 'from sql')")) {
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                plain = rs.getObject(1, UUID.class);
            }
            c.commit();
        }
        assertThat(runs.relayOnce()).isEqualTo(1);
        Wait.until("done", WAIT, () -> runs.get(plain).orElseThrow().status() == RunStatus.DONE);
        assertThat(executions.get("from sql")).hasValue(1);
    }

    /**
     * A relay that dies between its claim and its commit (its backend terminated with the transaction open) leaves
     * the marks: another relay publishes them; and a run no relay published is the sweeper's, which clears its mark.
     */
    @Test
    void aRelayThatDiesMidBatch_leavesItsRunsToAnother_andTheSweeperToo() throws Exception {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().build());
        runs.startWorker(counting);
        UUID first;
        UUID second;
        try (Connection c = inTransaction()) {
            first = runs.within(c).submit(NewRun.of("s", "u", "first")).runId();
            c.commit();
        }
        try (Connection dying = inTransaction()) {
            try (PreparedStatement ps = dying.prepareStatement("UPDATE " + schema + ".runs SET outbox = NULL"
                    + " WHERE outbox RETURNING id")) {
                ps.executeQuery().close(); // claimed, not published, not committed
            }
            execute("SELECT pg_terminate_backend(" + backendOf(dying) + ")");
        } catch (SQLException connectionGone) {
            // the relay's connection died with it
        }
        assertThat(rows("id = '" + first + "' AND outbox")).as("its mark stays").isEqualTo(1);
        assertThat(runs.relayOnce()).as("another relay publishes it").isEqualTo(1);
        Wait.until("first done", WAIT, () -> runs.get(first).orElseThrow().status() == RunStatus.DONE);

        try (Connection c = inTransaction()) {
            second = runs.within(c).submit(NewRun.of("s", "u", "second")).runId();
            c.commit();
        }
        age(second);
        assertThat(runs.sweepOnce().republished()).as("no relay ran: the sweeper publishes it").isEqualTo(1);
        assertThat(rows("id = '" + second + "' AND outbox")).as("and clears its mark").isZero();
        assertThat(runs.relayOnce()).isZero();
        Wait.until("second done", WAIT, () -> runs.get(second).orElseThrow().status() == RunStatus.DONE);
        assertThat(executions.get("first")).hasValue(1);
        assertThat(executions.get("second")).hasValue(1);
    }

    /**
     * For runs in per-user order the SQL function refuses what Runs.submit refuses; a run written by hand that no
     * trigger can be built for does not hold up the relay's other runs; and the function works whatever the session's
     * standard_conforming_strings.
     */
    @Test
    void orderedRunsAreCheckedInSql_aRunWithoutATriggerDoesNotHoldUpTheRelay_andOldStringSyntaxWorks() throws Exception {
        Bus bus = bus();
        String ordered = schema + "_o";
        closeables.add(() -> dev.runbus.testkit.TestServers.dropSchema(ordered));
        Runs runs = runs(bus, configBuilder(ordered, "w1", workerOptions().build()).ordered(true).build());
        String longUser = "u".repeat(1_500);
        for (String call : List.of("'s', 'u', 'x', p_flow_key => 't'", "'s', '" + longUser + "', 'x'")) {
            try (Connection c = inTransaction();
                 PreparedStatement ps = c.prepareStatement("SELECT run_id FROM " + ordered + ".submit_run(" + call
                         + ")")) {
                assertThatThrownBy(ps::executeQuery).satisfies(e -> assertThat(((SQLException) e).getSQLState())
                        .isEqualTo("RB400"));
                c.rollback();
            }
        }
        UUID bad;
        UUID good;
        try (Connection c = inTransaction()) {
            bad = runs.within(c).submit(NewRun.of("s", "u-bad", "bad")).runId();
            good = runs.within(c).submit(NewRun.of("s", "u-good", "good")).runId();
            c.commit();
        }
        execute("UPDATE " + ordered + ".runs SET user_id = '" + longUser + "', created_at = created_at - interval"
                + " '1 second' WHERE id = '" + bad + "'"); // oldest: first in the relay's batch
        assertThat(runs.relayOnce()).as("both claimed, the bad one skipped").isEqualTo(2);
        assertThat(TestDatabase.count("SELECT count(*) FROM " + ordered + ".runs WHERE outbox")).isZero();
        runs.startWorker(counting);
        Wait.until("good done", WAIT, () -> runs.get(good).orElseThrow().status() == RunStatus.DONE);

        try (Connection c = inTransaction()) {
            try (java.sql.Statement st = c.createStatement()) {
                st.execute("SET LOCAL standard_conforming_strings = off");
            }
            Runs unordered = runs(bus, "w1", workerOptions().build());
            UUID id = unordered.within(c).submit(NewRun.of("s", "u", "old strings").withFlowKey("t").withPriority(7)
                    .withFlowSubKey("c")).runId();
            assertThat(id).isNotNull();
            c.rollback();
        }
    }

    private static int backendOf(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_backend_pid()");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
