package dev.runbus.bench;

import java.util.Locale;

/** Section 2: latency percentiles at each offered rate, and each contender ÷ runbus per round. */
final class LatencySection {

    private final Markdown md;
    /** The chart's file, relative to the report; null when none was drawn. */
    private final String chart;

    LatencySection(Markdown md, String chart) {
        this.md = md;
        this.chart = chart;
    }

    void write(LatencyScenario.Result l) {
        md.line("## 2. Latency at a fixed offered rate");
        md.line();
        md.line("Each XADD is sent at its time (no bursts); " + l.consumers() + " consumers; " + l.measureMillis() / 1000.0
                + " s measured after a warm-up. Latency is from the moment the producer sent the message (the time"
                + " travels in its payload) until the consumer learned that Redis had accepted the XACK that covers it."
                + (l.runbusAckObserved() ? "" : " **runbus's ack could not be observed in this run; its figures end at"
                + " the handler's return.**"));
        md.line();
        for (int rate : l.rates()) {
            md.line("### " + String.format(Locale.ROOT, "%,d", rate) + " msg/s");
            md.line();
            md.line("| ms | p50 | p99 | p99.9 | acked msg/s |");
            md.line("|---|---:|---:|---:|---:|");
            for (String name : l.contenders()) {
                md.line("| " + Markdown.bold(name) + " | "
                        + ms(l, rate, name, LatencyScenario.Sample::p50) + " | "
                        + ms(l, rate, name, LatencyScenario.Sample::p99) + " | "
                        + ms(l, rate, name, LatencyScenario.Sample::p999) + " | "
                        + Fmt.rate(Stats.of(l.values(rate, name, LatencyScenario.Sample::ackedRate)).median())
                        + (l.saturated(rate, name) ? " (did not keep up)" : "") + " |");
            }
            md.line();
            md.line("| contender ÷ runbus | p50 | p99 | p99.9 |");
            md.line("|---|---:|---:|---:|");
            for (String name : l.contenders()) {
                if (name.equals(RunbusContender.NAME)) {
                    continue;
                }
                md.line("| " + name + " ÷ runbus | "
                        + ratio(l, rate, name, LatencyScenario.Sample::p50) + " | "
                        + ratio(l, rate, name, LatencyScenario.Sample::p99) + " | "
                        + ratio(l, rate, name, LatencyScenario.Sample::p999) + " |");
            }
            md.line();
        }
        md.line("A ratio above 1 means the contender's latency is that many times runbus's.");
        md.line();
        md.image(chart, "Latency percentiles");
    }

    private static String ratio(LatencyScenario.Result l, int rate, String name,
                                java.util.function.ToDoubleFunction<LatencyScenario.Sample> f) {
        return Fmt.summary(Stats.pairedRatio(l.values(rate, name, f), l.values(rate, RunbusContender.NAME, f)),
                Fmt::ratio);
    }

    /** A percentile of one contender over the rounds, runbus's in bold. */
    private static String ms(LatencyScenario.Result l, int rate, String name,
                             java.util.function.ToDoubleFunction<LatencyScenario.Sample> f) {
        return Markdown.bold(name, Fmt.summary(Stats.of(l.values(rate, name, f)), Fmt::ms));
    }
}
