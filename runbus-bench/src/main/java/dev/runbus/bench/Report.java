package dev.runbus.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes the results as markdown, top-down: header, targets, one section per scenario measured, what failed,
 * the method, the analysis. Each section is a class of its own.
 */
final class Report {

    static final String COMMAND = "mvn -q -B install -DskipTests && mvn -q -B -pl runbus-bench exec:java";

    private final Markdown md = new Markdown();
    private final Results r;
    private final Map<String, String> charts;

    /** {@code charts}: chart name (drain, latency) → file name relative to the report. */
    Report(Results results, Map<String, String> charts) {
        this.r = results;
        this.charts = charts;
    }

    static void write(Results results, Map<String, String> charts, Path out) throws IOException {
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, new Report(results, charts).render(), StandardCharsets.UTF_8);
    }

    String render() {
        header();
        targets();
        if (r.drain != null) {
            new DrainSection(md, charts.get("drain")).write(r.drain);
        }
        if (r.latency != null) {
            new LatencySection(md, charts.get("latency")).write(r.latency);
        }
        if (r.runs != null) {
            new RunsSection(md).write(r.runs);
        }
        if (r.recovery != null) {
            new RecoverySection(md).write(r.recovery);
        }
        if (r.poison != null) {
            new PoisonSection(md).write(r.poison);
        }
        if (r.memory != null) {
            new MemorySection(md).write(r.memory);
        }
        if (r.ordered != null) {
            new OrderedSection(md).write(r.ordered);
        }
        if (r.cluster != null) {
            new ClusterSection(md, r.machine.cores()).write(r.cluster);
        }
        if (r.delay != null) {
            new DelaySection(md).write(r.delay);
        }
        if (r.hungMaster != null) {
            new HungMasterSection(md).write(r.hungMaster);
        }
        if (r.redis8 != null) {
            new Redis8Section(md).write(r.redis8);
        }
        if (r.flow != null) {
            new FlowSection(md).write(r.flow);
        }
        if (r.flowKills != null) {
            new FlowKillsSection(md).write(r.flowKills);
        }
        if (r.flowRate != null) {
            new FlowRateSection(md).write(r.flowRate);
        }
        if (r.outbox != null) {
            new OutboxSection(md).write(r.outbox);
        }
        failures();
        new MethodSection(md).write(r);
        new Analysis(md).write(r);
        return md.toString();
    }

    private void header() {
        Results.Machine m = r.machine;
        md.line("# Benchmarks");
        md.line();
        md.line("Written by the benchmark module (`runbus-bench`) on "
                + DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'", Locale.ROOT).format(r.started.atZone(ZoneOffset.UTC))
                + " in " + r.elapsed.toMinutes() + " min " + r.elapsed.toSecondsPart() + " s"
                + (m.commit().isEmpty() ? "" : ", at commit `" + m.commit() + "`")
                + ". Do not edit it by hand: run it again from the repository root.");
        md.line();
        md.line("```sh");
        md.line(COMMAND);
        md.line("```");
        md.line();
        if (r.quick) {
            md.line("> **Quick run** (`--quick`): fewer messages, shorter windows, " + r.repeats
                    + " round(s). A smoke test, not a result.");
            md.line();
        }
        md.line("Machine: " + m.cores() + " cores (" + m.cpu() + "), " + m.memory() + ", " + m.os() + "; " + m.jvm()
                + "; Redis " + m.redis() + " and PostgreSQL " + m.postgres() + " on the same host. The machine is shared"
                + " and noisy, so **the ratios between contenders measured in the same run are the result**, not the"
                + " absolute numbers.");
        md.line();
        md.line("Every figure is the **median of " + r.repeats + " rounds, with the min–max in brackets**."
                + " Within a round the contenders run one after the other in a random order drawn anew for each"
                + " round (seed " + r.seed + "; `--seed " + r.seed + "` repeats the order), so that none always"
                + " follows the same neighbour;"
                + " a ratio is the median (min–max) of the per-round ratios runbus ÷ contender, so both sides of"
                + " a ratio saw the same moment of the machine. Before measuring, the drain, latency, runs (every"
                + " reference too) and poison scenarios repeat full warm-up rounds until the JIT compiled for less than "
                + Fmt.percent(Jit.SETTLED) + " of a round (at most " + Jit.MAX_ROUNDS + ", "
                + RunsScenario.MAX_WARMUP_ROUNDS + " for runs): on two cores a C2 compiler"
                + " thread otherwise takes a third of the CPU of the first measured rounds.");
        md.line();
    }

    private void targets() {
        List<Targets.Check> checks = Targets.evaluate(r);
        if (checks.isEmpty()) {
            return;
        }
        md.line("## Targets");
        md.line();
        md.line("| target | measured | |");
        md.line("|---|---|---|");
        for (Targets.Check c : checks) {
            md.line("| " + c.target() + " | " + c.measured() + " | " + c.verdict().text() + " |");
        }
        md.line();
        md.line("*Met*: every round meets the target. *Within noise*: the rounds' range lies on both sides of it, so"
                + " this run cannot tell. *Missed*: no round meets it — or, for a target asked of every round, one"
                + " round does not.");
        md.line();
    }

    private void failures() {
        if (r.failures.isEmpty()) {
            return;
        }
        md.line("## Scenarios that failed");
        md.line();
        r.failures.forEach((s, why) -> md.line("- **" + s + "**: " + why.replace('\n', ' ')));
        md.line();
    }
}
