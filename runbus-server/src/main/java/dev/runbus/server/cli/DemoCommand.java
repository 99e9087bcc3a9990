package dev.runbus.server.cli;

import dev.runbus.server.demo.Demo;
import dev.runbus.server.demo.DemoNamespace;
import dev.runbus.server.demo.DemoReport;
import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;

@Command(name = "demo", mixinStandardHelpOptions = true,
        description = {"Run the whole pipeline: submit a realistic mix of runs, execute them with in-process workers, "
                + "and report. With no --redis-url / --database-url, embedded Redis and PostgreSQL are started.",
                "Ends with a summary table and one JSON line; exits 1 if a run did not finish or the figures break "
                        + "the plan: a run ended otherwise than planned, a duplicate submission was not absorbed, or "
                        + "a run's replies are not exactly one execution's, or (with --ordered) a run started before "
                        + "an earlier run of its user finished (order_violations, measured in PostgreSQL).",
                "The demo works in a namespace of its own, whatever RUNBUS_* variables or a config file say: a fresh "
                        + "key prefix and schema (removed afterwards, on any server), topic demo-runs, group "
                        + "demo-workers and its own handler; --key-prefix, --schema, --topic, --group, --handler "
                        + "and --handler-path are refused."})
final class DemoCommand extends BaseCommand {

    /** Short times so that poison runs use up their deliveries in seconds, not minutes; flags still win. */
    static final Map<Setting, String> DEFAULTS = Map.of(Setting.MIN_IDLE, "2s", Setting.CLAIM_INTERVAL, "500ms",
            Setting.SWEEP_INTERVAL, "2s", Setting.SWEEP_THRESHOLD, "20s", Setting.SHUTDOWN_TIMEOUT, "10s");

    /**
     * The demo's help as the demo behaves: the options it refuses ({@link DemoNamespace}) are hidden, and the
     * options it gives other defaults say the demo's. The options are shared with serve and worker (a mixin), whose
     * help keeps the production defaults.
     */
    static void adjustHelp(CommandSpec demo) {
        for (OptionSpec o : List.copyOf(demo.options())) {
            Setting setting = settingOf(o);
            if (setting == null) {
                continue;
            }
            if (DemoNamespace.OWN.contains(setting)) {
                demo.remove(o);
                demo.addOption(OptionSpec.builder(o).hidden(true).build());
            } else if (DEFAULTS.containsKey(setting)) {
                String[] text = o.description().clone();
                String last = text[text.length - 1];
                int at = last.lastIndexOf("default ");
                text[text.length - 1] = (at < 0 ? last + "; " : last.substring(0, at))
                        + "default " + DEFAULTS.get(setting) + " in the demo";
                demo.remove(o);
                demo.addOption(OptionSpec.builder(o).description(text).build());
            }
        }
    }

    private static Setting settingOf(OptionSpec o) {
        for (Setting s : Setting.values()) {
            if (o.longestName().equals("--" + s.key())) {
                return s;
            }
        }
        return null;
    }

    @Mixin
    WorkerOptions worker;

    @Option(names = "--runs", defaultValue = "1000", description = "runs to submit; default ${DEFAULT-VALUE}")
    int runs;

    @Option(names = "--users", defaultValue = "50", description = "users the runs come from; default ${DEFAULT-VALUE}")
    int users;

    @Option(names = "--workers", defaultValue = "2", description = "in-process workers; default ${DEFAULT-VALUE}")
    int workers;

    @Option(names = "--poison-rate", defaultValue = "0.01", description = "share of inputs that always fail; "
            + "default ${DEFAULT-VALUE}")
    double poisonRate;

    @Option(names = "--flaky-rate", defaultValue = "0.05", description = "share of inputs whose first attempt fails; "
            + "default ${DEFAULT-VALUE}")
    double flakyRate;

    @Option(names = "--duplicate-rate", defaultValue = "0.05", description = "share of submissions repeated with the "
            + "same idempotency key; default ${DEFAULT-VALUE}")
    double duplicateRate;

    @Option(names = "--kill-worker", description = "start one more worker as a separate process and kill it with "
            + "SIGKILL a third of the way through, to show the takeover")
    boolean killWorker;

    @Option(names = "--timeout", defaultValue = "5m", description = "give up after this long; default ${DEFAULT-VALUE}")
    String timeout;

    @Option(names = "--no-progress", description = "no progress bar")
    boolean noProgress;

    @Option(names = "--seed", defaultValue = "42", description = "seed of the generated mix; default ${DEFAULT-VALUE}")
    long seed;

    @Override
    void collectMore(Map<Setting, String> flags) {
        worker.collect(flags);
    }

    @Override
    public Integer call() throws Exception {
        check(runs >= 1, "--runs must be at least 1");
        check(users >= 1, "--users must be at least 1");
        check(workers >= 1, "--workers must be at least 1");
        check(rate(poisonRate) && rate(flakyRate) && rate(duplicateRate), "rates must be between 0 and 1");
        Duration limit = timeout();
        Settings s = settings().withDefaults(DEFAULTS);
        // Millisecond and a random tail: demos started at once on shared servers must not share a namespace.
        long stamp = System.currentTimeMillis() * 1000 + ThreadLocalRandom.current().nextInt(1000);
        s = DemoNamespace.isolated(s, stamp);
        s.validate();
        Demo.Options o = new Demo.Options(runs, users, workers, poisonRate, flakyRate, duplicateRate, killWorker,
                limit, !noProgress, seed);
        Thread demo = Thread.currentThread();
        DemoReport report;
        // Ctrl-C interrupts the demo, which then stops its workers and removes its data before it exits.
        try (GracefulStop stop = GracefulStop.install(Duration.ofSeconds(60), demo::interrupt)) {
            try {
                report = new Demo(s, o, environment(), out()).run();
            } catch (Exception e) {
                // Interrupted wherever it was: in a wait, or in a call that reports the interrupt its own way.
                if (!stop.requested()) {
                    throw e;
                }
                boolean removed = java.util.Arrays.stream(e.getSuppressed())
                        .noneMatch(x -> String.valueOf(x.getMessage()).startsWith("the demo could not remove"));
                err().println("runbus: demo stopped by " + stop.await() + (removed
                        ? "; its keys and schema were removed" : "; it could not remove all its data (above)"));
                return 130;
            }
        }
        report.printTo(out());
        for (String broken : report.brokenInvariants()) {
            err().println("runbus: " + broken);
        }
        return report.brokenInvariants().isEmpty() ? 0 : 1;
    }

    private Duration timeout() {
        try {
            return Settings.parseDuration(timeout);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--timeout: " + e.getMessage());
        }
    }

    private static boolean rate(double r) {
        return r >= 0 && r <= 1;
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
