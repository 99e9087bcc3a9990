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

    /** {@code args} then {@code common} (the flags every call of a test gives: servers, key prefix). */
    static Cli runWith(String[] common, String... args) {
        String[] all = new String[args.length + common.length];
        System.arraycopy(args, 0, all, 0, args.length);
        System.arraycopy(common, 0, all, args.length, common.length);
        return run(all);
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
