package dev.runbus.server.web;

import dev.runbus.Bus;
import dev.runbus.DeadLetter;
import dev.runbus.Inspector;
import dev.runbus.runs.Runs;
import dev.runbus.server.http.Inputs;
import io.javalin.http.Context;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * {@code /dead-letters?topic=&after=}: a topic's dead letters, oldest first, a page at a time, each with its reason,
 * deliveries, original id and fields, and, for a caller with {@code admin}, replay and purge (one, or a selection).
 * Those buttons call {@code POST /v1/dead-letters/{id}/replay} and {@code DELETE /v1/dead-letters/{id}}.
 */
final class DeadLetterPage {

    /** Dead letters a page shows; fewer on a topic of many partitions ({@link Inputs#pageOf}). */
    static final int PAGE = 50;
    /** Payload shown per dead letter; the rest is cut, as a page of fifty must stay readable. */
    static final int PAYLOAD_SHOWN = 2_000;

    private final Bus bus;
    private final Layout layout;
    private final String runsTopic;

    DeadLetterPage(Bus bus, Layout layout, String runsTopic) {
        this.bus = bus;
        this.layout = layout;
        this.runsTopic = runsTopic;
    }

    void show(Context ctx) {
        List<Inspector.StreamInfo> topics = layout.topics();
        String topic = chosenTopic(ctx.queryParam("topic"), topics, runsTopic);
        String after = ctx.queryParam("after");
        if (after != null) {
            Inputs.streamId(after, "after");
        }
        Map<String, Object> m = layout.model(ctx, "dead_letters", "Dead letters", topics);
        m.put("topic", topic);
        m.put("topic_q", Links.encode(topic));
        m.put("topics", topicChoices(topics, topic));
        m.put("count", bus.deadLetters().count(topic));
        // Across partitions a page reads up to itself from each: the API's bound keeps that within 1,000 entries.
        int page = Inputs.pageOf(PAGE, bus.deadLetters().partitions(topic));
        List<Map<String, Object>> rows = new ArrayList<>();
        String last = null;
        for (DeadLetter d : bus.deadLetters().list(topic, after, page)) {
            rows.add(row(d, topic.equals(runsTopic)));
            last = d.id();
        }
        m.put("dead_letters", rows);
        m.put("none", rows.isEmpty());
        if (rows.size() == page) {
            m.put("next", "/dead-letters?topic=" + Links.encode(topic) + "&after=" + Links.encode(last));
        }
        layout.render(ctx, "dead-letters", m);
    }

    private static Map<String, Object> row(DeadLetter d, boolean ofRuns) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("id", d.id());
        r.put("original_id", d.originalStreamId());
        r.put("group", d.group());
        r.put("consumer", d.consumer());
        r.put("deliveries", d.deliveries());
        r.put("reason", d.reason());
        r.put("dead_at", Format.time(d.deadAt()));
        r.put("replayed_as", d.replayedAs().orElse(null));
        r.put("replayable", d.replayedAs().isEmpty());
        Optional<UUID> run = ofRuns ? Runs.runIdOf(d.message()) : Optional.empty();
        run.ifPresent(id -> r.put("run_id", id.toString()));
        List<Map<String, Object>> fields = new ArrayList<>();
        fields.add(Map.of("name", "message id", "value", String.valueOf(d.message().id())));
        fields.add(Map.of("name", "type", "value", String.valueOf(d.message().type())));
        if (d.message().key() != null) {
            fields.add(Map.of("name", "key", "value", d.message().key()));
        }
        d.message().headers().forEach((k, v) -> fields.add(Map.of("name", "header " + k, "value", v)));
        String payload = new String(d.message().payload(), StandardCharsets.UTF_8);
        fields.add(Map.of("name", "payload", "value", payload.length() > PAYLOAD_SHOWN
                ? payload.substring(0, PAYLOAD_SHOWN) + "… (" + d.message().payload().length + " bytes)" : payload));
        r.put("fields", fields);
        return r;
    }

    /** The topic asked for (checked), else the first with dead letters, else the runs topic. */
    static String chosenTopic(String asked, List<Inspector.StreamInfo> topics, String fallback) {
        if (asked != null && !asked.isEmpty()) {
            return Inputs.name(asked, "topic", true);
        }
        return topics.stream().filter(t -> t.deadLetters() > 0).map(Inspector.StreamInfo::topic).findFirst()
                .orElse(fallback);
    }

    static List<Map<String, Object>> topicChoices(List<Inspector.StreamInfo> topics, String chosen) {
        List<Map<String, Object>> out = new ArrayList<>();
        boolean listed = false;
        for (Inspector.StreamInfo t : topics) {
            out.add(Map.of("name", t.topic(), "selected", t.topic().equals(chosen)));
            listed |= t.topic().equals(chosen);
        }
        if (!listed) {
            out.add(0, Map.of("name", chosen, "selected", true));
        }
        return out;
    }
}
