package dev.runbus.bench;

import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/** Section 9: lateness of delayed delivery, moves of due entries, and retries. */
final class DelaySection {

    private final Markdown md;

    DelaySection(Markdown md) {
        this.md = md;
    }

    void write(DelayScenario.Result x) {
        md.line("## 9. Delayed delivery and retries");
        md.line();
        md.line(String.format(Locale.ROOT, "**Lateness.** %,d entries per second scheduled for %.0f s with `publishAt`,"
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
        md.line();
        md.line("| lateness, ms | p50 | p99 | max | earliest | delivered before due | scheduled/s |");
        md.line("|---|---:|---:|---:|---:|---:|---:|");
        latenessRow("**polled, `delayPollInterval` " + x.pollMillis() + " ms (the default)**", x.polled(), true);
        latenessRow("publisher subscribed too, poll " + x.pollMillis() + " ms", x.hinted(), false);
        latenessRow("polled, `delayPollInterval` " + x.fastPollMillis() + " ms", x.polledFast(), false);
        latenessRow("lone entries, poll " + x.pollMillis() + " ms", x.lone(), false);
        latenessRow("lone entries, poll " + x.fastPollMillis() + " ms", x.loneFast(), false);
        md.line();
        md.line("Target: p99 ≤ " + Targets.DELAY_P99_LIMIT_MS + " ms with the default poll interval at "
                + String.format(Locale.ROOT, "%,d", x.rate()) + " scheduled/s, and no entry delivered before it is"
                + " due. *Earliest*: the earliest handling relative to its due time, over the rounds (negative:"
                + " before it). An entry counts as delivered before due when it was handled before its due time by"
                + " more than the uncertainty of the clock estimate (TIME is read again every "
                + ServerClock.RESYNC_MILLIS + " ms; half its round trip plus the largest correction a read made):"
                + " at most " + Fmt.ms(max(DelayScenario.Result.values(all(x),
                DelayScenario.Lateness::clockUncertaintyMillis))) + " ms in this run. A window of lone entries has"
                + " few of them, so its p99 is close to its max.");
        md.line();
        List<Double> moved = DelayScenario.Result.values(x.moves(), DelayScenario.Move::movedRate);
        List<Double> published = DelayScenario.Result.values(x.moves(), DelayScenario.Move::publishRate);
        md.line(String.format(Locale.ROOT, "**Moves.** %,d entries scheduled with delay 0 on a topic nobody subscribes to"
                + " (%d threads calling `publish(topic, message, Duration.ZERO)`, each waiting for its reply); then"
                + " one bus subscribes, and its mover moves them, a batch per script call: the time from the subscribe"
                + " until the stream holds all %,d (XLEN). Against the same %,d appended by `publishAll` in batches"
                + " of %,d. In both, a subscription of the moving bus reads the entries as they arrive.",
                x.moveEntries(), x.scheduleThreads(), x.moveEntries(), x.moveEntries(), x.publishBatch()));
        md.line();
        md.line("| per second | median (min–max) |");
        md.line("|---|---:|");
        md.line("| scheduled (`publish` with a delay) | "
                + Fmt.summary(Stats.of(DelayScenario.Result.values(x.moves(), DelayScenario.Move::scheduledRate)),
                Fmt::rate) + " |");
        md.line("| **moved into the stream** | **" + Fmt.summary(Stats.of(moved), Fmt::rate) + "** |");
        md.line("| appended by `publishAll` | " + Fmt.summary(Stats.of(published), Fmt::rate) + " |");
        md.line("| moved ÷ `publishAll`, per round | " + Fmt.summary(Stats.pairedRatio(moved, published), Fmt::ratio)
                + " |");
        md.line();
        md.line(String.format(Locale.ROOT, "**Retries.** The drain of section 5 (C = 4, %,d messages) where every %dth"
                + " message fails on its first attempt and succeeds on its second. `fixed(%d ms)`: the failed"
                + " delivery is acknowledged and its copy scheduled in one script, and the mover puts it back"
                + " %d ms later. `onIdle()` with minIdle %d ms and claim interval %d ms, the shortest sensible"
                + " idle-based retry: the failed entry stays pending until the reclaimer takes it. *All succeeded*:"
                + " messages over the time from the first publish until every message succeeded and nothing is"
                + " pending; *first attempts*: until every message had its first attempt (the healthy traffic, which"
                + " bears the failures' handling but not their wait); *retry delay*: a retried message's first"
                + " failure → its success.", x.retryMessages(), x.failEvery(), x.retryDelayMillis(),
                x.retryDelayMillis(), x.minIdleMillis(), x.claimIntervalMillis()));
        md.line();
        md.line("| | all succeeded, msg/s | ÷ no failures | first attempts, msg/s | ÷ no failures | last retry"
                + " succeeded | retry delay p50, ms | retry delay max, ms |");
        md.line("|---|---:|---:|---:|---:|---:|---:|---:|");
        retryRow("no failures", x.clean(), x.clean());
        retryRow("**`fixed(" + x.retryDelayMillis() + " ms)`**", x.fixed(), x.clean());
        retryRow("`onIdle()`, minIdle " + x.minIdleMillis() + " ms, claim interval " + x.claimIntervalMillis()
                + " ms", x.onIdle(), x.clean());
        md.line();
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
        md.line("| " + label + " | "
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
        md.line(row.append(" |").toString());
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
}
