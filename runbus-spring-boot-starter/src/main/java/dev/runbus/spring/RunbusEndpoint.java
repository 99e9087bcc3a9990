package dev.runbus.spring;

import dev.runbus.Bus;
import dev.runbus.Inspector;
import dev.runbus.Subscription;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * {@code /actuator/runbus}: the inspector's view of the topics this application consumes (streams, groups,
 * consumers, dead-letter counts), and {@code /actuator/runbus/{topic}} for any topic. Read-only: replaying or
 * purging dead letters is for the {@code runbus} command, behind its own authentication.
 */
@Endpoint(id = "runbus")
public class RunbusEndpoint {

    private final Bus bus;
    private final RunbusListenerContainer listeners;

    public RunbusEndpoint(Bus bus, RunbusListenerContainer listeners) {
        this.bus = bus;
        this.listeners = listeners;
    }

    @ReadOperation
    public Map<String, Object> view() {
        Map<String, Object> topics = new LinkedHashMap<>();
        for (Subscription s : listeners.subscriptions()) {
            topics.computeIfAbsent(s.topic(), this::topic);
        }
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("listening", listeners.isRunning());
        view.put("topics", topics);
        return view;
    }

    @ReadOperation
    public Map<String, Object> topic(@Selector String topic) {
        Inspector inspector = bus.inspector();
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("stream", inspector.stream(topic).orElse(null));
        List<Inspector.GroupInfo> groups = inspector.groups(topic);
        Map<String, Object> g = new LinkedHashMap<>();
        for (Inspector.GroupInfo group : groups) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("group", group);
            one.put("consumers", inspector.consumers(topic, group.name()));
            g.put(group.name(), one);
        }
        t.put("groups", g);
        t.put("deadLetters", bus.deadLetters().count(topic));
        return t;
    }
}
