package dev.runbus.examples.boot;

import dev.runbus.runs.Run;
import dev.runbus.runs.RunStatus;
import dev.runbus.runs.Runs;
import dev.runbus.spring.RunbusTemplate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The whole flow in one process: the shop publishes three placed orders, the billing listener submits a run for
 * each, the run handler charges once per order. Prints the runs and exits. Redis and PostgreSQL come from
 * RUNBUS_REDIS_URL and RUNBUS_DATABASE_URL, which {@code ./runbus dev} prints for the embedded servers it starts
 * (application.properties has the defaults: the local servers).
 */
@SpringBootApplication
public class OrderApp {

    public static void main(String[] args) throws Exception {
        try (ConfigurableApplicationContext context = SpringApplication.run(OrderApp.class, args)) {
            for (Run run : placeAndBill(context, 3, Duration.ofSeconds(30))) {
                System.out.println(run.status() + " " + run.input() + " → "
                        + context.getBean(Runs.class).replies(run.id()).get(0).content());
            }
            System.out.println("charges: " + context.getBean(ChargeHandler.class).charges.get());
        }
    }

    /** Publishes {@code count} orders and returns their billing runs once all are done, waiting up to {@code limit}. */
    static List<Run> placeAndBill(ConfigurableApplicationContext context, int count, Duration limit)
            throws InterruptedException {
        RunbusTemplate template = context.getBean(RunbusTemplate.class);
        String batch = UUID.randomUUID().toString().substring(0, 8);
        List<String> orders = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            OrderPlaced order = new OrderPlaced(batch + "-" + i, "customer-" + i, 1000L * i);
            // Keyed by customer: with partitions, one customer's orders stay in order.
            template.publish("orders", template.message("order.placed", order).key(order.customer()).build());
            orders.add(order.orderId());
        }
        Billing billing = context.getBean(Billing.class);
        Runs runs = context.getBean(Runs.class);
        long deadline = System.nanoTime() + limit.toNanos();
        List<Run> done = new ArrayList<>();
        for (String order : orders) {
            Run run = null;
            while (run == null || run.status() != RunStatus.DONE) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the billing run of order " + order + " is not done after " + limit);
                }
                Thread.sleep(20); // polling a condition with a deadline, not waiting a guessed time
                run = billing.runOf(order).flatMap(runs::get).orElse(null);
            }
            done.add(run);
        }
        return done;
    }
}
