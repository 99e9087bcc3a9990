package dev.runbus.runs.internal.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Bus;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.RunsSchema;
import dev.runbus.runs.internal.store.RunStore;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.StatementHooks;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Range;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A batch of submissions whose lookup of conflicting keys fails after its insert committed, through the group
 * committer, on the real PostgreSQL and Redis: the batch's new runs are reported created and their triggers
 * published; only the submission whose key conflicted fails, with the lookup's error.
 */
class SubmitLookupFailureTest extends RunsTestSupport {

    private static final Duration WAIT = Duration.ofSeconds(20);

    /** Open while the first insert waits, so that the next submissions queue up behind it and form one batch. */
    private final CountDownLatch firstInsertReached = new CountDownLatch(1);
    private final CountDownLatch releaseFirstInsert = new CountDownLatch(1);

    @Test
    void theNewRunsOfTheBatchArePublishedAndOnlyTheConflictingSubmissionFails() throws Exception {
        RunsSchema.migrate(TestDatabase.pool(), schema, false);
        new RunStore(TestDatabase.pool(), schema).insertAll(List.of(insert("held")));
        Bus bus = bus();
        RunCommits commits = new RunCommits(new RunStore(fake(TestDatabase.pool()), schema),
                new RunAttempts(TestDatabase.pool(), schema, 3), bus, "runs", false);
        closeables.add(commits);

        Thread first = submitter(commits, insert("first"), new CompletableFuture<>());
        first.start();
        assertThat(firstInsertReached.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        Map<String, CompletableFuture<RunStore.Inserted>> outcomes = new ConcurrentHashMap<>();
        Map<String, RunStore.Insert> inserts = Map.of("a", insert("a"), "held", insert("held"), "b", insert("b"));
        List<Thread> queued = inserts.entrySet().stream().map(e -> {
            CompletableFuture<RunStore.Inserted> outcome = new CompletableFuture<>();
            outcomes.put(e.getKey(), outcome);
            return submitter(commits, e.getValue(), outcome);
        }).toList();
        queued.forEach(Thread::start);
        // Each submitter parks once its submission is queued: then all three are in the committer's next batch.
        Wait.until("three submissions queued behind the first", WAIT,
                () -> queued.stream().allMatch(t -> t.getState() == Thread.State.WAITING));
        releaseFirstInsert.countDown();

        RunStore.Inserted a = outcomes.get("a").get(WAIT.toSeconds(), TimeUnit.SECONDS);
        RunStore.Inserted b = outcomes.get("b").get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(a.created()).isTrue();
        assertThat(b.created()).isTrue();
        assertThat(outcomes.get("held")).failsWithin(WAIT).withThrowableOfType(ExecutionException.class)
                .withCauseInstanceOf(SQLException.class)
                .satisfies(e -> assertThat(((SQLException) e.getCause()).getSQLState()).isEqualTo("08006"));

        Set<String> published = redis.redis().xrange(stream(), Range.create("-", "+")).stream()
                .map(m -> m.getBody().get("id")).collect(Collectors.toSet());
        assertThat(published).containsExactlyInAnyOrder(inserts.get("a").id().toString(),
                inserts.get("b").id().toString(), runIdOf("first"));
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs")).isEqualTo(4);
    }

    private String runIdOf(String key) {
        return TestDatabase.string("SELECT id FROM " + schema + ".runs WHERE idempotency_key = '" + key + "'");
    }

    private static RunStore.Insert insert(String key) {
        return new RunStore.Insert(UUID.randomUUID(), key, "hash-" + key, NewRun.of("s", "u", "in-" + key));
    }

    private static Thread submitter(RunCommits commits, RunStore.Insert insert,
                                    CompletableFuture<RunStore.Inserted> outcome) {
        return new Thread(() -> {
            try {
                outcome.complete(commits.submit(new RunCommits.Submission(insert, Map.of())));
            } catch (Throwable e) {
                outcome.completeExceptionally(e);
            }
        }, "submit-" + insert.key());
    }

    /** The first insert waits until the test releases it; the lookup of conflicting keys fails as a lost connection. */
    private DataSource fake(DataSource real) {
        return StatementHooks.around(real, sql -> {
            if (sql.startsWith("INSERT") && firstInsertReached.getCount() > 0) {
                firstInsertReached.countDown();
                releaseFirstInsert.await();
            } else if (sql.startsWith("SELECT idempotency_key")) {
                throw new SQLException("connection lost (test)", "08006");
            }
        });
    }
}
