package dev.runbus.server;

import dev.runbus.Inspector;
import dev.runbus.runs.IdempotencyConflictException;
import dev.runbus.runs.RunHandler;
import dev.runbus.runs.Runs;
import dev.runbus.runs.SubmitResult;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The whole pipeline on one machine: submits a realistic mix, runs workers in this process, optionally kills a
 * worker process mid-way to show the takeover, waits until every run is done or failed, and reports.
 */
public final class Demo {

    /** Options of a demo. */
    public record Options(int runs, int users, int workers, double poisonRate, double flakyRate, double duplicateRate,
                          boolean killWorker, Duration timeout, boolean progress, long seed) {
    }

    private final Settings settings;
    private final Options options;
    private final Environment environment;
    private final PrintWriter out;

    /** @param environment what the worker process to kill inherits: its variables and working directory */
    public Demo(Settings settings, Options options, Environment environment, PrintWriter out) {
        this.settings = settings;
        this.options = options;
        this.environment = environment;
        this.out = out;
    }

    /** Runs the demo; returns the report. */
    public DemoReport run() throws Exception {
        DemoPlan plan = DemoPlan.create(options.runs(), options.users(), options.poisonRate(), options.flakyRate(),
                options.duplicateRate(), options.seed());
        Metrics metrics = new Metrics();
        RunHandler handler = RunsFactory.handler(settings);
        int pool = RunsFactory.poolSize(settings, options.workers());
        try (Infrastructure infra = Infrastructure.start(settings, true, true, metrics, pool, out)) {
            List<Runs> workers = new ArrayList<>();
            Process victim = null;
            try {
                for (int i = 1; i <= options.workers(); i++) {
                    Runs r = RunsFactory.create(infra, settings, "demo-worker-" + i);
                    r.startWorker(handler);
                    workers.add(r);
                }
                workers.get(0).startSweeper();
                if (options.killWorker()) {
                    victim = startVictim(infra);
                }
                out.printf("demo: %,d submissions (%,d runs, %d poison, %d duplicate submissions) over %d users, "
                        + "%d in-process workers%s%n", plan.submissions().size(), options.runs(), plan.poisonRuns(),
                        plan.duplicates(), options.users(), options.workers(), victim != null
                                ? " and one worker process to kill" : "");
                if (settings.bool(Setting.ORDERED)) {
                    out.printf("demo: runs in per-user order over %s partitions of topic %s%n",
                            settings.get(Setting.PARTITIONS), settings.get(Setting.TOPIC));
                }
                out.printf("demo: Redis key prefix %s, PostgreSQL schema %s%s%n", settings.get(Setting.KEY_PREFIX),
                        settings.get(Setting.SCHEMA), infra.isEmbedded() ? "" : " (a demo's own are removed after it)");
                out.flush();
                long start = System.nanoTime();
                AtomicLong absorbed = new AtomicLong();
                Progress progress = new Progress(out, options.runs(), options.progress());
                submitAll(workers.get(0), plan, absorbed);
                Process killed = victim;
                waitForAll(infra, progress, killed, start);
                double elapsed = (System.nanoTime() - start) / 1e9;
                progress.finish();
                long dead = infra.bus().deadLetters().count(settings.get(Setting.TOPIC));
                return DemoReport.read(infra.dataSource(), settings.get(Setting.SCHEMA), plan, dead, absorbed.get(),
                        settings.bool(Setting.ORDERED), elapsed);
            } finally {
                if (victim != null && victim.isAlive()) {
                    victim.destroyForcibly();
                }
                workers.forEach(Runs::close);
                cleanUp(infra);
            }
        }
    }

    private void submitAll(Runs runs, DemoPlan plan, AtomicLong absorbed) throws InterruptedException {
        ExecutorService submitters = Executors.newFixedThreadPool(4);
        AtomicInteger next = new AtomicInteger();
        List<DemoPlan.Submission> all = plan.submissions();
        for (int t = 0; t < 4; t++) {
            submitters.execute(() -> {
                for (int i = next.getAndIncrement(); i < all.size(); i = next.getAndIncrement()) {
                    try {
                        SubmitResult r = runs.submit(all.get(i).run());
                        if (!r.created()) {
                            absorbed.incrementAndGet();
                        }
                    } catch (IdempotencyConflictException e) {
                        throw new IllegalStateException("demo plan reused a key with another body", e);
                    }
                }
            });
        }
        submitters.shutdown();
        if (!submitters.awaitTermination(options.timeout().toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("submitting took longer than " + options.timeout());
        }
    }

    private void waitForAll(Infrastructure infra, Progress progress, Process victim, long start) throws Exception {
        long deadline = start + options.timeout().toNanos();
        boolean killed = false;
        while (true) {
            long[] c = DemoReport.statusCounts(infra.dataSource(), settings.get(Setting.SCHEMA));
            progress.update(c[1], c[2], (System.nanoTime() - start) / 1e9);
            if (victim != null && !killed && c[1] + c[2] >= options.runs() / 3) {
                kill(infra, victim);
                killed = true;
            }
            if (c[0] >= options.runs() && c[1] + c[2] >= options.runs()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not every run finished within " + options.timeout() + ": " + c[1]
                        + " done, " + c[2] + " failed of " + options.runs());
            }
            Thread.sleep(200);
        }
    }

