package dev.runbus.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;

/**
 * The benchmark: runbus next to the libraries a Java user would otherwise pick, on the same workloads, in
 * the same run. Writes a markdown report and its charts; see {@link BenchOptions} for the flags.
 *
 * <pre>
 * mvn -q -B install -DskipTests &amp;&amp; mvn -q -B -pl runbus-bench exec:java
 * </pre>
 */
public final class Bench {

    private Bench() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("java.awt.headless", "true");
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        BenchOptions options;
        try {
            options = BenchOptions.parse(args);
        } catch (IllegalArgumentException e) {
            if (!"usage".equals(e.getMessage())) {
                System.err.println(e.getMessage());
            }
            System.err.println(BenchOptions.usage());
            return;
        }
        if (options.reportFrom() != null) {
            Results saved = Results.load(options.reportFrom());
            Map<String, String> charts = Chart.writeAll(saved, options.out());
            Report.write(saved, charts, options.out());
            Progress.say("report written again from %s to %s", options.reportFrom(), options.out());
            return;
        }
        logToFile();
        Results results = new Results(options, machine(options));
        Progress.say("runbus benchmark: scenarios %s, %d round(s)%s, order seed %d; report: %s",
                options.scenarios(), options.repeats(), options.quick() ? ", quick" : "", options.seed(),
                options.out());
        long t0 = System.nanoTime();
        try (Env env = new Env(options)) {
            for (String scenario : options.scenarios()) {
                Progress.say("== %s", scenario);
                Recording jfr = startRecording(options, scenario);
                try {
                    run(scenario, env, results);
                } catch (Exception | LinkageError | AssertionError e) {
                    results.failures.put(scenario, e.toString());
                    Progress.say("%s failed: %s", scenario, e);
                    e.printStackTrace();
                } finally {
                    stopRecording(jfr, options, scenario);
                }
            }
        }
        results.elapsed = Duration.ofNanos(System.nanoTime() - t0);
        try {
            results.save(BenchOptions.savedResults(options.out()));
        } catch (Exception e) {
            Progress.say("could not save the results: %s", e);
        }
        Map<String, String> charts = Chart.writeAll(results, options.out());
        Report.write(results, charts, options.out());
        Progress.say("report written to %s (charts: %s)", options.out(), charts.values());
        for (Targets.Check c : Targets.evaluate(results)) {
            System.out.printf(Locale.ROOT, "  %-70s %-32s %s%n", c.target(), c.measured(),
                    c.verdict().text().replace("*", ""));
        }
    }

    /**
     * Library logs (runbus warns for every dead letter, for example) go to runbus-bench/target/bench.log, not
     * between the progress lines; they are still written, so their cost is part of the measurement.
     */
    private static void logToFile() {
        if (System.getProperty("org.slf4j.simpleLogger.logFile") != null) {
            return;
        }
        try {
            Path dir = BenchOptions.repositoryRoot().resolve("runbus-bench/target");
            Files.createDirectories(dir);
            Path file = dir.resolve("bench.log");
            System.setProperty("org.slf4j.simpleLogger.logFile", file.toString());
            Progress.say("library logs: %s", file);
        } catch (Exception e) {
            // keep logging to stderr
        }
    }

    private static void run(String scenario, Env env, Results results) throws Exception {
        switch (scenario) {
            case "drain":
                results.drain = DrainScenario.run(env);
                break;
            case "latency":
                results.latency = LatencyScenario.run(env);
                break;
            case "runs":
                results.runs = RunsScenario.run(env);
                break;
            case "recovery":
                results.recovery = RecoveryScenario.run(env);
                break;
            case "poison":
                results.poison = PoisonScenario.run(env);
                break;
            case "memory":
                results.memory = MemoryScenario.run(env);
                break;
            case "ordered":
                results.ordered = OrderedScenario.run(env);
                break;
            case "cluster":
                results.cluster = ClusterScenario.run(env);
                break;
            case "delay":
                results.delay = DelayScenario.run(env);
                break;
            case "hung-master":
                results.hungMaster = HungMasterScenario.run(env);
                break;
            case "redis8":
                results.redis8 = Redis8Scenario.run(env);
                break;
            case "flow":
                results.flow = FlowScenario.run(env);
                break;
            case "flow-kills":
                results.flowKills = FlowKillsScenario.run(env);
                break;
            case "outbox":
                results.outbox = OutboxScenario.run(env);
                break;
            case "flow-rate":
                results.flowRate = FlowRateScenario.run(env);
                break;
            default:
                throw new IllegalArgumentException(scenario);
        }
    }

    private static Recording startRecording(BenchOptions options, String scenario) throws Exception {
        if (options.jfrDir() == null) {
            return null;
        }
        Files.createDirectories(options.jfrDir());
        Recording r = new Recording(Configuration.getConfiguration("profile"));
        r.setName("runbus-bench-" + scenario);
        r.setToDisk(true);
        // Where threads wait: every JDBC socket read (PostgreSQL), and parks of a millisecond or more (a thread
        // waiting for a Lettuce reply, a handler slot, a queue).
        r.enable("jdk.SocketRead").withThreshold(Duration.ZERO).withStackTrace();
        r.enable("jdk.ThreadPark").withThreshold(Duration.ofMillis(1)).withStackTrace();
        r.start();
        return r;
    }

    private static void stopRecording(Recording r, BenchOptions options, String scenario) throws Exception {
        if (r == null) {
            return;
        }
        Path file = options.jfrDir().resolve(scenario + ".jfr");
        r.stop();
        r.dump(file);
        r.close();
        Progress.say("flight recording of %s: %s", scenario, file);
    }

    private static Results.Machine machine(BenchOptions options) {
        String redis;
        try (RedisAdmin admin = new RedisAdmin(options.redisUri())) {
            redis = admin.serverVersion();
        } catch (RuntimeException e) {
            redis = "unreachable (" + e.getMessage() + ")";
        }
        String postgres;
        try (Connection c = DriverManager.getConnection(options.databaseUrl());
             Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SHOW server_version")) {
            rs.next();
            postgres = rs.getString(1).split(" ")[0];
        } catch (Exception e) {
            postgres = "unreachable";
        }
        long memory = 0;
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean) {
            memory = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                    .getTotalMemorySize();
        }
        return new Results.Machine(Runtime.getRuntime().availableProcessors(), cpuModel(),
                String.format(Locale.ROOT, "%.0f GiB RAM", memory / (1024.0 * 1024 * 1024)),
                System.getProperty("os.name") + " " + System.getProperty("os.arch"),
                System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version")
                        + ", max heap " + Runtime.getRuntime().maxMemory() / (1024 * 1024) + " MB",
                redis, postgres, commit());
    }

    private static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Paths.get("/proc/cpuinfo"), StandardCharsets.UTF_8)) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim().replaceAll("\\s+", " ");
                }
            }
        } catch (Exception e) {
            // not Linux
        }
        return System.getProperty("os.arch");
    }

    /** The checked-out commit, read-only, with "-dirty" when the tree has uncommitted changes; empty when unknown. */
    private static String commit() {
        try {
            Process p = new ProcessBuilder("git", "describe", "--always", "--dirty", "--abbrev=7")
                    .directory(BenchOptions.repositoryRoot().toFile()).redirectErrorStream(true).start();
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line = r.readLine();
                return p.waitFor() == 0 && line != null ? line.trim() : "";
            }
        } catch (Exception e) {
            return "";
        }
    }
}
