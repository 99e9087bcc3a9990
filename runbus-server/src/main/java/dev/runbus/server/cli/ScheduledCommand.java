package dev.runbus.server.cli;

import dev.runbus.Scheduled;
import dev.runbus.server.Infrastructure;
import dev.runbus.server.Json;
import dev.runbus.server.Settings;
import dev.runbus.server.Table;
import dev.runbus.server.Views;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "scheduled", mixinStandardHelpOptions = true,
        description = {"Entries waiting in a topic's delay sets, delayed publishes and retries under a retry policy: "
                + "list, cancel.",
                "The same as JSON: GET /v1/scheduled?topic=T and DELETE /v1/scheduled/{id}?topic=T on runbus serve."},
        subcommands = {ScheduledCommand.ListScheduled.class, ScheduledCommand.Cancel.class})
final class ScheduledCommand implements Runnable {

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), "missing subcommand: list or cancel");
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = {"Scheduled entries of a topic, soonest first, and how many there are in all.",
                    "Columns: id (give it to cancel); due at, on the Redis server's clock; due: how far off, by this "
                            + "machine's clock; attempts already made (0 for a delayed publish); for group: the only "
                            + "group a retry goes to ('-': every group); message id, type and key ('-': none)."})
    static final class ListScheduled extends AdminCommand {
        @Parameters(index = "0", paramLabel = "TOPIC", description = "the topic, for example runs")
        String topic;

        @Option(names = "--limit", paramLabel = "N", defaultValue = "20",
                description = "how many; default ${DEFAULT-VALUE}")
        int limit;

        @Override
        int run(Infrastructure infra, Settings s) {
            if (limit < 1) {
                throw new IllegalArgumentException("--limit must be at least 1");
            }
            Scheduled scheduled = infra.bus().scheduled();
            List<Scheduled.ScheduledEntry> entries = scheduled.list(topic, limit);
            long count = scheduled.count(topic);
            Instant now = Instant.now();
            Table t = new Table("id", "due at", "due", "attempts", "for group", "message id", "type", "key");
            List<Map<String, Object>> rows = new ArrayList<>();
            for (Scheduled.ScheduledEntry e : entries) {
                t.row(e.id(), e.dueAt(), relative(Duration.between(now, e.dueAt())), e.attempts(), e.forGroup(),
                        e.message().id(), e.message().type(), e.message().key());
                rows.add(Views.scheduled(e));
            }
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("topic", topic);
            out.put("count", count);
            out.put("entries", rows);
            if (json) {
                out().println(Json.write(out));
                return 0;
            }
            out().println(count + " scheduled on topic " + topic);
            if (!t.isEmpty()) {
                t.print(out());
                out().println(entries.size() < count ? "showing the soonest " + entries.size() + " of " + count
                        : "showing all " + count);
            }
            return 0;
        }
    }

    @Command(name = "cancel", mixinStandardHelpOptions = true,
            description = "Remove a scheduled entry before it is due. Exits 2 when the topic has none with this id "
                    + "(never scheduled, already due and moved into the stream, or cancelled before).")
    static final class Cancel extends AdminCommand {
        @Parameters(index = "0", paramLabel = "TOPIC", description = "the topic, for example runs")
        String topic;

        @Parameters(index = "1", paramLabel = "ID", description = "scheduled entry id, as listed")
        String id;

        @Override
        int run(Infrastructure infra, Settings s) {
            if (!infra.bus().scheduled().cancel(topic, id)) {
                throw new IllegalArgumentException("no scheduled entry " + id + " on " + topic);
            }
            if (json) {
                out().println(Json.write(Map.of("topic", topic, "cancelled", id)));
            } else {
                out().println("cancelled " + id);
            }
            return 0;
        }
    }

    /**
     * How far off {@code untilDue} is, for people: "in 1.2s", "in 4m 05s", "in 2h 03m", "in 3d 04h", or
     * "overdue by …" in the same units once it is past (due now counts as overdue by 0ms).
     */
    static String relative(Duration untilDue) {
        boolean overdue = untilDue.isNegative() || untilDue.isZero();
        long ms = Math.abs(untilDue.toMillis());
        String amount;
        if (ms < 1_000) {
            amount = ms + "ms";
        } else if (ms < 60_000) {
            amount = String.format(java.util.Locale.ROOT, "%.1fs", Math.floor(ms / 100.0) / 10);
        } else if (ms < 3_600_000) {
            amount = String.format(java.util.Locale.ROOT, "%dm %02ds", ms / 60_000, ms / 1_000 % 60);
        } else if (ms < 86_400_000) {
            amount = String.format(java.util.Locale.ROOT, "%dh %02dm", ms / 3_600_000, ms / 60_000 % 60);
        } else {
            amount = String.format(java.util.Locale.ROOT, "%dd %02dh", ms / 86_400_000, ms / 3_600_000 % 24);
        }
        return overdue ? "overdue by " + amount : "in " + amount;
    }
}
