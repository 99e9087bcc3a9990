package dev.runbus.server.cli;

import dev.runbus.server.Json;
import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import dev.runbus.server.Table;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "config", mixinStandardHelpOptions = true,
        description = "Print the effective configuration (flags over environment over config file over defaults), "
                + "with secrets masked.")
final class ConfigCommand extends BaseCommand {

    @Mixin
    WorkerOptions worker;

    @Option(names = "--port", paramLabel = "PORT", description = "HTTP port of serve; default 8080")
    Integer port;

    @Option(names = "--json", description = "one JSON object instead of a table")
    boolean json;

    @Override
    void collectMore(Map<Setting, String> flags) {
        worker.collect(flags);
        ConnectionOptions.put(flags, Setting.PORT, port);
    }

    @Override
    public Integer call() {
        Settings s = settings();
        Map<Setting, String> values = s.masked();
        if (json) {
            Map<String, Object> out = new LinkedHashMap<>();
            values.forEach((k, v) -> {
                Map<String, Object> entry = new LinkedHashMap<>();
                entry.put("value", v);
                entry.put("source", s.source(k).name().toLowerCase(java.util.Locale.ROOT));
                out.put(k.key(), entry);
            });
            out().println(Json.write(out));
            return 0;
        }
        Table t = new Table("option", "value", "source", "environment");
        values.forEach((k, v) -> t.row(k.key(), v.isEmpty() ? "(none)" : v, s.source(k).name().toLowerCase(),
                k.envName()));
        t.print(out());
        if (s.configFile() != null) {
            out().println("config file: " + s.configFile().toAbsolutePath());
        }
        return 0;
    }
}
