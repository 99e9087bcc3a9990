package dev.runbus.internal.flow;

import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.Replies;
import dev.runbus.internal.scripts.LuaScript;
import dev.runbus.internal.scripts.ScriptCalls;
import dev.runbus.Message;
import dev.runbus.internal.redis.WireFormat;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Per-key concurrency caps of one partition of a topic: the calls of {@code flow.lua} (docs/flow-control-design.md,
 * "The events"). An entry is parked outside the stream until its flow key has a free slot, then added to the stream
 * with a hold, a lease on the slot that its holder renews and that a reap removes once it expired; a key's count is
 * its number of holds, never a counter. Publishers park with it; a subscription with a flow cap configures, confirms,
 * renews, releases and reaps with it ({@code FlowControl} in the consumer).
 *
 * <p>Each call has a waiting form, on the sync face of a connection, and a form that does not wait, on its async
 * face; an instance built without one of the faces has only the other's calls.
 */
public final class FlowCaps {

    /** Flow keys are at most this many UTF-8 bytes: a bound on what a publisher may make Redis store per entry. */
    public static final int MAX_KEY_BYTES = Message.MAX_FLOW_KEY_BYTES;

    private static final LuaScript FLOW = LuaScript.load("flow");

    /**
     * The largest weight of a flow key, and the inverse of the smallest: a share a million times another's is already
     * all of it, and the tags that order the keys' turns stay within what a double tells apart.
     */
    public static final double MAX_WEIGHT = 1_000_000;
    /** The smallest weight of a flow key (see {@link #MAX_WEIGHT}). */
    public static final double MIN_WEIGHT = 1 / MAX_WEIGHT;

    /**
     * An admitted entry's hold: its flow key and its id in the partition's stream. Given back by a handler under fair
     * shares by handler time ({@link #releaseTimedAsync}), it also carries how long the handler ran and what its
     * admission charged (its {@code flow_charge} field), both in ms; -1 when not measured, or not charged.
     */
    public record Hold(String flowKey, String streamId, double handlerMillis, double chargedMillis) {

        public Hold(String flowKey, String streamId) {
            this(flowKey, streamId, -1, -1);
        }
    }

    /**
     * An entry about to start, for {@link #confirm}: its hold, and the handler starts recorded on it before this
     * delivery (a taken-over entry's), which an entry parked again keeps in its {@code attempts} field.
     */
    public record Claim(String flowKey, String streamId, long starts) {
    }

    /** What a park did: the parked entry's id in the parked set, and the stream ids of the entries it admitted. */
    public record Parked(String parkedId, List<String> admitted) {
    }

    /**
     * What a confirm found: the entries that may start, and those that must not: parked again, or no longer in the
     * stream (trimmed while pending; acked).
     */
    public record Confirmed(List<String> confirmed, List<String> parkedAgain) {
    }

    /**
     * What a release or a tick did: the entries it admitted, and, for the partition's ticker, how long until the next
     * key waiting for its rate is due (-1 for anyone else, or when no key waits).
     */
    public record Admitted(long nextTickMillis, List<String> admitted) {
    }

    /** What a reap did: the expired holds it removed, and the stream ids of the entries admitted in their place. */
    public record Reaped(long holds, List<String> admitted) {
    }

    /**
     * How many flow keys one {@link #configure} call serves; it calls again until every key was served. At least 2:
     * the script answers "" for "done", and the key "" sorts first, so it is then never the last one served.
     */
    static final int KEYS_PER_CONFIGURE_CALL = 100;

    private final ScriptCalls calls;
    private final RedisClusterCommands<String, byte[]> redis;
    private final RedisClusterAsyncCommands<String, byte[]> async;
    private final String[] keys;

    /**
     * For partition {@code name}, on the two faces of a connection ({@code redis} for the calls that wait,
     * {@code async} for the others; either may be null when its calls are not used). Publishers and subscribers
     * alike: the caps and the lease are in Redis.
     */
    public FlowCaps(ScriptCalls calls, RedisClusterCommands<String, byte[]> redis,
                    RedisClusterAsyncCommands<String, byte[]> async, Keys keys, String name) {
        this.calls = calls;
        this.redis = redis;
        this.async = async;
        this.keys = keys.flow(name);
    }

