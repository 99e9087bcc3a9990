package dev.runbus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Bus;
import dev.runbus.DeadLetter;
import dev.runbus.Message;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.Reply;
import dev.runbus.runs.RunHandler;
import dev.runbus.runs.RunStatus;
import dev.runbus.runs.Runs;
import dev.runbus.testkit.TestServers;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A whole Boot application on the real Redis and PostgreSQL: listeners receive and acknowledge, a failing
 * listener's and an unreadable payload's entries reach the dead-letter stream after 3 deliveries, and a
 * RunHandler bean runs runs.
 */
@ExtendWith(RunbusStarterSpringBootTest.RemoveTestData.class)
@SpringBootTest(classes = RunbusStarterSpringBootTest.App.class)
@DirtiesContext
class RunbusStarterSpringBootTest {

    static final String PREFIX = TestServers.newPrefix("rbboot");
    static final String SCHEMA = TestServers.newSchema("rbboot");
    static final Duration WAIT = Duration.ofSeconds(20);

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        registry.add("runbus.redis-url", TestServers::redisUri);
        registry.add("runbus.key-prefix", () -> PREFIX);
        registry.add("runbus.listener.retry.policy", () -> "fixed");
        registry.add("runbus.listener.retry.delay", () -> "50ms");
        registry.add("runbus.runs.enabled", () -> "true");
        registry.add("runbus.runs.schema", () -> SCHEMA);
        registry.add("spring.datasource.url", TestServers::databaseUrl);
        // Flyway is on this module's test class path for FlywayRecipeTest; this application has no migrations.
        registry.add("spring.flyway.enabled", () -> "false");
    }

    /**
     * Removes the test's keys and schema after Spring closed the context (its afterAll runs after SpringExtension's,
     * being declared before it): a listener still running would make its group again.
     */
    static final class RemoveTestData implements AfterAllCallback {
        @Override
        public void afterAll(ExtensionContext context) {
            TestServers.deleteKeys(PREFIX);
            TestServers.dropSchema(SCHEMA);
        }
    }

    /** The payload type the billing listener reads from JSON. */
    public record OrderPlaced(String orderId, long cents) {
    }

    @SpringBootApplication
    static class App {

        final List<OrderPlaced> billed = new CopyOnWriteArrayList<>();
        final AtomicInteger failures = new AtomicInteger();

        @RunbusListener(topic = "orders", group = "billing", concurrency = "2")
        void bill(OrderPlaced order) {
            billed.add(order);
        }

        @RunbusListener(topic = "payments", group = "ledger")
        void alwaysFails(Message message) {
            failures.incrementAndGet();
            throw new IllegalStateException("ledger is closed");
        }

        @Bean
        RunHandler runHandler() {
            return run -> List.of(Reply.assistant("done: " + run.input()));
        }

        @Bean
        Checkout checkout(TransactionalRuns runs) {
            return new Checkout(runs);
        }
    }

    /** An application service that submits a run in its own {@code @Transactional} method. */
    public static class Checkout {

        private final TransactionalRuns runs;

        public Checkout(TransactionalRuns runs) {
            this.runs = runs;
        }

        @org.springframework.transaction.annotation.Transactional
        public UUID checkout(String input, boolean fail) {
            UUID id = runs.submit(NewRun.of("s", "u", input)).runId();
            if (fail) {
                throw new IllegalStateException("payment declined");
            }
            return id;
        }
    }

    @Autowired
    App app;

    @Autowired
    RunbusTemplate template;

    @Autowired
    Bus bus;

    @Autowired
    Runs runs;

    @Autowired
    Checkout checkout;

    @Autowired
    javax.sql.DataSource dataSource;

    @Test
    void aListenerReceivesJsonPayloadsAndAcknowledgesThem() {
        OrderPlaced order = new OrderPlaced("o-" + UUID.randomUUID(), 4200);
        template.publish("orders", template.message("order.placed", order).key(order.orderId())
                .header("source", "test").build());
        Wait.until("billed", WAIT, () -> app.billed.contains(order));
        Wait.until("acknowledged", WAIT, () -> bus.inspector().groups("orders").get(0).pending() == 0);
        assertThat(bus.deadLetters().count("orders")).isZero();
    }

    @Test
    void aFailingListenersEntryIsDeadLetteredAfterThreeDeliveries() {
        template.publish("payments", "payment", new OrderPlaced("p-1", 1));
        DeadLetter dead = Wait.until("dead-lettered", WAIT, () -> bus.deadLetters().list("payments", null, 10),
                l -> !l.isEmpty()).get(0);
        assertThat(dead.deliveries()).isEqualTo(3);
        assertThat(dead.reason()).contains("ledger is closed");
        assertThat(app.failures.get()).isEqualTo(3);
    }

    @Test
    void aPayloadThatIsNotTheListenersTypeIsDeadLetteredWithTheReason() {
        bus.publisher().publish("orders", Message.of("order.placed", "not json".getBytes(StandardCharsets.UTF_8)));
        DeadLetter dead = Wait.until("dead-lettered", WAIT, () -> bus.deadLetters().list("orders", null, 10),
                l -> !l.isEmpty()).get(0);
        assertThat(dead.deliveries()).isEqualTo(3);
        assertThat(dead.reason()).contains("cannot read the payload").contains(OrderPlaced.class.getName());
    }

    /**
     * A run submitted in a {@code @Transactional} method is published once the method's transaction commits, and
     * never exists when it rolls back.
     */
    @Test
    void aRunSubmittedInATransactionalMethodRunsOnceItCommits_andNeverWhenItRollsBack() throws Exception {
        UUID id = checkout.checkout("paid", false);
        Wait.until("done", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.DONE);
        assertThat(runs.replies(id)).singleElement().satisfies(r -> assertThat(r.content()).isEqualTo("done: paid"));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> checkout.checkout("declined", true))
                .hasMessageContaining("payment declined");
        runs.relayOnce();
        try (java.sql.Connection c = dataSource.getConnection();
             java.sql.ResultSet rs = c.createStatement().executeQuery("SELECT count(*) FROM " + SCHEMA
                     + ".runs WHERE input = 'declined'")) {
            rs.next();
            assertThat(rs.getLong(1)).as("no run of the rolled-back transaction").isZero();
        }
    }

    @Test
    void aRunHandlerBeanRunsRuns() {
        UUID id = runs.submit(NewRun.of("s", "u", "hello")).runId();
        Wait.until("done", WAIT, () -> runs.get(id).orElseThrow().status() == RunStatus.DONE);
        assertThat(runs.replies(id)).singleElement().satisfies(r -> assertThat(r.content()).isEqualTo("done: hello"));
    }
}
