package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.server.demo.Demo;
import dev.runbus.server.demo.DemoNamespace;
import dev.runbus.server.demo.DemoPlan;
import dev.runbus.server.demo.DemoReport;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TestServers;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code runbus demo} end to end, on the embedded servers and on the machine's real ones, checked against its plan. */
@Tag("slow")
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class DemoEndToEndTest {

    /** The tests' PostgreSQL: the machine's, or an embedded one when none answers ({@link TestServers}). */
    static final String DATABASE = TestServers.databaseUrl();

    private static JsonNode summary(Cli c) throws Exception {
        return Json.MAPPER.readTree(c.lastLine());
    }

    /** The demo's options, spelled out so that the test can build the same plan. */
    private static String[] demo(int runs, double poisonRate, String... more) {
        List<String> args = new ArrayList<>(List.of("demo", "--runs", String.valueOf(runs), "--users", "50",
                "--poison-rate", String.valueOf(poisonRate), "--flaky-rate", "0.05", "--duplicate-rate", "0.05",
                "--seed", "42", "--no-progress"));
        args.addAll(List.of(more));
        return args.toArray(String[]::new);
    }

    /** Every figure against the plan the demo was given: not merely done + failed = runs. */
    private static void assertAsPlanned(JsonNode s, DemoPlan plan) {
        long runs = plan.runs().size();
        assertThat(plan.poisonRuns()).as("the plan has poison runs").isPositive();
        assertThat(plan.duplicates()).as("the plan has duplicate submissions").isPositive();
        assertThat(s.get("runs").asLong()).isEqualTo(runs);
        assertThat(s.get("poison_runs").asLong()).isEqualTo(plan.poisonRuns());
        assertThat(s.get("failed").asLong()).isEqualTo(plan.poisonRuns());
        assertThat(s.get("done").asLong()).isEqualTo(runs - plan.poisonRuns());
        assertThat(s.get("dead_lettered").asLong()).isEqualTo(plan.poisonRuns());
        assertThat(s.get("runs_off_plan").asLong()).as("runs ended otherwise than planned").isZero();
        assertThat(s.get("duplicate_submissions").asLong()).isEqualTo(plan.duplicates());
        assertThat(s.get("duplicate_submissions_absorbed").asLong()).isEqualTo(plan.duplicates());
        assertThat(s.get("runs_with_wrong_replies").asLong()).isZero();
        // Each flaky run was retried at least once.
        assertThat(s.get("redeliveries").asLong()).isGreaterThanOrEqualTo(plan.flakyRuns());
    }

    /**
     * The demo as a newcomer runs it first, on the embedded servers, with a worker process killed mid-run: that
     * worker reaches the embedded servers, which ask it for their passwords. (The demo without a kill runs in the
     * ordered cases below.)
     */
    @Test
    void demoOnEmbeddedServersWithAWorkerKilled() throws Exception {
        Cli c = Cli.run(demo(300, 0.02, "--kill-worker"));
        assertThat(c.exitCode).as(c.err).isZero();
        assertThat(c.out).contains("started embedded Redis").contains("started embedded PostgreSQL")
                .contains("killed worker demo-victim");
        assertAsPlanned(summary(c), DemoPlan.create(300, 50, 0.02, 0.05, 0.05, 42));
    }

    @Test
    void demoOnRealServersWithAWorkerKilled() throws Exception {
        Cli c = Cli.run(demo(400, 0.01, "--kill-worker", "--redis-url", RedisTarget.local().uri(),
                "--database-url", DATABASE));
        assertThat(c.exitCode).as(c.err).isZero();
        assertThat(c.out).doesNotContain("embedded").contains("killed worker demo-victim");
        assertAsPlanned(summary(c), DemoPlan.create(400, 50, 0.01, 0.05, 0.05, 42));
        // The demo's own schema and keys are gone (only its own: other demos may share these servers).
        Matcher m = Pattern.compile("key prefix (runbus-demo-\\d+), PostgreSQL schema (runbus_demo_\\d+)")
                .matcher(c.out);
        assertThat(m.find()).as(c.out).isTrue();
        assertThat(RedisTarget.local().redis().keys(m.group(1) + ":*")).isEmpty();
        try (Connection db = DriverManager.getConnection(DATABASE);
             ResultSet rs = db.createStatement().executeQuery("SELECT count(*) FROM information_schema.schemata"
                     + " WHERE schema_name = '" + m.group(2) + "'")) {
            rs.next();
            assertThat(rs.getLong(1)).isZero();
        }
    }

    /** Needs ordered consumption of partitioned topics from runbus-core. */
    @Test
    void orderedDemoOnFourPartitionsKeepsEveryUsersOrder() throws Exception {
        Cli c = Cli.run(demo(300, 0.02, "--ordered", "--partitions", "4", "--timeout", "3m", "--redis-url",
                RedisTarget.local().uri(), "--database-url", DATABASE));
        assertThat(c.exitCode).as(c.err).isZero();
        assertThat(c.out).contains("runs in per-user order over 4 partitions");
        JsonNode s = summary(c);
        assertAsPlanned(s, DemoPlan.create(300, 50, 0.02, 0.05, 0.05, 42));
        assertThat(s.get("order_violations").asLong()).isZero();
    }

    /** One partition: one run at a time, so fewer runs. */
    @Test
    void orderedDemoOnOnePartitionKeepsEveryUsersOrder() throws Exception {
        Cli c = Cli.run(demo(150, 0.02, "--ordered", "--timeout", "3m", "--redis-url", RedisTarget.local().uri(),
                "--database-url", DATABASE));
        assertThat(c.exitCode).as(c.err).isZero();
        JsonNode s = summary(c);
        assertAsPlanned(s, DemoPlan.create(150, 50, 0.02, 0.05, 0.05, 42));
        assertThat(s.get("order_violations").asLong()).isZero();
    }

    /**
     * A handler that ignores poison and flakiness breaks the plan, and the report says so. The demo refuses
     * --handler (its report checks its own handler's failures), so the handler is given to {@link Demo} itself.
     */
    @Test
    void theReportNamesRunsThatDoNotEndAsPlanned() throws Exception {
        DemoPlan plan = DemoPlan.create(100, 50, 0.05, 0.05, 0.05, 42);
        long stamp = System.currentTimeMillis() * 1000 + 999;
        Settings s = DemoNamespace.isolated(Settings.resolve(java.util.Map.of(Setting.REDIS_URL, RedisTarget.local().uri(),
                Setting.DATABASE_URL, DATABASE, Setting.MIN_IDLE, "2s", Setting.CLAIM_INTERVAL, "500ms"),
                java.util.Map.of(), null), stamp);
        java.io.StringWriter out = new java.io.StringWriter();
        DemoReport report = new Demo(s, new Demo.Options(100, 50, 2, 0.05, 0.05, 0.05, false, java.time.Duration
                .ofMinutes(2), false, 42), Hermetic.environment(), new java.io.PrintWriter(out, true),
                new PoisonBlindHandler(), plan).run();
        // Poison runs end done instead of failed, flaky ones done on their first attempt.
        long offPlan = plan.poisonRuns() + plan.flakyRuns();
        assertThat(plan.poisonRuns()).isPositive();
        assertThat(report.brokenInvariants()).as(out.toString())
                .contains(offPlan + " runs missing or ended otherwise than planned")
                .anyMatch(b -> b.contains("0 dead letters for " + plan.poisonRuns() + " poison runs"));
        assertThat(RedisTarget.local().redis().keys("runbus-demo-" + stamp + ":*")).as("keys left").isEmpty();
    }

    @Test
    void demoRefusesANamespaceOrHandlerOfItsOwnChoosing() {
        for (String flag : new String[] {"--key-prefix", "--schema", "--topic", "--group", "--handler"}) {
            Cli c = Cli.run("demo", flag, "runbus");
            assertThat(c.exitCode).as(flag).isEqualTo(2);
            assertThat(c.err).as(flag).contains(flag + " cannot be given to demo").contains("namespace of its own");
        }
    }
}
