package dev.runbus.bench;

import java.util.Locale;

/** Section 15: from the caller's commit to the handler's start, for runs submitted in the caller's transaction. */
final class OutboxSection {

    private final Markdown md;

    OutboxSection(Markdown md) {
        this.md = md;
    }

    void write(OutboxScenario.Result x) {
        md.line("## 15. Runs submitted in the caller's transaction");
        md.line();
        md.line(String.format(Locale.ROOT, "%,d runs, each submitted with `Runs.within(connection)` in a transaction of"
                + " its own and committed, one at a time, each after the last one started, so that the worker is idle:"
                + " the time from the commit's return to the run's handler start (the relay woken by the commit's"
                + " NOTIFY claims and publishes the trigger; a worker reads it and starts the attempt).", x.runs()));
        md.line();
        md.line("| figure | this run | target |");
        md.line("|---|---:|---|");
        md.line(String.format(Locale.ROOT, "| commit → handler start, p50 | %.2f ms | |", x.p50Millis()));
        md.line(String.format(Locale.ROOT, "| commit → handler start, p99 | %.2f ms | < 100 ms |", x.p99Millis()));
        md.line(String.format(Locale.ROOT, "| commit → handler start, max | %.2f ms | |", x.maxMillis()));
        md.line();
    }
}
