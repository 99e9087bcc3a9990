package dev.runbus.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.Delivery;
import dev.runbus.Message;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Our own bookkeeping of one batch call, with a recording settler in place of the dispatcher. */
class BatchCallTest {

    static Delivery delivery(String id) {
        return new Delivery(Message.of("t", new byte[0]), "orders", id, "g", "c1", 1);
    }

    final List<String> settled = new ArrayList<>();
    final List<Delivery> deliveries = List.of(delivery("1-0"), delivery("2-0"), delivery("3-0"));
    final BatchCall call = new BatchCall(deliveries,
            (i, failure, as) -> settled.add(deliveries.get(i).streamId() + (failure == null ? ":ok" : ":" + failure.getMessage())),
            null);

    @Test
    void eachDeliveryIsSettledOnce_theRestWhenTheCallEnds() {
        call.succeed(deliveries.get(1));
        call.fail(deliveries.get(2), new IllegalStateException("boom"));
        call.settleRest(null);
        assertThat(settled).containsExactly("2-0:ok", "3-0:boom", "1-0:ok");
    }

    @Test
    void aThrowingCallFailsTheRestWithItsException() {
        call.succeed(deliveries.get(0));
        call.settleRest(new RuntimeException("down"));
        assertThat(settled).containsExactly("1-0:ok", "2-0:down", "3-0:down");
    }

    @Test
    void misuseIsAClearError() {
        call.succeed(deliveries.get(0));
        assertThatThrownBy(() -> call.succeed(deliveries.get(0))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("1-0 was settled already");
        assertThatThrownBy(() -> call.succeed(delivery("9-0"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("9-0 is not one of this batch");
        assertThatThrownBy(() -> call.fail(deliveries.get(1), null)).isInstanceOf(NullPointerException.class);
        call.settleRest(null);
        assertThatThrownBy(() -> call.fail(deliveries.get(1), new RuntimeException()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("the batch call has returned");
        assertThatThrownBy(() -> call.deliveries().add(delivery("4-0"))).isInstanceOf(UnsupportedOperationException.class);
        assertThat(settled).containsExactly("1-0:ok", "2-0:ok", "3-0:ok");
    }

    /** A call whose handler starts each delivery: what the settler is told, and what the starter is asked. */
    @Test
    void aDeliveryStartedByTheHandlerIsSettledAsStarted_andStartedAtMostOnce() {
        List<String> events = new ArrayList<>();
        BatchCall[] self = new BatchCall[1];
        BatchCall each = new BatchCall(deliveries,
                (i, failure, as) -> events.add("settle " + deliveries.get(i).streamId() + " as " + as),
                new BatchCall.Starter() {
                    @Override
                    public int start(int i) {
                        events.add("start " + deliveries.get(i).streamId());
                        if (i == 2) { // settled from within its own start: the turn is given back
                            self[0].succeed(deliveries.get(2));
                        }
                        return i == 0 ? BatchCall.ALONE : BatchCall.BESIDE;
                    }

                    @Override
                    public void release(int i, int as) {
                        events.add("release " + deliveries.get(i).streamId() + " as " + as);
                    }
                });
        self[0] = each;
        each.starting(deliveries.get(0));
        assertThatThrownBy(() -> each.starting(deliveries.get(0))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("1-0 was started or settled already");
        each.succeed(deliveries.get(0));
        each.starting(deliveries.get(2));
        each.settleRest(new RuntimeException("down"));
        assertThatThrownBy(() -> each.starting(deliveries.get(1))).isInstanceOf(IllegalStateException.class);
        assertThat(events).containsExactly("start 1-0", "settle 1-0 as " + BatchCall.ALONE, "start 3-0",
                "settle 3-0 as " + BatchCall.NEW, "release 3-0 as " + BatchCall.BESIDE,
                "settle 2-0 as " + BatchCall.NEW);
    }

    @Test
    void startingDoesNothingWhenTheWholeCallStartedAtOnce() {
        call.starting(deliveries.get(0));
        call.starting(deliveries.get(0));
        call.settleRest(null);
        assertThat(settled).containsExactly("1-0:ok", "2-0:ok", "3-0:ok");
    }
}
