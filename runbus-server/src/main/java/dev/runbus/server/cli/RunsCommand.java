package dev.runbus.server.cli;

import dev.runbus.runs.IllegalRunTransitionException;
import dev.runbus.runs.Run;
import dev.runbus.runs.RunNotFoundException;
import dev.runbus.runs.RunPage;
import dev.runbus.runs.RunQuery;
import dev.runbus.runs.RunStatus;
import dev.runbus.runs.Runs;
import dev.runbus.runs.StoredReply;
import dev.runbus.server.Infrastructure;
import dev.runbus.server.RunsFactory;
import dev.runbus.server.Settings;
import dev.runbus.server.Table;
import dev.runbus.server.Views;
import dev.runbus.server.http.ApiError;
import dev.runbus.server.http.RunListRequest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "runs", mixinStandardHelpOptions = true,
        description = "Runs in PostgreSQL: list them, show one, replay a failed one, cancel one, prune finished ones.",
        subcommands = {RunsCommand.ListRuns.class, RunsCommand.Show.class, RunsCommand.Replay.class,
                RunsCommand.Cancel.class, RunsCommand.Prune.class})
final class RunsCommand implements Runnable {

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), "missing subcommand: list, show, replay, cancel or prune");
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = {"Runs newest first, a page at a time, filtered as GET /v1/runs filters them (the same "
                    + "checks and cursor): status, user, session, creation time. The next page is --after the "
                    + "next_cursor this one printed."})
    static final class ListRuns extends AdminCommand {
        @Option(names = "--status", paramLabel = "STATUS",
                description = "only runs in this status: pending, running, cancelling, done, failed, cancelled or "
                        + "expired")
        String status;

        @Option(names = "--user", paramLabel = "ID", description = "only runs of this user")
        String user;

        @Option(names = "--session", paramLabel = "ID", description = "only runs of this session")
        String session;

        @Option(names = "--created-after", paramLabel = "TIME",
                description = "only runs created after this RFC 3339 time, like 2026-01-01T12:00:00Z")
        String createdAfter;

        @Option(names = "--created-before", paramLabel = "TIME", description = "only runs created before this time")
        String createdBefore;

        @Option(names = "--limit", paramLabel = "N", defaultValue = "" + RunQuery.DEFAULT_LIMIT,
                description = "runs per page, 1 to " + RunQuery.MAX_LIMIT + "; default ${DEFAULT-VALUE}")
        String limit;

        @Option(names = "--after", paramLabel = "CURSOR", description = "the next_cursor of the previous page")
        String after;

        /** The query of the flags, checked before anything connects. */
        private RunQuery query;

        @Override
        boolean needsDatabase() {
            return true;
        }

        @Override
        public Integer call() throws Exception {
            query = query();
            return super.call();
        }

        @Override
        int run(Infrastructure infra, Settings s) {
            try (Runs runs = RunsFactory.create(infra, s, "admin")) {
                RunPage page = runs.list(query);
                Table t = new Table("id", "status", "user", "session", "attempts", "created", "error");
                List<Map<String, Object>> items = new ArrayList<>();
                for (Run r : page.runs()) {
                    t.row(r.id(), r.status().sql(), r.userId(), r.sessionId(), r.attempts(), r.createdAt(),
                            r.error().map(ListRuns::cut).orElse("-"));
                    items.add(Views.run(r));
                }
                String next = page.next().map(RunListRequest::cursor).orElse(null);
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("runs", items);
                out.put("next_cursor", next);
                print(t, out);
                if (!json && next != null) {
                    out().println("next page: --after " + next);
                }
            }
            return 0;
        }

        /** The HTTP API's parameters from the flags, checked by the same code, its errors naming the flags. */
        private RunQuery query() {
            Map<String, String> params = new HashMap<>();
            params.put("status", status);
            params.put("user", user);
            params.put("session", session);
            params.put("created_after", createdAfter);
            params.put("created_before", createdBefore);
            params.put("limit", limit);
            params.put("cursor", after);
            try {
                return RunListRequest.parse(params::get,
                        field -> field.equals("cursor") ? "--after" : "--" + field.replace('_', '-'));
            } catch (ApiError e) {
                throw new IllegalArgumentException(e.getMessage());
            }
        }

        private static String cut(String s) {
            String line = s.replace('\n', ' ');
            return line.length() <= 60 ? line : line.substring(0, 59) + "…";
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true,
            description = {"One run: status, attempts, last error, when its next attempt is due (next_attempt_at: "
                    + "set after a failed attempt with attempts left, by the runs' retry policy), and its replies."})
    static final class Show extends AdminCommand {
        @Parameters(paramLabel = "ID", description = "run id")
        String id;

        @Override
        boolean needsDatabase() {
            return true;
        }

        @Override
        int run(Infrastructure infra, Settings s) {
            UUID runId = runId(id);
            try (Runs runs = RunsFactory.create(infra, s, "admin")) {
                Run run = runs.get(runId).orElseThrow(() -> new IllegalArgumentException("no run " + id));
                Map<String, Object> m = Views.run(run);
                Table t = new Table("field", "value");
                m.forEach((k, v) -> t.row(k, v == null ? "-" : v));
                List<Map<String, Object>> replies = new ArrayList<>();
                for (StoredReply r : runs.replies(runId)) {
                    replies.add(Map.of("seq", r.seq(), "role", r.role(), "content", r.content()));
                    t.row("reply " + r.seq(), r.role() + ": " + r.content());
                }
                m.put("replies", replies);
                print(t, m);
            }
            return 0;
        }
    }

    /** A command that changes one run ({@code replay}, {@code cancel}) and prints its id and its status then. */
    abstract static class RunAction extends AdminCommand {
        @Parameters(paramLabel = "ID", description = "run id")
        String id;

        @Override
        boolean needsDatabase() {
            return true;
        }

        /** Changes the run and returns its status then. */
        abstract RunStatus act(Runs runs, UUID runId);

        @Override
        int run(Infrastructure infra, Settings s) {
            UUID runId = runId(id);
            try (Runs runs = RunsFactory.create(infra, s, "admin")) {
                RunStatus now;
                try {
                    now = act(runs, runId);
                } catch (RunNotFoundException | IllegalRunTransitionException e) {
                    throw new IllegalArgumentException(e.getMessage());
                }
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("run_id", runId.toString());
                out.put("status", now.sql());
                Table t = new Table("field", "value");
                out.forEach(t::row);
                print(t, out);
            }
            return 0;
        }
    }

    @Command(name = "replay", mixinStandardHelpOptions = true,
            description = {"Send a failed run back to pending (Runs.replay): its dead letter is replayed to its "
                    + "partition, or, when it has none (it failed by PostgreSQL's count of its attempts, or its dead "
                    + "letter was purged), a new trigger is published."})
    static final class Replay extends RunAction {
        @Override
        RunStatus act(Runs runs, UUID runId) {
            runs.replay(runId);
            return RunStatus.PENDING;
        }
    }

    @Command(name = "cancel", mixinStandardHelpOptions = true,
            description = {"Cancel a run that is not finished (Runs.cancel): a pending run, or a running one between "
                    + "attempts, is cancelled at once and never runs; a running run becomes cancelling: its handler is "
                    + "told, interrupted after the workers' cancel grace, and the run ends cancelled when the attempt "
                    + "ends, never retried. A done or failed run is refused."})
    static final class Cancel extends RunAction {
        @Override
        RunStatus act(Runs runs, UUID runId) {
            return runs.cancel(runId);
        }
    }

    /** A run id from the command line, or a usage error naming it. */
    static UUID runId(String id) {
        try {
            return UUID.fromString(id);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("run id must be a UUID: " + id);
        }
    }

    @Command(name = "prune", mixinStandardHelpOptions = true,
            description = {"Delete the runs that finished (done, failed, cancelled or expired) before a time, with their "
                    + "replies "
                    + "and effects, in batches that each lock only their own runs; never a pending (delayed ones "
                    + "too) or running run. Progress goes to stderr.",
                    "The database role needs DELETE: the migration role, or one given RunsSchema.pruneGrants "
                            + "(docs/security.md); the runtime role of migrate --grant-to has none."})
    static final class Prune extends AdminCommand {
        @Option(names = "--finished-before", required = true, paramLabel = "TIME",
                description = "an RFC 3339 time (2026-01-01T00:00:00Z) or a duration back from now (30d, 12h)")
        String finishedBefore;

        @Option(names = "--batch", paramLabel = "N", defaultValue = "1000",
                description = "runs deleted per statement, 1 to " + Runs.MAX_DELETE_BATCH + "; default ${DEFAULT-VALUE}")
        int batch;

        @Option(names = "--dry-run", description = "count the runs it would delete, and delete nothing")
        boolean dryRun;

        @Override
        boolean needsDatabase() {
            return true;
        }

        /** The bound, from --finished-before, read once: a duration is counted back from the command's start. */
        private Instant before;

        @Override
        public Integer call() throws Exception {
            before = bound(); // a bad flag is named before anything connects
            if (batch < 1 || batch > Runs.MAX_DELETE_BATCH) {
                throw new IllegalArgumentException("--batch must be between 1 and " + Runs.MAX_DELETE_BATCH + ", not "
                        + batch);
            }
            return super.call();
        }

        @Override
        int run(Infrastructure infra, Settings s) {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("finished_before", before.toString());
            try (Runs runs = RunsFactory.create(infra, s, "admin")) {
                long total = runs.countFinished(before);
                if (dryRun) {
                    out.put("would_delete", total);
                } else {
                    err().printf(Locale.ROOT, "deleting %,d runs finished before %s, %,d per batch%n", total, before,
                            batch);
                    long deleted = runs.deleteFinished(before, batch, n -> err().printf(Locale.ROOT,
                            "deleted %,d of %,d%n", n, total));
                    out.put("deleted", deleted);
                }
            }
            Table t = new Table("field", "value");
            out.forEach(t::row);
            print(t, out);
            return 0;
        }

        /** A time in the future would delete runs as they finish, during the prune: refused as a mistake. */
        private Instant bound() {
            Instant now = Instant.now();
            Instant t = TimeArgument.parse(finishedBefore, "--finished-before", now);
            if (t.isAfter(now)) {
                throw new IllegalArgumentException("--finished-before " + finishedBefore + " is in the future");
            }
            return t;
        }
    }
}
