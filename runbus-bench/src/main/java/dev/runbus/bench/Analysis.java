package dev.runbus.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The report's analysis: the hand-written findings (where the time goes, with Flight Recorder evidence), kept
 * in the module's resources and read from the source tree when the benchmark runs in the repository, else
 * from the jar.
 */
final class Analysis {

    private static final String FINDINGS = "/dev/runbus/bench/findings.md";

    private final Markdown md;

    Analysis(Markdown md) {
        this.md = md;
    }

    void write(Results r) {
        String findings = findings();
        if (findings != null) {
            md.block(findings);
        }
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
}
