package dev.runbus.server.cli;

import dev.runbus.Inspector;
import dev.runbus.server.Infrastructure;
import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import dev.runbus.server.Table;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "pending", mixinStandardHelpOptions = true,
        description = "Pending entries of the workers' group: id, owner, deliveries, idle time, oldest first.")
final class PendingCommand extends AdminCommand {

    @Option(names = "--limit", defaultValue = "50", description = "entries to show; default ${DEFAULT-VALUE}")
    int limit;

    @Override
    int run(Infrastructure infra, Settings s) {
        String topic = s.get(Setting.TOPIC);
        String group = s.get(Setting.GROUP);
        if (limit < 1) {
            throw new IllegalArgumentException("--limit must be at least 1");
        }
        Table t = new Table("stream id", "consumer", "deliveries", "idle ms");
        List<Map<String, Object>> rows = new ArrayList<>();
        boolean groupExists = infra.bus().inspector().groups(topic).stream().anyMatch(g -> g.name().equals(group));
        if (groupExists) {
            for (Inspector.PendingEntry p : infra.bus().inspector().pending(topic, group, limit)) {
                t.row(p.streamId(), p.consumer(), p.deliveries(), p.idleMillis());
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("stream_id", p.streamId());
                m.put("consumer", p.consumer());
                m.put("deliveries", p.deliveries());
                m.put("idle_ms", p.idleMillis());
                rows.add(m);
            }
        }
        print(t, Map.of("topic", topic, "group", group, "pending", rows));
        return 0;
    }
}
