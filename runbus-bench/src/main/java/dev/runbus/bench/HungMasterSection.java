package dev.runbus.bench;

import java.util.List;
import java.util.Locale;
import java.util.function.DoubleFunction;
import java.util.function.ToDoubleFunction;

/** Section 10: one cluster master hung past the node timeout, and what the partitions on the others saw. */
final class HungMasterSection {

    private final Markdown md;

    HungMasterSection(Markdown md) {
        this.md = md;
    }

    void write(HungMasterScenario.Result x) {
        md.line("## 10. One hung master");
        md.line();
        md.line(String.format(Locale.ROOT, "A Redis Cluster of %d masters without replicas (`cluster-node-timeout`"
                + " %d ms, `cluster-require-full-coverage no`), a topic of %d partitions, %d keyed messages a second"
                + " published to each (a thread per partition, `publish`), one consumer of concurrency %d (the other"
                + " options their defaults) on the same `Bus` as the publishers. One master that does not hold the"
                + " topic's own keys is stopped with SIGSTOP for %d s, past the node timeout, then resumed. The"
                + " healthy partitions are those on the other two masters. Throughput: their first handlings per"
                + " second in the %d s before the stop, during it, and in the %d s after it; every run of every"
                + " entry is counted by the id its payload carries. After publishing stops, each round waits until"
                + " every publish that returned an id was handled and nothing is pending (so nothing can run"
                + " again).", x.masters(), x.nodeTimeoutMillis(), x.partitions(), x.rate(), x.concurrency(),
                x.stopMillis() / 1000, x.windowMillis() / 1000, x.windowMillis() / 1000));
        md.line();
        md.line("| | unordered | ordered |");
        md.line("|---|---:|---:|");
        row(x, "healthy partitions before the stop, handled/s", HungMasterScenario.Round::before, Fmt::rate);
        row(x, "during the stop, handled/s", HungMasterScenario.Round::during, Fmt::rate);
        row(x, "**during ÷ before**", HungMasterScenario.Round::duringRatio, Fmt::ratio);
        row(x, "slowest " + HungMasterScenario.SLOWEST_SECONDS + " s of the stop ÷ before",
                HungMasterScenario.Round::slowestRatio, Fmt::ratio);
        row(x, "longest wait of a healthy entry published during the stop, publish → first run, ms",
                HungMasterScenario.Round::longestWaitMillis, v -> String.format(Locale.ROOT, "%.0f", v));
        row(x, "after the stop, handled/s", HungMasterScenario.Round::after, Fmt::rate);
        row(x, "**after ÷ before**", HungMasterScenario.Round::afterRatio, Fmt::ratio);
        row(x, "healthy partitions published/s before / during / after", null, null);
        row(x, "CLUSTER NODES per second on each healthy master during the stop (topology refreshes)",
                HungMasterScenario.Round::topologyReadsPerSecond, v -> String.format(Locale.ROOT, "%.1f", v));
        row(x, "the benchmark JVM's GC time during the stop, ms per second",
                HungMasterScenario.Round::gcMillisPerSecond, v -> String.format(Locale.ROOT, "%.0f", v));
        rounds(x, "**healthy entries run twice, per round** (the second run during the stop + after it)",
                r -> r.twiceHealthyDuring() + r.twiceHealthyBefore() + " + " + r.twiceHealthyAfter());
        rounds(x, "healthy entries run with a delivery count above 1 (taken over or re-read), per round",
                r -> Integer.toString(r.redeliveredHealthy()));
        rounds(x, "the stopped master's entries run twice, per round (allowed)", r -> Long.toString(r.twiceStopped()));
        rounds(x, "every published entry handled, nothing left pending, per round",
                r -> r.endToEnd() ? "yes" : r.unhandled() + " unhandled, " + r.leftPending() + " pending");
        rounds(x, "publishes that failed (appended or not), per round", r -> Long.toString(r.uncertain()));
        rounds(x, "claims the keep-alive reported lost, per round", r -> Integer.toString(r.claimsLost()));
        rounds(x, "host load (1 min) when the round began", r -> String.format(Locale.ROOT, "%.1f", r.loadAverage()));
        md.line();
        md.line("Target: the healthy partitions keep at least " + Fmt.ratio(Targets.HUNG_MASTER_PACE) + " of their"
                + " throughput during the stop and after it, and run no entry twice, in every round. The stopped"
                + " master's partitions may run entries twice: what was sent to it while it hung (reads, acks,"
                + " keep-alives) runs when it answers again. The publishers of its partitions wait for it or fail"
                + " meanwhile (counted apart, and left out of the end-to-end check when they failed).");
        md.line();
    }

    /** A row of medians (min–max); {@code f} null for the published rates, which go three to a cell. */
    private void row(HungMasterScenario.Result x, String label, ToDoubleFunction<HungMasterScenario.Round> f,
                     DoubleFunction<String> format) {
        StringBuilder line = new StringBuilder("| " + label + " |");
        for (String mode : HungMasterScenario.MODES) {
            if (f == null) {
                line.append(' ').append(Fmt.rate(median(x, mode, HungMasterScenario.Round::publishedBefore)))
                        .append(" / ").append(Fmt.rate(median(x, mode, HungMasterScenario.Round::publishedDuring)))
                        .append(" / ").append(Fmt.rate(median(x, mode, HungMasterScenario.Round::publishedAfter)))
                        .append(" |");
            } else {
                String cell = Fmt.summary(Stats.of(x.values(mode, f)), format);
                line.append(' ').append(label.startsWith("**") && !cell.equals("—") ? "**" + cell + "**" : cell)
                        .append(" |");
            }
        }
        md.line(line.toString());
    }

    private void rounds(HungMasterScenario.Result x, String label,
                        java.util.function.Function<HungMasterScenario.Round, String> f) {
        StringBuilder line = new StringBuilder("| " + label + " |");
        for (String mode : HungMasterScenario.MODES) {
            List<String> each = new java.util.ArrayList<>();
            x.rounds(mode).forEach(r -> each.add(r.failed() ? "failed" : f.apply(r)));
            line.append(' ').append(each.isEmpty() ? "—" : String.join(", ", each)).append(" |");
        }
        md.line(line.toString());
    }

    private static double median(HungMasterScenario.Result x, String mode,
                                 ToDoubleFunction<HungMasterScenario.Round> f) {
        return Stats.of(x.values(mode, f)).median();
    }
}
