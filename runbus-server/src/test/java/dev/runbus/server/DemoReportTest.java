package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.runs.Runs;
import dev.runbus.runs.RunsConfig;
import dev.runbus.server.demo.DemoPlan;
import dev.runbus.server.demo.DemoReport;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TestServers;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The demo report's figures can be non-zero: each case stores a demo's end as planned in the runs tables
 * (made by the real migrations), breaks one promise in the rows, and checks that exactly the figure for it
 * moves and the demo would exit 1.
 */
class DemoReportTest {

    static final DemoPlan PLAN = DemoPlan.create(40, 3, 0.2, 0.2, 0.3, 7);
    static final String SCHEMA = "demorep_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    static final PGSimpleDataSource DB = new PGSimpleDataSource();

    @BeforeAll
    static void migrate() {
        DB.setURL(DemoEndToEndTest.DATABASE);
        String prefix = "rbrep-" + UUID.randomUUID().toString().substring(0, 8);
        try (Bus bus = Bus.connect(BusConfig.builder(RedisTarget.local().uri()).keyPrefix(prefix).build());
             Runs ignored = Runs.create(bus, DB, RunsConfig.builder().schema(SCHEMA).build())) {
            // creating the runs layer applies the migrations; nothing else is needed from it
        } finally {
            RedisTarget.local().deleteKeys(prefix);
        }
    }

    @AfterAll
    static void drop() {
        TestServers.dropSchema(SCHEMA);
    }

    /** One broken promise: the SQL that breaks it (given a run's key) and the figure that must show it. */
    record Case(String name, Function<DemoPlan, String> breakIt, ToLongFunction<DemoReport> figure) {
    }

    static final List<Case> CASES = List.of(
            new Case("a poison run done, with its replies", p -> "UPDATE %s.runs SET status = 'done'"
                    + " WHERE idempotency_key = '" + key(p, true, false) + "'; INSERT INTO %1$s.messages (run_id, seq,"
                    + " role, content) SELECT id, seq, 'assistant', 'reply' FROM %1$s.runs, generate_series(1, 2) seq"
                    + " WHERE idempotency_key = '" + key(p, true, false) + "'", DemoReport::runsOffPlan),
            new Case("a flaky run done on its first attempt", p -> "UPDATE %s.runs SET attempts = 1"
                    + " WHERE idempotency_key = '" + key(p, false, true) + "'", DemoReport::runsOffPlan),
            new Case("a planned run missing", p -> "DELETE FROM %s.messages WHERE run_id = (SELECT id FROM %1$s.runs"
                    + " WHERE idempotency_key = '" + key(p, false, false) + "'); DELETE FROM %1$s.runs"
                    + " WHERE idempotency_key = '" + key(p, false, false) + "'", DemoReport::runsOffPlan),
            new Case("a done run's second reply from another execution", p -> "UPDATE %s.messages"
                    + " SET created_at = created_at + interval '1 millisecond' WHERE seq = 2 AND run_id = (SELECT id"
                    + " FROM %1$s.runs WHERE idempotency_key = '" + key(p, false, false) + "')",
                    DemoReport::runsWithWrongReplies),
            new Case("a done run with a third reply", p -> "INSERT INTO %s.messages (run_id, seq, role, content)"
                    + " SELECT id, 3, 'assistant', 'extra' FROM %1$s.runs WHERE idempotency_key = '"
                    + key(p, false, false) + "'", DemoReport::runsWithWrongReplies),
            new Case("a done run with one reply", p -> "DELETE FROM %s.messages WHERE seq = 2 AND run_id = (SELECT id"
                    + " FROM %1$s.runs WHERE idempotency_key = '" + key(p, false, false) + "')",
                    DemoReport::runsWithWrongReplies),
            new Case("a failed run with a reply", p -> "INSERT INTO %s.messages (run_id, seq, role, content)"
                    + " SELECT id, 1, 'assistant', 'late' FROM %1$s.runs WHERE idempotency_key = '"
                    + key(p, true, false) + "'", DemoReport::runsWithWrongReplies));

    @Test
    void aDemoThatWentAsPlannedBreaksNothing() throws SQLException {
        storeAsPlanned();
        DemoReport r = read(PLAN.poisonRuns(), PLAN.duplicates());
        assertThat(r.runs()).isEqualTo(PLAN.runs().size());
        assertThat(r.failed()).isEqualTo(PLAN.poisonRuns()).isPositive();
        assertThat(r.runsOffPlan()).isZero();
        assertThat(r.runsWithWrongReplies()).isZero();
        assertThat(r.brokenInvariants()).isEmpty();
    }

    @Test
    void eachBrokenPromiseShowsInItsFigure() throws SQLException {
        for (Case c : CASES) {
            storeAsPlanned();
            try (Connection conn = DB.getConnection(); Statement st = conn.createStatement()) {
                st.execute(String.format(c.breakIt().apply(PLAN), SCHEMA));
            }
            DemoReport r = read(PLAN.poisonRuns(), PLAN.duplicates());
            assertThat(c.figure().applyAsLong(r)).as(c.name()).isEqualTo(1);
            assertThat(r.runsOffPlan() + r.runsWithWrongReplies()).as(c.name() + ": only its own figure")
                    .isEqualTo(1);
            assertThat(r.brokenInvariants()).as(c.name()).isNotEmpty();
        }
    }

