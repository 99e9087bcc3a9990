package dev.runbus.server.cli;

import dev.runbus.server.Environment;
import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import java.io.PrintWriter;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** What every command shares: connection options, settings resolution, output streams. */
abstract class BaseCommand implements Callable<Integer> {

    @Mixin
    ConnectionOptions connection;

    @Spec
    CommandSpec spec;

    /** Flags of the options this command has beyond the connection ones. */
    void collectMore(Map<Setting, String> flags) {
    }

    Settings settings() {
        Map<Setting, String> flags = new EnumMap<>(Setting.class);
        connection.collect(flags);
        collectMore(flags);
        Environment env = environment();
        return Settings.resolve(flags, env.variables(), env.configFile(connection.config));
    }

    /** The environment the command line was made with, never the process's own behind its back. */
    Environment environment() {
        return ((Commands) spec.root().userObject()).environment();
    }

    PrintWriter out() {
        return spec.commandLine().getOut();
    }

    PrintWriter err() {
        return spec.commandLine().getErr();
    }
}
