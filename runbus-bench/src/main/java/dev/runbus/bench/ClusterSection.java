package dev.runbus.bench;

import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/** Section 8: the drain on a local Redis Cluster against one node, with where the commands and the CPU go. */
final class ClusterSection {

    private final Markdown md;
    /** The host's cores, which the deployments share with the benchmark. */
    private final int cores;

    ClusterSection(Markdown md, int cores) {
        this.md = md;
        this.cores = cores;
    }

    void write(ClusterScenario.Result x) {
        md.line("## 8. Redis Cluster");
        md.line();
        md.line(String.format(Locale.ROOT, "A topic of %d partitions filled with %,d messages of %d bytes (`publishAll`,"
                + " batches of %,d, no keys: the partitions in turn), then drained by %d runbus consumers of one group"
                + " (one bus each, concurrency 1, batch %d, block 100 ms, no-op handler). Rate: messages over the time"
                + " from the first subscribe until every message was handled and no partition had anything pending."
                + " Cluster: %d masters without replicas, each serving an equal share of the slots (partitions per"
                + " master: %s); one node: the same `redis-server` without cluster mode. The benchmark starts both on"
                + " this host, keeps them for the whole scenario and measures them in a random order per"
                + " round. On a cluster a consumer reads the partitions with a command each (a cluster refuses"
                + " reads across slots), one after the other with all the room left, and polls every 20 ms while all"
                + " are empty; on one node it reads all %d with one blocking XREADGROUP.", x.partitions(),
                x.messages(), Payloads.SIZE, Producer.BATCH, x.consumers(), ClusterScenario.BATCH, x.masters(), x.partitionsPerMaster().stream().map(String::valueOf)
                        .collect(java.util.stream.Collectors.joining(", ")), x.partitions()));
        md.line();
        md.line("| | one node | cluster | cluster ÷ one node |");
        md.line("|---|---:|---:|---:|");
        md.line("| **drain, msg/s** | " + Fmt.summary(Stats.of(x.single(ClusterScenario.Sample::rate)), Fmt::rate)
                + " | **" + Fmt.summary(Stats.of(x.cluster(ClusterScenario.Sample::rate)), Fmt::rate) + "** | **"
                + clusterRatio(x, ClusterScenario.Sample::rate) + "** |");
        clusterRow(x, "fill (`publishAll`), msg/s", ClusterScenario.Sample::fillRate, Fmt::rate);
        clusterRow(x, "Redis commands per message", ClusterScenario.Sample::commands, ClusterSection::perMessage);
        clusterRow(x, "messages per XREADGROUP", ClusterScenario.Sample::messagesPerRead,
                v -> Double.isNaN(v) ? "—" : String.format(Locale.ROOT, "%.0f", v));
        clusterRow(x, "Redis CPU per message (all nodes)", ClusterScenario.Sample::redisCpuMicros, ClusterSection::micros);
        clusterRow(x, "time inside Redis commands per message (all nodes)",
                ClusterScenario.Sample::redisCommandMicros, ClusterSection::micros);
        clusterRow(x, "benchmark JVM CPU per message", ClusterScenario.Sample::jvmCpuMicros, ClusterSection::micros);
        clusterRow(x, "CPU per message, Redis + JVM", ClusterScenario.Sample::cpuMicros, ClusterSection::micros);
        md.line();
        md.line("Redis commands per message of the drain, by command (`INFO commandstats` before and after, summed over"
                + " the nodes, without the benchmark's own INFO and XPENDING; commands that scripts call count"
                + " apart):");
        md.line();
        md.line("| commands per message | one node | cluster |");
        md.line("|---|---:|---:|");
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
            md.line("| " + command + " | " + Fmt.summary(Stats.of(x.single(f)), ClusterSection::perMessage) + " | "
                    + Fmt.summary(Stats.of(x.cluster(f)), ClusterSection::perMessage) + " |");
        }
        if (!rest.isEmpty()) {
            md.line("| fewer than 0.001 each: " + String.join(", ", rest) + " | | |");
        }
        md.line();
        md.line("Redis CPU is the server processes' user + system time (socket reads and writes included), JVM CPU that"
                + " of this process (consumers, Lettuce, GC and JIT together), both over the drain's window; the time"
                + " inside commands is what Redis measures around each command, wall-clock time, so on a busy host it"
                + " can exceed the CPU time. Both deployments share the host's " + cores + " cores with the"
                + " benchmark: where the drain is bound by CPU, the rates stand in the inverse ratio of the CPU per"
                + " message. A consumer takes at most its batch (" + ClusterScenario.BATCH + ") per round of reads:"
                + " on one node a round is one XREADGROUP over all partitions, COUNT " + ClusterScenario.BATCH + " / "
                + x.partitions() + " = " + ClusterScenario.BATCH / x.partitions() + " from each, and its acks one XACK"
                + " per partition; on a cluster the partitions are read one after the other, each with the room left,"
                + " so a backlog comes " + ClusterScenario.BATCH + " at a time from one partition and is acked with one"
                + " XACK. Besides reads (XREADGROUP) and acks (XACK), the small counts are the buses' housekeeping"
                + " (heartbeats, the reclaimer's XAUTOCLAIM, scripts and the commands they call, connections opened)"
                + " and, on a cluster, Lettuce's topology refreshes every 5 s (`cluster|nodes`, `info`).");
        md.line();
    }

    private static String clusterRatio(ClusterScenario.Result x, ToDoubleFunction<ClusterScenario.Sample> f) {
        return Fmt.summary(Stats.pairedRatio(x.cluster(f), x.single(f)), Fmt::ratio);
    }

    private void clusterRow(ClusterScenario.Result x, String label, ToDoubleFunction<ClusterScenario.Sample> f,
                            java.util.function.DoubleFunction<String> format) {
        md.line("| " + label + " | " + Fmt.summary(Stats.of(x.single(f)), format) + " | "
                + Fmt.summary(Stats.of(x.cluster(f)), format) + " | " + clusterRatio(x, f) + " |");
    }

    private static String perMessage(double v) {
        return Double.isNaN(v) ? "—" : String.format(Locale.ROOT, v >= 10 ? "%.1f" : "%.3f", v);
    }

    private static String micros(double v) {
        return Double.isNaN(v) ? "—" : String.format(Locale.ROOT, "%.1f µs", v);
    }
}
