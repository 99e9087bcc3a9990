package dev.runbus.bench;

import java.util.List;
import java.util.Locale;
import java.util.function.DoubleFunction;
import java.util.function.ToDoubleFunction;

/** Section 12: flow control against the same work without it, and its fair shares. */
final class FlowSection {

    private final Markdown md;

    FlowSection(Markdown md) {
        this.md = md;
    }

    void write(FlowScenario.Result x) {
        md.line("## 12. Flow control");
        md.line();
        md.line(String.format(Locale.ROOT, "runbus with flow control (docs/flow-control.md) against the same work"
                + " without it, each round in an order drawn for the round; one consuming bus of %d handlers and a"
                + " publishing bus of its own, a topic of one partition.", FlowMeasures.CONCURRENCY));
        md.line();
        md.line(String.format(Locale.ROOT, "**Drain.** %,d messages of %d tenants published (`publishAll`, batches of"
                + " %d) while nobody subscribes, then drained by handlers that do nothing. Key caps: each tenant's cap"
                + " %d, so the tenants together may run more than the %d handlers (every message waits outside the"
                + " stream, is let in by a script, confirmed before it starts and gives its slot back after its ack);"
                + " topic cap: the same and a topic cap of %d, which binds all the time (a handler that ends waits"
                + " for its slot's release to let the next message in, and a read to bring it); ungated: the same"
                + " messages without flow keys; sub-keys: key caps, each tenant's messages spread over %d sub-keys."
                + " Redis commands per message count the commands scripts call, over publish and drain.",
                x.drainMessages(), FlowMeasures.TENANTS, FlowMeasures.PUBLISH_BATCH, FlowMeasures.KEY_CAP,
                FlowMeasures.CONCURRENCY, FlowMeasures.CONCURRENCY, FlowMeasures.DRAIN_SUB_KEYS));
        md.line();
        md.line("| | key caps | sub-keys | topic cap | ungated | key caps ÷ ungated | sub-keys ÷ ungated"
                + " | topic cap ÷ ungated |");
        md.line("|---|---:|---:|---:|---:|---:|---:|---:|");
        drainRow("publish, msg/s", x, FlowScenario.Drain::publishRate, Fmt::rate);
        drainRow("drain, msg/s", x, FlowScenario.Drain::drainRate, Fmt::rate);
        drainRow("Redis commands per message", x, FlowScenario.Drain::commandsPerMessage,
                v -> String.format(Locale.ROOT, "%.1f", v));
        md.line();
        md.line(String.format(Locale.ROOT, "**Hand-off.** One tenant's %,d messages run one at a time: gated by a cap"
                + " of 1 (each ack's release lets the next in, which a consumer then reads), ungated by a subscription"
                + " of concurrency 1 (the next entry already read ahead). The gap from a handler's end to the next"
                + " one's start:", x.handOffMessages()));
        md.line();
        md.line("| | cap 1 | concurrency 1 |");
        md.line("|---|---:|---:|");
        handOffRow("p50, ms", x, FlowScenario.HandOff::p50);
        handOffRow("p99, ms", x, FlowScenario.HandOff::p99);
        md.line();
        md.line(String.format(Locale.ROOT, "**A heavy tenant beside light ones.** One tenant's backlog of %,d"
                + " messages runs at full speed for a second; then %d light tenants publish %d messages a second in"
                + " all for %.0f s. Handlers take %d ms. Fair shares: a topic cap of %d, start-time fair queueing;"
                + " first come first served: the same messages without flow keys. A light message's wait is from its"
                + " publish to its handler's start; the throughput counts every message handled in the window.",
                x.heavyBacklog(), FlowMeasures.TENANTS - 1, x.lightRate(), x.windowMillis() / 1e3,
                FlowMeasures.FAIR_HANDLER_MILLIS, FlowMeasures.CONCURRENCY));
        md.line();
        md.line("| | fair shares | first come first served | fair ÷ fcfs |");
        md.line("|---|---:|---:|---:|");
        fairRow("light wait p50, ms", x, FlowScenario.Fairness::lightP50, Fmt::ms);
        fairRow("light wait p99, ms", x, FlowScenario.Fairness::lightP99, Fmt::ms);
        fairRow("light wait p99.9, ms", x, FlowScenario.Fairness::lightP999, Fmt::ms);
        fairRow("throughput in the window, msg/s", x, FlowScenario.Fairness::rate, Fmt::rate);
        long ranOut = x.fair().stream().filter(f -> !f.heavyBacklogged()).count()
                + x.unfair().stream().filter(f -> !f.heavyBacklogged()).count();
        md.line();
        if (ranOut > 0) {
            md.line("In " + ranOut + " of the runs the heavy tenant's backlog ran out before the window ended:"
                    + " its throughput there is not a saturated one.");
            md.line();
        }
        md.line(String.format(Locale.ROOT, "**Shares at 100:1.** %d tenants all backlogged, one with %,d messages and"
                + " each other with %,d, behind a topic cap of %d, handlers that do nothing; the admissions in the"
                + " order Redis let them in (their stream ids), cut into windows of %,d while every tenant still had"
                + " messages waiting. The worst window of each round: its largest tenant count over its smallest,"
                + " and Jain's index (1: equal shares). These follow from the order of admissions, not from the"
                + " machine's speed.", FlowMeasures.TENANTS, x.sharesLightEach() * 100, x.sharesLightEach(),
                FlowMeasures.CONCURRENCY, FlowMeasures.SHARE_WINDOW));
        md.line();
        md.line("- worst max/min: " + Fmt.summary(Stats.of(values(x.shares(), FlowScenario.Shares::maxOverMin)),
                v -> String.format(Locale.ROOT, "%.3f", v)) + "; worst Jain: "
                + Fmt.summary(Stats.of(values(x.shares(), FlowScenario.Shares::jain)),
                        v -> String.format(Locale.ROOT, "%.4f", v)) + "; windows per round: "
                + Fmt.rounds(values(x.shares(), s -> s.windows()), v -> String.format(Locale.ROOT, "%.0f", v)));
        md.line(String.format(Locale.ROOT, "- again with the heavy tenant's messages spread over %,d sub-keys (it"
                + " gains nothing by it: sub-keys share their key's turns): worst max/min ", FlowMeasures.HEAVY_SUB_KEYS)
                + Fmt.summary(Stats.of(values(x.sharesOverSubKeys(), FlowScenario.Shares::maxOverMin)),
                        v -> String.format(Locale.ROOT, "%.3f", v)) + "; worst Jain: "
                + Fmt.summary(Stats.of(values(x.sharesOverSubKeys(), FlowScenario.Shares::jain)),
                        v -> String.format(Locale.ROOT, "%.4f", v)));
        md.line(String.format(Locale.ROOT, "- weights 1:2:5, three tenants of %,d messages each behind a topic cap of"
                + " 8, each one's share of the admissions while all three had messages waiting over the share its"
                + " weight asks: ", x.weightsEach())
                + Fmt.summary(Stats.of(values(x.weights(), FlowScenario.Weights::weight1)), FlowSection::share)
                + " / " + Fmt.summary(Stats.of(values(x.weights(), FlowScenario.Weights::weight2)), FlowSection::share)
                + " / " + Fmt.summary(Stats.of(values(x.weights(), FlowScenario.Weights::weight5)), FlowSection::share));
        md.line();
        md.line("Targets (docs/flow-control.md): a drain under key caps loses at most 15 % of the ungated one's rate"
                + " (the topic cap's is reported beside it, without a target: it is bound by the hand-off); shares at"
                + " 100:1 within max/min 1.10 and Jain ≥ 0.99, and so with the heavy tenant over 1,000 sub-keys;"
                + " weights within ±5 %; a light tenant's wait p99 ≤ 50 ms"
                + " beside a backlogged heavy one; throughput in the window ≥ 95 % of first come first served's.");
        md.line();
    }

