package dev.runbus.server.web;

import dev.runbus.Bus;
import dev.runbus.Inspector;
import dev.runbus.Scheduled;
import dev.runbus.runs.Runs;
import dev.runbus.server.http.Inputs;
import io.javalin.http.Context;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * {@code /scheduled?topic=}: a topic's delayed entries and retries waiting in its delay sets, soonest first, with
 * due time and attempts; for a caller with {@code admin}, cancel. A delayed run's trigger is cancelled as the run
 * ({@code POST /v1/runs/{id}/cancel}: the run becomes cancelled and its trigger leaves the delay set), any other
 * entry as itself ({@code DELETE /v1/scheduled/{id}}). A run's retry is cancelled as its run too: the run is between
 * attempts (one failed), so its cancel ends it at once and the retry is acked without a run when due; deleting the
 * entry alone would not stop the run, whose retry the sweeper publishes again. The row says so and links to the run.
 */
final class ScheduledPage {

    static final int SHOWN = 100;

    private final Bus bus;
    private final Layout layout;
    private final String runsTopic;

    ScheduledPage(Bus bus, Layout layout, String runsTopic) {
        this.bus = bus;
        this.layout = layout;
        this.runsTopic = runsTopic;
    }

    void show(Context ctx) {
        List<Inspector.StreamInfo> topics = layout.topics();
        String asked = ctx.queryParam("topic");
        String topic = asked == null || asked.isEmpty() ? runsTopic
                : DeadLetterPage.chosenTopic(asked, topics, runsTopic);
        Map<String, Object> m = layout.model(ctx, "scheduled", "Scheduled", topics);
        m.put("topic", topic);
        m.put("topic_q", Links.encode(topic));
        m.put("topics", DeadLetterPage.topicChoices(topics, topic));
        m.put("count", bus.scheduled().count(topic));
        long now = Instant.now().toEpochMilli();
        List<Map<String, Object>> rows = new ArrayList<>();
        int limit = Inputs.pageOf(SHOWN, bus.deadLetters().partitions(topic));
        for (Scheduled.ScheduledEntry e : bus.scheduled().list(topic, limit)) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("id", e.id());
            r.put("due_at", Format.time(e.dueAt()));
            long in = e.dueAt().toEpochMilli() - now;
            r.put("due_in", in >= 0 ? "in " + Format.age(in) : Format.age(-in) + " overdue");
            r.put("attempts", e.attempts());
            r.put("for_group", e.forGroup() == null || e.forGroup().isEmpty() ? "all groups" : e.forGroup());
            r.put("type", String.valueOf(e.message().type()));
            r.put("message_id", String.valueOf(e.message().id()));
            Optional<UUID> run = topic.equals(runsTopic) ? Runs.runIdOf(e.message())
                    : Optional.empty();
            run.ifPresent(id -> r.put("run_id", id.toString()));
            if (run.isEmpty()) {
                r.put("cancel_entry", true);
            } else {
                r.put("cancel_run", true);
                r.put("retry_of_run", e.attempts() > 0);
            }
            rows.add(r);
        }
        m.put("entries", rows);
        m.put("none", rows.isEmpty());
        layout.render(ctx, "scheduled", m);
    }
}
