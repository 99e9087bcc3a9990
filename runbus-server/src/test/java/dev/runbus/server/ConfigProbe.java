package dev.runbus.server;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/**
 * Run in a child JVM by {@link HermeticTest}: prints {@code runbus config --json} twice, one line each, first as
 * the tests run the command ({@link Cli}), then as a user's shell does (the process's own environment).
 */
public final class ConfigProbe {

    private ConfigProbe() {
    }

    public static void main(String[] args) {
        System.out.println(Cli.run("config", "--json").out.strip());
        StringWriter out = new StringWriter();
        CommandLine cl = RunbusCli.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.execute("config", "--json");
        System.out.println(out.toString().strip());
    }
}
