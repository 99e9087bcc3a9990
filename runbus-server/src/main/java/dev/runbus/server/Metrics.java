package dev.runbus.server;

import dev.runbus.Bus;
import dev.runbus.BusListener;
import dev.runbus.DeadLetter;
import dev.runbus.Delivery;
import dev.runbus.Inspector;
import dev.runbus.Outcome;
import dev.runbus.runs.RunCounts;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;

/**
 * Counters of every transition the process sees, and gauges read on each scrape, in the Prometheus text
 * format. {@code runbus_dead_letters} is the number to alert on when it leaves zero.
 */
public final class Metrics implements BusListener {

    public final LongAdder runsCreated = new LongAdder();
    public final LongAdder runsDeduplicated = new LongAdder();
    private final LongAdder deadLettered = new LongAdder();
    private final LongAdder handlerRetries = new LongAdder();
    private final LongAdder handlerFinalFailures = new LongAdder();
    private final LongAdder trimmed = new LongAdder();
    private final LongAdder claimsLost = new LongAdder();
    private final LongAdder consumersDeleted = new LongAdder();
    private final LongAdder loopErrors = new LongAdder();
    private final LongAdder consumerNamesInUse = new LongAdder();
    private final Map<String, LongAdder> retentionTrimmed = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> deadLettersTrimmed = new ConcurrentHashMap<>();

    @Override
    public void onDeadLetter(DeadLetter deadLetter) {
        deadLettered.increment();
    }

    @Override
    public void onHandlerFailure(Delivery delivery, Throwable failure, Outcome outcome) {
        (outcome == Outcome.RETRY ? handlerRetries : handlerFinalFailures).increment();
    }

    @Override
    public void onTrimmedWhilePending(String topic, String group, List<String> streamIds) {
        trimmed.add(streamIds.size());
    }

    @Override
    public void onClaimLost(String topic, String group, String consumer, List<String> streamIds) {
        claimsLost.add(streamIds.size());
    }

    @Override
    public void onConsumerDeleted(String topic, String group, String consumer) {
        consumersDeleted.increment();
    }

    @Override
    public void onLoopError(String loop, Throwable error) {
        loopErrors.increment();
    }

    @Override
    public void onConsumerNameInUse(String topic, String group, String consumer, Duration sinceHeartbeat) {
        consumerNamesInUse.increment();
    }

    @Override
    public void onRetentionTrimmed(String topic, long entries) {
        retentionTrimmed.computeIfAbsent(topic, t -> new LongAdder()).add(entries);
    }

    @Override
    public void onDeadLettersTrimmed(String topic, long entries) {
        deadLettersTrimmed.computeIfAbsent(topic, t -> new LongAdder()).add(entries);
    }