    @Test
    void deadLettersAndAbsorbedDuplicatesAreCheckedAgainstThePlan() throws SQLException {
        storeAsPlanned();
        assertThat(read(PLAN.poisonRuns() - 1, PLAN.duplicates()).brokenInvariants()).singleElement()
                .asString().contains("dead letters");
        assertThat(read(PLAN.poisonRuns(), PLAN.duplicates() - 1).brokenInvariants()).singleElement()
                .asString().contains("duplicate submissions absorbed");
    }

    @Test
    void orderViolationsCountRunsStartedBeforeAnEarlierRunOfTheirUserFinished() throws SQLException {
        storeAsPlanned();
        DemoReport inOrder = DemoReport.read(DB, SCHEMA, PLAN, PLAN.poisonRuns(), PLAN.duplicates(), true, 1.0);
        assertThat(inOrder.orderViolations()).hasValue(0);
        assertThat(inOrder.asMap()).containsEntry("order_violations", 0L);
        assertThat(inOrder.brokenInvariants()).isEmpty();

        // The second run of the first planned run's user started an hour before the first finished.
        String user = PLAN.runs().get(0).run().userId();
        try (Connection c = DB.getConnection(); Statement st = c.createStatement()) {
            st.execute("UPDATE " + SCHEMA + ".runs SET started_at = started_at - interval '1 hour' WHERE id ="
                    + " (SELECT id FROM " + SCHEMA + ".runs WHERE user_id = '" + user + "' ORDER BY submit_seq"
                    + " OFFSET 1 LIMIT 1)");
        }
        DemoReport broken = DemoReport.read(DB, SCHEMA, PLAN, PLAN.poisonRuns(), PLAN.duplicates(), true, 1.0);
        assertThat(broken.orderViolations()).hasValue(1);
        assertThat(broken.brokenInvariants()).singleElement().asString().contains("per-user order broken");
        assertThat(broken.runsOffPlan() + broken.runsWithWrongReplies()).isZero();

        // Unordered runs have no order figure at all.
        DemoReport unordered = read(PLAN.poisonRuns(), PLAN.duplicates());
        assertThat(unordered.orderViolations()).isEmpty();
        assertThat(unordered.asMap()).doesNotContainKey("order_violations");
        assertThat(unordered.brokenInvariants()).isEmpty();
    }

    private static DemoReport read(long deadLettered, long absorbed) throws SQLException {
        return DemoReport.read(DB, SCHEMA, PLAN, deadLettered, absorbed, 1.0);
    }

    /** The first planned run that is (or is not) poison and flaky. */
    private static String key(DemoPlan plan, boolean poison, boolean flaky) {
        return plan.runs().stream().filter(s -> s.poison() == poison && s.flaky() == flaky).findFirst()
                .orElseThrow(() -> new AssertionError("the plan has no run with poison=" + poison + " flaky=" + flaky))
                .run().idempotencyKey();
    }

    /** Every planned run ended as planned: poison failed, the rest done with two replies written at once. */
    private static void storeAsPlanned() throws SQLException {
        try (Connection c = DB.getConnection()) {
            c.setAutoCommit(false);
            try (Statement st = c.createStatement()) {
                st.execute("TRUNCATE " + SCHEMA + ".runs CASCADE");
            }
            try (PreparedStatement run = c.prepareStatement("INSERT INTO " + SCHEMA + ".runs (id, idempotency_key,"
                    + " input_hash, session_id, user_id, input, status, attempts, started_at, finished_at)"
                    + " VALUES (?, ?, 'h', ?, ?, ?, ?, ?, now() + ? * interval '1 millisecond',"
                    + " now() + ? * interval '1 millisecond')");
                 PreparedStatement reply = c.prepareStatement("INSERT INTO " + SCHEMA + ".messages (run_id, seq,"
                         + " role, content) VALUES (?, ?, 'assistant', 'reply')")) {
                int n = 0;
                for (DemoPlan.Submission s : PLAN.runs()) {
                    UUID id = UUID.randomUUID();
                    // One run after the other, each started after the one before it finished: in order.
                    run.setInt(8, 10 * n);
                    run.setInt(9, 10 * n + 5);
                    n++;
                    run.setObject(1, id);
                    run.setString(2, s.run().idempotencyKey());
                    run.setString(3, s.run().sessionId());
                    run.setString(4, s.run().userId());
                    run.setString(5, s.run().input());
                    run.setString(6, s.poison() ? "failed" : "done");
                    run.setInt(7, s.poison() ? 3 : s.flaky() ? 2 : 1);
                    run.executeUpdate();
                    for (int seq = 1; !s.poison() && seq <= DemoReport.REPLIES_PER_RUN; seq++) {
                        reply.setObject(1, id);
                        reply.setInt(2, seq);
                        reply.executeUpdate();
                    }
                }
            }
            c.commit();
        }
    }
}
