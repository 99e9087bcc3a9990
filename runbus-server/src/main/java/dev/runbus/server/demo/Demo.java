package dev.runbus.server.demo;

import dev.runbus.Inspector;
import dev.runbus.runs.IdempotencyConflictException;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.RunHandler;
import dev.runbus.runs.Runs;
import dev.runbus.runs.SubmitResult;
import dev.runbus.server.DemoHandler;
import dev.runbus.server.Environment;
import dev.runbus.server.Infrastructure;
import dev.runbus.server.RunbusCli;
import dev.runbus.server.RunsFactory;
import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

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
    private final RunHandler handler;
    private final DemoPlan plan;

    /**
     * @param settings    as {@link DemoNamespace#isolated} returns them
     * @param environment what the worker process to kill inherits: its variables (not its RUNBUS_* ones)
     */
    public Demo(Settings settings, Options options, Environment environment, PrintWriter out) {
        this(settings, options, environment, out, new DemoHandler(), DemoPlan.create(options.runs(), options.users(),
                options.poisonRate(), options.flakyRate(), options.duplicateRate(), options.seed()));
    }

    /** With another handler or plan than the demo's: for tests that break the demo on purpose. */
    public Demo(Settings settings, Options options, Environment environment, PrintWriter out, RunHandler handler,
         DemoPlan plan) {
        this.settings = settings;
        this.options = options;
        this.environment = environment;
        this.out = out;
        this.handler = handler;
        this.plan = plan;
    }

    /** Runs the demo; returns the report. Whatever the outcome, the demo's keys and schema are gone after. */
    public DemoReport run() throws Exception {
        int pool = RunsFactory.poolSize(settings, options.workers());
        out.printf("demo: Redis key prefix %s, PostgreSQL schema %s (removed after the demo)%n",
                settings.get(Setting.KEY_PREFIX), settings.get(Setting.SCHEMA));
        out.flush();
        try (Infrastructure infra = Infrastructure.start(settings, true, true, null, pool, out)) {
            List<Runs> workers = new ArrayList<>();
            Process victim = null;
            Throwable failure = null;
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
            } catch (Throwable t) {
                failure = t;
                throw t;
            } finally {
                // A Ctrl-C interrupts this thread; the stop and the clean-up below must not be cut short by it.
                boolean interrupted = Thread.interrupted();
                if (victim != null && victim.isAlive()) {
                    victim.destroyForcibly();
                }
                closeAll(workers);
                List<String> left = DemoNamespace.remove(infra, settings);
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
                if (!left.isEmpty()) {
                    IllegalStateException e = new IllegalStateException("the demo could not remove its data: "
                            + String.join("; ", left));
                    if (failure == null) {
                        throw e;
                    }
                    failure.addSuppressed(e);
                    out.println("demo: " + e.getMessage());
                }
            }
        }
    }

    /**
     * Submits the plan from 4 threads. The first failed submission stops them all and fails the demo with its
     * cause: a demo whose runs were not all submitted can only wait out its timeout for them.
     */
    private void submitAll(Runs runs, DemoPlan plan, AtomicLong absorbed) throws InterruptedException {
        ExecutorService submitters = Executors.newFixedThreadPool(4);
        AtomicInteger next = new AtomicInteger();
        AtomicReference<RuntimeException> failed = new AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        List<DemoPlan.Submission> all = plan.submissions();
        for (int t = 0; t < 4; t++) {
            submitters.execute(() -> {
                for (int i = next.getAndIncrement(); i < all.size() && failed.get() == null && !stop.get();
                     i = next.getAndIncrement()) {
                    NewRun run = all.get(i).run();
                    try {
                        SubmitResult r = runs.submit(run);
                        if (!r.created()) {
                            absorbed.incrementAndGet();
                        }
                    } catch (IdempotencyConflictException e) {
                        failed.compareAndSet(null, new IllegalStateException("the demo plan reused key "
                                + run.idempotencyKey() + " with another body", e));
                    } catch (RuntimeException e) {
                        failed.compareAndSet(null, new IllegalStateException("submitting demo run "
                                + run.idempotencyKey() + " failed: " + e.getMessage(), e));
                    }
                }
            });
        }
        submitters.shutdown();
        boolean finished;
        try {
            finished = submitters.awaitTermination(options.timeout().toMillis(), TimeUnit.MILLISECONDS);
        } finally {
            // Stopped for good before the demo cleans up: a submission after it would publish its key again.
            stop.set(true);
            submitters.shutdownNow();
            awaitUninterruptibly(submitters);
        }
        if (failed.get() != null) {
            throw failed.get();
        }
        if (!finished) {
            throw new IllegalStateException("submitting took longer than " + options.timeout());
        }
    }

    /**
     * Closes the workers side by side: each drains the runs it has in flight (up to the shutdown timeout), and one
     * after the other a Ctrl-C waited for the sum of their drains.
     */
    private static void closeAll(List<Runs> workers) {
        ExecutorService closing = Executors.newFixedThreadPool(Math.max(1, workers.size()));
        workers.forEach(w -> closing.execute(w::close));
        closing.shutdown();
        boolean interrupted = false;
        while (!closing.isTerminated()) {
            try {
                closing.awaitTermination(1, TimeUnit.MINUTES);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private static void awaitUninterruptibly(ExecutorService pool) {
        boolean interrupted = false;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!pool.isTerminated() && System.nanoTime() < deadline) {
            try {
                pool.awaitTermination(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
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
        // It lives for seconds, until the demo kills it: the client compiler alone and the serial collector start it
        // in about a quarter of the time on a busy machine, and leave the cores to the demo's own workers.
        List<String> cmd = List.of(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp",
                System.getProperty("java.class.path"), RunbusCli.class.getName(), "worker", "--consumer", "demo-victim");
        // In a folder of its own: a runbus.properties where the demo was started must not fill in what the
        // demo's settings leave empty.
        java.io.File folder = Files.createTempDirectory("runbus-demo-victim").toFile();
        folder.deleteOnExit();
        ProcessBuilder builder = new ProcessBuilder(cmd).directory(folder).redirectErrorStream(true);
        builder.environment().clear();
        builder.environment().putAll(environment.forChild(settings.with(infra.forChild())));
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
