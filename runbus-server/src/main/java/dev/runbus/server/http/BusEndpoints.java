package dev.runbus.server.http;

import dev.runbus.Bus;
import dev.runbus.DeadLetter;
import dev.runbus.DeadLetterAlreadyReplayedException;
import dev.runbus.Inspector;
import dev.runbus.NoSuchDeadLetterException;
import dev.runbus.Scheduled;
import dev.runbus.runs.IllegalRunTransitionException;
import dev.runbus.runs.Run;
import dev.runbus.runs.RunNotFoundException;
import dev.runbus.runs.Runs;
import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import dev.runbus.server.Views;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Dead letters, scheduled entries, streams and partitions: the bus as operators see it.
 *
 * <p>One request reads a bounded amount: a listing across partitions reads up to {@code limit} entries from each
 * partition to merge them, so its page is at most {@value Inputs#MAX_ENTRIES_READ} / partitions entries (and at least
 * one); a longer listing is taken page by page with the {@code next_cursor} each page returns.
 */
final class BusEndpoints {

    /** Topics on one page of {@code /v1/streams}: each costs a few calls per partition and group. */
    static final int MAX_STREAMS_PAGE = 100;
    private static final int DEFAULT_STREAMS_PAGE = 50;

    private final Runs runs;
    private final Bus bus;
    private final Settings settings;

    BusEndpoints(Runs runs, Bus bus, Settings settings) {
        this.runs = runs;
        this.bus = bus;
        this.settings = settings;
    }

    private String topic(Context ctx) {
        String t = ctx.queryParam("topic");
        return t == null ? settings.get(Setting.TOPIC) : Inputs.name(t, "topic", true);
    }