    /**
     * The subscription's side, at subscribe: {@code defaultCap} slots per flow key unless {@link #cap} set another,
     * each hold lasting {@code lease} unless renewed (the subscription's {@code minIdle}, so that a hold and a claim
     * end alike), released by the acks of {@code group}. Until a partition is configured every cap is 0: what is
     * published there waits for a subscriber. Admits what the parked entries' keys have room for; returns their
     * stream ids.
     *
     * @throws IllegalStateException when another group configured the partition and still exists: one group per
     *                               flow-controlled topic (whose acks would release a hold of two groups?)
     */
    public List<String> configure(String group, int defaultCap, Duration lease) {
        return configure(group, defaultCap, lease, null);
    }

    /**
     * {@link #configure(String, int, Duration)} with a rate limit per flow key ({@code rate}; null for none): the
     * entries of one key are admitted at most at that rate in the long run, with up to its burst at once after an
     * idle time (GCRA on the Redis clock).
     */
    public List<String> configure(String group, int defaultCap, Duration lease, dev.runbus.FlowRate rate) {
        return configure(group, defaultCap, lease, rate, -1);
    }

    /**
     * {@link #configure(String, int, Duration, dev.runbus.FlowRate)} with a cap for the whole topic ({@code topicCap};
     * -1 for none): at most that many holds of all keys together, a slot that frees going to the waiting key whose
     * turn it is (start-time fair queueing, by {@link #weight}).
     */
    public List<String> configure(String group, int defaultCap, Duration lease, dev.runbus.FlowRate rate,
                                  int topicCap) {
        return configure(group, defaultCap, lease, rate, topicCap, null, null);
    }

    /**
     * {@link #configure(String, int, Duration, dev.runbus.FlowRate, int)} with how long waiting is worth one step of
     * a message's priority ({@code priorityAging}; null for the default, a minute): a key's next entry is its most
     * urgent waiting one unless a less urgent one waited longer than the steps between them are worth) and a rate
     * for the whole topic ({@code topicRate}; null for none: every key's admissions count, the keys taking turns as
     * under a topic cap).
     */
    public List<String> configure(String group, int defaultCap, Duration lease, dev.runbus.FlowRate rate,
                                  int topicCap, Duration priorityAging, dev.runbus.FlowRate topicRate) {
        return configure(group, defaultCap, lease, rate, topicCap, priorityAging, topicRate, false);
    }

    /**
     * {@link #configure(String, int, Duration, dev.runbus.FlowRate, int, Duration, dev.runbus.FlowRate)}, with the
     * fair shares between keys counted in handler time ({@code byHandlerTime}; else by declared cost): an admission
     * charges its key's recent mean handler time and a {@link #releaseTimedAsync} corrects it by the time measured.
     */
    public List<String> configure(String group, int defaultCap, Duration lease, dev.runbus.FlowRate rate,
                                  int topicCap, Duration priorityAging, dev.runbus.FlowRate topicRate,
                                  boolean byHandlerTime) {
        return configure(group, defaultCap, lease, rate, topicCap, priorityAging, topicRate, byHandlerTime, false);
    }

