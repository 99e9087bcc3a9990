package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.Bus;
import dev.runbus.DeadLetter;
import dev.runbus.runs.internal.store.Migrations;
import dev.runbus.runs.internal.worker.Triggers;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.runs.testing.TestDatabase;
import dev.runbus.testkit.RedisServerProcess;
import dev.runbus.testkit.Wait;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The runs layer against a real PostgreSQL and a real Redis. */
class RunsTest extends RunsTestSupport {

    static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void twoSubmitsWithOneKey_oneRunOneStreamEntry() {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        NewRun request = new NewRun("s1", "u1", "{\"q\":\"hi\"}", "key-1");
        SubmitResult first = runs.submit(request);
        SubmitResult second = runs.submit(request);
        assertThat(first.created()).isTrue();
        assertThat(first.status()).isEqualTo(RunStatus.PENDING);
        assertThat(second.created()).isFalse();
        assertThat(second.runId()).isEqualTo(first.runId());
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs")).isEqualTo(1);
        assertThat(redis.redis().xlen(stream())).isEqualTo(1);
    }

    @Test
    void sameKeyWithAnotherBody_isAConflictNotAReuse() {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        SubmitResult first = runs.submit(new NewRun("s1", "u1", "input A", "key-2"));
        assertThatThrownBy(() -> runs.submit(new NewRun("s1", "u1", "input B", "key-2")))
                .isInstanceOf(IdempotencyConflictException.class).hasMessageContaining("key-2")
                .hasMessageContaining(first.runId().toString());
        assertThat(redis.redis().xlen(stream())).isEqualTo(1);
    }

    @Test
    void scopedKeysMeetOnlyKeysOfTheirScope() {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        NewRun request = new NewRun("s1", "u1", "same input", "key-3");
        UUID global = runs.submit(request).runId();
        SubmitResult a = runs.submit(request, KeyScope.of("a"));
        SubmitResult b = runs.submit(request, KeyScope.of("b"));
        assertThat(a.created()).isTrue();
        assertThat(b.created()).isTrue();
        assertThat(Set.of(global, a.runId(), b.runId())).hasSize(3);
        assertThat(runs.submit(request, KeyScope.of("a"))).extracting(SubmitResult::runId, SubmitResult::created)
                .containsExactly(a.runId(), false);
        assertThat(runs.submit(request, KeyScope.GLOBAL).runId()).isEqualTo(global);
        // Scopes without a key: the derived key is scoped too.
        NewRun unkeyed = NewRun.of("s1", "u1", "derived");
        assertThat(runs.submit(unkeyed, KeyScope.of("a")).runId()).isNotEqualTo(runs.submit(unkeyed, KeyScope.of("b"))
                .runId());
        // A conflict names the key as given and the scope's own run.
        assertThatThrownBy(() -> runs.submit(new NewRun("s1", "u1", "other", "key-3"), KeyScope.of("b")))
                .isInstanceOf(IdempotencyConflictException.class).hasMessageContaining("'key-3'")
                .hasMessageContaining(b.runId().toString()).hasMessageNotContaining(a.runId().toString())
                .hasMessageNotContaining("scoped:");
    }

