package dev.runbus.server;

import dev.runbus.runs.Runs;
import dev.runbus.server.http.HttpApi;
import dev.runbus.server.web.Dashboard;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * What {@code runbus serve} runs: the servers (or embedded ones), a worker, the sweeper and the HTTP API.
 * {@link #close()} stops them in order: HTTP first (no new runs), then the worker gracefully (running
 * handlers finish, acks are flushed), then the sweeper, then the connections and embedded servers.
 * It is the one place that stops serve: the command calls it on SIGTERM (see {@code GracefulStop}).
 */
public final class RunbusServer implements AutoCloseable {

    private final Infrastructure infra;
    private final Runs runs;
    private final HttpApi api;
    private final Dashboard dashboard;
    private final PrintWriter out;
    private final String handlerName;
    private boolean closed;

    private RunbusServer(Infrastructure infra, Runs runs, HttpApi api, Dashboard dashboard, PrintWriter out,
                         String handlerName) {
        this.infra = infra;
        this.runs = runs;
        this.api = api;
        this.dashboard = dashboard;
        this.out = out;
        this.handlerName = handlerName;
    }

    /** Checks every setting before anything starts, then starts it all; see {@link Settings#validate()}. */
    public static RunbusServer start(Settings s, PrintWriter out) {
        s.validate();
        HttpApi.Access access = HttpApi.check(s);
        checkEmbedded(s);
        checkHandler(s);
        Metrics metrics = new Metrics().bindJvmAndProcess();
        var handler = RunsFactory.handler(s);
        int pool = RunsFactory.poolSize(s, 1) + 4;
        Infrastructure infra = Infrastructure.start(s, true, true, metrics, pool, out);
        Runs runs = null;
        Dashboard dashboard = null;
        try {
            runs = RunsFactory.create(infra, s, null, "serve-" + s.get(Setting.PORT));
            runs.startWorker(handler);
            runs.startSweeper();
            runs.schedules().startScheduler(); // one process fires at a time: the lease's holder
            dashboard = new Dashboard(infra.bus(), runs, metrics, s, access.sessions());
            HttpApi api = HttpApi.start(runs, infra.bus(), infra.dataSource(), metrics, s, access, dashboard::register);
            return new RunbusServer(infra, runs, api, dashboard, out, s.get(Setting.HANDLER));
        } catch (RuntimeException e) {
            if (dashboard != null) {
                dashboard.close();
            }
            if (runs != null) {
                runs.close();
            }
            infra.close();
            throw e;
        }
    }

    /**
     * Embedded servers are a development default: on an address others reach, serve starts them only when asked
     * for by name, so that a forgotten URL does not put a deployment on servers that live in a temporary folder.
     */
    static void checkEmbedded(Settings s) {
        boolean embedded = !s.isSet(Setting.REDIS_URL) || !s.isSet(Setting.DATABASE_URL);
        String host = s.get(Setting.HOST);
        boolean loopback;
        try {
            loopback = InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("--host " + host + " is not an address of this machine");
        }
        if (embedded && !loopback && !s.bool(Setting.EMBEDDED)) {
            String missing = !s.isSet(Setting.REDIS_URL) && !s.isSet(Setting.DATABASE_URL)
                    ? "--redis-url and --database-url are" : !s.isSet(Setting.REDIS_URL) ? "--redis-url is"
                    : "--database-url is";
            throw new IllegalArgumentException("refusing to start embedded servers for serve on " + host + ": "
                    + missing + " not given, and the embedded Redis and PostgreSQL are a development default (their"
                    + " data in a temporary folder unless --data-dir). Give --redis-url and --database-url (or"
                    + " RUNBUS_REDIS_URL, RUNBUS_DATABASE_URL), listen on 127.0.0.1, or ask for them with --embedded");
        }
    }

    /** The HTTP API's routes with their scopes. */
    public java.util.List<HttpApi.Route> routes() {
        return api.registeredRoutes();
    }

    /** The dashboard's routes with their scopes. */
    public java.util.List<HttpApi.Route> pageRoutes() {
        return api.pageRoutes();
    }

    /**
     * The default handler is the demo's echo ({@link DemoHandler}): right for a try-out on the embedded servers,
     * wrong for a deployment, where it would answer every run with its own input. On servers given by URL serve (and
     * worker, which runs on nothing else) is a deployment, so the handler must be named (a flag,
     * {@code RUNBUS_HANDLER} or the config file).
     */
    public static void checkHandler(Settings s) {
        boolean givenServers = s.isSet(Setting.REDIS_URL) || s.isSet(Setting.DATABASE_URL);
        if (givenServers && s.source(Setting.HANDLER) == Settings.Source.DEFAULT) {
            throw new IllegalArgumentException("serve and worker on --redis-url or --database-url need --handler CLASS (or"
                    + " RUNBUS_HANDLER): the default, " + DemoHandler.class.getName() + ", is the demo's echo, which"
                    + " answers every run with its own input. Give the RunHandler class that does the work, or"
                    + " --handler " + DemoHandler.class.getName() + " to run the echo on purpose");
        }
    }

    /** Said loudly in the banner when the echo handler answers the runs: nobody should mistake it for real work. */
    public String handlerWarning() {
        return handlerName.equals(DemoHandler.class.getName()) ? "WARNING: the handler is the demo's echo ("
                + handlerName + "): every run is answered with its own input; give --handler CLASS" : "";
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

    /**
     * Once, in order, each step reported on {@code out} so that an operator (and a test) can see the order:
     * nothing may stop before what depends on it has.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        // Each step runs whatever the one before it threw: a failed HTTP stop must not leave the worker undrained
        // or the embedded servers running (they have no shutdown hooks of their own).
        try {
            try {
                api.close();
            } finally {
                dashboard.close();
            }
            report("stopped HTTP API");
        } finally {
            try {
                runs.close();
                report("drained worker, stopped sweeper");
            } finally {
                try {
                    infra.close();
                } finally {
                    infra.metrics().close(); // the garbage collector's listeners of the JVM binders
                }
            }
        }
    }

    private void report(String line) {
        out.println(line);
        out.flush();
    }
}
