package dev.runbus.server.cli;

import dev.runbus.server.Infrastructure;
import dev.runbus.server.Json;
import dev.runbus.server.Settings;
import dev.runbus.server.Table;
import picocli.CommandLine.Option;

/** An admin command: talks to servers given by URL, prints a table or, with --json, one JSON document. */
abstract class AdminCommand extends BaseCommand {

    @Option(names = "--json", description = "print JSON for scripts instead of a table")
    boolean json;

    /** Whether this command needs PostgreSQL besides Redis. */
    boolean needsDatabase() {
        return false;
    }

    abstract int run(Infrastructure infra, Settings s) throws Exception;

    @Override
    public Integer call() throws Exception {
        Settings s = settings();
        try (Infrastructure infra = Infrastructure.start(s, needsDatabase(), false, null, 2,
                new java.io.PrintWriter(java.io.Writer.nullWriter()))) {
            return run(infra, s);
        }
    }

    void print(Table table, Object asJson) {
        if (json) {
            out().println(Json.write(asJson));
        } else if (table.isEmpty()) {
            out().println("(none)");
        } else {
            table.print(out());
        }
    }
}
