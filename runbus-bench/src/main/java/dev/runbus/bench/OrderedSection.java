package dev.runbus.bench;

import java.util.List;
import java.util.Locale;

/** Section 7: ordered partitions against unordered consumption, and the rebalance after a kill. */
final class OrderedSection {

    private final Markdown md;

    OrderedSection(Markdown md) {
        this.md = md;
    }

    void write(OrderedScenario.Result x) {
        md.line("## 7. Partitions and order");
        md.line();
        md.line(String.format(Locale.ROOT, "A topic of %d partitions, %,d messages keyed over %,d keys; %d runbus"
                + " consumers of one group, concurrency %d each, running (and when ordered owning their shares of"
                + " the partitions) before the first publish. Rate: messages over the time from the first publish"
                + " until all are acknowledged.", x.partitions(), x.messages(), OrderedScenario.KEYS,
                x.consumers(), x.consumers()));
        md.line();
        md.line("| | msg/s | ratio |");
        md.line("|---|---:|---:|");
        md.line("| unordered, the same topic with 1 partition | " + Fmt.summary(Stats.of(x.onePartition()), Fmt::rate)
                + " | " + Fmt.summary(Stats.pairedRatio(x.onePartition(), x.unordered()), Fmt::ratio) + " |");
        md.line("| unordered, no-op handler | " + Fmt.summary(Stats.of(x.unordered()), Fmt::rate) + " | 1.00× |");
        md.line("| **ordered, no-op handler** | **" + Fmt.summary(Stats.of(x.ordered()), Fmt::rate) + "** | **"
                + Fmt.summary(Stats.pairedRatio(x.ordered(), x.unordered()), Fmt::ratio) + "** of unordered |");
        List<Double> ideal = new java.util.ArrayList<>();
        x.orderedSlow().forEach(v -> ideal.add(x.idealSlowRate()));
        md.line(String.format(Locale.ROOT, "| **ordered, 1 ms handler** (%,d messages) | **%s** | **%s** of the ideal %s"
                + " (partitions / 1 ms) |", x.slowMessages(), Fmt.summary(Stats.of(x.orderedSlow()), Fmt::rate),
                Fmt.summary(Stats.pairedRatio(x.orderedSlow(), ideal), Fmt::ratio), Fmt.rate(x.idealSlowRate())));
        List<Double> sleepBound = new java.util.ArrayList<>();
        x.orderedSlow().forEach(v -> sleepBound.add(x.sleepBoundRate()));
        md.line(String.format(Locale.ROOT, "| ordered, 1 ms handler, against what `Thread.sleep(1)` allows here (%.3f ms"
                + " per sleep: %s) | | %s |", x.sleepMillis(), Fmt.rate(x.sleepBoundRate()),
                Fmt.summary(Stats.pairedRatio(x.orderedSlow(), sleepBound), Fmt::ratio)));
        md.line();
        md.line(String.format(Locale.ROOT, "Rebalance after a SIGKILL: three ordered consumers in this JVM and a"
                + " fourth in a child JVM that owns its share (lease %d ms); time from the kill until the survivors"
                + " hold every partition's lease: **%s** (target: lease + 1 s = %s).", x.leaseMillis(),
                Fmt.summary(Stats.of(x.rebalanceSeconds()), Fmt::seconds),
                Fmt.seconds(x.leaseMillis() / 1000.0 + 1)));
        md.line();
        md.line("An ordered partition runs its handlers one at a time. Each entry's fenced ack is sent without"
                + " waiting, and only the next entry of the same key waits for its answer, so the ack's round trip"
                + " overlaps the handlers of other keys; an unordered consumer instead acks a whole batch in one"
                + " XACK. With the 1 ms handler, what separates the rate from the ideal is mostly the sleep's own"
                + " overshoot (the last row), the rest the scheduling of each entry.");
        md.line();
    }
}