    /** The exposition text: counters, then gauges read now from Redis and PostgreSQL. */
    public String render(Bus bus, DataSource db, Settings s) {
        StringBuilder b = new StringBuilder();
        counter(b, "runbus_runs_submitted_total", "Runs submitted, by whether the submission created the run",
                "{created=\"true\"} " + runsCreated.sum() + "\nrunbus_runs_submitted_total{created=\"false\"} "
                        + runsDeduplicated.sum());
        counter(b, "runbus_dead_lettered_total", "Entries moved to a dead-letter stream by this process",
                " " + deadLettered.sum());
        counter(b, "runbus_handler_failures_total", "Handler failures, by outcome",
                "{outcome=\"retry\"} " + handlerRetries.sum() + "\nrunbus_handler_failures_total{outcome=\"dead_letter\"} "
                        + handlerFinalFailures.sum());
        counter(b, "runbus_trimmed_while_pending_total", "Entries trimmed while pending, acked", " " + trimmed.sum());
        counter(b, "runbus_claims_lost_total", "Entries taken over while still running here", " " + claimsLost.sum());
        counter(b, "runbus_consumers_deleted_total", "Dead consumers deleted by the janitor", " " + consumersDeleted.sum());
        counter(b, "runbus_loop_errors_total", "Failures of background loops", " " + loopErrors.sum());
        counter(b, "runbus_consumer_name_in_use_total", "Subscriptions started under a consumer name another live"
                + " process seemed to use", " " + consumerNamesInUse.sum());
        String topic = s.get(Setting.TOPIC);
        counter(b, "runbus_retention_trimmed_total", "Entries every group was done with, trimmed by retention",
                byTopic("runbus_retention_trimmed_total", retentionTrimmed, topic));
        counter(b, "runbus_dead_letters_trimmed_total", "Dead letters trimmed by the opt-in dead-letter retention",
                byTopic("runbus_dead_letters_trimmed_total", deadLettersTrimmed, topic));
        try {
            Inspector.StreamInfo info = bus.inspector().stream(topic).orElse(null);
            gauge(b, "runbus_stream_length", "Entries in the topic's stream",
                    labels("topic", topic) + " " + (info == null ? 0 : info.length()));
            gauge(b, "runbus_dead_letters", "Entries in the topic's dead-letter stream (alert when above zero)",
                    labels("topic", topic) + " " + bus.deadLetters().count(topic));
            gauge(b, "runbus_scheduled", "Entries waiting in the topic's delay sets (delayed publishes and retries)",
                    labels("topic", topic) + " " + bus.scheduled().count(topic));
            StringBuilder pending = new StringBuilder();
            StringBuilder lag = new StringBuilder();
            for (Inspector.GroupInfo g : bus.inspector().groups(topic)) {
                String group = labels("topic", topic, "group", g.name());
                pending.append(pending.length() == 0 ? "" : "\nrunbus_group_pending").append(group).append(' ')
                        .append(g.pending());
                lag.append(lag.length() == 0 ? "" : "\nrunbus_group_lag").append(group).append(' ')
                        .append(Math.max(g.lag(), 0));
            }
            if (pending.length() > 0) {
                gauge(b, "runbus_group_pending", "Entries delivered and not yet acked", pending.toString());
                gauge(b, "runbus_group_lag", "Entries not yet delivered to the group", lag.toString());
            }
        } catch (RuntimeException redisDown) {
            gauge(b, "runbus_redis_up", "Whether Redis answered the scrape", " 0");
        }
        if (db != null) {
            try {
                StringBuilder runs = new StringBuilder();
                RunCounts.read(db, s.get(Setting.SCHEMA)).asMap().forEach((status, n) -> runs
                        .append(runs.length() == 0 ? "" : "\nrunbus_runs").append(labels("status", status.sql()))
                        .append(' ').append(n));
                gauge(b, "runbus_runs", "Runs by status", runs.toString());
            } catch (Exception postgresDown) {
                gauge(b, "runbus_postgres_up", "Whether PostgreSQL answered the scrape", " 0");
            }
        }
        return b.toString();
    }

    /** Samples by topic, sorted; the configured topic is always there, at 0 before anything was trimmed. */
    private static String byTopic(String name, Map<String, LongAdder> counts, String topic) {
        Map<String, Long> sorted = new TreeMap<>();
        sorted.put(topic, 0L);
        counts.forEach((t, n) -> sorted.put(t, n.sum()));
        StringBuilder samples = new StringBuilder();
        sorted.forEach((t, n) -> samples.append(samples.length() == 0 ? "" : "\n" + name).append(labels("topic", t))
                .append(' ').append(n));
        return samples.toString();
    }

    /**
     * {@code {name="value",...}} with each value escaped as the text format requires (backslash, double quote,
     * newline): a topic may hold a backslash or a quote, and a group created by another client anything, and
     * unescaped either would end the value early and could forge a sample.
     */
    static String labels(String... namesAndValues) {
        StringBuilder b = new StringBuilder("{");
        for (int i = 0; i < namesAndValues.length; i += 2) {
            b.append(i == 0 ? "" : ",").append(namesAndValues[i]).append("=\"");
            for (char c : namesAndValues[i + 1].toCharArray()) {
                switch (c) {
                    case '\\' -> b.append("\\\\");
                    case '"' -> b.append("\\\"");
                    case '\n' -> b.append("\\n");
                    default -> b.append(c);
                }
            }
            b.append('"');
        }
        return b.append('}').toString();
    }

    private static void counter(StringBuilder b, String name, String help, String samples) {
        metric(b, name, help, "counter", samples);
    }

    private static void gauge(StringBuilder b, String name, String help, String samples) {
        metric(b, name, help, "gauge", samples);
    }

    private static void metric(StringBuilder b, String name, String help, String type, String samples) {
        b.append("# HELP ").append(name).append(' ').append(help).append('\n');
        b.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        b.append(name).append(samples).append('\n');
    }
}
