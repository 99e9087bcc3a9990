package dev.runbus.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.Delivery;
import java.lang.reflect.Method;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;

/** How an annotated method becomes a subscription's endpoint: placeholders, overrides, names, parameters. */
class ListenerEndpointsTest {

    static class Listeners {
        @RunbusListener(topic = "${app.topic}", group = "billing", concurrency = "${app.threads}",
                maxDeliveries = "5", ordered = "true")
        void first(Delivery d) {
        }

        @RunbusListener(topic = "${app.topic}", group = "billing")
        void second(String payload) {
        }

        @RunbusListener(topic = "other", group = "billing")
        void twoParameters(String a, String b) {
        }
    }

    private final MockEnvironment env = new MockEnvironment().withProperty("app.topic", "orders")
            .withProperty("app.threads", "3");
    private final RunbusProperties properties = new RunbusProperties();

    @Test
    void placeholdersAndAttributesOverrideTheListenerProperties_andASecondMethodInAGroupGetsANameOfItsOwn()
            throws Exception {
        properties.getListener().setMinIdle(java.time.Duration.ofSeconds(40));
        List<ListenerEndpoint> endpoints = new ListenerEndpoints(properties, env, null, "node-1")
                .of(List.of(found("first"), found("second")));
        ListenerEndpoint first = endpoints.get(0);
        assertThat(first.topic()).isEqualTo("orders");
        assertThat(first.consumer()).isEqualTo("node-1");
        assertThat(first.options().concurrency()).isEqualTo(3);
        assertThat(first.options().maxDeliveries()).isEqualTo(5);
        assertThat(first.options().ordered()).isTrue();
        assertThat(first.options().minIdle()).isEqualTo(java.time.Duration.ofSeconds(40));
        ListenerEndpoint second = endpoints.get(1);
        assertThat(second.consumer()).isEqualTo("node-1-2");
        assertThat(second.options().concurrency()).isEqualTo(8);
        assertThat(second.options().ordered()).isFalse();
    }

    @Test
    void aMethodMustTakeOneParameter() throws Exception {
        ListenerEndpoints endpoints = new ListenerEndpoints(properties, env, null, "node-1");
        assertThatThrownBy(() -> endpoints.of(List.of(found("twoParameters"))))
                .hasMessageContaining("must take exactly one parameter");
    }

    private static ListenerMethods.Found found(String name) throws NoSuchMethodException {
        Method m = java.util.Arrays.stream(Listeners.class.getDeclaredMethods())
                .filter(x -> x.getName().equals(name)).findFirst().orElseThrow(NoSuchMethodException::new);
        return new ListenerMethods.Found(new Listeners(), m, m.getAnnotation(RunbusListener.class));
    }
}
