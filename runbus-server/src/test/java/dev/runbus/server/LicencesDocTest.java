package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * docs/licenses.md against the build: its table of licences is the list the root POM's licence check allows (a
 * licence added to one and not the other is caught), and it names every module whose jar is published.
 */
class LicencesDocTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @Test
    void theTableListsExactlyTheLicencesTheBuildAllows() throws IOException {
        String pom = Files.readString(ROOT.resolve("pom.xml"));
        Matcher included = Pattern.compile("<includedLicenses>([^<]+)</includedLicenses>").matcher(pom);
        assertThat(included.find()).as("includedLicenses in the root POM").isTrue();
        Set<String> allowed = new TreeSet<>(Arrays.asList(included.group(1).split("\\|")));

        Set<String> inTable = new TreeSet<>();
        String doc = Files.readString(ROOT.resolve("docs/licenses.md"));
        Matcher row = Pattern.compile("(?m)^\\| ([^|]+?) \\| [^|]+\\|$").matcher(doc);
        while (row.find()) {
            String cell = row.group(1).replaceAll("\\s*\\(.*\\)", "");
            if (!cell.equals("licence") && !cell.startsWith("---")) {
                Arrays.stream(cell.split(",")).map(String::strip).forEach(inTable::add);
            }
        }
        assertThat(inTable).as("the licences of docs/licenses.md's table").isEqualTo(allowed);
    }

    @Test
    void everyPublishedJarIsNamed() throws IOException {
        String pom = Files.readString(ROOT.resolve("pom.xml"));
        Set<String> published = new TreeSet<>();
        Matcher module = Pattern.compile("<module>([^<]+)</module>").matcher(pom);
        while (module.find()) {
            String modulePom = Files.readString(ROOT.resolve(module.group(1)).resolve("pom.xml"));
            boolean jar = !modulePom.contains("<packaging>pom</packaging>");
            boolean skipped = modulePom.contains("<runbus.publish.skip>true</runbus.publish.skip>")
                    || !modulePom.contains("<artifactId>runbus-parent</artifactId>");
            if (jar && !skipped) {
                published.add(module.group(1));
            }
        }
        String section = Files.readString(ROOT.resolve("docs/licenses.md")).split("## What the published jars depend on")[1];
        Set<String> missing = published.stream().filter(m -> !section.contains("`" + m + "`"))
                .collect(Collectors.toCollection(TreeSet::new));
        assertThat(published).as("published jar modules").contains("runbus-core", "runbus-server");
        assertThat(missing).as("published jars docs/licenses.md does not name").isEmpty();
    }
}
