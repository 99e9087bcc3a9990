package dev.runbus.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every Java block in the README is a region of a program in this module that compiles (and that
 * {@link GettingStartedTest} runs): the block follows a {@code <!-- snippet: FILE#NAME -->} line, and its text is
 * what lies between {@code // snippet:start NAME} and {@code // snippet:end} in FILE, less the common indent. So
 * a renamed method breaks the build, not the reader. The examples of the public javadoc are held to the same.
 */
class ReadmeSnippetsTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern BLOCK = Pattern.compile(
            "(?:<!-- snippet: (\\S+)#(\\S+) -->\\n)?```java\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern JAVADOC_BLOCK = Pattern.compile(
            "<!-- snippet: (\\S+)#(\\S+) -->\\n[ \\t]*\\* <pre>\\{@code\\n(.*?)[ \\t]*\\* }</pre>", Pattern.DOTALL);

    @Test
    void everyJavaBlockOfTheReadmeIsASnippetOfACompiledExample() throws IOException {
        String readme = Files.readString(ROOT.resolve("README.md"));
        Matcher m = BLOCK.matcher(readme);
        List<String> checked = new ArrayList<>();
        while (m.find()) {
            assertThat(m.group(1)).as("a Java block of the README without a snippet line before it:%n%s",
                    m.group(3)).isNotNull();
            String region = region(ROOT.resolve(m.group(1)), m.group(2));
            assertThat(m.group(3)).as("README block %s#%s", m.group(1), m.group(2)).isEqualTo(region);
            checked.add(m.group(2));
        }
        assertThat(checked).contains("getting-started", "runs");
    }

    /**
     * The examples of the public javadoc likewise: a {@code <pre>{@code …}</pre>} block after a {@code <!-- snippet:
     * FILE#NAME -->} line of a comment is the region of FILE, less the comment's {@code * } margin.
     */
    @Test
    void everyMarkedJavadocExampleIsASnippetOfACompiledExample() throws IOException {
        List<String> checked = new ArrayList<>();
        for (String module : List.of("runbus-core", "runbus-runs", "runbus-server", "runbus-spring-boot-starter")) {
            try (var sources = Files.walk(ROOT.resolve(module).resolve("src/main/java"))) {
                for (Path file : sources.filter(f -> f.toString().endsWith(".java")).toList()) {
                    Matcher m = JAVADOC_BLOCK.matcher(Files.readString(file));
                    while (m.find()) {
                        String example = m.group(3).replaceAll("(?m)^[ \\t]*\\* ?", "");
                        assertThat(example).as("%s: javadoc example %s#%s", ROOT.relativize(file), m.group(1),
                                m.group(2)).isEqualTo(region(ROOT.resolve(m.group(1)), m.group(2)));
                        checked.add(file.getFileName() + "#" + m.group(2));
                    }
                }
            }
        }
        assertThat(checked).contains("Bus.java#bus", "Runs.java#runs");
    }

    static String region(Path file, String name) throws IOException {
        List<String> lines = Files.readAllLines(file);
        int start = -1;
        int end = -1;
        for (int i = 0; i < lines.size(); i++) {
            String t = lines.get(i).trim();
            if (t.equals("// snippet:start " + name)) {
                start = i + 1;
            } else if (start >= 0 && end < 0 && t.equals("// snippet:end")) {
                end = i;
            }
        }
        assertThat(start).as("// snippet:start %s in %s", name, file).isPositive();
        assertThat(end).as("// snippet:end after %s in %s", name, file).isGreaterThanOrEqualTo(start);
        List<String> body = lines.subList(start, end);
        int indent = body.stream().filter(l -> !l.isBlank()).mapToInt(l -> l.length() - l.stripLeading().length())
                .min().orElse(0);
        StringBuilder out = new StringBuilder();
        for (String l : body) {
            out.append(l.isBlank() ? "" : l.substring(indent)).append('\n');
        }
        return out.toString();
    }
}
