package dev.runbus.server.cli;

import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
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
        return Settings.resolve(flags, System.getenv(), configFile());
    }

    private Path configFile() {
        if (connection.config != null) {
            return connection.config;
        }
        String env = System.getenv("RUNBUS_CONFIG");
        if (env != null && !env.isBlank()) {
            return Path.of(env);
        }
        Path local = Path.of("runbus.properties");
        return Files.isRegularFile(local) ? local : null;
    }

    PrintWriter out() {
        return spec.commandLine().getOut();
    }

    PrintWriter err() {
        return spec.commandLine().getErr();
    }
}
