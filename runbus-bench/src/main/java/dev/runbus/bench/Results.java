package dev.runbus.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.OutputStream;
import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Everything one run of the benchmark measured, and what failed; what the report is written from. Saved next
 * to the build ({@code runbus-bench/target/benchmarks-results.ser} for docs/benchmarks.md) so that {@code --report-from} can write the
 * report again without measuring again.
 */
final class Results implements Serializable {

    private static final long serialVersionUID = 1L;

    final boolean quick;
    final int repeats;
    /** The seed of the order of the contenders in each round ({@link RoundOrder}). */
    final long seed;
    final Machine machine;
    final Instant started = Instant.now();
    Duration elapsed = Duration.ZERO;
    DrainScenario.Result drain;
    LatencyScenario.Result latency;
    RunsScenario.Result runs;
    RecoveryScenario.Result recovery;
    PoisonScenario.Result poison;
    MemoryScenario.Result memory;
    OrderedScenario.Result ordered;
    ClusterScenario.Result cluster;
    /** Null in results saved before the delay scenario existed. */
    DelayScenario.Result delay;
    /** Null in results saved before the hung-master scenario existed. */
    HungMasterScenario.Result hungMaster;
    /** Null in results saved before the redis8 scenario existed, and on servers older than Redis 8.2. */
    Redis8Scenario.Result redis8;
    /** Null in results saved before the flow scenario existed. */
    FlowScenario.Result flow;
    /** Null unless the flow-kills scenario was asked for. */
    FlowKillsScenario.Result flowKills;
    /** Null unless the flow-rate scenario was asked for. */
    FlowRateScenario.Result flowRate;
    /** Null unless the outbox scenario was asked for. */
    OutboxScenario.Result outbox;
    /** Scenario name → why it could not be measured. */
    final Map<String, String> failures = new LinkedHashMap<>();

    Results(BenchOptions options, Machine machine) {
        this.quick = options.quick();
        this.repeats = options.repeats();
        this.seed = options.seed();
        this.machine = machine;
    }

    /** Where the measurements ran. */
    record Machine(int cores, String cpu, String memory, String os, String jvm, String redis, String postgres,
                   String commit) implements Serializable {
    }

    void save(Path file) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        try (OutputStream out = Files.newOutputStream(file); ObjectOutputStream o = new ObjectOutputStream(out)) {
            o.writeObject(this);
        }
    }

    static Results load(Path file) throws IOException, ClassNotFoundException {
        try (InputStream in = Files.newInputStream(file); ObjectInputStream o = new ObjectInputStream(in)) {
            return (Results) o.readObject();
        }
    }
}
