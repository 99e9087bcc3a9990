package dev.runbus.server.web;

import dev.runbus.Bus;
import dev.runbus.Inspector;
import dev.runbus.server.http.ApiError;
import dev.runbus.server.http.Inputs;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code /topics/{topic}}: each group with its consumers (heartbeat, idle, pending), its partitions (owner,
 * fencing token, lease) and its oldest pending entries (owner, deliveries, idle); its flow keys (waiting, running,
 * their own limits); and what retention keeps.
 */
final class TopicPage {

    /** Pending entries shown per group, oldest first. */
    static final int PENDING_SHOWN = 50;
    /** Flow keys shown, the first by name. */
    static final int FLOW_KEYS_SHOWN = 50;

    private final Bus bus;
    private final Layout layout;

    TopicPage(Bus bus, Layout layout) {
        this.bus = bus;
        this.layout = layout;
    }

    void show(Context ctx) {
        String topic = Inputs.name(ctx.pathParam("topic"), "topic", true);
        Inspector inspector = bus.inspector();
        Inspector.StreamInfo info = inspector.stream(topic)
                .orElseThrow(() -> ApiError.notFound("no topic " + topic));
        Map<String, Object> m = layout.model(ctx, "overview", "Topic " + topic, layout.topics());
        m.put("topic", topic);
        m.put("topic_q", Links.encode(topic));
        m.put("length", info.length());
        m.put("dead_letters", info.deadLetters());
        m.put("scheduled", bus.scheduled().count(topic));
        long now = System.currentTimeMillis();
        List<Map<String, Object>> groups = new ArrayList<>();
        for (Inspector.GroupInfo g : inspector.groups(topic)) {
            Map<String, Object> gm = new LinkedHashMap<>();
            gm.put("name", g.name());
            gm.put("pending", g.pending());
            gm.put("lag", g.lag() < 0 ? "?" : Long.toString(g.lag()));
            List<Map<String, Object>> consumers = new ArrayList<>();
            for (Inspector.ConsumerInfo c : inspector.consumers(topic, g.name())) {
                Map<String, Object> cm = new LinkedHashMap<>();
                cm.put("name", c.name());
                cm.put("alive", c.alive());
                cm.put("heartbeat", c.lastHeartbeatAt() < 0 ? "none" : Format.age(now - c.lastHeartbeatAt()) + " ago");
                cm.put("idle", Format.age(c.idleMillis()));
                cm.put("pending", c.pending());
                consumers.add(cm);
            }
            gm.put("consumers", consumers);
            List<Map<String, Object>> partitions = new ArrayList<>();
            for (Inspector.PartitionInfo p : inspector.partitions(topic, g.name())) {
                Map<String, Object> pm = new LinkedHashMap<>();
                pm.put("partition", p.partition());
                pm.put("length", p.length());
                pm.put("pending", p.pending());
                pm.put("lag", p.lag() < 0 ? "?" : Long.toString(p.lag()));
                pm.put("owner", p.owner() == null ? "—" : p.owner());
                pm.put("fencing_token", p.owner() == null ? "—" : Long.toString(p.fencingToken()));
                pm.put("lease", p.owner() == null ? "—" : "held " + Format.age(p.leaseAgeMillis()) + ", expires in "
                        + Format.age(p.leaseExpiresInMillis()));
                partitions.add(pm);
            }
            gm.put("partitions", partitions);
            List<Map<String, Object>> pending = new ArrayList<>();
            for (Inspector.PendingEntry e : inspector.pending(topic, g.name(), PENDING_SHOWN)) {
                pending.add(Map.of("id", e.streamId(), "consumer", e.consumer(), "deliveries", e.deliveries(),
                        "idle", Format.age(e.idleMillis())));
            }
            gm.put("pending_entries", pending);
            gm.put("has_pending_entries", !pending.isEmpty());
            groups.add(gm);
        }
        m.put("groups", groups);
        m.put("no_groups", groups.isEmpty());
        List<Map<String, Object>> retention = new ArrayList<>();
        for (Inspector.RetentionInfo r : inspector.retention(topic)) {
            Map<String, Object> rm = new LinkedHashMap<>();
            rm.put("partition", r.partition());
            rm.put("length", r.length());
            rm.put("first_id", r.firstId() == null ? "—" : r.firstId());
            rm.put("needed_from", r.neededFrom() == null ? "—" : r.neededFrom());
            rm.put("held_by", r.heldBy() == null ? "—" : r.heldBy());
            retention.add(rm);
        }
        m.put("retention", retention);
        m.put("flow", flow(inspector, topic));
        layout.render(ctx, "topic", m);
    }

    /** The topic's flow control, or nothing when no message of it waits or holds a slot. */
    private static List<Map<String, Object>> flow(Inspector inspector, String topic) {
        Inspector.FlowInfo totals = inspector.flow(topic);
        if (totals.parked() == 0 && totals.held() == 0) {
            return List.of();
        }
        List<Map<String, Object>> keys = new ArrayList<>();
        for (Inspector.FlowKeyInfo k : inspector.flowKeys(topic, null, FLOW_KEYS_SHOWN)) {
            Map<String, Object> km = new LinkedHashMap<>();
            km.put("key", k.flowKey());
            km.put("waiting", k.waiting());
            km.put("held", k.held());
            km.put("cap", k.cap() == null ? "the group's" : k.cap() + " (own)");
            km.put("rate", k.ratePerSecond() == null ? "the group's" : k.ratePerSecond().isInfinite() ? "none (own)"
                    : String.format(java.util.Locale.ROOT, "%.3g/s, burst %s (own)", k.ratePerSecond(),
                    k.burst() == null ? "1" : k.burst().toString()));
            km.put("weight", k.weight() == null ? "1" : k.weight() + " (own)");
            keys.add(km);
        }
        Map<String, Object> flow = new LinkedHashMap<>();
        flow.put("parked", totals.parked());
        flow.put("held", totals.held());
        flow.put("throttled", totals.throttled());
        flow.put("keys", keys);
        flow.put("shown", FLOW_KEYS_SHOWN);
        flow.put("more", keys.size() == FLOW_KEYS_SHOWN);
        return List.of(flow);
    }
}
