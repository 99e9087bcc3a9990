package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Sentences the docs and the public javadoc once said and the code never did: none may come back, in README.md,
 * docs/*.md or the main sources of the modules users read (their javadoc, and texts such as a command's help).
 * Each phrase is matched with its line breaks, comment markers and string concatenations taken out, whatever its
 * case; next to it, what the code does.
 */
class FalsePhrasesTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final List<String> MODULES = List.of("runbus-core", "runbus-runs", "runbus-server",
            "runbus-spring-boot-starter");

    /** A false phrase → what is true. */
    private static final Map<String, String> FALSE = Map.ofEntries(
            Map.entry("A run fails only when the stream entry of its current attempt is dead-lettered",
                    "the attempt cap in PostgreSQL fails runs too, without a dead letter"),
            Map.entry("the run is tried again after {@code minIdle}",
                    "a failed run is tried again after the runs' retry policy's delay, exponential from 1 s"),
            Map.entry("the entry stays pending and is delivered again after {@link SubscribeOptions#minIdle()}",
                    "the subscription's retry policy decides when; minIdle only with RetryPolicy.onIdle()"),
            Map.entry("leave the entry pending; it is delivered again after {@code minIdle}",
                    "the retry policy decides when; minIdle only with RetryPolicy.onIdle()"),
            Map.entry("failed entry is retried in place after {@code minIdle} and holds",
                    "an ordered entry is retried in place after the retry policy's delay (minIdle with onIdle)"),
            Map.entry("{@link Outcome#RETRY} when the entry stays pending for another delivery",
                    "with a retry policy the entry is acked and a copy scheduled"),
            Map.entry("it stays pending and is delivered again, or at {@code maxDeliveries}",
                    "with a retry policy the entry is acked and a copy scheduled"),
            Map.entry("take it over; also about the retry delay after a failed handler",
                    "minIdle is the retry delay only with RetryPolicy.onIdle()"),
            Map.entry("Throwing leaves it pending: it is delivered again after `min-idle`",
                    "with a retry policy the entry is acked and a copy scheduled"),
            Map.entry("taken over by another within `minIdle`",
                    "taken over between about minIdle / 2 and minIdle + claimInterval after its death"),
            Map.entry("`RUNBUS_DATABASE_URL` to change them), and needs nothing installed",
                    "the example needs a Redis and a PostgreSQL: ./runbus dev gives them"),
            Map.entry("a claim lost to a pause longer than `minIdle`",
                    "a pause longer than minIdle − 1.5 × keepAliveInterval can lose a claim"),
            Map.entry("(more than the slowest handler)",
                    "a running handler's entry is kept alive: minIdle need not exceed the slowest handler"),
            Map.entry("At most `maxDeliveries` handler runs per entry, and a poison",
                    "docs/architecture.md lists the runs past maxDeliveries"),
            Map.entry("an entry runs at most {@code maxDeliveries} times in all",
                    "docs/architecture.md lists the runs past maxDeliveries"),
            Map.entry("so an entry runs at most `maxDeliveries` times across reschedules",
                    "the count holds across reschedules; the runs past it are listed apart"),
            Map.entry("a run has at most {@code maxDeliveries} attempts between two replays",
                    "one more for a trigger that runs alone"),
            Map.entry("A run executes at most `maxDeliveries` times between replays, counted by PostgreSQL",
                    "one more for a trigger that runs alone"),
            Map.entry("x@1?topic=jobs → 400 {\"error\": \"topic jobs has one partition",
                    "a malformed id answers 400 naming the field id"),
            Map.entry("Ids are any unique strings without `@`",
                    "the HTTP API and the dashboard cancel hex ids only"),
            Map.entry("this trigger fails and the bus retries it in place after `minIdle`",
                    "a blocked ordered trigger is retried after the runs' retry delay"),
            Map.entry("Every option has a named default constant on its class",
                    "booleans, empty and derived defaults have no constant"),
            Map.entry("BusConfig.partitions(\"runs\", n)", "the builder's BusConfig.builder(uri).partitions(\"runs\", n)"),
            Map.entry("\"When a run fails\"", "the section is docs/runs.md, \"Status\""),
            Map.entry("`--topic`, `--group` and `--handler`", "demo refuses --handler-path too: six options"),
            Map.entry("--topic, --group and --handler are refused", "demo refuses --handler-path too: six options"),
            Map.entry("nothing in the runs layer deletes a row",
                    "Runs.deleteFinished deletes finished runs; the runtime role still has no DELETE"),
            Map.entry("every run ends done or failed", "or cancelled"),
            Map.entry("Runs converge to `done` or `failed`", "or cancelled"),
            Map.entry("every run still ends `done` or `failed`", "or cancelled"),
            Map.entry("runs that end `done` or `failed`", "or cancelled"),
            Map.entry("submitted before it is done or failed", "or cancelled"),
            Map.entry("submitted before it is `done` or `failed`", "or cancelled"),
            Map.entry("once the run is done or failed", "or cancelled"),
            Map.entry("Message.of(\"order.created\", json)", "the example defines what it uses"),
            Map.entry("(replay dead letters, cancel scheduled entries)",
                    "admin also purges dead letters and cancels runs"),
            Map.entry("replaying dead letters, cancelling scheduled entries.",
                    "admin also purges dead letters and cancels runs"),
            Map.entry("`admin` (replay, cancel)", "admin also purges dead letters and cancels runs"),
            Map.entry("only a pending run can be cancelled", "a running run becomes cancelling and is told"),
            Map.entry("a running one is refused (409)", "a running run becomes cancelling and is told"),
            Map.entry("`FUNCTION LIST LIBRARYNAME runbus_` lists",
                    "LIBRARYNAME takes a glob pattern: 'runbus_*' lists runbus's libraries, 'runbus_' none"),
            Map.entry("a check waits at most `runbus.command-timeout`",
                    "a health check takes at most runbus.health.timeout, one command timeout per read otherwise"),
            Map.entry("written for the schema `runbus`:",
                    "the migration files are ${schema} templates; RunsSchema.scripts writes them for a schema"),
            Map.entry("Liquibase users include them as `sqlFile` changes",
                    "the exported files, each a sqlFile change with splitStatements false (LiquibaseScriptsTest)"),
            Map.entry("false for a schema managed by Flyway or Liquibase",
                    "false for a schema a migration tool builds from RunsSchema.scripts"),
            Map.entry(": no such readable file", "the message says whether the file is missing, a folder or unreadable"),
            Map.entry("is no readable jar or folder", "the message says whether the entry is missing or unreadable"),
            Map.entry("Reply.assistant(answer(run.input()))", "the Runs example is compiled (JavadocExamples)"),
            Map.entry("new NewRun(session, user, input, clientKey)", "the Runs example is compiled (JavadocExamples)"),
            Map.entry("{@code end} when the run is done or failed.", "or cancelled"),
            Map.entry("earlier-submitted run of its user is done or failed", "or cancelled: a cancelled run holds up none"),
            Map.entry("+hincrby", "nothing sends HINCRBY: the worker's ACL line does not grant it (DocumentedAclTest)"),
            Map.entry("not as user:password@", "masked on output from the URL to the last @: the reason holds none"));

    @Test
    void noKnownFalsePhraseIsBack() throws IOException {
        List<String> found = new ArrayList<>();
        for (Path file : files()) {
            String text = normalized(file);
            FALSE.forEach((phrase, truth) -> {
                if (text.contains(phrase.toLowerCase(Locale.ROOT))) {
                    found.add(ROOT.relativize(file) + ": \"" + phrase + "\" (true: " + truth + ")");
                }
            });
        }
        assertThat(found).as("known-false phrases").isEmpty();
    }

    /** The normalisation keeps a phrase that spans lines, comment markers or a concatenation findable. */
    @Test
    void aPhraseIsFoundAcrossLinesCommentMarkersAndConcatenations() {
        String java = """
                 * A run fails only when the stream entry of its
                 * current attempt is dead-lettered
                    + "--topic, --group and --handler "
                            + "are refused"
                """;
        String text = normalize(java, true);
        assertThat(text).contains("a run fails only when the stream entry of its current attempt is dead-lettered")
                .contains("--topic, --group and --handler are refused");
    }

    private static List<Path> files() throws IOException {
        List<Path> out = new ArrayList<>();
        out.add(ROOT.resolve("README.md"));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).forEach(out::add);
        }
        for (String module : MODULES) {
            try (Stream<Path> sources = Files.walk(ROOT.resolve(module).resolve("src/main/java"))) {
                sources.filter(p -> p.toString().endsWith(".java")).forEach(out::add);
            }
        }
        assertThat(out).as("files read").hasSizeGreaterThan(100);
        return out;
    }

    private static String normalized(Path file) throws IOException {
        return normalize(Files.readString(file), file.toString().endsWith(".java"));
    }

    static String normalize(String text, boolean java) {
        String t = text;
        if (java) {
            t = t.replaceAll("(?m)^\\s*(?:/\\*\\*|\\*/|\\*|//)?", "") // comment markers at line starts
                    .replaceAll("\"\\s*\\+\\s*\"", ""); // "a " + "b" → "a b"
        }
        return t.replaceAll("\\s+", " ").toLowerCase(Locale.ROOT);
    }
}
