package dev.runbus.server.cli;

import dev.runbus.server.RunbusServer;
import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "serve", mixinStandardHelpOptions = true,
        description = {"Run the HTTP API, a worker, the reclaimer, the janitor and the sweeper until stopped.",
                "SIGTERM or Ctrl-C stops gracefully, in order: the HTTP API stops taking requests, running handlers "
                        + "finish and acks are flushed, the sweeper stops, then the connections close and last the "
                        + "embedded servers stop; exit code 0. What did not finish stays pending and is delivered "
                        + "again."})
final class ServeCommand extends BaseCommand {

    @Mixin
    WorkerOptions worker;

    @Option(names = "--host", paramLabel = "ADDRESS", description = "address to listen on; default 127.0.0.1 "
            + "(any other needs API tokens or --insecure-no-auth)")
    String host;

    @Option(names = "--port", paramLabel = "PORT", description = "HTTP port; default 8080")
    Integer port;

    @Option(names = "--max-body", paramLabel = "BYTES", description = "largest request body; default 65536")
    Integer maxBody;

    @Override
    void collectMore(Map<Setting, String> flags) {
        worker.collect(flags);
        ConnectionOptions.put(flags, Setting.HOST, host);
        ConnectionOptions.put(flags, Setting.PORT, port);
        ConnectionOptions.put(flags, Setting.MAX_BODY, maxBody);
    }

    @Override
    public Integer call() throws InterruptedException {
        Settings s = settings();
        s.validate();
        // Listening before anything starts: a SIGTERM during start-up waits for it, then stops it all in order.
        try (GracefulStop stop = GracefulStop.install(s.duration(Setting.SHUTDOWN_TIMEOUT).plusSeconds(60))) {
            RunbusServer server = RunbusServer.start(s, out());
            out().println("runbus serving on http://" + s.get(Setting.HOST) + ":" + server.port() + " (Redis "
                    + Settings.mask(server.infrastructure().redisUri()) + ", PostgreSQL "
                    + Settings.mask(server.infrastructure().jdbcUrl()) + ")");
            out().flush();
            String why = stop.await();
            err().println("runbus: " + why + ", stopping gracefully");
            err().flush();
            server.close();
            err().println("runbus: stopped");
            err().flush();
        }
        return 0;
    }
}
