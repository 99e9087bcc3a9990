package dev.runbus.bench;

import java.util.Locale;

/** Section 13: flow control's caps while workers die, at full scale. */
final class FlowKillsSection {

    private final Markdown md;

    FlowKillsSection(Markdown md) {
        this.md = md;
    }

    void write(FlowKillsScenario.Result x) {
        md.line("## 13. Flow control while workers die");
        md.line();
        md.line(String.format(Locale.ROOT, "%d worker JVMs of %d handlers each run the messages of %d flow keys, a cap"
                + " of %d per key and a topic cap of %d (the topic at its cap throughout, keys waiting for their"
                + " turns), handlers of 50 to 150 ms, slots leased for `minIdle` %,d ms with `claimInterval` %,d ms;"
                + " a publisher keeps the keys backlogged. For %d s a random worker is SIGKILLed every %d s and"
                + " another SIGTERMed every %d s (a second's grace), each replaced by a new one. Every handler prints"
                + " its start and end on the machine's clock (shared by the workers and Redis); a handler whose worker"
                + " died before its end counts as running until the death. After each SIGKILL the slots the victim"
                + " held (its running messages, and those it had finished and not yet given back) are watched until"
                + " each is free: its hold reaped or released, or its message started by another worker, which then"
                + " holds it.", x.workers(), x.handlersEach(), x.keys(), x.keyCap(), x.topicCap(),
                x.minIdleMillis(), x.claimIntervalMillis(), x.seconds(), FlowKillsScenario.KILL_EVERY_MILLIS / 1000,
                FlowKillsScenario.TERM_EVERY_MILLIS / 1000));
        md.line();
        md.line("| figure | this run | target |");
        md.line("|---|---:|---|");
        md.line(String.format(Locale.ROOT, "| most handlers of one key at once | %d | ≤ %d |", x.mostOfOneKey(),
                x.keyCap()));
        md.line(String.format(Locale.ROOT, "| most handlers in all at once | %d | ≤ %d |", x.mostInAll(),
                x.topicCap()));
        md.line(String.format(Locale.ROOT, "| workers SIGKILLed / SIGTERMed | %d / %d | |", x.sigkills(),
                x.sigterms()));
        md.line(String.format(Locale.ROOT, "| messages published / handled | %,d / %,d | |", x.published(),
                x.handled()));
        md.line(String.format(Locale.ROOT, "| messages lost | %,d | 0 |", x.lost()));
        md.line(String.format(Locale.ROOT, "| dead letters | %,d | 0 |", x.deadLetters()));
        md.line(String.format(Locale.ROOT, "| a SIGKILLed worker's slots free again, p50 / p99 / max | %s / %s / %s"
                + " | p99 ≤ %.1f s (`minIdle + claimInterval + 1 s`) |",
                Fmt.seconds(FlowKillsScenario.percentile(x.recoverySeconds(), 50)),
                Fmt.seconds(FlowKillsScenario.percentile(x.recoverySeconds(), 99)),
                Fmt.seconds(FlowKillsScenario.percentile(x.recoverySeconds(), 100)), x.recoveryBoundSeconds()));
        if (x.recoveryUnfinished() > 0) {
            md.line(String.format(Locale.ROOT, "| SIGKILLs whose slots were not all free within a minute | %d | 0 |",
                    x.recoveryUnfinished()));
        }
        md.line();
    }
}
