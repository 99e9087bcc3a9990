package dev.runbus.bench;

import java.util.Locale;

/** Section 1: the drain table of every contender at every C, and runbus ÷ each contender per round. */
final class DrainSection {

    private final Markdown md;
    /** The chart's file, relative to the report; null when none was drawn. */
    private final String chart;

    DrainSection(Markdown md, String chart) {
        this.md = md;
        this.chart = chart;
    }

    void write(DrainScenario.Result d) {
        md.line("## 1. Drain");
        md.line();
        md.line(String.format(Locale.ROOT, "%,d messages of %d bytes published in pipelined batches of %,d (one producer,"
                + " the same for all), one group, C consumers, no-op handler; messages per second from the first"
                + " publish until every message was handled and the group's pending list was empty.", d.messages(),
                Payloads.SIZE, Producer.BATCH));
        md.line();
        StringBuilder head = new StringBuilder("| msg/s |");
        StringBuilder rule = new StringBuilder("|---|");
        for (int c : d.consumerCounts()) {
            head.append(" C = ").append(c).append(" |");
            rule.append("---:|");
        }
        md.line(head.toString());
        md.line(rule.toString());
        for (String name : d.rates().keySet()) {
            StringBuilder row = new StringBuilder("| " + Markdown.bold(name));
            for (int c : d.consumerCounts()) {
                row.append(" | ").append(Markdown.bold(name, Fmt.summary(Stats.of(d.of(name, c)), Fmt::rate)));
            }
            md.line(row.append(" |").toString());
        }
        md.line();
        md.line("runbus ÷ contender, per round:");
        md.line();
        md.line(head.toString().replace("msg/s", "ratio"));
        md.line(rule.toString());
        for (String name : d.rates().keySet()) {
            if (!name.equals(RunbusContender.NAME) && !name.equals(ListenerContender.NAME)
                    && !name.equals(RunbusContender.ONE_SUBSCRIPTION)) {
                ratioRow(d, "runbus ÷ " + name, RunbusContender.NAME, name);
            }
        }
        if (d.rates().containsKey(RunbusContender.ONE_SUBSCRIPTION)) {
            ratioRow(d, "runbus, 1 subscription ÷ " + LettuceLoopContender.NAME, RunbusContender.ONE_SUBSCRIPTION,
                    LettuceLoopContender.NAME);
            ratioRow(d, "runbus, 1 subscription ÷ runbus", RunbusContender.ONE_SUBSCRIPTION, RunbusContender.NAME);
        }
        if (d.rates().containsKey(ListenerContender.NAME)) {
            // The starter's listener against the plain API it wraps: the target is 0.9 or more at every C.
            ratioRow(d, "@RunbusListener ÷ runbus (target ≥ 0.9)", ListenerContender.NAME, RunbusContender.NAME);
        }
        md.line();
        md.image(chart, "Drain throughput");
    }

    /** One row of per-round ratios {@code mine ÷ other} at every C ("—" where either was not measured). */
    private void ratioRow(DrainScenario.Result d, String label, String mine, String other) {
        StringBuilder row = new StringBuilder("| " + label);
        for (int c : d.consumerCounts()) {
            row.append(" | ").append(Fmt.summary(Stats.pairedRatio(d.of(mine, c), d.of(other, c)), Fmt::ratio));
        }
        md.line(row.append(" |").toString());
    }
}
