package dev.runbus.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The command line of the benchmark.
 *
 * <pre>
 * --quick              fewer messages, shorter windows, one repeat: a smoke test, not a result
 * --scenarios a,b,...  drain, latency, runs, recovery, poison, memory, ordered, cluster, delay, hung-master,
 *                      redis8, flow (default: all; cluster and hung-master start Redis servers of their own: redis-server
 *                      on the PATH, or $RUNBUS_BENCH_REDIS_SERVER; redis8 runs on Redis 8.2 and later only); and
 *                      flow-kills and flow-rate, only when named: ten minutes each (one with --quick) of workers
 *                      killed under flow caps, and of one key's rate; and outbox, only when named: commit to handler
 *                      start of runs submitted in the caller's transaction
 * --repeats N          measurements per figure (default 5, with --quick 1): a target within ±10 % needs
 *                      five rounds before its min–max range says anything
 * --seed N             the seed of the random order of the contenders in each round (default: drawn, and
 *                      printed in the report, so that a run can be repeated in the same order)
 * --redis URI          default $RUNBUS_REDIS_URL or redis://127.0.0.1:6379
 * --database JDBC-URL  default $RUNBUS_DATABASE_URL or jdbc:postgresql://127.0.0.1:5432/test?user=postgres
 * --out FILE           the markdown report; default docs/benchmarks.md of the repository
 *                      (with --quick: runbus-bench/target/benchmarks-quick.md); the charts go next to it
 * --jfr DIR            record each scenario with Java Flight Recorder into DIR/scenario.jfr
 * --report-from FILE   measure nothing: write the report and charts again from saved results
 *                      (every run saves them as runbus-bench/target/NAME-results.ser, NAME as in --out)
 * </pre>
 */
