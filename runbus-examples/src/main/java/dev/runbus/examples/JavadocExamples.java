package dev.runbus.examples;

import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Message;
import dev.runbus.Subscription;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.Reply;
import dev.runbus.runs.Runs;
import dev.runbus.runs.RunsConfig;
import dev.runbus.runs.SubmitResult;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * The examples of the public javadoc, compiled here: what is between the snippet markers is what the javadoc of
 * {@code Bus} and {@code Runs} shows (a test keeps the two the same), so an example that no longer compiles breaks
 * the build, not the reader.
 */
final class JavadocExamples {

    private JavadocExamples() {
    }

    /** {@code Bus}: connect, subscribe, publish, wait for the message, close both. */
    static void bus() throws InterruptedException {
        // snippet:start bus
        CountDownLatch handled = new CountDownLatch(1);
        try (Bus bus = Bus.connect(BusConfig.builder("redis://127.0.0.1:6379").build());
             Subscription billing = bus.subscribe("orders", "billing", "billing-1", d -> {
                 System.out.println(new String(d.message().payload(), StandardCharsets.UTF_8));
                 handled.countDown();
             })) {
            byte[] order = "{\"order\":1}".getBytes(StandardCharsets.UTF_8);
            bus.publisher().publish("orders", Message.of("order.created", order));
            handled.await(30, TimeUnit.SECONDS);   // a service keeps its subscription open until it stops
        }   // closes the subscription (its running handlers finish, their acks are sent), then the bus
        // snippet:end
    }

    /** {@code Runs}: on a bus and a pooled data source, a worker, the sweeper and one submission. */
    static void runs(Bus bus, DataSource dataSource) {
        // snippet:start runs
        try (Runs runs = Runs.create(bus, dataSource, RunsConfig.builder().build())) {   // applies migrations
            runs.startWorker(run -> List.of(Reply.assistant("you said: " + run.input())));
            runs.startSweeper();   // republishes runs whose trigger Redis lost
            // The same idempotency key again finds the same run (created() false) and publishes nothing.
            SubmitResult submitted = runs.submit(new NewRun("session-1", "user-1", "hello", "hello-1"));
            System.out.println("run " + submitted.runId() + " " + submitted.status());   // a service keeps runs open
        }   // stops the sweeper and the worker (running handlers finish); the bus stays open
        // snippet:end
    }
}