    @Test
    void runGoesToDoneWithItsRepliesInOrder() {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        runs.startWorker(ECHO);
        UUID id = runs.submit(NewRun.of("s1", "u1", "hello")).runId();
        Run done = Wait.until("done", WAIT, () -> runs.get(id).orElseThrow(), r -> r.status() == RunStatus.DONE);
        assertThat(done.attempts()).isEqualTo(1);
        assertThat(done.error()).isEmpty();
        assertThat(runs.replies(id)).extracting(StoredReply::seq, StoredReply::role, StoredReply::content)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(1, "assistant", "echo:hello"),
                        org.assertj.core.groups.Tuple.tuple(2, "tool", "done:hello"));
        Wait.until("trigger acked", WAIT, () -> bus().inspector().groups("runs").get(0).pending() == 0);
    }

    @Test
    void aBatchOfRunsEachEndsDoneOnce_withOneAttempt() {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        List<UUID> ids = new java.util.ArrayList<>();
        for (int i = 0; i < 60; i++) {
            ids.add(runs.submit(NewRun.of("s1", "u1", "batch " + i)).runId());
        }
        runs.startWorker(ECHO); // the 60 triggers are waiting: the first read takes them as one batch
        Wait.until("all done", WAIT, () -> TestDatabase.count("SELECT count(*) FROM " + schema
                + ".runs WHERE status = 'done'") == 60);
        for (UUID id : ids) {
            assertThat(runs.get(id).orElseThrow().attempts()).isEqualTo(1);
            assertThat(replyRows(id)).isEqualTo(2);
        }
        Wait.until("every trigger acked", WAIT, () -> bus().inspector().groups("runs").get(0).pending() == 0);
    }

    @Test
    void aHandlerExecutorThatRejects_runsTheRunOnTheBatchThreadInsteadOfFailingIt() {
        java.util.concurrent.Executor rejecting = task -> {
            throw new java.util.concurrent.RejectedExecutionException("shutting down");
        };
        Runs runs = runs(bus(), "w1", workerOptions().executor(rejecting).maxDeliveries(1).build());
        runs.startWorker(ECHO);
        UUID id = runs.submit(NewRun.of("s1", "u1", "rejected")).runId();
        Run done = Wait.until("done", WAIT, () -> runs.get(id).orElseThrow(), r -> r.status() == RunStatus.DONE);
        assertThat(done.attempts()).isEqualTo(1);
        assertThat(replyRows(id)).isEqualTo(2);
        assertThat(bus().deadLetters().count("runs")).isZero();
    }

    @Test
    void sameRunDeliveredTwiceToTwoWorkers_oneSetOfRepliesOneDone() throws Exception {
        Bus bus = bus();
        Runs a = runs(bus, "worker-a", workerOptions().build());
        Runs b = Runs.create(bus, TestDatabase.pool(), config(schema, "worker-b", workerOptions().build()));
        closeables.add(b);
        CountDownLatch bothRunning = new CountDownLatch(2);
        AtomicInteger executions = new AtomicInteger();
        UUID id = a.submit(NewRun.of("s", "u", "twice")).runId();
        bus.publisher().publish("runs", Triggers.of(id)); // a duplicate trigger, as a republish makes
        a.startWorker(overlapping(bothRunning, executions));
        b.startWorker(overlapping(bothRunning, executions));
        Wait.until("done", WAIT, () -> a.get(id).orElseThrow().status() == RunStatus.DONE);
        Wait.until("both triggers acked", WAIT, () -> bus.inspector().groups("runs").get(0).pending() == 0
                && bus.inspector().groups("runs").get(0).lastDeliveredId() != null);
        assertThat(executions.get()).isEqualTo(2);
        List<StoredReply> replies = a.replies(id);
        assertThat(replies).hasSize(3);
        String winner = replies.get(0).content().split(":")[0];
        assertThat(replies).allMatch(r -> r.content().startsWith(winner + ":"));
        assertThat(a.get(id).orElseThrow().attempts()).isEqualTo(2);
    }

    /** Three replies that name the execution; waits until the other execution runs too. */
    private static RunHandler overlapping(CountDownLatch bothRunning, AtomicInteger executions) {
        return run -> {
            String worker = "exec" + executions.incrementAndGet();
            bothRunning.countDown();
            assertThat(bothRunning.await(10, TimeUnit.SECONDS)).isTrue();
            return List.of(Reply.assistant(worker + ":1"), Reply.assistant(worker + ":2"),
                    Reply.assistant(worker + ":3"));
        };
    }

    @Test
    void poisonRun_failsWithTheReason_thenReplayAfterTheFixEndsDoneOnce() {
        Bus bus = bus();
        Runs runs = runs(bus, "w1", workerOptions().minIdle(Duration.ofMillis(200)).maxDeliveries(3).build());
        AtomicBoolean fixed = new AtomicBoolean();
        AtomicInteger executions = new AtomicInteger();
        runs.startWorker(run -> {
            executions.incrementAndGet();
            if (!fixed.get()) {
                throw new IllegalArgumentException("model rejected input " + run.input());
            }
            return ECHO.execute(run);
        });
        UUID id = runs.submit(NewRun.of("s", "u", "poison-1")).runId();
        Run failed = Wait.until("failed", WAIT, () -> runs.get(id).orElseThrow(), r -> r.status() == RunStatus.FAILED);
        assertThat(executions.get()).isEqualTo(3);
        assertThat(failed.attempts()).isEqualTo(3);
        assertThat(failed.error()).get().asString()
                .isEqualTo("java.lang.IllegalArgumentException: model rejected input poison-1");
        DeadLetter dl = bus.deadLetters().get("runs", failed.deadLetterId().orElseThrow()).orElseThrow();
        assertThat(dl.message().id()).isEqualTo(id.toString());
        assertThat(dl.group()).isEqualTo(RunsConfig.DEFAULT_GROUP);
        assertThat(runs.replies(id)).isEmpty();
        assertThatThrownBy(() -> runs.replay(UUID.randomUUID())).isInstanceOf(RunNotFoundException.class);

        fixed.set(true);
        runs.replay(id);
        Run done = Wait.until("done after replay", WAIT, () -> runs.get(id).orElseThrow(),
                r -> r.status() == RunStatus.DONE);
        assertThat(done.attempts()).isEqualTo(4);
        assertThat(executions.get()).isEqualTo(4);
        assertThat(runs.replies(id)).hasSize(2);
        assertThat(bus.deadLetters().get("runs", dl.id()).orElseThrow().replayedAs()).isPresent();
        assertThatThrownBy(() -> runs.replay(id)).isInstanceOf(IllegalRunTransitionException.class)
                .hasMessageContaining("done");
    }

    @Test
    void effectIsInitiatedAtMostOncePerRunAcrossRedeliveries() {
        Runs runs = runs(bus(), "w1", workerOptions().minIdle(Duration.ofMillis(200)).build());
        AtomicInteger charges = new AtomicInteger();
        List<String> keysSeen = new ArrayList<>();
        List<String> results = new ArrayList<>();
        runs.startWorker(run -> {
            String r = run.effects().once("charge", key -> {
                keysSeen.add(key);
                return "charge-" + charges.incrementAndGet();
            });
            results.add(r);
            if (run.attempt() == 1) {
                throw new IllegalStateException("crash after the charge");
            }
            return List.of(Reply.assistant("charged " + r));
        });
        SubmitResult s = runs.submit(new NewRun("s", "u", "pay", "order-77"));
        Wait.until("done", WAIT, () -> runs.get(s.runId()).orElseThrow().status() == RunStatus.DONE);
        assertThat(charges.get()).isEqualTo(1);
        assertThat(keysSeen).containsExactly(s.runId() + ":charge");
        assertThat(results).containsExactly("charge-1", "charge-1");
        assertThat(runs.get(s.runId()).orElseThrow().attempts()).isEqualTo(2);
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".run_effects")).isEqualTo(1);
    }

    @Test
    void effectInDoubt_isNotInitiatedAgain() throws Exception {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        UUID id = runs.submit(NewRun.of("s", "u", "x")).runId();
        // An earlier attempt recorded "initiated" and died before the call returned.
        try (var c = TestDatabase.pool().getConnection(); var st = c.createStatement()) {
            st.execute("INSERT INTO " + schema + ".run_effects (run_id, name, idempotency_key) VALUES ('" + id
                    + "', 'email', 'k:email')");
        }
        AtomicInteger calls = new AtomicInteger();
        List<Throwable> seen = new ArrayList<>();
        runs.startWorker(run -> {
            try {
                run.effects().once("email", key -> String.valueOf(calls.incrementAndGet()));
            } catch (EffectInDoubtException e) {
                seen.add(e);
            }
            return List.of();
        });
        Wait.until("done", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.DONE);
        assertThat(calls.get()).isZero();
        assertThat(seen).hasSize(1);
        assertThat(((EffectInDoubtException) seen.get(0)).idempotencyKey()).isEqualTo("k:email");
    }

    /**
     * Redis restarts without persistence while 50 triggers wait in the stream: exactly those 50 runs are
     * republished (none of the 10 already done, and nothing before the loss), and every run ends done once.
     */
    @Test
    void redisLosesItsData_exactlyTheLostRunsAreRepublishedAndEveryRunEndsDoneOnce() {
        RedisServerProcess server = RedisServerProcess.start(); // its own server: this test wipes it
        closeables.add(server);
        Bus bus = bus(server.uri());
        Runs first = runs(bus, "w1", workerOptions().build());
        first.startWorker(ECHO);
        for (int i = 0; i < 10; i++) {
            first.submit(NewRun.of("s", "u", "early-" + i));
        }
        Wait.until("ten done", WAIT, () -> count("done") == 10);
        first.close(); // holds nothing now: every trigger it read is done and acked
        Runs runs = runs(bus, "w1", workerOptions().build());
        for (int i = 0; i < 50; i++) {
            runs.submit(NewRun.of("s" + (i % 5), "u", "in-" + i));
        }
        Set<UUID> waiting = idsIn("pending");
        assertThat(waiting).hasSize(50);
        assertThat(redis(server).xlen(stream())).isEqualTo(60); // acked entries stay in the stream

        server.restart(); // the stream, its group and its pending list are gone

        runs.startWorker(ECHO);
        runs.startSweeper();
        Wait.until("all done", Duration.ofSeconds(60), () -> count("done") == 60);
        assertThat(idsWhere("republished > 0")).isEqualTo(waiting);
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE attempts <> 1")).isZero();
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".messages")).isEqualTo(120);
    }

    private io.lettuce.core.api.sync.RedisCommands<String, String> redis(RedisServerProcess server) {
        var client = io.lettuce.core.RedisClient.create(server.uri());
        closeables.add(client::shutdown);
        return client.connect().sync();
    }

    private long count(String status) {
        return TestDatabase.count("SELECT count(*) FROM " + schema + ".runs WHERE status = '" + status + "'");
    }

    private Set<UUID> idsIn(String status) {
        return idsWhere("status = '" + status + "'");
    }

    private Set<UUID> idsWhere(String condition) {
        Set<UUID> out = new java.util.HashSet<>();
        try (var c = TestDatabase.pool().getConnection(); var st = c.createStatement();
             var rs = st.executeQuery("SELECT id FROM " + schema + ".runs WHERE " + condition)) {
            while (rs.next()) {
                out.add(rs.getObject(1, UUID.class));
            }
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
        return out;
    }

    @Test
    void sweeperLeavesLiveRunsAloneAndOnlyOneSweepsAtATime() throws Exception {
        Runs runs = runs(bus(), "w1", workerOptions().build());
        UUID id = runs.submit(NewRun.of("s", "u", "waiting")).runId();
        // Old enough for the sweeper, but its trigger has not been delivered yet: live.
        try (var c = TestDatabase.pool().getConnection(); var st = c.createStatement()) {
            st.execute("UPDATE " + schema + ".runs SET updated_at = now() - interval '1 minute'");
        }
        // The trigger's stream id is newer than the pretended updated_at, and undelivered: still live.
        SweepResult r = runs.sweepOnce();
        assertThat(r.ran()).isTrue();
        assertThat(r.examined()).isEqualTo(1);
        assertThat(r.republished()).isZero();

        try (var c = TestDatabase.pool().getConnection()) {
            c.setAutoCommit(false);
            try (var st = c.createStatement()) {
                st.execute("SELECT pg_advisory_xact_lock(hashtext('runbus.sweeper." + schema + ".runs'))");
            }
            assertThat(runs.sweepOnce()).isEqualTo(SweepResult.SKIPPED);
            c.rollback();
        }
        assertThat(id).isNotNull();
    }

    @Test
    void migrationsAreSafeToApplyTwice() {
        runs(bus(), "w1", workerOptions().build());
        assertThat(Migrations.apply(TestDatabase.pool(), schema)).isEmpty();
        assertThat(TestDatabase.count("SELECT count(*) FROM " + schema + ".schema_migrations"))
                .isEqualTo(RunsSchema.version()); // V001 to the last
    }

    @Test
    void badInputIsAClearError() {
        assertThatThrownBy(() -> NewRun.of("", "u", "x")).hasMessageContaining("sessionId");
        assertThatThrownBy(() -> new NewRun("s", "u", "x", " ")).hasMessageContaining("idempotencyKey");
        assertThatThrownBy(() -> RunsConfig.builder().schema("Bad-Schema").build()).hasMessageContaining("schema");
    }
}
