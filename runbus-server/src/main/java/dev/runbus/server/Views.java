package dev.runbus.server;

import dev.runbus.DeadLetter;
import java.util.LinkedHashMap;
import java.util.Map;

/** The JSON shapes shared by the HTTP API and the CLI's --json output. */
public final class Views {

    private Views() {
    }

    public static Map<String, Object> deadLetter(DeadLetter d) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", d.id());
        m.put("topic", d.topic());
        m.put("stream_id", d.originalStreamId());
        m.put("group", d.group());
        m.put("consumer", d.consumer());
        m.put("deliveries", d.deliveries());
        m.put("reason", d.reason());
        m.put("dead_at", d.deadAt().toString());
        m.put("message_id", d.message().id());
        m.put("message_type", d.message().type());
        m.put("replayed_as", d.replayedAs().orElse(null));
        return m;
    }
}
