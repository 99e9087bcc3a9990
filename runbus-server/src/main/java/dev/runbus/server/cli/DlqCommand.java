package dev.runbus.server.cli;

import dev.runbus.DeadLetter;
import dev.runbus.runs.Runs;
import dev.runbus.server.Infrastructure;
import dev.runbus.server.RunsFactory;
import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import dev.runbus.server.Table;
import dev.runbus.server.Views;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "dlq", mixinStandardHelpOptions = true, description = "Dead letters of the topic: list, show, replay, purge.",
        subcommands = {DlqCommand.ListDeadLetters.class, DlqCommand.Show.class, DlqCommand.Replay.class,
                DlqCommand.Purge.class})
final class DlqCommand implements Runnable {

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                "missing subcommand: list, show, replay or purge");
    }

    /** The dead letter, or a usage error naming it. */
    static DeadLetter find(Infrastructure infra, String topic, String id) {
        return infra.bus().deadLetters().get(topic, id)
                .orElseThrow(() -> new IllegalArgumentException("no dead letter " + id + " in topic " + topic));
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "Dead letters, oldest first.")
    static final class ListDeadLetters extends AdminCommand {
        @Option(names = "--limit", defaultValue = "50", description = "how many; default ${DEFAULT-VALUE}")
        int limit;

        @Option(names = "--after", description = "start after this dead letter id")
        String after;

        @Override
        int run(Infrastructure infra, Settings s) {
            if (limit < 1) {
                throw new IllegalArgumentException("--limit must be at least 1");
            }
            Table t = new Table("id", "message", "group", "deliveries", "reason", "replayed as");
            List<Map<String, Object>> rows = new ArrayList<>();
            for (DeadLetter d : infra.bus().deadLetters().list(s.get(Setting.TOPIC), after, limit)) {
                t.row(d.id(), d.message().id(), d.group(), d.deliveries(), cut(d.reason()), d.replayedAs().orElse("-"));
                rows.add(Views.deadLetter(d));
            }
            print(t, Map.of("topic", s.get(Setting.TOPIC), "dead_letters", rows));
            return 0;
        }

        private static String cut(String s) {
            return s.length() <= 60 ? s : s.substring(0, 59) + "…";
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = "One dead letter with its message.")
    static final class Show extends AdminCommand {
        @Parameters(paramLabel = "ID", description = "dead letter id")
        String id;

        @Override
        int run(Infrastructure infra, Settings s) {
            DeadLetter d = find(infra, s.get(Setting.TOPIC), id);
            Map<String, Object> m = Views.deadLetter(d);
            m.put("headers", d.message().headers());
            m.put("payload", new String(d.message().payload(), StandardCharsets.UTF_8));
            Table t = new Table("field", "value");
            m.forEach(t::row);
            print(t, m);
            return 0;
        }
    }

    @Command(name = "replay", mixinStandardHelpOptions = true,
            description = {"Send a dead letter back to its group, once. A run's dead letter needs --database-url: "
                    + "the run goes from failed back to pending first."})
    static final class Replay extends AdminCommand {
        @Parameters(paramLabel = "ID", description = "dead letter id")
        String id;

        /** Only a run's dead letter needs PostgreSQL; a plain topic's is replayed on Redis alone. */
        @Override
        boolean needsDatabase() {
            return settings().isSet(Setting.DATABASE_URL);
        }

        @Override
        int run(Infrastructure infra, Settings s) {
            String topic = s.get(Setting.TOPIC);
            DeadLetter d = find(infra, topic, id);
            if (d.replayedAs().isPresent()) {
                throw new IllegalArgumentException("dead letter " + id + " was already replayed as "
                        + d.replayedAs().get());
            }
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("dead_letter_id", id);
            Optional<UUID> runId = Runs.runIdOf(d.message());
            if (runId.isPresent() && !infra.hasDatabase()) {
                // Replayed on Redis alone, the run would stay failed in PostgreSQL and its worker would skip it.
                throw new IllegalArgumentException("dead letter " + id + " is the trigger of run " + runId.get()
                        + ": replay it with --database-url (or RUNBUS_DATABASE_URL), so that the run goes back to "
                        + "pending");
            }
            if (runId.isPresent()) {
                try (Runs runs = RunsFactory.create(infra, s, "admin")) {
                    runs.replay(runId.get());
                }
                result.put("run_id", runId.get().toString());
                result.put("status", "pending");
            } else {
                result.put("stream_id", infra.bus().deadLetters().replay(topic, id));
            }
            Table t = new Table("field", "value");
            result.forEach(t::row);
            print(t, result);
            return 0;
        }
    }

    @Command(name = "purge", mixinStandardHelpOptions = true, description = "Delete one dead letter, or all with --all.")
    static final class Purge extends AdminCommand {
        @Parameters(paramLabel = "ID", arity = "0..1", description = "dead letter id")
        String id;

        @Option(names = "--all", description = "delete every dead letter of the topic")
        boolean all;

        @Override
        int run(Infrastructure infra, Settings s) {
            if ((id == null) == !all) {
                throw new IllegalArgumentException("give either a dead letter ID or --all");
            }
            String topic = s.get(Setting.TOPIC);
            long removed = all ? infra.bus().deadLetters().purgeAll(topic)
                    : infra.bus().deadLetters().purge(topic, id) ? 1 : 0;
            if (!all && removed == 0) {
                throw new IllegalArgumentException("no dead letter " + id + " in topic " + topic);
            }
            Table t = new Table("purged");
            t.row(removed);
            print(t, Map.of("purged", removed));
            return 0;
        }
    }
}
