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

    @Option(names = "--host", paramLabel = "ADDRESS", description = "address to listen on; default 127.0.0.1. Any "
            + "other than a loopback address needs --api-tokens-file (or --insecure-no-auth)")
    String host;

    @Option(names = "--port", paramLabel = "PORT", description = "HTTP port; default 8080")
    Integer port;

    @Option(names = "--max-body", paramLabel = "BYTES", description = "largest request body; default 65536")
    Integer maxBody;

    @Option(names = "--api-tokens-file", paramLabel = "FILE", description = "API tokens, one NAME:SCOPES:SHA256 "
            + "line each, as 'runbus token create' prints them (or env RUNBUS_API_TOKENS with the lines); "
            + "default: none, which is allowed on a loopback address only (then serve answers only a loopback Host, "
            + "no cross-site Origin, and POSTs only as application/json); a file without a token line is an error")
    String apiTokensFile;

    @Option(names = "--insecure-no-auth", description = "serve a non-loopback address without tokens: anyone who "
            + "reaches the port can submit, read and replay. Warned at start and in /health")
    Boolean insecureNoAuth;

    @Option(names = "--embedded", description = "start the embedded Redis and PostgreSQL (when --redis-url or "
            + "--database-url is not given) even though --host is not a loopback address. They are a development "
            + "default: password-protected, but on this machine's disk and gone with a temporary --data-dir")
    Boolean embedded;

    @Option(names = "--tls-cert", paramLabel = "PEM", description = "certificate chain (PEM): serve HTTPS; with "
            + "--tls-key")
    String tlsCert;

    @Option(names = "--tls-key", paramLabel = "PEM", description = "private key of --tls-cert (PEM, PKCS#8, "
            + "unencrypted)")
    String tlsKey;

    @Option(names = "--max-header-size", paramLabel = "BYTES", description = "largest request line and headers; "
            + "default 8192")
    Integer maxHeaderSize;

    @Option(names = "--request-timeout", paramLabel = "DURATION", description = "a request body must arrive within "
            + "this, from its first read; default 10s")
    String requestTimeout;

    @Option(names = "--idle-timeout", paramLabel = "DURATION", description = "an idle connection is closed after "
            + "this; default 30s")
    String idleTimeout;

    @Option(names = "--api-statement-timeout", paramLabel = "DURATION", description = "the longest PostgreSQL may "
            + "take over one read of runs for the API and the dashboard; more answers 503; 0s: no limit; default 5s")
    String apiStatementTimeout;

    @Option(names = "--max-event-streams", paramLabel = "N", description = "event streams open at once per token "
            + "(per address without tokens); default 16")
    Integer maxEventStreams;

    @Option(names = "--submit-rate", paramLabel = "N", description = "run submissions per second per token (per "
            + "address without tokens), in bursts of up to N; 0: no limit; default 1000")
    Integer submitRate;

    @Option(names = "--read-rate", paramLabel = "N", description = "reads (GET) per second per token (per address "
            + "without tokens), in bursts of up to N; 0: no limit; default 100")
    Integer readRate;

    @Option(names = "--max-in-flight-per-caller", paramLabel = "N", description = "requests answered at once per "
            + "token (per address without tokens), event streams not counted; more answer 503; default 32")
    Integer maxInFlightPerCaller;

    @Option(names = "--max-in-flight", paramLabel = "N", description = "requests answered at once in all, event "
            + "streams not counted; more answer 503; at most 200; default 128")
    Integer maxInFlight;

    @Option(names = "--sign-in-rate", paramLabel = "N", description = "dashboard sign-in attempts per minute per "
            + "address, in bursts of up to N; 0: no limit; default 10")
    Integer signInRate;

    @Option(names = "--public-url", paramLabel = "URL", description = "the URL browsers reach serve by behind a "
            + "proxy (e.g. https://runbus.example.com): accepted as the sign-in's origin; https makes the cookie "
            + "Secure and adds HSTS; default: none")
    String publicUrl;

    @Override
    void collectMore(Map<Setting, String> flags) {
        worker.collect(flags);
        ConnectionOptions.put(flags, Setting.HOST, host);
        ConnectionOptions.put(flags, Setting.PORT, port);
        ConnectionOptions.put(flags, Setting.MAX_BODY, maxBody);
        ConnectionOptions.put(flags, Setting.API_TOKENS_FILE, apiTokensFile);
        ConnectionOptions.put(flags, Setting.INSECURE_NO_AUTH, insecureNoAuth);
        ConnectionOptions.put(flags, Setting.EMBEDDED, embedded);
        ConnectionOptions.put(flags, Setting.TLS_CERT, tlsCert);
        ConnectionOptions.put(flags, Setting.TLS_KEY, tlsKey);
        ConnectionOptions.put(flags, Setting.MAX_HEADER_SIZE, maxHeaderSize);
        ConnectionOptions.put(flags, Setting.REQUEST_TIMEOUT, requestTimeout);
        ConnectionOptions.put(flags, Setting.IDLE_TIMEOUT, idleTimeout);
        ConnectionOptions.put(flags, Setting.API_STATEMENT_TIMEOUT, apiStatementTimeout);
        ConnectionOptions.put(flags, Setting.MAX_EVENT_STREAMS, maxEventStreams);
        ConnectionOptions.put(flags, Setting.SUBMIT_RATE, submitRate);
        ConnectionOptions.put(flags, Setting.READ_RATE, readRate);
        ConnectionOptions.put(flags, Setting.MAX_IN_FLIGHT_PER_CALLER, maxInFlightPerCaller);
        ConnectionOptions.put(flags, Setting.MAX_IN_FLIGHT, maxInFlight);
        ConnectionOptions.put(flags, Setting.SIGN_IN_RATE, signInRate);
        ConnectionOptions.put(flags, Setting.PUBLIC_URL, publicUrl);
    }

    @Override
    public Integer call() throws InterruptedException {
        Settings s = settings();
        s.validate(); // before the shutdown timeout is read below (RunbusServer.start checks them again)
        // Listening before anything starts: a SIGTERM during start-up waits for it, then stops it all in order.
        try (GracefulStop stop = GracefulStop.install(s.duration(Setting.SHUTDOWN_TIMEOUT).plusSeconds(60))) {
            RunbusServer server = RunbusServer.start(s, out());
            out().println("runbus serving on " + (server.tls() ? "https" : "http") + "://" + s.get(Setting.HOST) + ":"
                    + server.port() + " (Redis " + Settings.mask(server.infrastructure().redisUri()) + ", PostgreSQL "
                    + Settings.mask(server.infrastructure().jdbcUrl()) + "); " + server.authentication()
                    + embeddedNote(server) + handlerNote(server));
            out().println("dashboard: " + (server.tls() ? "https" : "http") + "://" + s.get(Setting.HOST) + ":"
                    + server.port() + "/");
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

    private static String handlerNote(RunbusServer server) {
        String warning = server.handlerWarning();
        return warning.isEmpty() ? "" : System.lineSeparator() + warning;
    }

    /** Said at start, so that nobody mistakes the development default for a deployment. */
    private static String embeddedNote(RunbusServer server) {
        String which = server.infrastructure().embeddedServers();
        return which.isEmpty() ? "" : "; embedded " + which + ": a development default, not for production (give "
                + "--redis-url and --database-url)";
    }
}
