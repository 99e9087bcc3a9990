package dev.runbus.server;

import dev.runbus.server.cli.Commands;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import picocli.CommandLine;

/** Runs the runbus command in this JVM, in a {@link Hermetic} environment, and keeps what it printed. */
final class Cli {

    final int exitCode;
    final String out;
    final String err;

    private Cli(int exitCode, String out, String err) {
        this.exitCode = exitCode;
        this.out = out;
        this.err = err;
    }

    static Cli run(String... args) {
        return run(Hermetic.environment(), args);
    }

    static Cli run(Environment environment, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = Commands.commandLine(environment);
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute(args);
        return new Cli(code, out.toString(), err.toString());
    }

    String lastLine() {
        List<String> lines = out.lines().filter(l -> !l.isBlank()).toList();
        return lines.get(lines.size() - 1);
    }
}
