package dev.runbus.server.cli;

import dev.runbus.Inspector;
import dev.runbus.runs.RunCounts;
import dev.runbus.server.Infrastructure;
import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import dev.runbus.server.Table;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;

@Command(name = "stats", mixinStandardHelpOptions = true,
        description = {"Runs by status (with --database-url), streams, groups with pending and lag, dead letters, and "
                + "retention.",
                "Retention, by partition: the oldest entry some group still needs ('needed from'; retention may trim "
                        + "what is older and past the retention age) and the group that needs it ('held by'). A "
                        + "stream without groups is not trimmed."})
final class StatsCommand extends AdminCommand {

    @Override
    boolean needsDatabase() {
        return settings().isSet(Setting.DATABASE_URL);
    }

    @Override
    int run(Infrastructure infra, Settings s) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        Table t = new Table("what", "name", "value");
        if (infra.hasDatabase()) {
            Map<String, Long> runs = new LinkedHashMap<>();
            RunCounts counts = RunCounts.read(infra.dataSource(), s.get(Setting.SCHEMA));
            counts.asMap().forEach((status, n) -> {
                runs.put(status.sql(), n);
                t.row("runs", status.sql(), n);
            });
            // Failed by the attempt cap, with no dead letter to alert on (docs/runs.md, Status).
            runs.put("failed_without_dead_letter", counts.failedWithoutDeadLetter());
            t.row("runs", "failed without dead letter", counts.failedWithoutDeadLetter());
            out.put("runs", runs);
        }
        Map<String, Object> streams = new LinkedHashMap<>();
        for (Inspector.StreamInfo si : infra.bus().inspector().streams()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("length", si.length());
            m.put("dead_letters", si.deadLetters());
            t.row("stream", si.topic(), si.length() + " entries, " + si.deadLetters() + " dead letters");
            long scheduled = infra.bus().scheduled().count(si.topic());
            m.put("scheduled", scheduled);
            t.row("scheduled", si.topic(), scheduled);
            Map<String, Object> groups = new LinkedHashMap<>();
            for (Inspector.GroupInfo g : infra.bus().inspector().groups(si.topic())) {
                groups.put(g.name(), Map.of("pending", g.pending(), "lag", g.lag(), "consumers", g.consumers()));
                t.row("group", si.topic() + "/" + g.name(), g.pending() + " pending, lag "
                        + (g.lag() < 0 ? "unknown" : g.lag()) + ", " + g.consumers() + " consumers");
            }
            m.put("groups", groups);
            m.put("retention", retention(infra, si.topic(), t));
            streams.put(si.topic(), m);
        }
        out.put("streams", streams);
        print(t, out);
        return 0;
    }

    /** One row per partition (named {@code topic@p} when there are several) and their JSON. */
    private static List<Map<String, Object>> retention(Infrastructure infra, String topic, Table t) {
        List<Inspector.RetentionInfo> parts = infra.bus().inspector().retention(topic);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Inspector.RetentionInfo r : parts) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("partition", r.partition());
            m.put("length", r.length());
            m.put("first_id", r.firstId());
            m.put("needed_from", r.neededFrom());
            m.put("held_by", r.heldBy());
            rows.add(m);
            t.row("retention", parts.size() == 1 ? topic : topic + "@" + r.partition(), r.heldBy() == null
                    ? "not trimmed: no groups" : "needed from " + r.neededFrom() + " (held by " + r.heldBy()
                    + "), first " + (r.firstId() == null ? "none" : r.firstId()));
        }
        return rows;
    }
}