    /**
     * {@link #configure(String, int, Duration, dev.runbus.FlowRate, int, Duration, dev.runbus.FlowRate, boolean)} for
     * an ordered group when {@code unheld}: its entries are let in by their rates with no hold (the partition's owner
     * runs them one at a time, and nothing confirms, renews or releases a hold), so {@code defaultCap} should be
     * unlimited and there is no topic cap.
     */
    public List<String> configure(String group, int defaultCap, Duration lease, dev.runbus.FlowRate rate,
                                  int topicCap, Duration priorityAging, dev.runbus.FlowRate topicRate,
                                  boolean byHandlerTime, boolean unheld) {
        if (priorityAging != null && priorityAging.toMillis() <= 0) {
            throw new IllegalArgumentException("a priority's aging must be at least 1 ms, not " + priorityAging);
        }
        if (topicCap < -1) {
            throw new IllegalArgumentException("a topic's cap must be 0 or more (or -1 for none), not " + topicCap);
        }
        if (defaultCap < 0) {
            throw new IllegalArgumentException("a flow key's cap must be 0 or more, not " + defaultCap);
        }
        if (lease.toMillis() <= 0) {
            throw new IllegalArgumentException("a hold's lease must be at least 1 ms, not " + lease);
        }
        List<String> admitted = new ArrayList<>();
        String last = "";
        do {
            List<String> reply;
            try {
                reply = Replies.ids(call(List.of("configure", defaultCap, lease.toMillis(), last,
                        KEYS_PER_CONFIGURE_CALL, group, rate == null ? "" : rate.intervalMillis(),
                        rate == null ? 1 : rate.burst(), topicCap < 0 ? "" : topicCap,
                        priorityAging == null ? "" : priorityAging.toMillis(),
                        topicRate == null ? "" : topicRate.intervalMillis(),
                        topicRate == null ? 1 : topicRate.burst(), byHandlerTime ? "time" : "",
                        unheld ? "unheld" : "")));
            } catch (RuntimeException e) {
                String owner = flowGroupIn(e);
                if (owner == null) {
                    throw e;
                }
                throw new IllegalStateException("group '" + group + "' cannot set a flow cap on " + keys[0]
                        + ": group '" + owner + "' has one there. One group per flow-controlled topic: its acks "
                        + "release the slots. Delete group '" + owner + "' first, or subscribe without flowCap");
            }
            last = reply.get(0);
            admitted.addAll(reply.subList(1, reply.size()));
        } while (!last.isEmpty());
        return admitted;
    }

