package dev.runbus.bench;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.DoubleFunction;

/** Section 11: where runbus sends other commands on Redis 8, on the server's own path and on the older one. */
final class Redis8Section {

    private final Markdown md;

    Redis8Section(Markdown md) {
        this.md = md;
    }

    void write(Redis8Scenario.Result x) {
        md.line("## 11. Redis 8's commands against the path older servers get");
        md.line();
        md.line(String.format(Locale.ROOT, "On Redis %s, each figure on the server's own path (\"%s\") and on the"
                + " path older servers get (\"%s\": `runbus.redis.commandsUpTo=8.0` while the bus connects), in a"
                + " random order within each round. Publishes: `publishAll` of %,d messages of %d bytes in batches of"
                + " %d, and `publish` of %,d one at a time, each from one thread, each a topic of one partition"
                + " (`XADD … IDMP` on 8.6, plain `XADD` otherwise). Retention: one round of `retention.lua` (retention"
                + " age 0) on a stream of %,d entries that %d groups have all read and acknowledged (the group scan and"
                + " `XTRIM MINID` on both paths), and on the same stream with its oldest entry stuck pending in one"
                + " group (the scan finds it holding the stream back; on 8.2 the script then adds `XTRIM … ACKED`,"
                + " which trims every entry but the stuck one, where the older path trims none), timed at the"
                + " client. A delivery and a takeover"
                + " send the same commands on both paths: the drain and latency scenarios measure the delivery with"
                + " the contender \"%s\".", x.server(), Redis8Scenario.OWN, Redis8Scenario.OLDER,
                x.batchMessages(), Payloads.SIZE, Redis8Scenario.BATCH, x.singleMessages(), x.retentionEntries(),
                x.groups(), RunbusContender.OLDER_PATH));
        md.line();
        md.line("| | " + Redis8Scenario.OWN + " | " + Redis8Scenario.OLDER + " | own ÷ older |");
        md.line("|---|---:|---:|---:|");
        row("publishAll, msg/s", x.batchRates(), Fmt::rate);
        row("publish one at a time, msg/s", x.singleRates(), Fmt::rate);
        row(String.format(Locale.ROOT, "retention of %,d entries, %d groups, ms", x.retentionEntries(), x.groups()),
                x.retentionMillis(), v -> String.format(Locale.ROOT, "%.1f", v));
        row(String.format(Locale.ROOT, "the same, oldest entry stuck pending, ms (trims %,d / 0 entries)",
                x.retentionEntries() - 1), x.stuckRetentionMillis(), v -> String.format(Locale.ROOT, "%.1f", v));
        md.line();
        md.line("Per round (" + Redis8Scenario.OWN + " / " + Redis8Scenario.OLDER + "):");
        md.line();
        rounds("publishAll, msg/s", x.batchRates(), Fmt::rate);
        rounds("publish one at a time, msg/s", x.singleRates(), Fmt::rate);
        rounds("retention, ms", x.retentionMillis(), v -> String.format(Locale.ROOT, "%.1f", v));
        rounds("retention with one entry stuck, ms", x.stuckRetentionMillis(),
                v -> String.format(Locale.ROOT, "%.1f", v));
        md.line();
        md.line("Targets: no worse on the server's own path: publishes at least "
                + Fmt.ratio(Targets.REDIS8_PATH_NO_WORSE) + " the older path's rate, a retention round at most "
                + Fmt.ratio(1 / Targets.REDIS8_PATH_NO_WORSE) + " its time with nothing pending (a range across the"
                + " target is within noise). With an entry stuck the two paths do different work, so that row has no"
                + " target: it shows what trimming behind the stuck entry costs.");
        md.line();
    }

    private void row(String what, Map<String, List<Double>> values, DoubleFunction<String> f) {
        List<Double> own = values.get(Redis8Scenario.OWN);
        List<Double> older = values.get(Redis8Scenario.OLDER);
        md.line("| " + what + " | " + Fmt.summary(Stats.of(own), f) + " | " + Fmt.summary(Stats.of(older), f) + " | "
                + Fmt.summary(Stats.pairedRatio(own, older), Fmt::ratio) + " |");
    }

    private void rounds(String what, Map<String, List<Double>> values, DoubleFunction<String> f) {
        md.line("- " + what + ": " + Fmt.rounds(values.get(Redis8Scenario.OWN), f) + " / "
                + Fmt.rounds(values.get(Redis8Scenario.OLDER), f));
    }
}
