package dev.runbus.server.cli;

import dev.runbus.runs.Run;
import dev.runbus.runs.Runs;
import dev.runbus.runs.StoredReply;
import dev.runbus.server.Infrastructure;
import dev.runbus.server.RunsFactory;
import dev.runbus.server.Settings;
import dev.runbus.server.Table;
import dev.runbus.server.Views;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

@Command(name = "runs", mixinStandardHelpOptions = true, description = "Runs in PostgreSQL: show one.",
        subcommands = {RunsCommand.Show.class})
final class RunsCommand implements Runnable {

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), "missing subcommand: show");
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
            UUID runId;
            try {
                runId = UUID.fromString(id);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("run id must be a UUID: " + id);
            }
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
}
