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

@Command(name = "consumers", mixinStandardHelpOptions = true, description = "Consumers of the workers' group.",
        subcommands = {ConsumersCommand.ListConsumers.class, ConsumersCommand.Prune.class})
final class ConsumersCommand implements Runnable {

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), "missing subcommand: list or prune");
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = "Each consumer with its pending entries, idle time, last heartbeat and whether it is alive.")
    static final class ListConsumers extends AdminCommand {
        @Override
        int run(Infrastructure infra, Settings s) {
            Table t = new Table("consumer", "pending", "idle ms", "last heartbeat", "alive");
            List<Map<String, Object>> rows = new ArrayList<>();
            String topic = s.get(Setting.TOPIC);
            String group = s.get(Setting.GROUP);
            if (infra.bus().inspector().groups(topic).stream().anyMatch(g -> g.name().equals(group))) {
                for (Inspector.ConsumerInfo c : infra.bus().inspector().consumers(topic, group)) {
                    String beat = c.lastHeartbeatAt() < 0 ? "none" : java.time.Instant.ofEpochMilli(c.lastHeartbeatAt())
                            .toString();
                    t.row(c.name(), c.pending(), c.idleMillis(), beat, c.alive() ? "yes" : "no");
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("name", c.name());
                    m.put("pending", c.pending());
                    m.put("idle_ms", c.idleMillis());
                    m.put("last_heartbeat_ms", c.lastHeartbeatAt());
                    m.put("alive", c.alive());
                    rows.add(m);
                }
            }
            print(t, Map.of("topic", topic, "group", group, "consumers", rows));
            return 0;
        }
    }

    @Command(name = "prune", mixinStandardHelpOptions = true,
            description = "Delete dead consumers whose pending list is empty (never one with pending entries).")
    static final class Prune extends AdminCommand {
        @Override
        int run(Infrastructure infra, Settings s) {
            List<String> deleted = infra.bus().pruneDeadConsumers(s.get(Setting.TOPIC), s.get(Setting.GROUP));
            Table t = new Table("deleted consumer");
            deleted.forEach(t::row);
            print(t, Map.of("deleted", deleted));
            return 0;
        }
    }
}
