package dev.runbus.server.cli;

import dev.runbus.Inspector;
import dev.runbus.server.Infrastructure;
import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import dev.runbus.server.Table;
import dev.runbus.server.Views;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

@Command(name = "partitions", mixinStandardHelpOptions = true,
        description = {"The partitions of a topic as a consumer group sees them, by partition number. The count is "
                + "the one recorded in Redis; a plain topic has one.",
                "Columns: partition; owner: the consumer holding the partition's lease (ordered groups only, '-' "
                        + "when none does); token: the lease's fencing token; lease age: since the owner took the "
                        + "lease; expires in: how long the lease lasts unless renewed; length: entries in the "
                        + "partition's stream; pending: delivered to the group and not acknowledged; lag: not yet "
                        + "delivered to the group ('?' when Redis cannot tell).",
                "--group G chooses the consumer group (default: the workers' group, run-workers). The same as JSON: "
                        + "GET /v1/streams/{topic}/partitions?group=G on runbus serve."})
final class PartitionsCommand extends AdminCommand {

    @Parameters(index = "0", paramLabel = "TOPIC", description = "the topic, for example runs")
    String topic;

    @Override
    int run(Infrastructure infra, Settings s) {
        String g = s.get(Setting.GROUP); // --group, shared with the other commands: default the workers' group
        Table t = new Table("partition", "owner", "token", "lease age", "expires in", "length", "pending", "lag");
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Inspector.PartitionInfo p : infra.bus().inspector().partitions(topic, g)) {
            boolean owned = p.owner() != null;
            t.row(p.partition(), owned ? p.owner() : "-", owned ? p.fencingToken() : "-",
                    owned ? millis(p.leaseAgeMillis()) : "-", owned ? millis(p.leaseExpiresInMillis()) : "-",
                    p.length(), p.pending(), p.lag() < 0 ? "?" : p.lag());
            rows.add(Views.partition(p));
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("topic", topic);
        out.put("group", g);
        out.put("partitions", rows);
        print(t, out);
        return 0;
    }

    private static String millis(long ms) {
        return ms < 0 ? "-" : ms + " ms";
    }
}
