package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.RetryPolicy;
import dev.runbus.runs.testing.RunsTestSupport;
import dev.runbus.testkit.Wait;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The runs layer's Micrometer meters on a real PostgreSQL and Redis: submissions by whether they created a run, the
 * submit-to-done timer (one sample per completed run), and the run counts read on their own loop.
 */
class RunMetersTest extends RunsTestSupport {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private final MeterRegistry registry = new SimpleMeterRegistry();

    @Test
    void countsSubmissionsTimesCompletionsAndReadsTheRunCounts() {
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().maxDeliveries(2).build())
                .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(50))).meterRegistry(registry)
                .meterRefreshInterval(Duration.ofMillis(100)).build());
        runs.startWorker(run -> {
            if (run.input().startsWith("poison")) {
                throw new IllegalStateException("poisoned");
            }
            return List.of(Reply.assistant("ok"));
        });
        List<UUID> good = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            good.add(runs.submit(new NewRun("s", "u", "good-" + i, "good-" + i)).runId());
            assertThat(runs.submit(new NewRun("s", "u", "good-" + i, "good-" + i)).created()).isFalse();
        }
        UUID poison = runs.submit(new NewRun("s", "u", "poison", "poison")).runId();
        for (UUID id : good) {
            Wait.until("good done", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.DONE);
        }
        Wait.until("poison failed", WAIT, () -> runs.get(poison).orElseThrow().status() == RunStatus.FAILED);
        // Failed by hand: a failed run that names no dead letter.
        execute("INSERT INTO " + schema + ".runs (id, idempotency_key, input_hash, session_id, user_id, input, status)"
                + " VALUES (gen_random_uuid(), 'by-hand', 'h', 's', 'u', 'x', 'failed')");

        assertThat(registry.find("runbus.runs.submitted").tag("created", "true").counter().count()).isEqualTo(6);
        assertThat(registry.find("runbus.runs.submitted").tag("created", "false").counter().count()).isEqualTo(5);
        Timer done = registry.find("runbus.run.duration").tag("status", "done").timer();
        Wait.until("five completions timed", WAIT, () -> done.count() == 5);
        assertThat(done.max(java.util.concurrent.TimeUnit.NANOSECONDS)).isPositive();
        Wait.until("the counts read", WAIT, () -> gauge("runbus.runs", "done") == 5 && gauge("runbus.runs", "failed") == 2
                && gauge("runbus.runs", "pending") == 0 && gauge("runbus.runs", "running") == 0
                && registry.find("runbus.runs.failed.without.dead.letter").gauge().value() == 1);
        assertThat(registry.find("runbus.postgres.up").gauge().value()).isEqualTo(1);
    }

    private double gauge(String name, String status) {
        return registry.find(name).tag("status", status).gauge().value();
    }

    /**
     * Each live schedule's fires by outcome, from its row: registered when it appears, following its counters, and
     * removed with it.
     */
    @Test
    void aSchedulesFiresAreCountedByOutcome_andGoWithIt() {
        Runs runs = runs(bus(), configBuilder(schema, "w1", workerOptions().build()).meterRegistry(registry)
                .meterRefreshInterval(Duration.ofMillis(100)).build());
        Instant t0 = Instant.parse("2026-06-01T00:00:00Z");
        dev.runbus.runs.testing.SettableClock clock = new dev.runbus.runs.testing.SettableClock(t0);
        Schedules schedules = runs.schedules(clock);
        schedules.create(Schedule.every("metered", Duration.ofMinutes(1), NewRun.of("s", "u", "m")));
        clock.set(t0.plus(Duration.ofMinutes(1))); // on time: fired
        schedules.fireDue();
        clock.set(t0.plus(Duration.ofMinutes(2))); // its first run still pending: skipped for overlap
        schedules.fireDue();
        // 3 to 9 missed (more than the minute's grace late); 10 on time, held back by the first run: skipped
        clock.set(t0.plus(Duration.ofMinutes(10)).plusSeconds(30));
        schedules.fireDue();
        Wait.until("the fires counted", WAIT, () -> fires("metered", "fired") == 1 && fires("metered",
                "skipped_overlap") == 2 && fires("metered", "missed") == 7 && fires("metered", "caught_up") == 0);
        schedules.delete("metered");
        Wait.until("its meters removed", WAIT, () -> registry.find("runbus.schedule.fires").tag("schedule", "metered")
                .functionCounter() == null);
    }

    private double fires(String schedule, String outcome) {
        var c = registry.find("runbus.schedule.fires").tag("schedule", schedule).tag("outcome", outcome)
                .functionCounter();
        return c == null ? -1 : c.count();
    }
}
