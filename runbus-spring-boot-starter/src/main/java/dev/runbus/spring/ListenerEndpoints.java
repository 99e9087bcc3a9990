package dev.runbus.spring;

import dev.runbus.SubscribeOptions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.springframework.core.env.Environment;

/** Turns the found listener methods into endpoints: placeholders resolved, defaults from the properties. */
final class ListenerEndpoints {

    private final RunbusProperties properties;
    private final Environment env;
    private final PayloadJson json;
    private final String consumer;

    ListenerEndpoints(RunbusProperties properties, Environment env, PayloadJson json, String consumer) {
        this.properties = properties;
        this.env = env;
        this.json = json;
        this.consumer = consumer;
    }

    List<ListenerEndpoint> of(List<ListenerMethods.Found> methods) {
        List<ListenerEndpoint> endpoints = new ArrayList<>();
        // A bus takes one subscription per consumer name in a group: a second method on the same group gets a
        // name of its own (stable, since methods are found in the same order on every start).
        Map<String, Integer> perGroup = new HashMap<>();
        for (ListenerMethods.Found f : methods) {
            RunbusListener a = f.annotation();
            String topic = resolve(a.topic());
            String group = resolve(a.group());
            int n = perGroup.merge(topic + "\n" + group, 1, Integer::sum);
            String name = n == 1 ? consumer : consumer + "-" + n;
            ListenerMethodHandler handler = new ListenerMethodHandler(f.bean(), f.method(),
                    ListenerArgument.of(f.method(), json));
            endpoints.add(new ListenerEndpoint(topic, group, name, handler, options(a)));
        }
        return endpoints;
    }

    private SubscribeOptions options(RunbusListener a) {
        SubscribeOptions.Builder b = SubscribeOptionsFactory.of(properties.getListener());
        String concurrency = resolve(a.concurrency());
        if (!concurrency.isEmpty()) {
            b.concurrency(Integer.parseInt(concurrency));
        }
        String maxDeliveries = resolve(a.maxDeliveries());
        if (!maxDeliveries.isEmpty()) {
            b.maxDeliveries(Integer.parseInt(maxDeliveries));
        }
        String ordered = resolve(a.ordered());
        if (!ordered.isEmpty()) {
            b.ordered(Boolean.parseBoolean(ordered));
        }
        return b.build();
    }

    private String resolve(String value) {
        return env.resolveRequiredPlaceholders(value).trim();
    }
}
