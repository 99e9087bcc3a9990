package dev.runbus.server.cli;

import dev.runbus.DeadLetter;
import dev.runbus.runs.Run;
import dev.runbus.runs.Runs;
import dev.runbus.server.Infrastructure;
import dev.runbus.server.RunsFactory;
import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import dev.runbus.server.Table;
import dev.runbus.server.Views;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
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

    /** A run's dead letter that is not the one the run names: the run's own is replayed, not this one. */
    static final class NotTheRunsDeadLetter extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        NotTheRunsDeadLetter(String message) {
            super(message);
        }
    }

    /** The run a dead letter is the trigger of, if it is one. */
    static Optional<UUID> runOf(DeadLetter d) {
        return Runs.runIdOf(d.message());
    }

    @Command(name = "replay", mixinStandardHelpOptions = true,
            description = {"Send a dead letter back to its group, once; or with --all every dead letter not replayed "
                    + "yet, or with --since those dead since a time, oldest first per partition, with progress on "
                    + "stderr. A run's dead letter needs --database-url: the run goes from failed back to pending "
                    + "first."})
    static final class Replay extends AdminCommand {
        @Parameters(paramLabel = "ID", arity = "0..1", description = "dead letter id")
        String id;

        @Option(names = "--all", description = "replay every dead letter of the topic not replayed yet")
        boolean all;

        @Option(names = "--since", paramLabel = "TIME", description = "replay the dead letters not replayed yet that "
                + "died at or after this RFC 3339 time (2026-01-01T12:00:00Z) or this long ago (90m, 12h, 30d)")
        String since;

        /** Only a run's dead letter needs PostgreSQL; a plain topic's is replayed on Redis alone. */
        @Override
        boolean needsDatabase() {
            return settings().isSet(Setting.DATABASE_URL);
        }

        /** --since, read once: a duration is counted back from the command's start. */
        private Instant sinceTime;

        @Override
        public Integer call() throws Exception {
            if ((id != null ? 1 : 0) + (all ? 1 : 0) + (since != null ? 1 : 0) != 1) {
                throw new IllegalArgumentException("give one of: a dead letter ID, --all or --since TIME");
            }
            sinceTime = since == null ? null : TimeArgument.parse(since, "--since", Instant.now());
            return super.call();
        }

        @Override
        int run(Infrastructure infra, Settings s) {
            return id != null ? replayOne(infra, s) : replayMany(infra, s);
        }

        private int replayOne(Infrastructure infra, Settings s) {
            String topic = s.get(Setting.TOPIC);
            DeadLetter d = find(infra, topic, id);
            if (d.replayedAs().isPresent()) {
                throw new IllegalArgumentException("dead letter " + id + " was already replayed as "
                        + d.replayedAs().get());
            }
            Optional<UUID> runId = runOf(d);
            if (runId.isPresent() && !infra.hasDatabase()) {
                // Replayed on Redis alone, the run would stay failed in PostgreSQL and its worker would skip it.
                throw new IllegalArgumentException("dead letter " + id + " is the trigger of run " + runId.get()
                        + ": replay it with --database-url (or RUNBUS_DATABASE_URL), so that the run goes back to "
                        + "pending");
            }
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("dead_letter_id", id);
            try (Runs runs = runId.isPresent() ? RunsFactory.create(infra, s, "admin") : null) {
                String became = replay(infra, runs, topic, d);
                if (runId.isPresent()) {
                    result.put("run_id", became);
                    result.put("status", "pending");
                } else {
                    result.put("stream_id", became);
                }
            }
            Table t = new Table("field", "value");
            result.forEach(t::row);
            print(t, result);
            return 0;
        }

        /**
         * The replay of one dead letter, the same for one ID and for many: a run's through {@link Runs#replay} (the
         * run goes from failed to pending, then its dead letter back to its partition), a plain one through
         * {@link dev.runbus.DeadLetters#replay}. Returns the run id, or the new stream id.
         */
        private static String replay(Infrastructure infra, Runs runs, String topic, DeadLetter d) {
            Optional<UUID> runId = runOf(d);
            if (runId.isPresent()) {
                // As the API does: an older dead letter of a run that died again names the run, but replaying it
                // would replay the run's current one.
                Optional<String> current = runs.get(runId.get()).flatMap(Run::deadLetterId);
                if (current.isPresent() && !current.get().equals(d.id())) {
                    throw new NotTheRunsDeadLetter("dead letter " + d.id() + " is not the current one of run "
                            + runId.get() + " (" + current.get() + "): replay that one");
                }
                runs.replay(runId.get());
                return runId.get().toString();
            }
            return infra.bus().deadLetters().replay(topic, d.id());
        }

        private int replayMany(Infrastructure infra, Settings s) {
            String topic = s.get(Setting.TOPIC);
            DeadLetterReplays replays = new DeadLetterReplays(infra.bus().deadLetters(), topic, sinceTime, err());
            DeadLetterReplays.Plan plan = replays.plan();
            if (plan.runTriggers() > 0 && !infra.hasDatabase()) {
                throw new IllegalArgumentException(plan.runTriggers() + " of the dead letters to replay are triggers "
                        + "of runs: replay them with --database-url (or RUNBUS_DATABASE_URL), so that the runs go "
                        + "back to pending; nothing was replayed");
            }
            DeadLetterReplays.Result r;
            try (Runs runs = plan.runTriggers() > 0 ? RunsFactory.create(infra, s, "admin") : null) {
                r = replays.replay(plan, d -> replay(infra, runs, topic, d));
            }
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("topic", topic);
            result.put("since", sinceTime == null ? null : sinceTime.toString());
            result.put("replayed", r.replayed());
            result.put("replayed_before", r.replayedBefore());
            result.put("dead_before_since", r.older());
            result.put("not_replayed", r.notReplayed());
            Table t = new Table("field", "value");
            result.forEach((k, v) -> t.row(k, v instanceof List<?> l ? l.size() : v));
            print(t, result);
            for (Map<String, Object> skipped : r.notReplayed()) {
                err().println("not replayed: " + skipped.get("id") + ": " + skipped.get("reason"));
            }
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
