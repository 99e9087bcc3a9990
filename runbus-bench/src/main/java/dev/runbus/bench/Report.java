package dev.runbus.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/** Writes the results as markdown: method, targets, one section per scenario with figures and ratios. */
final class Report {

    static final String COMMAND = "mvn -q -B install -DskipTests && mvn -q -B -pl runbus-bench exec:java";
    private static final String FINDINGS = "/dev/runbus/bench/findings.md";

    private final StringBuilder md = new StringBuilder();
    private final Results r;
    private final Map<String, String> charts;

    /** {@code charts}: chart name (drain, latency) → file name relative to the report. */
    Report(Results results, Map<String, String> charts) {
        this.r = results;
        this.charts = charts;
    }

    static void write(Results results, Map<String, String> charts, Path out) throws IOException {
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, new Report(results, charts).render(), StandardCharsets.UTF_8);
    }

    String render() {
        header();
        targets();
        if (r.drain != null) {
            drain(r.drain);
        }
        if (r.latency != null) {
            latency(r.latency);
        }
        if (r.runs != null) {
            runs(r.runs);
        }
        if (r.recovery != null) {
            recovery(r.recovery);
        }
        if (r.poison != null) {
            poison(r.poison);
        }
        if (r.memory != null) {
            memory(r.memory);
        }
        if (r.ordered != null) {
            ordered(r.ordered);
        }
        if (r.cluster != null) {
            cluster(r.cluster);
        }
        if (r.delay != null) {
            delay(r.delay);
        }
        if (!r.failures.isEmpty()) {
            line("## Scenarios that failed");
            line();
            r.failures.forEach((s, why) -> line("- **" + s + "**: " + why.replace('\n', ' ')));
            line();
        }
        method();
        findings();
        return md.toString();
    }

    private void header() {
        Results.Machine m = r.machine;
        line("# Benchmarks");
        line();
        line("Written by the benchmark module (`runbus-bench`) on "
                + DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'", Locale.ROOT).format(r.started.atZone(ZoneOffset.UTC))
                + " in " + r.elapsed.toMinutes() + " min " + r.elapsed.toSecondsPart() + " s"
                + (m.commit().isEmpty() ? "" : ", at commit `" + m.commit() + "`")
                + ". Do not edit it by hand: run it again from the repository root.");
        line();
        line("```sh");
        line(COMMAND);
        line("```");
        line();
        if (r.quick) {
            line("> **Quick run** (`--quick`): fewer messages, shorter windows, " + r.repeats
                    + " round(s). A smoke test, not a result.");
            line();
        }
        line("Machine: " + m.cores() + " cores (" + m.cpu() + "), " + m.memory() + ", " + m.os() + "; " + m.jvm()
                + "; Redis " + m.redis() + " and PostgreSQL " + m.postgres() + " on the same host. The machine is shared"
                + " and noisy, so **the ratios between contenders measured in the same run are the result**, not the"
                + " absolute numbers.");
        line();
        line("Every figure is the **median of " + r.repeats + " rounds, with the min–max in brackets**."
                + " Within a round the contenders run one after the other in an order rotated from round to round;"
                + " a ratio is the median (min–max) of the per-round ratios runbus ÷ contender, so both sides of"
                + " a ratio saw the same moment of the machine. Before measuring, the drain, latency, runs and"
                + " poison scenarios repeat full warm-up rounds until the JIT compiled for less than "
                + Fmt.percent(Jit.SETTLED) + " of a round (at most " + Jit.MAX_ROUNDS + ", "
                + RunsScenario.MAX_WARMUP_ROUNDS + " for runs): on two cores a C2 compiler"
                + " thread otherwise takes a third of the CPU of the first measured rounds.");
        line();
    }

    private void targets() {
        List<Targets.Check> checks = Targets.evaluate(r);
        if (checks.isEmpty()) {
            return;
        }
        line("## Targets");
        line();
        line("| target | measured | |");
        line("|---|---|---|");
        for (Targets.Check c : checks) {
            line("| " + c.target() + " | " + c.measured() + " | " + c.verdict() + " |");
        }
        line();
    }

    private void drain(DrainScenario.Result d) {
        line("## 1. Drain");
        line();
        line(String.format(Locale.ROOT, "%,d messages of %d bytes published in pipelined batches of %,d (one producer,"
                + " the same for all), one group, C consumers, no-op handler; messages per second from the first"
                + " publish until every message was handled and the group's pending list was empty.", d.messages(),
                Payloads.SIZE, Producer.BATCH));
        line();
        StringBuilder head = new StringBuilder("| msg/s |");
        StringBuilder rule = new StringBuilder("|---|");
        for (int c : d.consumerCounts()) {
            head.append(" C = ").append(c).append(" |");
            rule.append("---:|");
        }
        line(head.toString());
        line(rule.toString());
        for (String name : d.rates().keySet()) {
            StringBuilder row = new StringBuilder("| " + bold(name));
            for (int c : d.consumerCounts()) {
                row.append(" | ").append(bold(name, Fmt.summary(Stats.of(d.of(name, c)), Fmt::rate)));
            }
            line(row.append(" |").toString());
        }
        line();
        line("runbus ÷ contender, per round:");
        line();
        line(head.toString().replace("msg/s", "ratio"));
        line(rule.toString());
        for (String name : d.rates().keySet()) {
            if (name.equals(RunbusContender.NAME) || name.equals(ListenerContender.NAME)) {
                continue;
            }
            StringBuilder row = new StringBuilder("| runbus ÷ " + name);
            for (int c : d.consumerCounts()) {
                row.append(" | ").append(Fmt.summary(Stats.pairedRatio(d.of(RunbusContender.NAME, c), d.of(name, c)),
                        Fmt::ratio));
            }
            line(row.append(" |").toString());
        }
        if (d.rates().containsKey(ListenerContender.NAME)) {
            // The starter's listener against the plain API it wraps: the target is 0.9 or more at every C.
            StringBuilder row = new StringBuilder("| @RunbusListener ÷ runbus (target ≥ 0.9)");
            for (int c : d.consumerCounts()) {
                row.append(" | ").append(Fmt.summary(Stats.pairedRatio(d.of(ListenerContender.NAME, c),
                        d.of(RunbusContender.NAME, c)), Fmt::ratio));
            }
            line(row.append(" |").toString());
        }
        line();
        chart("drain", "Drain throughput");
    }

    private void latency(LatencyScenario.Result l) {
        line("## 2. Latency at a fixed offered rate");
        line();
        line("Each XADD is sent at its time (no bursts); " + l.consumers() + " consumers; " + l.measureMillis() / 1000.0
                + " s measured after a warm-up. Latency is from the moment the producer sent the message (the time"
                + " travels in its payload) until the consumer learned that Redis had accepted the XACK that covers it."
                + (l.runbusAckObserved() ? "" : " **runbus's ack could not be observed in this run; its figures end at"
                + " the handler's return.**"));
        line();
        for (int rate : l.rates()) {
            line("### " + String.format(Locale.ROOT, "%,d", rate) + " msg/s");
            line();
            line("| ms | p50 | p99 | p99.9 | acked msg/s |");
            line("|---|---:|---:|---:|---:|");
            for (String name : l.contenders()) {
                line("| " + bold(name) + " | "
                        + bold(name, Fmt.summary(Stats.of(l.values(rate, name, LatencyScenario.Sample::p50)), Fmt::ms)) + " | "
                        + bold(name, Fmt.summary(Stats.of(l.values(rate, name, LatencyScenario.Sample::p99)), Fmt::ms)) + " | "
                        + bold(name, Fmt.summary(Stats.of(l.values(rate, name, LatencyScenario.Sample::p999)), Fmt::ms)) + " | "
                        + Fmt.rate(Stats.of(l.values(rate, name, LatencyScenario.Sample::ackedRate)).median())
                        + (l.saturated(rate, name) ? " (did not keep up)" : "") + " |");
            }
            line();
            line("| contender ÷ runbus | p50 | p99 | p99.9 |");
            line("|---|---:|---:|---:|");
            for (String name : l.contenders()) {
                if (name.equals(RunbusContender.NAME)) {
                    continue;
                }
                line("| " + name + " ÷ runbus | "
                        + ratio(l, rate, name, LatencyScenario.Sample::p50) + " | "
                        + ratio(l, rate, name, LatencyScenario.Sample::p99) + " | "
                        + ratio(l, rate, name, LatencyScenario.Sample::p999) + " |");
            }
            line();
        }
        line("A ratio above 1 means the contender's latency is that many times runbus's.");
        line();
        chart("latency", "Latency percentiles");
    }

    private static String ratio(LatencyScenario.Result l, int rate, String name,
                                java.util.function.ToDoubleFunction<LatencyScenario.Sample> f) {
        return Fmt.summary(Stats.pairedRatio(l.values(rate, name, f), l.values(rate, RunbusContender.NAME, f)),
                Fmt::ratio);
    }

    private void runs(RunsScenario.Result x) {
        line("## 3. Runs");
        line();
        line(String.format(Locale.ROOT, "runbus-runs: %,d runs submitted by %d threads, a no-op handler returning one"
                + " reply, worker concurrency %d; runs per second from the first submit until every run is done and"
                + " every trigger acked. PostgreSQL alone: the same three writes per run (insert the run, insert its"
                + " reply, set it done) on the runs layer's tables, without a bus — 100 runs per transaction on one"
                + " connection (the ceiling of a group-committing worker), and one transaction per run (%,d runs)"
                + " on 1 and on %d connections.", x.runs(), x.submitters(), x.concurrency(), x.pgPerRunRuns(),
                x.concurrency()));
        line();
        line("| runs/s | median (min–max) | runbus ÷ this |");
        line("|---|---:|---:|");
        line("| **runbus: submit → handler → replies + done → ack** | **" + Fmt.summary(Stats.of(x.runbus()), Fmt::rate)
                + "** | |");
        line("| PostgreSQL, 100 runs per transaction, 1 connection | " + Fmt.summary(Stats.of(x.pgBatched()), Fmt::rate)
                + " | " + Fmt.summary(Stats.pairedRatio(x.runbus(), x.pgBatched()), Fmt::ratio) + " |");
        line("| PostgreSQL, one transaction per run, 1 connection | " + Fmt.summary(Stats.of(x.pgPerRun1()), Fmt::rate)
                + " | " + Fmt.summary(Stats.pairedRatio(x.runbus(), x.pgPerRun1()), Fmt::ratio) + " |");
        line("| PostgreSQL, one transaction per run, " + x.concurrency() + " connections | "
                + Fmt.summary(Stats.of(x.pgPerRunN()), Fmt::rate) + " | "
                + Fmt.summary(Stats.pairedRatio(x.runbus(), x.pgPerRunN()), Fmt::ratio) + " |");
        line();
        line(String.format(Locale.ROOT, "submit → done → ack at %,d runs/s offered, %.1f s"
                + " measured: p50 **%s ms**, p99 **%s ms** (achieved %s runs/s).", x.rate(), x.latencyMillis() / 1000.0,
                Fmt.summary(Stats.of(x.p50()), Fmt::ms), Fmt.summary(Stats.of(x.p99()), Fmt::ms),
                Fmt.rate(Stats.of(x.achievedRate()).median())));
        line(String.format(Locale.ROOT, "Where it goes, p50 of each stage: the submit call (the run committed, its"
                + " trigger published) %s ms; submit returned → handler started (the trigger read, the attempt"
                + " committed) %s ms; handler started → ack confirmed (the handler, replies + done committed, XACK)"
                + " %s ms.", Fmt.summary(Stats.of(x.submitP50()), Fmt::ms),
                Fmt.summary(Stats.of(x.toHandlerP50()), Fmt::ms), Fmt.summary(Stats.of(x.toAckP50()), Fmt::ms)));
        line();
    }

    private void recovery(RecoveryScenario.Result x) {
        line("## 4. Recovery");
        line();
        line(String.format(Locale.ROOT, "A consumer in a JVM of its own holds %,d in-flight entries (read, handler"
                + " stuck, claims kept alive) and is killed with SIGKILL; a live consumer of the same group (minIdle"
                + " %d ms, claim interval %d ms) takes them over. Time from the kill until all %,d are acknowledged:",
                x.inFlight(), x.minIdleMillis(), x.claimIntervalMillis(), x.inFlight()));
        line();
        double bound = (x.minIdleMillis() + x.claimIntervalMillis()) / 1000.0;
        line("| | seconds |");
        line("|---|---:|");
        line("| **time to recover all " + x.inFlight() + "** | **" + Fmt.summary(Stats.of(x.seconds()), Fmt::seconds)
                + "** |");
        line("| minIdle + claim interval | " + Fmt.seconds(bound) + " |");
        line("| target: minIdle + 2 × claim interval | "
                + Fmt.seconds((x.minIdleMillis() + 2 * x.claimIntervalMillis()) / 1000.0) + " |");
        line();
        line("An entry becomes claimable `minIdle` after the dead consumer's last keep-alive (up to a third of"
                + " `minIdle` before the kill), and the survivor's reclaimer looks every claim interval.");
        line();
    }

    private void ordered(OrderedScenario.Result x) {
        line("## 7. Partitions and order");
        line();
        line(String.format(Locale.ROOT, "A topic of %d partitions, %,d messages keyed over %,d keys; %d runbus"
                + " consumers of one group, concurrency %d each, running (and when ordered owning their shares of"
                + " the partitions) before the first publish. Rate: messages over the time from the first publish"
                + " until all are acknowledged.", x.partitions(), x.messages(), OrderedScenario.KEYS,
                x.consumers(), x.consumers()));
        line();
        line("| | msg/s | ratio |");
        line("|---|---:|---:|");
        line("| unordered, the same topic with 1 partition | " + Fmt.summary(Stats.of(x.onePartition()), Fmt::rate)
                + " | " + Fmt.summary(Stats.pairedRatio(x.onePartition(), x.unordered()), Fmt::ratio) + " |");
        line("| unordered, no-op handler | " + Fmt.summary(Stats.of(x.unordered()), Fmt::rate) + " | 1.00× |");
        line("| **ordered, no-op handler** | **" + Fmt.summary(Stats.of(x.ordered()), Fmt::rate) + "** | **"
                + Fmt.summary(Stats.pairedRatio(x.ordered(), x.unordered()), Fmt::ratio) + "** of unordered |");
        List<Double> ideal = new java.util.ArrayList<>();
        x.orderedSlow().forEach(v -> ideal.add(x.idealSlowRate()));
        line(String.format(Locale.ROOT, "| **ordered, 1 ms handler** (%,d messages) | **%s** | **%s** of the ideal %s"
                + " (partitions / 1 ms) |", x.slowMessages(), Fmt.summary(Stats.of(x.orderedSlow()), Fmt::rate),
                Fmt.summary(Stats.pairedRatio(x.orderedSlow(), ideal), Fmt::ratio), Fmt.rate(x.idealSlowRate())));
        List<Double> sleepBound = new java.util.ArrayList<>();
        x.orderedSlow().forEach(v -> sleepBound.add(x.sleepBoundRate()));
        line(String.format(Locale.ROOT, "| ordered, 1 ms handler, against what `Thread.sleep(1)` allows here (%.3f ms"
                + " per sleep: %s) | | %s |", x.sleepMillis(), Fmt.rate(x.sleepBoundRate()),
                Fmt.summary(Stats.pairedRatio(x.orderedSlow(), sleepBound), Fmt::ratio)));
        line();
        line(String.format(Locale.ROOT, "Rebalance after a SIGKILL: three ordered consumers in this JVM and a"
                + " fourth in a child JVM that owns its share (lease %d ms); time from the kill until the survivors"
                + " hold every partition's lease: **%s** (target: lease + 1 s = %s).", x.leaseMillis(),
                Fmt.summary(Stats.of(x.rebalanceSeconds()), Fmt::seconds),
                Fmt.seconds(x.leaseMillis() / 1000.0 + 1)));
        line();
        line("An ordered partition runs its handlers one at a time. Each entry's fenced ack is sent without"
                + " waiting, and only the next entry of the same key waits for its answer, so the ack's round trip"
                + " overlaps the handlers of other keys; an unordered consumer instead acks a whole batch in one"
                + " XACK. With the 1 ms handler, what separates the rate from the ideal is mostly the sleep's own"
                + " overshoot (the last row), the rest the scheduling of each entry.");
        line();
    }

    private void cluster(ClusterScenario.Result x) {
        line("## 8. Redis Cluster");
        line();
        line(String.format(Locale.ROOT, "A topic of %d partitions filled with %,d messages of %d bytes (`publishAll`,"
                + " batches of %,d, no keys: the partitions in turn), then drained by %d runbus consumers of one group"
                + " (one bus each, concurrency 1, batch %d, block 100 ms, no-op handler). Rate: messages over the time"
                + " from the first subscribe until every message was handled and no partition had anything pending."
                + " Cluster: %d masters without replicas, each serving an equal share of the slots (partitions per"
                + " master: %s); one node: the same `redis-server` without cluster mode. The benchmark starts both on"
                + " this host, keeps them for the whole scenario and measures them in an order rotated from round to"
                + " round. On a cluster a consumer reads the partitions with a command each (a cluster refuses"
                + " reads across slots), one after the other with all the room left, and polls every 20 ms while all"
                + " are empty; on one node it reads all %d with one blocking XREADGROUP.", x.partitions(), x.messages(), Payloads.SIZE, Producer.BATCH, x.consumers(),
                ClusterScenario.BATCH, x.masters(), x.partitionsPerMaster().stream().map(String::valueOf)
                        .collect(java.util.stream.Collectors.joining(", ")), x.partitions()));
        line();
        line("| | one node | cluster | cluster ÷ one node |");
        line("|---|---:|---:|---:|");
        line("| **drain, msg/s** | " + Fmt.summary(Stats.of(x.single(ClusterScenario.Sample::rate)), Fmt::rate)
                + " | **" + Fmt.summary(Stats.of(x.cluster(ClusterScenario.Sample::rate)), Fmt::rate) + "** | **"
                + clusterRatio(x, ClusterScenario.Sample::rate) + "** |");
        clusterRow(x, "fill (`publishAll`), msg/s", ClusterScenario.Sample::fillRate, Fmt::rate);
        clusterRow(x, "Redis commands per message", ClusterScenario.Sample::commands, Report::perMessage);
        clusterRow(x, "messages per XREADGROUP", ClusterScenario.Sample::messagesPerRead,
                v -> Double.isNaN(v) ? "—" : String.format(Locale.ROOT, "%.0f", v));
        clusterRow(x, "Redis CPU per message (all nodes)", ClusterScenario.Sample::redisCpuMicros, Report::micros);
        clusterRow(x, "time inside Redis commands per message (all nodes)",
                ClusterScenario.Sample::redisCommandMicros, Report::micros);
        clusterRow(x, "benchmark JVM CPU per message", ClusterScenario.Sample::jvmCpuMicros, Report::micros);
        clusterRow(x, "CPU per message, Redis + JVM", ClusterScenario.Sample::cpuMicros, Report::micros);
        line();
        line("Redis commands per message of the drain, by command (`INFO commandstats` before and after, summed over"
                + " the nodes, without the benchmark's own INFO and XPENDING; commands that scripts call count"
                + " apart):");
        line();
        line("| commands per message | one node | cluster |");
        line("|---|---:|---:|");
        java.util.Map<String, Double> weight = new java.util.TreeMap<>();
        for (ClusterScenario.Sample s : x.cluster()) {
            s.commandsByName().forEach((k, v) -> weight.merge(k, v, Math::max));
        }
        for (ClusterScenario.Sample s : x.single()) {
            s.commandsByName().forEach((k, v) -> weight.merge(k, v, Math::max));
        }
        List<String> shown = new java.util.ArrayList<>();
        List<String> rest = new java.util.ArrayList<>();
        weight.forEach((k, v) -> (v >= 0.001 ? shown : rest).add(k));
        shown.sort(java.util.Comparator.comparing(weight::get).reversed());
        for (String command : shown) {
            ToDoubleFunction<ClusterScenario.Sample> f = ClusterScenario.Result.commands(command);
            line("| " + command + " | " + Fmt.summary(Stats.of(x.single(f)), Report::perMessage) + " | "
                    + Fmt.summary(Stats.of(x.cluster(f)), Report::perMessage) + " |");
        }
        if (!rest.isEmpty()) {
            line("| fewer than 0.001 each: " + String.join(", ", rest) + " | | |");
        }
        line();
        line("Redis CPU is the server processes' user + system time (socket reads and writes included), JVM CPU that"
                + " of this process (consumers, Lettuce, GC and JIT together), both over the drain's window; the time"
                + " inside commands is what Redis measures around each command, wall-clock time, so on a busy host it"
                + " can exceed the CPU time. Both deployments share the host's " + r.machine.cores() + " cores with the"
                + " benchmark: where the drain is bound by CPU, the rates stand in the inverse ratio of the CPU per"
                + " message. A consumer takes at most its batch (" + ClusterScenario.BATCH + ") per round of reads:"
                + " on one node a round is one XREADGROUP over all partitions, COUNT " + ClusterScenario.BATCH + " / "
                + x.partitions() + " = " + ClusterScenario.BATCH / x.partitions() + " from each, and its acks one XACK"
                + " per partition; on a cluster the partitions are read one after the other, each with the room left,"
                + " so a backlog comes " + ClusterScenario.BATCH + " at a time from one partition and is acked with one"
                + " XACK. Besides reads (XREADGROUP) and acks (XACK), the small counts are the buses' housekeeping"
                + " (heartbeats, the reclaimer's XAUTOCLAIM, scripts and the commands they call, connections opened)"
                + " and, on a cluster, Lettuce's topology refreshes every 5 s (`cluster|nodes`, `info`).");
        line();
    }

    private static String clusterRatio(ClusterScenario.Result x, ToDoubleFunction<ClusterScenario.Sample> f) {
        return Fmt.summary(Stats.pairedRatio(x.cluster(f), x.single(f)), Fmt::ratio);
    }

    private void clusterRow(ClusterScenario.Result x, String label, ToDoubleFunction<ClusterScenario.Sample> f,
                            java.util.function.DoubleFunction<String> format) {
        line("| " + label + " | " + Fmt.summary(Stats.of(x.single(f)), format) + " | "
                + Fmt.summary(Stats.of(x.cluster(f)), format) + " | " + clusterRatio(x, f) + " |");
    }

    private static String perMessage(double v) {
        return Double.isNaN(v) ? "—" : String.format(Locale.ROOT, v >= 10 ? "%.1f" : "%.3f", v);
    }

    private static String micros(double v) {
        return Double.isNaN(v) ? "—" : String.format(Locale.ROOT, "%.1f µs", v);
    }

    private void poison(PoisonScenario.Result x) {
        line("## 5. Poison messages");
        line();
        line(String.format(Locale.ROOT, "The drain of scenario 1 through runbus, C = %d, %,d messages, without poison"
                + " and with every %dth message poison (the handler throws). *Dead-lettered at once*: maxDeliveries 1,"
                + " so each poison message goes through the failure and the dead-letter script (copy + XACK in one"
                + " script) inside the window, which ends when every entry is acknowledged. *Left for a retry*:"
                + " maxDeliveries 3 (the default), a failed message stays pending for a later delivery; the window"
                + " ends when every clean message is acknowledged and every poison message failed once. The same"
                + " handler runs in all three. The cost sought is smaller than the machine's drift, so this"
                + " scenario takes %d rounds (%d per repeat), each figure the median of them.", x.consumers(),
                x.messages(), x.poisonEvery(), x.clean().size(), PoisonScenario.PAIRS_PER_REPEAT));
        line();
        line("| msg/s | median (min–max) | ÷ no poison, per round | cost |");
        line("|---|---:|---:|---:|");
        line("| no poison | " + Fmt.summary(Stats.of(x.clean()), Fmt::rate) + " | | |");
        String pct = (100.0 / x.poisonEvery()) + "% poison";
        Stats.Summary dl = Stats.pairedRatio(x.deadLettered(), x.clean());
        Stats.Summary rt = Stats.pairedRatio(x.retried(), x.clean());
        line("| " + pct + ", dead-lettered at once | " + Fmt.summary(Stats.of(x.deadLettered()), Fmt::rate) + " | "
                + Fmt.summary(dl, Fmt::ratio) + " | **" + Fmt.percent(1 - dl.median()) + "** |");
        line("| " + pct + ", left for a retry | " + Fmt.summary(Stats.of(x.retried()), Fmt::rate) + " | "
                + Fmt.summary(rt, Fmt::ratio) + " | **" + Fmt.percent(1 - rt.median()) + "** |");
        line();
    }

    private void memory(MemoryScenario.Result x) {
        line("## 6. Memory");
        line();
        boolean retention = x.redisMb() != null;
        line(String.format(Locale.ROOT, "One runbus subscription (default options) handles %,d messages at steady state"
                + " (at most 10,000 published and not yet handled). At each point, once everything is acknowledged"
                + (retention ? " and retention trimmed it (`retentionAge` 0, every second: nothing else trims the"
                + " stream), the used heap after a full GC (the whole benchmark JVM, so the level includes the"
                + " benchmark's own objects; the slope is what matters) and Redis's `used_memory`:"
                : " and the stream trimmed, the used heap after a full GC (the whole benchmark JVM, so the level"
                + " includes the benchmark's own objects; the slope is what matters):"), x.messages()));
        line();
        StringBuilder head = new StringBuilder("| messages handled |");
        StringBuilder rule = new StringBuilder("|---|");
        StringBuilder row = new StringBuilder("| used heap |");
        StringBuilder redisRow = new StringBuilder("| Redis used_memory |");
        for (int i = 0; i < x.checkpoints().size(); i++) {
            head.append(i == 0 ? " after 20k warm-up |" : String.format(Locale.ROOT, " %,d |", x.checkpoints().get(i)));
            rule.append("---:|");
            row.append(' ').append(Fmt.summary(Stats.of(at(x.heapMb(), i)), Fmt::mb)).append(" |");
            if (retention) {
                redisRow.append(' ').append(Fmt.summary(Stats.of(at(x.redisMb(), i)), Fmt::mb)).append(" |");
            }
        }
        line(head.toString());
        line(rule.toString());
        line(row.toString());
        if (retention) {
            line(redisRow.toString());
        }
        line();
        line("Growth from the first quarter to the end: heap **" + Fmt.summary(Stats.of(Targets.memoryGrowth(x)),
                Fmt::mb) + "**" + (retention ? ", Redis **" + Fmt.summary(Stats.of(Targets.redisGrowth(x)), Fmt::mb)
                + "**; the stream held at most " + String.format(Locale.ROOT, "%,d",
                x.longestStream().stream().mapToLong(Long::longValue).max().orElse(0))
                + " entries when a quarter's publishing ended (the backlog and what retention had not yet trimmed)"
                : "") + ".");
        line();
    }

    /** The values of point {@code i} of every round's series. */
    private static List<Double> at(List<List<Double>> rounds, int i) {
        List<Double> at = new java.util.ArrayList<>();
        for (List<Double> series : rounds) {
            at.add(i < series.size() ? series.get(i) : Double.NaN);
        }
        return at;
    }

    private void delay(DelayScenario.Result x) {
        line("## 9. Delayed delivery and retries");
        line();
        line(String.format(Locale.ROOT, "**Lateness.** %,d entries per second scheduled for %.0f s with `publishAt`,"
                + " each due %.1f–%.0f s later (uniformly), by %d threads of a bus that does not subscribe to the"
                + " topic, so that the consumers' movers find the entries by looking at the delay set; %d consumer"
                + " buses, one subscription each (concurrency %d, C = %d in all). Lateness is the start of the handler"
                + " minus the due time, both on the Redis server's clock: the due time is the server's TIME, read"
                + " every " + ServerClock.RESYNC_MILLIS + " ms and advanced in between by this JVM's monotonic clock"
                + " (same host), carried in a header."
                + " *Publisher subscribed too*: the entries are scheduled through the first consumer bus, whose"
                + " mover is told of each. *Lone entries*: %d entries, each due %d–%d ms later, scheduled one at a"
                + " time once the one before was handled, so that the delay set is empty when each arrives and no"
                + " mover knows of an entry due before it.", x.rate(), x.scheduleMillis() / 1000.0,
                x.minDelayMillis() / 1000.0, x.maxDelayMillis() / 1000.0, DelayLateness.SCHEDULERS, x.buses(),
                x.consumers() / x.buses(), x.consumers(), x.loneEntries(), x.loneMinDelayMillis(),
                x.loneMaxDelayMillis()));
        line();
        line("| lateness, ms | p50 | p99 | max | earliest | delivered before due | scheduled/s |");
        line("|---|---:|---:|---:|---:|---:|---:|");
        latenessRow("**polled, `delayPollInterval` " + x.pollMillis() + " ms (the default)**", x.polled(), true);
        latenessRow("publisher subscribed too, poll " + x.pollMillis() + " ms", x.hinted(), false);
        latenessRow("polled, `delayPollInterval` " + x.fastPollMillis() + " ms", x.polledFast(), false);
        latenessRow("lone entries, poll " + x.pollMillis() + " ms", x.lone(), false);
        latenessRow("lone entries, poll " + x.fastPollMillis() + " ms", x.loneFast(), false);
        line();
        line("Target: p99 ≤ " + Targets.DELAY_P99_LIMIT_MS + " ms with the default poll interval at "
                + String.format(Locale.ROOT, "%,d", x.rate()) + " scheduled/s, and no entry delivered before it is"
                + " due. *Earliest*: the earliest handling relative to its due time, over the rounds (negative:"
                + " before it). An entry counts as delivered before due when it was handled before its due time by"
                + " more than the uncertainty of the clock estimate (TIME is read again every "
                + ServerClock.RESYNC_MILLIS + " ms; half its round trip plus the largest correction a read made):"
                + " at most " + Fmt.ms(max(DelayScenario.Result.values(all(x),
                DelayScenario.Lateness::clockUncertaintyMillis))) + " ms in this run. A window of lone entries has"
                + " few of them, so its p99 is close to its max.");
        line();
        List<Double> moved = DelayScenario.Result.values(x.moves(), DelayScenario.Move::movedRate);
        List<Double> published = DelayScenario.Result.values(x.moves(), DelayScenario.Move::publishRate);
        line(String.format(Locale.ROOT, "**Moves.** %,d entries scheduled with delay 0 on a topic nobody subscribes to"
                + " (%d threads calling `publish(topic, message, Duration.ZERO)`, each waiting for its reply); then"
                + " one bus subscribes, and its mover moves them, a batch per script call: the time from the subscribe"
                + " until the stream holds all %,d (XLEN). Against the same %,d appended by `publishAll` in batches"
                + " of %,d. In both, a subscription of the moving bus reads the entries as they arrive.",
                x.moveEntries(), x.scheduleThreads(), x.moveEntries(), x.moveEntries(), x.publishBatch()));
        line();
        line("| per second | median (min–max) |");
        line("|---|---:|");
        line("| scheduled (`publish` with a delay) | "
                + Fmt.summary(Stats.of(DelayScenario.Result.values(x.moves(), DelayScenario.Move::scheduledRate)),
                Fmt::rate) + " |");
        line("| **moved into the stream** | **" + Fmt.summary(Stats.of(moved), Fmt::rate) + "** |");
        line("| appended by `publishAll` | " + Fmt.summary(Stats.of(published), Fmt::rate) + " |");
        line("| moved ÷ `publishAll`, per round | " + Fmt.summary(Stats.pairedRatio(moved, published), Fmt::ratio)
                + " |");
        line();
        line(String.format(Locale.ROOT, "**Retries.** The drain of section 5 (C = 4, %,d messages) where every %dth"
                + " message fails on its first attempt and succeeds on its second. `fixed(%d ms)`: the failed"
                + " delivery is acknowledged and its copy scheduled in one script, and the mover puts it back"
                + " %d ms later. `onIdle()` with minIdle %d ms and claim interval %d ms, the shortest sensible"
                + " idle-based retry: the failed entry stays pending until the reclaimer takes it. *All succeeded*:"
                + " messages over the time from the first publish until every message succeeded and nothing is"
                + " pending; *first attempts*: until every message had its first attempt (the healthy traffic, which"
                + " bears the failures' handling but not their wait); *retry delay*: a retried message's first"
                + " failure → its success.", x.retryMessages(), x.failEvery(), x.retryDelayMillis(),
                x.retryDelayMillis(), x.minIdleMillis(), x.claimIntervalMillis()));
        line();
        line("| | all succeeded, msg/s | ÷ no failures | first attempts, msg/s | ÷ no failures | last retry"
                + " succeeded | retry delay p50, ms | retry delay max, ms |");
        line("|---|---:|---:|---:|---:|---:|---:|---:|");
        retryRow("no failures", x.clean(), x.clean());
        retryRow("**`fixed(" + x.retryDelayMillis() + " ms)`**", x.fixed(), x.clean());
        retryRow("`onIdle()`, minIdle " + x.minIdleMillis() + " ms, claim interval " + x.claimIntervalMillis()
                + " ms", x.onIdle(), x.clean());
        line();
    }

    private void latenessRow(String label, List<DelayScenario.Lateness> samples, boolean bold) {
        String p99 = Fmt.summary(Stats.of(DelayScenario.Result.values(samples, DelayScenario.Lateness::p99)), Fmt::ms);
        long early = 0;
        long delivered = 0;
        long scheduled = 0;
        for (DelayScenario.Lateness l : samples) {
            early += l.early();
            delivered += l.delivered();
            scheduled += l.scheduled();
        }
        line("| " + label + " | "
                + Fmt.summary(Stats.of(DelayScenario.Result.values(samples, DelayScenario.Lateness::p50)), Fmt::ms)
                + " | " + (bold && !p99.equals("—") ? "**" + p99 + "**" : p99) + " | "
                + Fmt.summary(Stats.of(DelayScenario.Result.values(samples, DelayScenario.Lateness::max)), Fmt::ms)
                + " | " + Fmt.ms(min(DelayScenario.Result.values(samples, DelayScenario.Lateness::earliest)))
                + " | " + early + " of " + String.format(Locale.ROOT, "%,d", delivered)
                + (delivered < scheduled ? String.format(Locale.ROOT, " (%,d scheduled)", scheduled) : "") + " | "
                + Fmt.summary(Stats.of(DelayScenario.Result.values(samples, DelayScenario.Lateness::scheduledRate)),
                Fmt::rate) + " |");
    }

    private void retryRow(String label, List<DelayScenario.Retry> samples, List<DelayScenario.Retry> clean) {
        StringBuilder row = new StringBuilder("| " + label);
        for (ToDoubleFunction<DelayScenario.Retry> f : List.<ToDoubleFunction<DelayScenario.Retry>>of(
                DelayScenario.Retry::rate, DelayScenario.Retry::firstPassRate)) {
            List<Double> rates = DelayScenario.Result.values(samples, f);
            row.append(" | ").append(Fmt.summary(Stats.of(rates), Fmt::rate)).append(" | ").append(samples == clean
                    ? "" : Fmt.summary(Stats.pairedRatio(rates, DelayScenario.Result.values(clean, f)), Fmt::ratio));
        }
        row.append(" | ").append(Fmt.summary(Stats.of(DelayScenario.Result.values(samples,
                DelayScenario.Retry::lastRetrySeconds)), Fmt::seconds));
        row.append(" | ").append(Fmt.summary(Stats.of(DelayScenario.Result.values(samples,
                DelayScenario.Retry::retryP50Millis)), Fmt::ms));
        row.append(" | ").append(Fmt.summary(Stats.of(DelayScenario.Result.values(samples,
                DelayScenario.Retry::retryMaxMillis)), Fmt::ms));
        line(row.append(" |").toString());
    }

    private static List<DelayScenario.Lateness> all(DelayScenario.Result x) {
        List<DelayScenario.Lateness> out = new java.util.ArrayList<>(x.polled());
        out.addAll(x.hinted());
        out.addAll(x.polledFast());
        out.addAll(x.lone());
        out.addAll(x.loneFast());
        return out;
    }

    private static double max(List<Double> values) {
        return values.stream().filter(v -> !v.isNaN()).mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    }

    private static double min(List<Double> values) {
        return values.stream().filter(v -> !v.isNaN()).mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
    }

    private void method() {
        line("## Method");
        line();
        line("- Contenders, each on a stream and key prefix of its own, deleted afterwards:");
        if (r.drain != null) {
            r.drain.contenders().forEach((name, how) -> line("  - **" + name + "**: " + how + "."));
        } else {
            line("  - **runbus**, **Lettuce loop**, **Redisson**, **Spring container**, **naive Jedis** (see"
                    + " `runbus-bench/src/main/java/dev/runbus/bench/*Contender.java`).");
        }
        line("- Every entry is written by the same producer in runbus's wire format (`id`, `type`, `payload`,"
                + " `published_at`); the payload is " + Payloads.SIZE + " ASCII bytes starting with the enqueue time.");
        line("- runbus acknowledges on its own acker thread; to time its acks the benchmark wraps that thread's"
                + " Lettuce command interface and notes when each XACK reply arrives (measurement only, nothing sent"
                + " changes). The other contenders ack synchronously and are timed when the call returns.");
        line("- Runs are timed from the start of `submit` until Redis confirmed the XACK of the run's trigger (the"
                + " worker acks only after replies + done are committed): the benchmark joins the submit times, the"
                + " run each handler call executed, the trigger entry of each run (a plain XREAD of the trigger"
                + " stream) and the observed acks. Each runs measurement uses its own PostgreSQL schema, dropped"
                + " afterwards.");
        line("- The recovery scenario's victim is a child JVM killed with SIGKILL (`Process.destroyForcibly`).");
        line("- The cluster scenario starts Redis servers of its own (`redis-server` on the PATH, or"
                + " `$RUNBUS_BENCH_REDIS_SERVER`) on free loopback ports, and stops them when it ends.");
        line("- Flags: `--quick`, `--scenarios drain,latency,runs,recovery,poison,memory,ordered,cluster,delay`,"
                + " `--repeats N`, `--redis URI`, `--database JDBC-URL`, `--out FILE`, `--jfr DIR` (a Flight Recorder"
                + " file per scenario), `--report-from FILE` (write the report again from saved results), passed as"
                + " `-Dexec.args=\"...\"`.");
        line();
    }

    /**
     * The hand-written analysis (where the time goes, with Flight Recorder evidence) kept in the module's
     * resources: read from the source tree when the benchmark runs in the repository, else from the jar.
     */
    private void findings() {
        Path source = BenchOptions.repositoryRoot().resolve("runbus-bench/src/main/resources" + FINDINGS);
        if (Files.isRegularFile(source)) {
            try {
                md.append(Files.readString(source, StandardCharsets.UTF_8).strip()).append('\n');
                return;
            } catch (IOException e) {
                // fall back to the jar
            }
        }
        try (InputStream in = Report.class.getResourceAsStream(FINDINGS)) {
            if (in != null) {
                md.append(new String(in.readAllBytes(), StandardCharsets.UTF_8).strip()).append('\n');
            }
        } catch (IOException e) {
            // no findings section
        }
    }

    private void chart(String name, String alt) {
        String file = charts.get(name);
        if (file != null) {
            line("![" + alt + "](" + file + ")");
            line();
        }
    }

    private static String bold(String name) {
        return name.equals(RunbusContender.NAME) ? "**" + name + "**" : name;
    }

    private static String bold(String name, String value) {
        return name.equals(RunbusContender.NAME) && !value.equals("—") ? "**" + value + "**" : value;
    }

    private void line(String s) {
        md.append(s).append('\n');
    }

    private void line() {
        md.append('\n');
    }
}
