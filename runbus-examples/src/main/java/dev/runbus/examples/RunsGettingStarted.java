package dev.runbus.examples;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.Reply;
import dev.runbus.runs.Run;
import dev.runbus.runs.RunStatus;
import dev.runbus.runs.Runs;
import dev.runbus.runs.RunsConfig;
import dev.runbus.runs.SubmitResult;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * The README's runs program: a run submitted with an idempotency key, executed by a worker whose payment is
 * initiated at most once, finished with its replies in PostgreSQL. What is between the snippet markers is what
 * the README shows (a test keeps the two the same).
 *
 * <p>Usage: {@code RunsGettingStarted} (Redis at {@code RUNBUS_REDIS_URL}, default
 * {@code redis://127.0.0.1:6379}; PostgreSQL at {@code RUNBUS_DATABASE_URL}, default
 * {@code jdbc:postgresql://127.0.0.1:5432/test?user=postgres}; {@code ./runbus dev} starts both and prints the
 * variables: {@link ExampleServers}). It works in a schema of its own and drops it.
 */
public final class RunsGettingStarted {

    private RunsGettingStarted() {
    }

    public static void main(String[] args) throws Exception {
        String redisUri = ExampleServers.redisUrl();
        String databaseUrl = ExampleServers.databaseUrl();
        long pid = ProcessHandle.current().pid();
        String keyPrefix = "runbus-example-" + pid;
        String schema = "runbus_example_" + pid;
        try {
            Run run = run(redisUri, databaseUrl, keyPrefix, schema);
            System.out.println("run " + run.id() + " " + run.status().sql() + " after " + run.attempts() + " attempt(s)");
        } finally {
            ExampleKeys.deleteAll(redisUri, keyPrefix);
            ExampleKeys.dropSchema(databaseUrl, schema);
        }
    }

    /** Submits one run (twice, with the same key) and returns it once finished. */
    static Run run(String redisUri, String databaseUrl, String keyPrefix, String schema) throws Exception {
        // snippet:start runs
        HikariConfig db = new HikariConfig();
        db.setJdbcUrl(databaseUrl);   // e.g. jdbc:postgresql://db:5432/app?user=app
        try (HikariDataSource dataSource = new HikariDataSource(db);
             Bus bus = Bus.connect(BusConfig.builder(redisUri).keyPrefix(keyPrefix).build());
             Runs runs = Runs.create(bus, dataSource, RunsConfig.builder().schema(schema).build())) {
            runs.startWorker(run -> {
                // Initiated at most once per run, however often the run executes: give the key to the payment
                // provider, which then refuses a second charge with it.
                String receipt = run.effects().once("charge", key -> "receipt-for-" + key);
                return List.of(Reply.assistant("charged: " + receipt));
            });
            runs.startSweeper();   // republishes runs whose trigger Redis lost
            NewRun order = new NewRun("session-1", "user-1", "{\"amount\":42}", "order-42");
            SubmitResult submitted = runs.submit(order);
            runs.submit(order);   // the same key again: the same run (created() is false), nothing published
            return awaitFinished(runs, submitted.runId(), Duration.ofSeconds(30));
        }
        // snippet:end
    }

    private static Run awaitFinished(Runs runs, UUID id, Duration limit) throws InterruptedException {
        Instant until = Instant.now().plus(limit);
        while (true) {
            Run run = runs.get(id).orElseThrow();
            if (run.status() == RunStatus.DONE || run.status() == RunStatus.FAILED || Instant.now().isAfter(until)) {
                return run;
            }
            Thread.sleep(50);
        }
    }
}
