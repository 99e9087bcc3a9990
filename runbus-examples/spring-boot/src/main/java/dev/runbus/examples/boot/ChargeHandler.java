package dev.runbus.examples.boot;

import dev.runbus.runs.Reply;
import dev.runbus.runs.RunContext;
import dev.runbus.runs.RunHandler;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.stereotype.Component;

/**
 * Executes a billing run: charges the customer once, however often the run executes. The effect's key goes to the
 * payment provider (here a counter standing in for it), which would refuse a second charge with the same key.
 */
@Component
public class ChargeHandler implements RunHandler {

    /** Charges made, for the example's report and its test. */
    final AtomicInteger charges = new AtomicInteger();

    @Override
    public List<Reply> execute(RunContext run) throws Exception {
        String receipt = run.effects().once("charge", key -> {
            charges.incrementAndGet();
            return "receipt-" + key;
        });
        return List.of(Reply.assistant("charged " + run.input() + ": " + receipt));
    }
}