    /**
     * A page of the topic's dead letters, oldest first, continuing after {@code cursor} (or, as before cursors,
     * after the id {@code after}); {@code next_cursor} continues it, null once a page comes out short.
     */
    void deadLetters(Context ctx) {
        String topic = topic(ctx);
        int limit = Inputs.pageOf(Inputs.limit(ctx.queryParam("limit"), "limit", 100), partitions(topic));
        String after = after(ctx, "dead-letters");
        if (after != null) {
            Inputs.streamId(after, ctx.queryParam("cursor") != null ? "cursor" : "after");
        }
        List<Map<String, Object>> out = new ArrayList<>();
        String last = null;
        for (DeadLetter d : bus.deadLetters().list(topic, after, limit)) {
            out.add(Views.deadLetter(d));
            last = d.id();
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("topic", topic);
        body.put("dead_letters", out);
        body.put("limit", limit);
        body.put("next_cursor", out.size() == limit ? Cursor.of("dead-letters", last) : null);
        ctx.json(body);
    }

    /** The position to list after: the {@code cursor} of {@code listing}, or the plain {@code after}; not both. */
    private static String after(Context ctx, String listing) {
        String cursor = ctx.queryParam("cursor");
        String after = ctx.queryParam("after");
        if (cursor != null && after != null) {
            throw ApiError.badRequest("give cursor or after, not both", "cursor");
        }
        return cursor != null ? Cursor.position(cursor, listing) : after;
    }

    /** The topic's partition count as recorded in Redis, which dead letters and scheduled entries both go by. */
    private int partitions(String topic) {
        return bus.deadLetters().partitions(topic);
    }

    /**
     * A dead letter of a run replays the run (PostgreSQL first, then the dead letter; undone if the second step
     * fails, see {@link Runs#replay}); any other goes back to its stream.
     */
    void replay(Context ctx) {
        String topic = topic(ctx);
        String id = Inputs.streamId(ctx.pathParam("id"), "id");
        DeadLetter dl = bus.deadLetters().get(topic, id)
                .orElseThrow(() -> ApiError.notFound("no dead letter " + id + " in topic " + topic));
        try {
            Optional<UUID> runId = runs.runOf(dl);
            if (runId.isPresent()) {
                if (dl.replayedAs().isPresent()) {
                    throw new ApiError(409, "dead letter " + id + " was already replayed as " + dl.replayedAs().get(),
                            null);
                }
                Optional<String> current = runs.get(runId.get()).flatMap(Run::deadLetterId);
                if (current.isPresent() && !current.get().equals(id)) {
                    throw new ApiError(409, "dead letter " + id + " is not the current one of run " + runId.get()
                            + " (" + current.get() + "): replay that one", null);
                }
                runs.replay(runId.get());
                ctx.status(202).json(Map.of("dead_letter_id", id, "run_id", runId.get().toString(), "status", "pending"));
            } else {
                String streamId = bus.deadLetters().replay(topic, id);
                ctx.status(202).json(Map.of("dead_letter_id", id, "stream_id", streamId));
            }
        } catch (DeadLetterAlreadyReplayedException | IllegalRunTransitionException e) {
            throw new ApiError(409, e.getMessage(), null);
        } catch (NoSuchDeadLetterException | RunNotFoundException e) {
            throw ApiError.notFound(e.getMessage());
        }
    }

    /**
     * Deletes one dead letter (204; 404 when there is none). A run's dead letter goes without changing the run:
     * it stays failed, and can no longer be replayed through the dead letter.
     */
    void purge(Context ctx) {
        String topic = topic(ctx);
        String id = Inputs.streamId(ctx.pathParam("id"), "id");
        if (!bus.deadLetters().purge(topic, id)) {
            throw ApiError.notFound("no dead letter " + id + " in topic " + topic);
        }
        ctx.status(204);
    }

    /** The topic's scheduled entries, soonest first, and how many there are in all. */
    void scheduled(Context ctx) {
        String topic = topic(ctx);
        int limit = Inputs.pageOf(Inputs.limit(ctx.queryParam("limit"), "limit", 20), partitions(topic));
        List<Map<String, Object>> entries = new ArrayList<>();
        for (Scheduled.ScheduledEntry e : bus.scheduled().list(topic, limit)) {
            entries.add(Views.scheduled(e));
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("topic", topic);
        out.put("count", bus.scheduled().count(topic));
        out.put("limit", limit);
        out.put("entries", entries);
        ctx.json(out);
    }

    void cancelScheduled(Context ctx) {
        String topic = topic(ctx);
        String id = Inputs.scheduledId(ctx.pathParam("id"), "id");
        if (!bus.scheduled().cancel(topic, id)) {
            throw ApiError.notFound("no scheduled entry " + id + " on " + topic);
        }
        ctx.status(204);
    }

    /** A page of the streams, by topic name, after {@code cursor}; {@code next_cursor} continues it. */
    void streams(Context ctx) {
        int limit = Math.min(MAX_STREAMS_PAGE, Inputs.limit(ctx.queryParam("limit"), "limit", DEFAULT_STREAMS_PAGE));
        String after = Cursor.position(ctx.queryParam("cursor"), "streams");
        if (after != null) {
            Inputs.name(after, "cursor", true);
        }
        List<Map<String, Object>> out = new ArrayList<>();
        String last = null;
        for (Inspector.StreamInfo s : bus.inspector().streams(after, limit)) {
            last = s.topic();
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("topic", s.topic());
            m.put("length", s.length());
            m.put("dead_letters", s.deadLetters());
            m.put("scheduled", bus.scheduled().count(s.topic()));
            List<Map<String, Object>> groups = new ArrayList<>();
            for (Inspector.GroupInfo g : bus.inspector().groups(s.topic())) {
                Map<String, Object> gm = new LinkedHashMap<>();
                gm.put("name", g.name());
                gm.put("pending", g.pending());
                gm.put("lag", g.lag());
                gm.put("last_delivered_id", g.lastDeliveredId());
                List<Map<String, Object>> consumers = new ArrayList<>();
                for (Inspector.ConsumerInfo c : bus.inspector().consumers(s.topic(), g.name())) {
                    consumers.add(Map.of("name", c.name(), "pending", c.pending(), "idle_ms", c.idleMillis(),
                            "alive", c.alive()));
                }
                gm.put("consumers", consumers);
                groups.add(gm);
            }
            m.put("groups", groups);
            out.add(m);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("streams", out);
        body.put("limit", limit);
        body.put("next_cursor", out.size() == limit ? Cursor.of("streams", last) : null);
        ctx.json(body);
    }

    /** The topic's partitions as {@code group} (default: the workers' group) sees them: a JSON array. */
    void partitions(Context ctx) {
        String topic = Inputs.name(ctx.pathParam("topic"), "topic", true);
        String g = ctx.queryParam("group");
        String group = g == null ? settings.get(Setting.GROUP) : Inputs.name(g, "group", false);
        List<Map<String, Object>> out = new ArrayList<>();
        for (Inspector.PartitionInfo p : bus.inspector().partitions(topic, group)) {
            out.add(Views.partition(p));
        }
        ctx.json(out);
    }
}
