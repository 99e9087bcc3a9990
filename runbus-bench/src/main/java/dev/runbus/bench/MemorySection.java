package dev.runbus.bench;

import java.util.List;
import java.util.Locale;

/** Section 6: heap and Redis memory over a long run. */
final class MemorySection {

    private final Markdown md;

    MemorySection(Markdown md) {
        this.md = md;
    }

    void write(MemoryScenario.Result x) {
        md.line("## 6. Memory");
        md.line();
        boolean retention = x.redisMb() != null;
        md.line(String.format(Locale.ROOT, "One runbus subscription (default options) handles %,d messages at steady state"
                + " (at most 10,000 published and not yet handled). At each point, once everything is acknowledged"
                + (retention ? " and retention trimmed it (`retentionAge` 0, every second: nothing else trims the"
                + " stream), the used heap after a full GC (the whole benchmark JVM, so the level includes the"
                + " benchmark's own objects; the slope is what matters) and Redis's `used_memory`:"
                : " and the stream trimmed, the used heap after a full GC (the whole benchmark JVM, so the level"
                + " includes the benchmark's own objects; the slope is what matters):"), x.messages()));
        md.line();
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
        md.line(head.toString());
        md.line(rule.toString());
        md.line(row.toString());
        if (retention) {
            md.line(redisRow.toString());
        }
        md.line();
        md.line("Growth from the first quarter to the end: heap **" + Fmt.summary(Stats.of(Targets.memoryGrowth(x)),
                Fmt::mb) + "**" + (retention ? ", Redis **" + Fmt.summary(Stats.of(Targets.redisGrowth(x)), Fmt::mb)
                + "**; the stream held at most " + String.format(Locale.ROOT, "%,d",
                x.longestStream().stream().mapToLong(Long::longValue).max().orElse(0))
                + " entries when a quarter's publishing ended (the backlog and what retention had not yet trimmed)"
                : "") + ".");
        md.line();
    }

    /** The values of point {@code i} of every round's series. */
    private static List<Double> at(List<List<Double>> rounds, int i) {
        List<Double> at = new java.util.ArrayList<>();
        for (List<Double> series : rounds) {
            at.add(i < series.size() ? series.get(i) : Double.NaN);
        }
        return at;
    }
}
