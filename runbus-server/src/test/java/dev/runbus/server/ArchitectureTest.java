package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The server uses the public APIs of the bus and the runs layer only, never their internals (docs/architecture.md, Packages). */
class ArchitectureTest {

    @Test
    void serverSourcesImportNoInternals() throws IOException {
        Path sources = Path.of("src/main/java");
        assertThat(sources).isDirectory();
        List<String> offenders;
        try (Stream<Path> files = Files.walk(sources)) {
            offenders = files.filter(p -> p.toString().endsWith(".java")).filter(p -> {
                try {
                    String text = Files.readString(p);
                    return text.contains("dev.runbus.internal") || text.contains("dev.runbus.runs.internal");
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }).map(Path::toString).collect(Collectors.toList());
        }
        assertThat(offenders).isEmpty();
    }
}
