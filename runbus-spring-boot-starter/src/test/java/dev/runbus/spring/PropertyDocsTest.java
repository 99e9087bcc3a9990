package dev.runbus.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** docs/spring-boot.md lists every runbus.* property of the generated metadata, with the metadata's default. */
class PropertyDocsTest {

    private static final Pattern PROPERTY = Pattern.compile(
            "\\{\\s*\"name\"\\s*:\\s*\"(runbus\\.[^\"]+)\"[^}]*?(?:\"defaultValue\"\\s*:\\s*\"?([^\",}]*)\"?)?[^}]*}",
            Pattern.DOTALL);

    @Test
    void everyPropertyIsDocumentedWithItsDefault() throws Exception {
        String metadata;
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            metadata = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
        // The groups come first; only the properties have rows.
        metadata = metadata.substring(metadata.indexOf("\"properties\""));
        String docs = Files.readString(Path.of("..", "docs", "spring-boot.md"));
        Matcher m = PROPERTY.matcher(metadata);
        int count = 0;
        while (m.find()) {
            String name = m.group(1);
            String row = docs.lines().filter(l -> l.startsWith("| `" + name + "` |")).findFirst().orElse(null);
            assertThat(row).as("docs/spring-boot.md row of " + name).isNotNull();
            if (m.group(2) != null && !name.equals("runbus.runs.retry.policy")) {
                assertThat(row).as(name).contains("`" + m.group(2).trim() + "`");
            }
            count++;
        }
        assertThat(count).isGreaterThan(40);
    }
}
