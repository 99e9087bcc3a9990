package dev.runbus.server;

import dev.runbus.DeadLetter;
import dev.runbus.Inspector;
import dev.runbus.Scheduled;
import dev.runbus.runs.Run;
import java.util.LinkedHashMap;
import java.util.Map;

/** The JSON shapes shared by the HTTP API and the CLI's --json output. */
public final class Views {

    private Views() {
    }

    /** A run without its replies; {@code next_attempt_at} is null unless a retry of a failed attempt is due. */
    public static Map<String, Object> run(Run run) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("run_id", run.id().toString());
        m.put("status", run.status().sql());
        m.put("attempts", run.attempts());
        m.put("error", run.error().orElse(null));
        m.put("session_id", run.sessionId());
        m.put("user_id", run.userId());
        m.put("created_at", run.createdAt().toString());
        m.put("updated_at", run.updatedAt().toString());
        m.put("next_attempt_at", run.nextAttemptAt().map(Object::toString).orElse(null));
        m.put("dead_letter_id", run.deadLetterId().orElse(null));
        m.put("expires_at", run.expiresAt().map(Object::toString).orElse(null));
        m.put("timeout", run.timeout().map(Object::toString).orElse(null));
        m.put("progress", run.progress().map(p -> {
            Map<String, Object> progress = new LinkedHashMap<>();
            progress.put("percent", p.percent());
            progress.put("details", p.details());
            progress.put("at", p.at().toString());
            return progress;
        }).orElse(null));
        return m;
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

    /** One entry of a topic's delay sets; {@code for_group} is null when every group will get it. */
    public static Map<String, Object> scheduled(Scheduled.ScheduledEntry e) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", e.id());
        m.put("due_at", e.dueAt().toString());
        m.put("attempts", e.attempts());
        m.put("for_group", e.forGroup());
        m.put("message_id", e.message().id());
        m.put("type", e.message().type());
        m.put("key", e.message().key());
        return m;
    }

    /**
     * One partition of a topic as its group sees it. Lease fields are null without an owner (unordered groups
     * never have one); lag is null when Redis cannot tell.
     */
    public static Map<String, Object> partition(Inspector.PartitionInfo p) {
        boolean owned = p.owner() != null;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("partition", p.partition());
        m.put("stream", p.streamKey());
        m.put("owner", p.owner());
        m.put("fencing_token", owned ? p.fencingToken() : null);
        m.put("lease_age_ms", owned ? p.leaseAgeMillis() : null);
        m.put("lease_expires_in_ms", owned ? p.leaseExpiresInMillis() : null);
        m.put("length", p.length());
        m.put("pending", p.pending());
        m.put("lag", p.lag() < 0 ? null : p.lag());
        return m;
    }
}
