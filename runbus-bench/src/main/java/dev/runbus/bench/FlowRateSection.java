package dev.runbus.bench;

import java.util.Locale;

/** Section 14: a flow key's rate at full length. */
final class FlowRateSection {

    private final Markdown md;

    FlowRateSection(Markdown md) {
        this.md = md;
    }

    void write(FlowRateScenario.Result x) {
        md.line("## 14. A flow key's rate over ten minutes");
        md.line();
        md.line(String.format(Locale.ROOT, "One flow key with a backlog larger than the run can drain, a rate of %d a"
                + " second with a burst of %d, %d consumers of one group (4 handlers each) for %d s. Every handler"
                + " start is timed on the machine's clock, and every entry's admission read from its stream id (the"
                + " Redis clock, on which the rate is kept). The long-run rate is (admissions − burst) ÷ the span from"
                + " the first admission to the last.", x.permits(), x.burst(), x.consumers(), x.seconds()));
        md.line();
        md.line("| figure | this run | target |");
        md.line("|---|---:|---|");
        md.line(String.format(Locale.ROOT, "| handler starts | %,d | |", x.starts()));
        md.line(String.format(Locale.ROOT, "| most starts in any one-second window | %d | ≤ %d |",
                x.mostStartsInASecond(), x.permits() + x.burst()));
        md.line(String.format(Locale.ROOT, "| most admissions in any one-second window (Redis clock) | %d | ≤ %d |",
                x.mostAdmissionsInASecond(), x.permits() + x.burst()));
        md.line(String.format(Locale.ROOT, "| long-run rate | %.2f/s | %d/s ± 1 %% |", x.longRunRate(),
                x.permits()));
        md.line();
    }
}