    /**
     * A worker in its own JVM, so that it can be killed like a crashed machine. It gets this demo's settings
     * as its only {@code RUNBUS_*} variables, so that it works on the same keys and tables whatever the
     * caller's environment holds.
     */
    private Process startVictim(Infrastructure infra) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = List.of(java, "-cp", System.getProperty("java.class.path"), RunbusCli.class.getName(),
                "worker", "--consumer", "demo-victim");
        ProcessBuilder builder = new ProcessBuilder(cmd).directory(environment.workingDirectory().toFile())
                .redirectErrorStream(true);
        builder.environment().clear();
        builder.environment().putAll(environment.forChild(settings.with(Map.of(Setting.REDIS_URL, infra.redisUri(),
                Setting.DATABASE_URL, infra.jdbcUrl()))));
        Process p = builder.start();
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = r.readLine()) != null) {
            if (line.contains("ready")) {
                Thread drain = new Thread(() -> {
                    try {
                        while (r.readLine() != null) {
                            // keep the pipe empty
                        }
                    } catch (IOException ignored) {
                        // the process was killed
                    }
                }, "demo-victim-output");
                drain.setDaemon(true);
                drain.start();
                return p;
            }
        }
        throw new IllegalStateException("the worker process to kill did not start");
    }

    private void kill(Infrastructure infra, Process victim) throws InterruptedException {
        long holding = 0;
        for (Inspector.ConsumerInfo c : infra.bus().inspector().consumers(settings.get(Setting.TOPIC),
                settings.get(Setting.GROUP))) {
            if (c.name().equals("demo-victim")) {
                holding = c.pending();
            }
        }
        victim.destroyForcibly();
        victim.waitFor();
        out.printf("%nkilled worker demo-victim (pid %d) with SIGKILL, holding %d deliveries; the others take them "
                + "over after --min-idle %s%n", victim.pid(), holding, settings.get(Setting.MIN_IDLE));
        out.flush();
    }

    /**
     * A demo on servers it did not start used a schema and key prefix of its own (unless given); it leaves
     * nothing behind.
     */
    private void cleanUp(Infrastructure infra) throws SQLException {
        if (infra.isEmbedded()) {
            return;
        }
        if (settings.source(Setting.SCHEMA) == Settings.Source.DEFAULT
                && settings.get(Setting.SCHEMA).startsWith("runbus_demo_")) {
            try (Connection c = infra.dataSource().getConnection(); Statement st = c.createStatement()) {
                st.execute("DROP SCHEMA IF EXISTS " + settings.get(Setting.SCHEMA) + " CASCADE");
            }
        }
        if (settings.source(Setting.KEY_PREFIX) == Settings.Source.DEFAULT
                && settings.get(Setting.KEY_PREFIX).startsWith("runbus-demo-")) {
            dev.runbus.KeyPrefix.deleteAll(infra.redisUri(), settings.get(Setting.KEY_PREFIX));
        }
    }

    /** A progress bar with live counters, redrawn in place on a terminal, a line every 2 s otherwise. */
    static final class Progress {
        private final PrintWriter out;
        private final int total;
        private final boolean enabled;
        private final boolean terminal = System.console() != null;
        private long lastLine;

        Progress(PrintWriter out, int total, boolean enabled) {
            this.out = out;
            this.total = total;
            this.enabled = enabled;
        }

        void update(long done, long failed, double seconds) {
            if (!enabled) {
                return;
            }
            long now = System.nanoTime();
            if (!terminal && now - lastLine < 2_000_000_000L) {
                return;
            }
            lastLine = now;
            int width = 30;
            int filled = (int) Math.min(width, (done + failed) * width / Math.max(1, total));
            String bar = "[" + "#".repeat(filled) + ".".repeat(width - filled) + "]";
            String line = String.format("%s %,d/%,d  done %,d  failed %,d  %.1f s", bar, done + failed, total, done,
                    failed, seconds);
            out.print(terminal ? "\r" + line : line + "\n");
            out.flush();
        }

        void finish() {
            if (enabled && terminal) {
                out.println();
            }
        }
    }
}