public record BenchOptions(boolean quick, Set<String> scenarios, int repeats, String redisUri, String databaseUrl,
                           Path out, Path jfrDir, Sizes sizes, Path reportFrom, long seed) {

    public static final List<String> ALL_SCENARIOS = List.of("drain", "latency", "runs", "recovery", "poison", "memory",
            "ordered", "cluster", "delay", "hung-master", "redis8", "flow");

    /** Scenarios run only when named: their length is fixed by what they check, not by the rounds. */
    public static final List<String> NAMED_ONLY = List.of("flow-kills", "flow-rate", "outbox");

    /** Rounds of a full run: with fewer, a min–max range is too narrow to tell a target met from noise. */
    static final int DEFAULT_REPEATS = 5;

    /** How much work each scenario does. */
    public record Sizes(int drainMessages, int warmupMessages, List<Integer> consumerCounts, List<Integer> latencyRates,
                        int latencyConsumers, long latencyWarmupMillis, long latencyMeasureMillis, int runs,
                        int runsRate, long runsLatencyMillis, int referenceRuns, int pgPerRunRuns, int runsConcurrency,
                        int runsSubmitters, int recoveryInFlight, long recoveryMinIdleMillis,
                        long recoveryClaimIntervalMillis, int poisonEvery, int memoryMessages, int delayRate,
                        long delayScheduleMillis, int delayLoneEntries, int delayMoveEntries,
                        int delayRetryMessages) {

        static Sizes full() {
            return new Sizes(200_000, 30_000, List.of(1, 4, 16), List.of(5_000, 20_000), 4, 1_000, 5_000, 20_000,
                    2_000, 5_000, 20_000, 5_000, 64, 64, 500, 2_000, 500, 100, 1_000_000, 5_000,
                    10_000, 100, 200_000, 200_000);
        }

        static Sizes quick() {
            return new Sizes(40_000, 10_000, List.of(1, 4, 16), List.of(5_000, 20_000), 4, 500, 2_000, 4_000,
                    2_000, 2_000, 4_000, 1_000, 64, 64, 200, 2_000, 500, 100, 200_000, 5_000,
                    3_000, 30, 20_000, 40_000);
        }
    }

    public static BenchOptions parse(String... args) {
        boolean quick = false;
        Set<String> scenarios = new LinkedHashSet<>(ALL_SCENARIOS);
        Integer repeats = null;
        long seed = new java.security.SecureRandom().nextLong() & 0xFFFFFFFFL;
        String redis = env("RUNBUS_REDIS_URL", "redis://127.0.0.1:6379");
        String database = env("RUNBUS_DATABASE_URL", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
        Path out = null;
        Path jfr = null;
        Path reportFrom = null;
        List<String> list = new ArrayList<>();
        for (String a : args) {
            // exec:java passes -Dexec.args as one string; split it here as a shell would, on blanks
            list.addAll(Arrays.asList(a.trim().split("\\s+")));
        }
        list.removeIf(String::isEmpty);
        for (int i = 0; i < list.size(); i++) {
            String a = list.get(i);
            switch (a) {
                case "--quick":
                    quick = true;
                    break;
                case "--scenarios":
                    scenarios = new LinkedHashSet<>();
                    for (String s : value(list, ++i, a).split(",")) {
                        String name = s.trim().toLowerCase(Locale.ROOT);
                        if (!ALL_SCENARIOS.contains(name) && !NAMED_ONLY.contains(name)) {
                            throw new IllegalArgumentException("unknown scenario '" + s + "'; known: " + ALL_SCENARIOS
                                    + " and " + NAMED_ONLY);
                        }
                        scenarios.add(name);
                    }
                    break;
                case "--repeats":
                    repeats = Integer.parseInt(value(list, ++i, a));
                    if (repeats < 1) {
                        throw new IllegalArgumentException("--repeats must be at least 1");
                    }
                    break;
                case "--seed":
                    seed = Long.parseLong(value(list, ++i, a));
                    break;
                case "--redis":
                    redis = value(list, ++i, a);
                    break;
                case "--database":
                    database = value(list, ++i, a);
                    break;
                case "--out":
                    out = Paths.get(value(list, ++i, a));
                    break;
                case "--jfr":
                    jfr = Paths.get(value(list, ++i, a));
                    break;
                case "--report-from":
                    reportFrom = Paths.get(value(list, ++i, a));
                    break;
                case "--help":
                case "-h":
                    throw new IllegalArgumentException("usage");
                default:
                    throw new IllegalArgumentException("unknown option '" + a + "'");
            }
        }
        if (out == null) {
            Path root = repositoryRoot();
            out = quick ? root.resolve("runbus-bench/target/benchmarks-quick.md") : root.resolve("docs/benchmarks.md");
        }
        return new BenchOptions(quick, scenarios, repeats != null ? repeats : quick ? 1 : DEFAULT_REPEATS, redis,
                database,
                out.toAbsolutePath().normalize(), jfr, quick ? Sizes.quick() : Sizes.full(), reportFrom, seed);
    }

    public boolean runs(String scenario) {
        return scenarios.contains(scenario);
    }

    static String usage() {
        return "usage: Bench [--quick] [--scenarios " + String.join(",", ALL_SCENARIOS) + "] [--repeats N] [--seed N]"
                + " [--redis URI] [--database JDBC-URL] [--out FILE] [--jfr DIR] [--report-from FILE]";
    }

    /** Where a run that writes {@code out} saves its results: runbus-bench/target/NAME-results.ser. */
    static Path savedResults(Path out) {
        String name = out.getFileName().toString().replaceFirst("\\.md$", "");
        return repositoryRoot().resolve("runbus-bench/target/" + name + "-results.ser");
    }

    /** The repository root: the working directory, or its parent when started inside runbus-bench. */
    static Path repositoryRoot() {
        Path dir = Paths.get(System.getProperty("user.dir")).toAbsolutePath();
        for (Path p = dir; p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("runbus-bench")) && Files.isRegularFile(p.resolve("pom.xml"))) {
                return p;
            }
        }
        return dir;
    }

    private static String value(List<String> args, int i, String option) {
        if (i >= args.size()) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args.get(i);
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v;
    }
}
