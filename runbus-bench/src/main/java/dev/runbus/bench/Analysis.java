package dev.runbus.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The report's analysis, in two parts that cannot go stale silently: what this run's results say, written
 * from them (so its numbers are always this run's), and the hand-written findings (where the time goes, with
 * profiler evidence), which name the run they were written for. The findings are kept in the module's
 * resources, read from the source tree when the benchmark runs in the repository, else from the jar; their
 * first line, {@code <!-- written for: the run of DATE at commit COMMIT, ... -->}, says which run.
 */
final class Analysis {

    private static final String FINDINGS = "/dev/runbus/bench/findings.md";
    private static final Pattern WRITTEN_FOR = Pattern.compile("^<!--\\s*written for:\\s*(.*?)\\s*-->\\s*\\n");

    private final Markdown md;

    Analysis(Markdown md) {
        this.md = md;
    }

    void write(Results r) {
        new RunSummary(md).write(r);
        String findings = findings();
        if (findings == null) {
            return;
        }
        Matcher m = WRITTEN_FOR.matcher(findings);
        boolean marked = m.find();
        String writtenFor = marked ? m.group(1) : null;
        String body = marked ? findings.substring(m.end()) : findings;
        int firstBreak = body.indexOf('\n');
        // the findings' own heading first, then which run they describe
        md.line(body.substring(0, firstBreak).strip());
        md.line();
        md.line("> Written by hand for " + (writtenFor == null ? "an earlier run" : writtenFor)
                + (writtenFor != null && !r.machine.commit().isEmpty() && writtenFor.contains(r.machine.commit())
                ? " — this run." : "; **its figures are that run's, not this report's tables** (the section above"
                + " is this run's). Update it, and its first line, when the findings change."));
        md.line();
        md.block(body.substring(firstBreak + 1));
    }

    private static String findings() {
        Path source = BenchOptions.repositoryRoot().resolve("runbus-bench/src/main/resources" + FINDINGS);
        if (Files.isRegularFile(source)) {
            try {
                return Files.readString(source, StandardCharsets.UTF_8);
            } catch (IOException e) {
                // fall back to the jar
            }
        }
        try (InputStream in = Analysis.class.getResourceAsStream(FINDINGS)) {
            return in == null ? null : new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return null;
        }
    }

    /** Figures of each round in order, for a sentence: {@code 0.92×, 1.01×, 0.97×}. */
    static String perRound(List<Double> values) {
        return Fmt.rounds(values, Fmt::ratio);
    }

    /** How many of the rounds' values pass {@code test}, as "k of n rounds". */
    static String rounds(List<Double> values, java.util.function.DoublePredicate test) {
        long measured = values.stream().filter(v -> !v.isNaN()).count();
        long passed = values.stream().filter(v -> !v.isNaN() && test.test(v)).count();
        return String.format(Locale.ROOT, "%d of %d round%s", passed, measured, measured == 1 ? "" : "s");
    }
}
