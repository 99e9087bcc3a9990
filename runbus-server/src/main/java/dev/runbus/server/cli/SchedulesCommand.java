package dev.runbus.server.cli;

import dev.runbus.runs.Runs;
import dev.runbus.runs.ScheduleNotFoundException;
import dev.runbus.runs.ScheduleState;
import dev.runbus.runs.Schedules;
import dev.runbus.server.Infrastructure;
import dev.runbus.server.RunsFactory;
import dev.runbus.server.Settings;
import dev.runbus.server.Table;
import dev.runbus.server.http.ApiError;
import dev.runbus.server.http.ScheduleJson;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "schedules", mixinStandardHelpOptions = true,
        description = "Recurring schedules of runs (docs/schedules.md): list them, show one, create or replace one from "
                + "the JSON of PUT /v1/schedules/{name}, pause, resume, delete, preview and backfill.",
        subcommands = {SchedulesCommand.ListSchedules.class, SchedulesCommand.Show.class, SchedulesCommand.Put.class,
                SchedulesCommand.Pause.class, SchedulesCommand.Resume.class, SchedulesCommand.Delete.class,
                SchedulesCommand.Preview.class, SchedulesCommand.Backfill.class})
final class SchedulesCommand implements Runnable {

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                "missing subcommand: list, show, put, pause, resume, delete, preview or backfill");
    }

    /** A command on the schedules of the runs schema; a bad name or input is a usage error (exit 2). */
    abstract static class OnSchedules extends AdminCommand {
        @Override
        boolean needsDatabase() {
            return true;
        }

        abstract int run(Schedules schedules);

        @Override
        int run(Infrastructure infra, Settings s) {
            try (Runs runs = RunsFactory.create(infra, s, "admin")) {
                return run(runs.schedules());
            } catch (ScheduleNotFoundException e) {
                throw new IllegalArgumentException(e.getMessage());
            } catch (ApiError e) {
                throw new IllegalArgumentException(e.getMessage());
            }
        }

        void show(ScheduleState state) {
            Map<String, Object> view = ScheduleJson.view(state);
            Table t = new Table("field", "value");
            view.forEach((k, v) -> t.row(k, v instanceof Map<?, ?> m ? m.toString() : v));
            print(t, view);
        }
    }

    /** A command on one schedule, named by its first argument. */
    abstract static class OnOne extends OnSchedules {
        @Parameters(index = "0", paramLabel = "NAME", description = "the schedule's name")
        String name;
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = "Schedules by name, a page at a time: the next page is --after the last name printed.")
    static final class ListSchedules extends OnSchedules {
        @Option(names = "--after", paramLabel = "NAME", description = "list after this name")
        String after;

        @Option(names = "--limit", paramLabel = "N", defaultValue = "100",
                description = "schedules on the page, 1 to 1000; default ${DEFAULT-VALUE}")
        int limit;

        @Override
        int run(Schedules schedules) {
            List<ScheduleState> page = schedules.list(after, limit);
            Table t = new Table("name", "when", "paused", "next_fire_at", "fired", "skipped_overlap", "missed",
                    "caught_up", "waiting");
            List<Map<String, Object>> json = new ArrayList<>();
            for (ScheduleState s : page) {
                var d = s.schedule();
                String when = d.cron() != null ? d.cron() + " " + d.zone().getId() : "every " + d.interval();
                t.row(d.name(), when, d.paused(), s.nextFireAt(), s.fired(), s.skippedOverlap(), s.missed(),
                        s.caughtUp(), s.waiting());
                json.add(ScheduleJson.view(s));
            }
            print(t, Map.of("schedules", json));
            return 0;
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true,
            description = "One schedule: its definition, next fire, and what it has done.")
    static final class Show extends OnOne {
        @Override
        int run(Schedules schedules) {
            show(schedules.get(name).orElseThrow(() -> new ScheduleNotFoundException(name)));
            return 0;
        }
    }

    @Command(name = "put", mixinStandardHelpOptions = true,
            description = {"Create a schedule, or replace the one of its name (its fires and counters stay), from the "
                    + "JSON body of PUT /v1/schedules/{name} (docs/http-api.md): cron (with zone) or every, run, and "
                    + "the optional fields.",
                    "Example: runbus schedules put nightly '{\"cron\": \"30 2 * * *\", \"zone\": \"Europe/London\", "
                            + "\"run\": {\"session_id\": \"reports\", \"user_id\": \"system\", \"input\": \"go\"}}'"})
    static final class Put extends OnOne {
        @Parameters(index = "1", paramLabel = "JSON", arity = "0..1", description = "the schedule as JSON")
        String json;

        @Option(names = "--file", paramLabel = "FILE", description = "read the schedule's JSON from this file")
        Path file;

        @Override
        int run(Schedules schedules) {
            if ((json == null) == (file == null)) {
                throw new IllegalArgumentException("give the schedule as JSON, or --file FILE (one of the two)");
            }
            byte[] body;
            if (file != null) {
                try {
                    body = Files.readAllBytes(file);
                } catch (IOException e) {
                    throw new IllegalArgumentException("cannot read " + file + ": " + e.getMessage());
                }
            } else {
                body = json.getBytes(StandardCharsets.UTF_8);
            }
            show(schedules.put(ScheduleJson.parse(ScheduleJson.checkName(name, "name"), body)));
            return 0;
        }
    }

    @Command(name = "pause", mixinStandardHelpOptions = true,
            description = "Pause a schedule: it fires no more until resumed.")
    static final class Pause extends OnOne {
        @Override
        int run(Schedules schedules) {
            show(schedules.pause(name));
            return 0;
        }
    }

    @Command(name = "resume", mixinStandardHelpOptions = true,
            description = "Resume a paused schedule: it fires from now on (the fires while paused are neither made nor "
                    + "counted missed).")
    static final class Resume extends OnOne {
        @Override
        int run(Schedules schedules) {
            show(schedules.resume(name));
            return 0;
        }
    }

    @Command(name = "delete", mixinStandardHelpOptions = true,
            description = "Delete a schedule: it fires no more; its runs stay, its buffered fires are dropped.")
    static final class Delete extends OnOne {
        @Override
        int run(Schedules schedules) {
            if (!schedules.delete(name)) {
                throw new ScheduleNotFoundException(name);
            }
            Table t = new Table("field", "value");
            t.row("deleted", name);
            print(t, Map.of("deleted", name));
            return 0;
        }
    }

    @Command(name = "preview", mixinStandardHelpOptions = true,
            description = "A schedule's next fire times from now.")
    static final class Preview extends OnOne {
        @Option(names = "--n", paramLabel = "N", defaultValue = "10",
                description = "how many fire times, 0 to " + Schedules.MAX_FIRES + "; default ${DEFAULT-VALUE}")
        int n;

        @Override
        int run(Schedules schedules) {
            List<Instant> fires = schedules.preview(name, n);
            Table t = new Table("fire_at");
            fires.forEach(t::row);
            print(t, Map.of("name", name, "fires", fires.stream().map(Instant::toString).toList()));
            return 0;
        }
    }

    @Command(name = "backfill", mixinStandardHelpOptions = true,
            description = "Make a run for each of a schedule's fire times from --from to --to (both included, at most "
                    + Schedules.MAX_FIRES + "), as if fired then; a fire time that made a run before makes none again.")
    static final class Backfill extends OnOne {
        @Option(names = "--from", required = true, paramLabel = "TIME",
                description = "an RFC 3339 time (2026-01-01T00:00:00Z) or a duration back from now (30d, 12h)")
        String from;

        @Option(names = "--to", required = true, paramLabel = "TIME",
                description = "an RFC 3339 time or a duration back from now")
        String to;

        @Override
        int run(Schedules schedules) {
            Instant now = Instant.now();
            int made = schedules.backfill(name, TimeArgument.parse(from, "--from", now),
                    TimeArgument.parse(to, "--to", now));
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("name", name);
            out.put("made", made);
            Table t = new Table("field", "value");
            out.forEach(t::row);
            print(t, out);
            return 0;
        }
    }
}
