package dev.runbus.bench;

import java.util.List;
import java.util.Locale;

/** Section 3: runs through runbus next to PostgreSQL doing the same writes without a bus. */
final class RunsSection {

    private final Markdown md;

    RunsSection(Markdown md) {
        this.md = md;
    }

    void write(RunsScenario.Result x) {
        md.line("## 3. Runs");
        md.line();
        md.line(String.format(Locale.ROOT, "runbus-runs: %,d runs submitted by %d threads, a no-op handler returning one"
                + " reply, worker concurrency %d; runs per second from the first submit until every run is done and"
                + " every trigger acked. **Set-based reference**: PostgreSQL alone doing runbus's writes on the runs"
                + " layer's own tables (made by its migrations, triggers included), %,d runs in batches of %d, each"
                + " batch in the three transactions runbus needs — insert the runs (`INSERT … SELECT … FROM"
                + " generate_series`), mark them running with attempts + 1 (`UPDATE … WHERE id = ANY(…)`), insert"
                + " their replies and mark them done (one statement) — on 1, 2 and 4 connections. **Naive baseline**:"
                + " one transaction per run (insert the run, its reply, set it done; %,d runs) on 1 and on %d"
                + " connections. runbus and every reference are warmed alike and measured in a random order in each"
                + " round.", x.runs(), x.submitters(), x.concurrency(), x.referenceRuns(), PgSetReference.BATCH,
                x.pgPerRunRuns(), x.concurrency()));
        md.line();
        md.line("| runs/s | median (min–max) | runbus ÷ this, per round |");
        md.line("|---|---:|---:|");
        md.line("| **runbus: submit → handler → replies + done → ack** | **" + Fmt.summary(Stats.of(x.runbus()), Fmt::rate)
                + "** | |");
        x.reference().forEach((n, values) -> row("set-based reference, " + n
                + (n == 1 ? " connection" : " connections"), x.runbus(), values));
        row("**set-based reference, the best of each round**", x.runbus(), x.bestReference());
        row("naive baseline: one transaction per run, 1 connection", x.runbus(), x.pgPerRun1());
        row("naive baseline: one transaction per run, " + x.concurrency() + " connections", x.runbus(), x.pgPerRunN());
        md.line();
        md.line("runbus ÷ the best set-based reference, round by round: "
                + Fmt.rounds(Stats.ratios(x.runbus(), x.bestReference()), Fmt::ratio) + " (target ≥ "
                + Fmt.ratio(Targets.RUNS_VS_REFERENCE) + ").");
        md.line();
        md.line(String.format(Locale.ROOT, "submit → done → ack at %,d runs/s offered, %.1f s"
                + " measured: p50 **%s ms**, p99 **%s ms** (achieved %s runs/s).", x.rate(), x.latencyMillis() / 1000.0,
                Fmt.summary(Stats.of(x.p50()), Fmt::ms), Fmt.summary(Stats.of(x.p99()), Fmt::ms),
                Fmt.rate(Stats.of(x.achievedRate()).median())));
        md.line(String.format(Locale.ROOT, "Where it goes, p50 of each stage: the submit call (the run committed, its"
                + " trigger published) %s ms; submit returned → handler started (the trigger read, the attempt"
                + " committed) %s ms; handler started → ack confirmed (the handler, replies + done committed, XACK)"
                + " %s ms.", Fmt.summary(Stats.of(x.submitP50()), Fmt::ms),
                Fmt.summary(Stats.of(x.toHandlerP50()), Fmt::ms), Fmt.summary(Stats.of(x.toAckP50()), Fmt::ms)));
        md.line();
    }

    private void row(String label, List<Double> runbus, List<Double> other) {
        md.line("| " + label + " | " + Fmt.summary(Stats.of(other), Fmt::rate) + " | "
                + Fmt.summary(Stats.pairedRatio(runbus, other), Fmt::ratio) + " |");
    }
}
