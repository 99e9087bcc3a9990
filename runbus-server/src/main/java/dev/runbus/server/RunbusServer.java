package dev.runbus.server;

import dev.runbus.runs.Runs;
import dev.runbus.server.http.HttpApi;
import java.io.PrintWriter;

/**
 * What {@code runbus serve} runs: the servers (or embedded ones), a worker, the sweeper and the HTTP API.
 * {@link #close()} stops them in order: HTTP first (no new runs), then the worker gracefully (running
 * handlers finish, acks are flushed), then the sweeper, then the connections and embedded servers.
 */
public final class RunbusServer implements AutoCloseable {

    private final Infrastructure infra;
    private final Runs runs;
    private final HttpApi api;

    private RunbusServer(Infrastructure infra, Runs runs, HttpApi api) {
        this.infra = infra;
        this.runs = runs;
        this.api = api;
    }

    public static RunbusServer start(Settings s, PrintWriter out) {
        HttpApi.Access access = HttpApi.check(s);
        Metrics metrics = new Metrics();
        var handler = RunsFactory.handler(s);
        int pool = RunsFactory.poolSize(s, 1) + 4;
        Infrastructure infra = Infrastructure.start(s, true, true, metrics, pool, out);
        Runs runs = null;
        try {
            runs = RunsFactory.create(infra, s, null);
            runs.startWorker(handler);
            runs.startSweeper();
            HttpApi api = HttpApi.start(runs, infra.bus(), infra.dataSource(), metrics, s, access);
            return new RunbusServer(infra, runs, api);
        } catch (RuntimeException e) {
            if (runs != null) {
                runs.close();
            }
            infra.close();
            throw e;
        }
    }

    public int port() {
        return api.port();
    }

    /** How the API checks its callers, for the start-up banner. */
    public String authentication() {
        return api.authentication();
    }

    /** Whether the API speaks HTTPS. */
    public boolean tls() {
        return api.tls();
    }

    public Infrastructure infrastructure() {
        return infra;
    }

    public Runs runs() {
        return runs;
    }

    @Override
    public void close() {
        api.close();
        runs.close();
        infra.close();
    }
}
