package dev.runbus.server.cli;

import dev.runbus.Inspector;
import dev.runbus.server.Infrastructure;
import dev.runbus.server.Settings;
import dev.runbus.server.Table;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "groups", mixinStandardHelpOptions = true, description = "Consumer groups of a topic.",
        subcommands = {GroupsCommand.Delete.class})
final class GroupsCommand implements Runnable {

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), "missing subcommand: delete");
    }

    @Command(name = "delete", mixinStandardHelpOptions = true,
            description = {"Delete a consumer group gone for good: on every partition of the topic, with its pending "
                    + "list, heartbeats and memberships. Retention no longer keeps entries for it.",
                    "Refused while a consumer of the group is alive (a heartbeat, or activity, within the "
                            + "consumer dead-after time), unless --force: a live consumer creates the group again at "
                            + "the start of the stream on its next read and handles every retained entry once more."})
    static final class Delete extends AdminCommand {
        @Parameters(index = "0", paramLabel = "TOPIC", description = "the topic, for example runs")
        String topic;

        @Parameters(index = "1", paramLabel = "GROUP", description = "the consumer group to delete")
        String group;

        @Option(names = "--force", description = "delete even while consumers of the group seem alive (only when"
                + " they are gone: a live one re-creates the group and handles the retained entries again)")
        boolean force;

        @Override
        int run(Infrastructure infra, Settings s) {
            Inspector inspector = infra.bus().inspector();
            Inspector.GroupInfo found = inspector.groups(topic).stream().filter(g -> g.name().equals(group))
                    .findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("no group " + group + " on topic " + topic));
            List<String> alive = inspector.consumers(topic, group).stream().filter(Inspector.ConsumerInfo::alive)
                    .map(Inspector.ConsumerInfo::name).toList();
            if (!alive.isEmpty() && !force) {
                throw new IllegalArgumentException("group " + group + " of topic " + topic + " has live consumers "
                        + alive + ": stop them first, or pass --force");
            }
            infra.bus().deleteGroup(topic, group);
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("topic", topic);
            out.put("deleted_group", group);
            out.put("pending_dropped", found.pending());
            out.put("live_consumers", alive);
            Table t = new Table("field", "value");
            out.forEach(t::row);
            print(t, out);
            return 0;
        }
    }
}
