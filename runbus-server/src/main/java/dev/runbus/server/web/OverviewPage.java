package dev.runbus.server.web;

import dev.runbus.Bus;
import dev.runbus.Inspector;
import dev.runbus.runs.RunCounts;
import dev.runbus.runs.RunStatus;
import dev.runbus.runs.Runs;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code /}: every topic with its partitions, pending, lag, dead letters, scheduled entries and live consumers;
 * the totals; runs by status; and the chart of this server's publish and ack rates ({@code /dashboard/rates}).
 */
final class OverviewPage {

    private final Bus bus;
    private final Runs runs;
    private final Layout layout;
    private final RateHistory rates;

    OverviewPage(Bus bus, Runs runs, Layout layout, RateHistory rates) {
        this.bus = bus;
        this.runs = runs;
        this.layout = layout;
        this.rates = rates;
    }

    void show(Context ctx) {
        List<Inspector.StreamInfo> topics = layout.topics();
        Map<String, Object> m = layout.model(ctx, "overview", "Overview", topics);
        List<Map<String, Object>> rows = new ArrayList<>();
        long pending = 0;
        long lag = 0;
        long dead = 0;
        long scheduled = 0;
        long alive = 0;
        boolean lagUnknown = false;
        for (Inspector.StreamInfo t : topics) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("topic", t.topic());
            row.put("topic_q", Links.encode(t.topic()));
            row.put("partitions", bus.deadLetters().partitions(t.topic()));
            row.put("length", t.length());
            row.put("groups", t.groups());
            long topicPending = 0;
            long topicLag = 0;
            boolean topicLagUnknown = false;
            long topicAlive = 0;
            for (Inspector.GroupInfo g : bus.inspector().groups(t.topic())) {
                topicPending += g.pending();
                if (g.lag() < 0) {
                    topicLagUnknown = true;
                } else {
                    topicLag += g.lag();
                }
                topicAlive += bus.inspector().consumers(t.topic(), g.name()).stream()
                        .filter(Inspector.ConsumerInfo::alive).count();
            }
            long topicScheduled = bus.scheduled().count(t.topic());
            row.put("pending", topicPending);
            row.put("lag", topicLagUnknown ? "?" : Long.toString(topicLag));
            row.put("dead_letters", t.deadLetters());
            row.put("has_dead_letters", t.deadLetters() > 0);
            row.put("scheduled", topicScheduled);
            row.put("consumers_alive", topicAlive);
            row.put("no_consumer", t.groups() > 0 && topicAlive == 0);
            rows.add(row);
            pending += topicPending;
            lag += topicLag;
            lagUnknown |= topicLagUnknown;
            dead += t.deadLetters();
            scheduled += topicScheduled;
            alive += topicAlive;
        }
        m.put("topics", rows);
        m.put("no_topics", rows.isEmpty());
        m.put("total_pending", pending);
        m.put("total_lag", lagUnknown ? lag + "+" : Long.toString(lag));
        m.put("total_dead_letters", dead);
        m.put("total_scheduled", scheduled);
        m.put("total_consumers_alive", alive);
        RunCounts counts = runs.counts();
        List<Map<String, Object>> byStatus = new ArrayList<>();
        for (Map.Entry<RunStatus, Long> e : counts.asMap().entrySet()) {
            byStatus.add(Map.of("status", e.getKey().sql(), "count", e.getValue()));
        }
        m.put("runs_by_status", byStatus);
        m.put("failed_without_dead_letter", counts.failedWithoutDeadLetter());
        layout.render(ctx, "overview", m);
    }

    /** The chart's data, as JSON. */
    void rates(Context ctx) {
        ctx.header("Cache-Control", "no-store");
        ctx.json(rates.series());
    }
}
