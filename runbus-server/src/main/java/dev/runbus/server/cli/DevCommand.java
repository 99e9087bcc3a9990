package dev.runbus.server.cli;

import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import dev.runbus.server.embedded.EmbeddedServers;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The Redis and PostgreSQL a newcomer lacks, for the examples and their own code: the embedded servers of demo and
 * serve, kept running, their URLs printed as the variables the examples read. Standard output holds the two export
 * lines and nothing else, so that it can be redirected to a file to source; what the command says goes to stderr.
 */
@Command(name = "dev", mixinStandardHelpOptions = true,
        description = {"Start the embedded Redis and PostgreSQL for the examples and your own code, print their URLs "
                + "as two shell lines (export RUNBUS_REDIS_URL=..., export RUNBUS_DATABASE_URL=...) on standard "
                + "output, and keep them running until stopped.",
                "SIGTERM or Ctrl-C stops PostgreSQL, then Redis, and removes a temporary --data-dir; exit code 0. "
                        + "A development tool: each server has a random password, which the URLs carry."})
final class DevCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--config", paramLabel = "FILE", description = "properties file whose data-dir line is read; "
            + "default: RUNBUS_CONFIG, else ./runbus.properties if present")
    Path config;

    @Option(names = "--data-dir", paramLabel = "DIR", description = "data of the servers (env RUNBUS_DATA_DIR); kept, "
            + "so PostgreSQL's databases outlive a restart; default: a temporary folder deleted on exit")
    String dataDir;

    @Override
    public Integer call() throws Exception {
        Path dir = dataDir();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        // Listening before anything starts: a SIGTERM during start-up waits for it, then stops what started.
        try (GracefulStop stop = GracefulStop.install(Duration.ofSeconds(60));
             EmbeddedServers servers = EmbeddedServers.start(dir, true, true, err)) {
            // Said before the export lines, so that whoever reads those has this too.
            err.println("runbus dev: Redis on 127.0.0.1:" + servers.redisPort() + " and PostgreSQL on 127.0.0.1:"
                    + servers.postgresPort() + ", data in " + servers.dataDir()
                    + (servers.temporary() ? " (removed on exit)" : "") + ". Run the two export lines below in the"
                    + " shell of the examples (or source this command's standard output). Ctrl-C stops the servers.");
            err.flush();
            out.println(exportLine("RUNBUS_REDIS_URL", redisUrl(servers)));
            out.println(exportLine("RUNBUS_DATABASE_URL", databaseUrl(servers)));
            out.flush();
            err.println("runbus dev: " + stop.await() + ", stopping");
            err.flush();
        }
        err.println("runbus: stopped");
        err.flush();
        return 0;
    }

    /** The flag, else RUNBUS_DATA_DIR, else the config file's line, as for the other commands; null: temporary. */
    private Path dataDir() {
        Map<Setting, String> flags = new EnumMap<>(Setting.class);
        ConnectionOptions.put(flags, Setting.DATA_DIR, dataDir);
        var env = ((Commands) spec.root().userObject()).environment();
        Settings s = Settings.resolve(flags, env.variables(), env.configFile(config));
        return s.isSet(Setting.DATA_DIR) ? Path.of(s.get(Setting.DATA_DIR)) : null;
    }

    /** Lettuce's form, which the bus and Spring's starter read: the password as the URL's user information. */
    static String redisUrl(EmbeddedServers servers) {
        return servers.redisUri().replace("redis://", "redis://:" + servers.redisPassword() + "@");
    }

    /** pgjdbc's form: the user and the password as parameters (a password is base64url: nothing to escape). */
    static String databaseUrl(EmbeddedServers servers) {
        return "jdbc:postgresql://127.0.0.1:" + servers.postgresPort() + "/postgres?user=postgres&password="
                + servers.postgresPassword();
    }

    /** Single quotes: the JDBC URL's {@code &} would end the command in a shell. */
    private static String exportLine(String name, String value) {
        return "export " + name + "='" + value + "'";
    }
}