    /** The group named by flow.lua's FLOWGROUP error in {@code e}'s causes, or null. */
    private static String flowGroupIn(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = String.valueOf(t.getMessage());
            int at = m.indexOf("FLOWGROUP ");
            if (at >= 0) {
                return m.substring(at + "FLOWGROUP ".length()).split("\\s", 2)[0]; // names hold no whitespace
            }
        }
        return null;
    }

    /**
     * Checks a flow key: at most {@value #MAX_KEY_BYTES} UTF-8 bytes and no NUL (the script separates a key from the
     * rest of a member with it). Empty is the key of entries published without one.
     */
    public static String checkKey(String flowKey) {
        if (flowKey == null) {
            throw new IllegalArgumentException("a flow key must not be null (\"\" is the key of entries without one)");
        }
        return flowKey.isEmpty() ? flowKey : Message.checkFlowKey(flowKey);
    }

    /** Parks an entry of {@code flowKey} with its fields, and admits what its key has room for. */
    public Parked park(String flowKey, Map<String, byte[]> fields) {
        return parked(call(parkArgs(flowKey, fields)));
    }

    /** {@link #park}, without waiting. */
    public CompletableFuture<Parked> parkAsync(String flowKey, Map<String, byte[]> fields) {
        return callAsync(parkArgs(flowKey, fields)).thenApply(FlowCaps::parked);
    }

    /**
     * {@link #parkAsync(String, Map)} whose {@code XADD} carries {@code IDMP} with {@code idmp} (producer id, number;
     * Redis 8.6): the same call run again (re-sent after its reply was lost) parks nothing more and answers the first
     * park's id. A server without it refuses the call.
     */
    public CompletableFuture<Parked> parkAsync(String flowKey, Map<String, byte[]> fields, String[] idmp) {
        List<Object> args = new ArrayList<>(List.of("park_idmp", idmp[0], idmp[1]));
        List<Object> rest = parkArgs(flowKey, fields);
        args.addAll(rest.subList(1, rest.size()));
        return callAsync(args).thenApply(FlowCaps::parked);
    }

    private static List<Object> parkArgs(String flowKey, Map<String, byte[]> fields) {
        checkKey(flowKey);
        List<Object> args = new ArrayList<>(List.of("park", flowKey));
        fields.forEach((f, v) -> {
            if (f.equals(WireFormat.FLOW_KEY) || f.equals(WireFormat.FLOW_SEQ) || f.equals(WireFormat.FLOW_PARKED)
                    || f.equals(WireFormat.FLOW_CHARGE)) {
                throw new IllegalArgumentException("field " + f + " is the flow control's own");
            }
            args.add(f);
            args.add(v);
        });
        return args;
    }

    private static Parked parked(Object replyObject) {
        List<String> reply = Replies.ids(replyObject);
        return new Parked(reply.get(0), reply.subList(1, reply.size()));
    }

    /** Gives up holds (their entries acked, dead-lettered or left for a retry); returns what it admitted. */
    public List<String> release(List<Hold> holds) {
        return admitted(call(withHolds(List.of("release", "", 0), holds))).admitted();
    }

    /**
     * {@link #release}, without waiting, by consumer {@code caller}, which becomes the partition's ticker for
     * {@code tickerLease} when nobody is (see {@link #tickAsync}).
     */
    public CompletableFuture<Admitted> releaseAsync(String caller, Duration tickerLease, List<Hold> holds) {
        return callAsync(withHolds(List.of("release", caller, tickerLease.toMillis()), holds))
                .thenApply(FlowCaps::admitted);
    }

    /**
     * {@link #releaseAsync}, with each hold's handler time and admission charge: under fair shares by handler time, a
     * key's finish tag is corrected by what its handlers took beyond (or short of) what their admissions charged, so
     * that its next turns come later (or sooner). A hold without a measured time is given back as by
     * {@link #releaseAsync}.
     */
    public CompletableFuture<Admitted> releaseTimedAsync(String caller, Duration tickerLease, List<Hold> holds) {
        List<Object> args = new ArrayList<>(List.of("release_timed", caller, tickerLease.toMillis()));
        for (Hold h : holds) {
            args.add(h.flowKey());
            args.add(h.streamId());
            args.add(h.handlerMillis() < 0 ? "" : millis(h.handlerMillis()));
            args.add(h.chargedMillis() < 0 ? "" : millis(h.chargedMillis()));
        }
        return callAsync(args).thenApply(FlowCaps::admitted);
    }

    /** A time in ms as the script reads it: decimal, to the microsecond. */
    private static String millis(double ms) {
        return String.format(java.util.Locale.ROOT, "%.3f", ms);
    }

    /**
     * Admits up to {@code maxKeys} keys whose rate limit held their entries back and that are due now. The reply tells
     * {@code caller} when to tick again if it is the partition's ticker: the consumer that holds the role (a lease of
     * {@code tickerLease}, taken when nobody holds it, renewed by its calls) schedules the ticks that keep a key at
     * its rate; the others tick at their own pace only.
     */
    public Admitted tick(String caller, Duration tickerLease, int maxKeys) {
        return admitted(call(List.of("tick", caller, tickerLease.toMillis(), maxKeys)));
    }

    /** {@link #tick}, without waiting. */
    public CompletableFuture<Admitted> tickAsync(String caller, Duration tickerLease, int maxKeys) {
        return callAsync(List.of("tick", caller, tickerLease.toMillis(), maxKeys)).thenApply(FlowCaps::admitted);
    }

    private static Admitted admitted(Object replyObject) {
        List<String> reply = Replies.ids(replyObject);
        return new Admitted(Long.parseLong(reply.get(0)), reply.subList(1, reply.size()));
    }

    /** Renews holds of running entries; returns the stream ids whose hold a reap had removed (lost). */
    public List<String> renew(List<Hold> holds) {
        return Replies.ids(call(withHolds(List.of("renew"), holds)));
    }

    /** {@link #renew}, without waiting. */
    public CompletableFuture<List<String>> renewAsync(List<Hold> holds) {
        return callAsync(withHolds(List.of("renew"), holds)).thenApply(Replies::ids);
    }

    /**
     * Right before entries of {@code group} start: a held entry's hold is renewed; one whose hold was reaped takes a
     * slot if its key has room, and is otherwise parked again in its place and must not start.
     */
    public Confirmed confirm(String group, List<Claim> claims) {
        return confirmed(call(confirmArgs(group, claims)));
    }

    /** {@link #confirm}, without waiting. */
    public CompletableFuture<Confirmed> confirmAsync(String group, List<Claim> claims) {
        return callAsync(confirmArgs(group, claims)).thenApply(FlowCaps::confirmed);
    }

    private static List<Object> confirmArgs(String group, List<Claim> claims) {
        List<Object> args = new ArrayList<>(List.of("confirm", group));
        for (Claim c : claims) {
            args.add(c.flowKey());
            args.add(c.streamId());
            args.add(Math.max(0, c.starts()));
        }
        return args;
    }

    private static Confirmed confirmed(Object replyObject) {
        List<Object> reply = Replies.list(replyObject);
        return new Confirmed(Replies.ids(reply.get(0)), Replies.ids(reply.get(1)));
    }

    /** Removes at most {@code max} expired holds and admits in their place. */
    public Reaped reap(int max) {
        return reaped(call(List.of("reap", max)));
    }

    /** {@link #reap}, without waiting. */
    public CompletableFuture<Reaped> reapAsync(int max) {
        return callAsync(List.of("reap", max)).thenApply(FlowCaps::reaped);
    }

    private static Reaped reaped(Object replyObject) {
        List<String> reply = Replies.ids(replyObject);
        return new Reaped(Long.parseLong(reply.get(0)), reply.subList(1, reply.size()));
    }

    /** Sets {@code flowKey}'s cap ({@code null}: back to the default); returns what a raised cap admitted. */
    public List<String> cap(String flowKey, Integer cap) {
        checkKey(flowKey);
        if (cap != null && cap < 0) {
            throw new IllegalArgumentException("a flow key's cap must be 0 or more, not " + cap);
        }
        return Replies.ids(call(List.of("cap", flowKey, cap == null ? "" : cap)));
    }

    /**
     * Sets {@code flowKey}'s rate ({@code null}: back to the subscription's); returns what it admitted (entries the
     * new rate lets in now).
     */
    public List<String> rate(String flowKey, dev.runbus.FlowRate rate) {
        checkKey(flowKey);
        return Replies.ids(call(List.of("rate", flowKey, rate == null ? "" : rate.intervalMillis(),
                rate == null ? "" : rate.burst())));
    }

    /**
     * Sets the topic's cap ({@code null}: back to the subscription's {@code flowTopicCap}); returns what a raised (or
     * removed) cap admitted.
     */
    public List<String> topicCap(Integer cap) {
        if (cap != null && cap < 0) {
            throw new IllegalArgumentException("a topic's cap must be 0 or more, not " + cap);
        }
        return Replies.ids(call(List.of("topiccap", cap == null ? "" : cap)));
    }

    /**
     * Sets the topic's rate ({@code null}: back to the subscription's {@code flowTopicRate}), starting afresh; returns
     * what it admitted.
     */
    public List<String> topicRate(dev.runbus.FlowRate rate) {
        return Replies.ids(call(List.of("topicrate", rate == null ? "" : rate.intervalMillis(),
                rate == null ? "" : rate.burst())));
    }

    /**
     * Sets {@code flowKey}'s weight under a topic cap ({@code null}: back to 1): its share of the topic's slots
     * against the other keys waiting for them; returns what it admitted.
     */
    public List<String> weight(String flowKey, Double weight) {
        checkKey(flowKey);
        if (weight != null && !(weight >= MIN_WEIGHT && weight <= MAX_WEIGHT)) {
            throw new IllegalArgumentException("a flow key's weight must be from " + MIN_WEIGHT + " to "
                    + (long) MAX_WEIGHT + ", not " + weight);
        }
        return Replies.ids(call(List.of("weight", flowKey, weight == null ? "" : weight)));
    }

    private static List<Object> withHolds(List<Object> head, List<Hold> holds) {
        List<Object> args = new ArrayList<>(head);
        for (Hold h : holds) {
            args.add(h.flowKey());
            args.add(h.streamId());
        }
        return args;
    }

    private Object call(List<Object> args) {
        return calls.run(FLOW, redis, ScriptOutputType.MULTI, keys, bytes(args));
    }

    private CompletableFuture<Object> callAsync(List<Object> args) {
        return calls.runAsync(FLOW, async, ScriptOutputType.MULTI, keys, bytes(args));
    }

    /** Strings as UTF-8, numbers in decimal, field values as they are. */
    private static byte[][] bytes(List<Object> args) {
        byte[][] bytes = new byte[args.size()][];
        for (int i = 0; i < bytes.length; i++) {
            Object a = args.get(i);
            bytes[i] = a instanceof byte[] b ? b : String.valueOf(a).getBytes(StandardCharsets.UTF_8);
        }
        return bytes;
    }
}
