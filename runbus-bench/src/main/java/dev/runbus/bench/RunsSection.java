package dev.runbus.bench;

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
                + " every trigger acked. PostgreSQL alone: the same three writes per run (insert the run, insert its"
                + " reply, set it done) on the runs layer's tables, without a bus — 100 runs per transaction on one"
                + " connection (the ceiling of a group-committing worker), and one transaction per run (%,d runs)"
                + " on 1 and on %d connections.", x.runs(), x.submitters(), x.concurrency(), x.pgPerRunRuns(),
                x.concurrency()));
        md.line();
        md.line("| runs/s | median (min–max) | runbus ÷ this |");
        md.line("|---|---:|---:|");
        md.line("| **runbus: submit → handler → replies + done → ack** | **" + Fmt.summary(Stats.of(x.runbus()), Fmt::rate)
                + "** | |");
        md.line("| PostgreSQL, 100 runs per transaction, 1 connection | " + Fmt.summary(Stats.of(x.pgBatched()), Fmt::rate)
                + " | " + Fmt.summary(Stats.pairedRatio(x.runbus(), x.pgBatched()), Fmt::ratio) + " |");
        md.line("| PostgreSQL, one transaction per run, 1 connection | " + Fmt.summary(Stats.of(x.pgPerRun1()), Fmt::rate)
                + " | " + Fmt.summary(Stats.pairedRatio(x.runbus(), x.pgPerRun1()), Fmt::ratio) + " |");
        md.line("| PostgreSQL, one transaction per run, " + x.concurrency() + " connections | "
                + Fmt.summary(Stats.of(x.pgPerRunN()), Fmt::rate) + " | "
                + Fmt.summary(Stats.pairedRatio(x.runbus(), x.pgPerRunN()), Fmt::ratio) + " |");
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
}