    private static String share(double v) {
        return String.format(Locale.ROOT, "%.3f", v);
    }

    private static <T> List<Double> values(List<T> samples, ToDoubleFunction<T> f) {
        return samples.stream().map(s -> f.applyAsDouble(s)).toList();
    }

    private void drainRow(String what, FlowScenario.Result x, ToDoubleFunction<FlowScenario.Drain> f,
                          DoubleFunction<String> fmt) {
        List<Double> g = values(x.gated(), f);
        List<Double> s = values(x.subKeyed(), f);
        List<Double> t = values(x.topicCapped(), f);
        List<Double> u = values(x.ungated(), f);
        md.line("| " + what + " | " + Fmt.summary(Stats.of(g), fmt) + " | " + Fmt.summary(Stats.of(s), fmt) + " | "
                + Fmt.summary(Stats.of(t), fmt) + " | " + Fmt.summary(Stats.of(u), fmt) + " | "
                + Fmt.summary(Stats.pairedRatio(g, u), Fmt::ratio) + " | "
                + Fmt.summary(Stats.pairedRatio(s, u), Fmt::ratio) + " | "
                + Fmt.summary(Stats.pairedRatio(t, u), Fmt::ratio) + " |");
    }

    private void handOffRow(String what, FlowScenario.Result x, ToDoubleFunction<FlowScenario.HandOff> f) {
        md.line("| " + what + " | " + Fmt.summary(Stats.of(values(x.gatedHandOff(), f)), Fmt::ms) + " | "
                + Fmt.summary(Stats.of(values(x.ungatedHandOff(), f)), Fmt::ms) + " |");
    }

    private void fairRow(String what, FlowScenario.Result x, ToDoubleFunction<FlowScenario.Fairness> f,
                         DoubleFunction<String> fmt) {
        List<Double> fair = values(x.fair(), f);
        List<Double> unfair = values(x.unfair(), f);
        md.line("| " + what + " | " + Fmt.summary(Stats.of(fair), fmt) + " | " + Fmt.summary(Stats.of(unfair), fmt)
                + " | " + Fmt.summary(Stats.pairedRatio(fair, unfair), Fmt::ratio) + " |");
    }
}
