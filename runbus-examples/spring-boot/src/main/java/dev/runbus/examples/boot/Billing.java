package dev.runbus.examples.boot;

import dev.runbus.runs.NewRun;
import dev.runbus.runs.Runs;
import dev.runbus.spring.RunbusListener;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.stereotype.Component;

/**
 * Consumes placed orders in the group "billing" and submits one billing run per order. The order id is the run's
 * idempotency key: an order delivered twice (after a crash, a takeover) still makes one run.
 */
@Component
public class Billing {

    private final Runs runs;
    private final Map<String, UUID> runOfOrder = new ConcurrentHashMap<>();

    public Billing(Runs runs) {
        this.runs = runs;
    }

    @RunbusListener(topic = "orders", group = "billing")
    public void onOrderPlaced(OrderPlaced order) {
        UUID run = runs.submit(new NewRun("orders", order.customer(), order.orderId() + ":" + order.cents(),
                "bill-" + order.orderId())).runId();
        runOfOrder.put(order.orderId(), run);
    }

    /** The billing run of an order this process has seen. */
    public Optional<UUID> runOf(String orderId) {
        return Optional.ofNullable(runOfOrder.get(orderId));
    }
}
