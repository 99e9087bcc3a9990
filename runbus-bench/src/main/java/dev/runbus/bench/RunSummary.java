package dev.runbus.bench;

import java.util.List;
import java.util.Locale;

/**
 * This run's results in sentences, written from the results themselves: the comparisons the targets rest
 * on, round by round, including the tail at every offered rate (5k and 20k msg/s), so that the prose of a
 * report always describes its own tables.
 */
final class RunSummary {

    private final Markdown md;

    RunSummary(Markdown md) {
        this.md = md;
    }

    void write(Results r) {
        md.line("## This run, in numbers");
        md.line();
        md.line("Written from this run's results (" + r.repeats + " round" + (r.repeats == 1 ? "" : "s")
                + (r.machine.commit().isEmpty() ? "" : ", commit `" + r.machine.commit() + "`") + ").");
        md.line();
        if (r.drain != null) {
            drain(r.drain);
        }
        if (r.latency != null) {
            tail(r.latency);
        }
        if (r.runs != null) {
            runs(r.runs);
        }
        if (r.recovery != null) {
            RecoveryScenario.Result x = r.recovery;
            double bound = (x.minIdleMillis() + 2 * x.claimIntervalMillis()) / 1000.0;
            md.line("- **Recovery**: " + Fmt.summary(Stats.of(x.seconds()), Fmt::seconds) + " from the kill, with the"
                    + " kill at " + Fmt.summary(Stats.of(x.killPhaseMillis()), v -> String.format(Locale.ROOT, "%.0f",
                    v)) + " ms of a " + x.keepAliveMillis() + " ms keep-alive interval; within " + Fmt.seconds(bound)
                    + " in " + Analysis.rounds(x.seconds(), v -> v <= bound) + ".");
        }
        if (r.poison != null) {
            List<Double> ratios = Stats.ratios(r.poison.deadLettered(), r.poison.clean());
            md.line("- **Poison**: dead-lettering 1 % at once cost " + Fmt.summary(Stats.of(ratios.stream()
                    .map(v -> 1 - v).toList()), Fmt::percent) + " of the drain; at most 3 % in "
                    + Analysis.rounds(ratios, v -> v >= 0.97) + ".");
        }
        md.line();
    }

    private void drain(DrainScenario.Result d) {
        StringBuilder s = new StringBuilder("- **Drain**, runbus ÷ " + LettuceLoopContender.NAME + " round by round:");
        for (int c : d.consumerCounts()) {
            if (d.has(RunbusContender.NAME, c) && d.has(LettuceLoopContender.NAME, c)) {
                s.append(" C = ").append(c).append(": ").append(Analysis.perRound(Stats.ratios(
                        d.of(RunbusContender.NAME, c), d.of(LettuceLoopContender.NAME, c)))).append(';');
            }
        }
        int at = DrainScenario.ONE_SUBSCRIPTION_AT;
        if (d.has(RunbusContender.ONE_SUBSCRIPTION, at) && d.has(LettuceLoopContender.NAME, at)) {
            s.append(" as one subscription of concurrency ").append(at).append(": ").append(Analysis.perRound(
                    Stats.ratios(d.of(RunbusContender.ONE_SUBSCRIPTION, at), d.of(LettuceLoopContender.NAME, at))))
                    .append(';');
        }
        s.setCharAt(s.length() - 1, '.');
        md.line(s.toString());
    }

    /** The tail at each offered rate: runbus's p99 and p99.9 against the Lettuce loop's, round by round. */
    private void tail(LatencyScenario.Result l) {
        for (int rate : l.rates()) {
            List<Double> mine = l.values(rate, RunbusContender.NAME, LatencyScenario.Sample::p99);
            String head = String.format(Locale.ROOT,
                    "- **Tail at %,d msg/s**: runbus p50 %s ms, p99 %s ms, p99.9 %s ms", rate, Fmt.summary(Stats.of(l.values(rate, RunbusContender.NAME, LatencyScenario.Sample::p50)),
                    Fmt::ms), Fmt.summary(Stats.of(mine), Fmt::ms), Fmt.summary(Stats.of(l.values(rate,
                    RunbusContender.NAME, LatencyScenario.Sample::p999)), Fmt::ms));
            if (!l.contenders().contains(LettuceLoopContender.NAME)) {
                md.line(head + ".");
                continue;
            }
            List<Double> loop = l.values(rate, LettuceLoopContender.NAME, LatencyScenario.Sample::p99);
            List<Double> ratios = Stats.ratios(mine, loop);
            md.line(head + "; the Lettuce loop's p99 " + Fmt.summary(Stats.of(loop), Fmt::ms) + " ms. runbus ÷ loop"
                    + " at p99, round by round: " + Analysis.perRound(ratios) + " — at most 1.00× in "
                    + Analysis.rounds(ratios, v -> v <= 1.0) + "; at p99.9: " + Analysis.perRound(Stats.ratios(
                    l.values(rate, RunbusContender.NAME, LatencyScenario.Sample::p999),
                    l.values(rate, LettuceLoopContender.NAME, LatencyScenario.Sample::p999)))
                    + (l.saturated(rate, RunbusContender.NAME) ? ". runbus did not keep up with this rate in some"
                    + " round." : "."));
        }
    }

    private void runs(RunsScenario.Result x) {
        List<Double> ratios = Stats.ratios(x.runbus(), x.bestReference());
        StringBuilder best = new StringBuilder();
        x.reference().forEach((n, v) -> best.append(best.length() == 0 ? "" : ", ").append(n).append(" connection")
                .append(n == 1 ? "" : "s").append(' ').append(Fmt.summary(Stats.of(v), Fmt::rate)));
        md.line("- **Runs**: runbus " + Fmt.summary(Stats.of(x.runbus()), Fmt::rate) + " runs/s; the set-based"
                + " reference " + best + " runs/s. runbus ÷ the round's best reference: " + Analysis.perRound(ratios)
                + " — at least " + Fmt.ratio(Targets.RUNS_VS_REFERENCE) + " in "
                + Analysis.rounds(ratios, v -> v >= Targets.RUNS_VS_REFERENCE) + ". At " + Fmt.rate(x.rate())
                + " runs/s offered, submit → done → ack p50 " + Fmt.summary(Stats.of(x.p50()), Fmt::ms) + " ms and p99 "
                + Fmt.summary(Stats.of(x.p99()), Fmt::ms) + " ms; of the p50, the submit call takes "
                + Fmt.summary(Stats.of(x.submitP50()), Fmt::ms) + " ms, the way to the handler "
                + Fmt.summary(Stats.of(x.toHandlerP50()), Fmt::ms) + " ms and the handler to the confirmed ack "
                + Fmt.summary(Stats.of(x.toAckP50()), Fmt::ms) + " ms.");
    }
}
