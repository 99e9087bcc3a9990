package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.runs.testing.OrderedRunsNode;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.ChildJvm;
import dev.runbus.testkit.Wait;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The test: 50 users submit 20 runs each, interleaved, to a topic of 4 partitions in per-user order;
 * some runs fail once and then succeed, a few fail always. Two workers run them, one in a child JVM killed with
 * SIGKILL part-way; the other and the sweeper finish the job. Checked in PostgreSQL: every user's runs finished
 * one after another in submission order, each done run has exactly one set of replies, and exactly the poison
 * runs failed.
 *
 * <p>The four-partition case needs ordered consumption of partitioned topics from runbus-core.
 */
@Tag("chaos")
class OrderedRunsCrashTest extends RunsTestSupport {

    static final Duration WAIT = Duration.ofMinutes(4);

    /** The test. */
    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void fiftyUsersTwentyRunsEach_fourPartitions_aWorkerKilledMidway_everyUsersRunsFinishInSubmissionOrder()
            throws Exception {
        scenario(50, 20, 4);
    }

    /**
     * The same on one partition, fewer runs (one partition is one run at a time). It also holds where the bus
     * consumes the topic unordered: the order is PostgreSQL's.
     */
    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void twentyUsersTenRunsEach_onePartition_aWorkerKilledMidway_everyUsersRunsFinishInSubmissionOrder()
            throws Exception {
        scenario(20, 10, 1);
    }

    private void scenario(int users, int runsPerUser, int partitions) throws Exception {
        Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix(prefix).partitions("runs", partitions).build());
        closeables.add(bus);
        Runs runs = runs(bus, configBuilder(schema, "survivor", OrderedRunsNode.workerOptions()).ordered(true)
                .retryPolicy(OrderedRunsNode.RETRY).build());
        Set<UUID> poison = new HashSet<>();
        int total = users * runsPerUser;
        for (int k = 0; k < runsPerUser; k++) {
            for (int u = 0; u < users; u++) {
                int n = k * users + u;
                String kind = n % 97 == 13 ? "poison" : n % 9 == 4 ? "flaky" : "ok";
                UUID id = runs.submit(NewRun.of("s-" + u + "-" + (k % 3), "user-" + u, "run " + k + " " + kind))
                        .runId();
                if (kind.equals("poison")) {
                    poison.add(id);
                }
            }
        }
        assertThat(poison).as("poison runs").isNotEmpty().hasSizeLessThan(total / 50);

        try (ChildJvm child = ChildJvm.start(OrderedRunsNode.class, redis.uri(), prefix, TestDatabase.URL, schema,
                String.valueOf(partitions), "victim")) {
            child.awaitLine("READY", Duration.ofSeconds(60));
            runs.startWorker(OrderedRunsNode.HANDLER);
            runs.startSweeper();
            Wait.until("a third of the runs finished", WAIT, () -> finished() >= total / 3);
            child.kill();
        }
        Wait.until("every run finished", WAIT, () -> finished() == total);

        assertThat(idsWith("failed")).isEqualTo(poison);
        for (UUID id : idsWith("done")) {
            assertThat(replyRows(id)).as("replies of done run %s", id).isEqualTo(2);
        }
        for (UUID id : poison) {
            assertThat(replyRows(id)).as("replies of failed run %s", id).isZero();
        }
        assertEachUsersRunsFinishedInSubmissionOrder(users, runsPerUser);
        assertThat(orderViolations(schema)).isZero();
    }

    /** For each user, in submission order: run k+1's first attempt started after run k finished. */
    private void assertEachUsersRunsFinishedInSubmissionOrder(int users, int runsPerUser) throws Exception {
        Map<String, List<Timestamp[]>> byUser = new LinkedHashMap<>();
        try (Connection c = TestDatabase.pool().getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT user_id, started_at, finished_at FROM " + schema
                     + ".runs ORDER BY user_id, submit_seq")) {
            while (rs.next()) {
                byUser.computeIfAbsent(rs.getString(1), u -> new ArrayList<>())
                        .add(new Timestamp[] {rs.getTimestamp(2), rs.getTimestamp(3)});
            }
        }
        assertThat(byUser).hasSize(users);
        byUser.forEach((user, list) -> {
            assertThat(list).as("runs of %s", user).hasSize(runsPerUser);
            for (int k = 0; k + 1 < list.size(); k++) {
                Timestamp finished = list.get(k)[1];
                Timestamp nextStarted = list.get(k + 1)[0];
                assertThat(finished).as("%s run %d finished", user, k).isNotNull();
                assertThat(nextStarted).as("%s run %d started", user, k + 1).isNotNull();
                assertThat(nextStarted).as("%s run %d started after run %d finished", user, k + 1, k)
                        .isAfterOrEqualTo(finished);
            }
        });
    }

    private long finished() {
        return TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE status IN ('done', 'failed')");
    }

    private Set<UUID> idsWith(String status) throws Exception {
        Set<UUID> ids = new HashSet<>();
        try (Connection c = TestDatabase.pool().getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT id FROM " + schema + ".runs WHERE status = '" + status + "'")) {
            while (rs.next()) {
                ids.add(rs.getObject(1, UUID.class));
            }
        }
        return ids;
    }
}
