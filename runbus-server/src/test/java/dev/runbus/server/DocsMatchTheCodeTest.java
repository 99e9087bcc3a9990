package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.runs.RunsSchema;
import dev.runbus.server.cli.Commands;
import dev.runbus.server.http.HttpApi;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The reference docs say what the program does: docs/cli.md's tables of commands and options against the
 * command's own definitions ({@link Setting} and the picocli tree: names, defaults, which settings have a flag),
 * docs/http-api.md's table of routes against the routes a running server registers, with their scopes, and the
 * commands docs/runbook.md tells an operator to run against the picocli tree.
 */
class DocsMatchTheCodeTest {

    private static final Path DOCS = Path.of("..", "docs").toAbsolutePath().normalize();
    /** A table row: its cells, the first one's text in backticks. */
    private static final Pattern ROW = Pattern.compile("^\\| `((?:\\\\\\||[^|])+?)` \\|(.*)$",
            Pattern.MULTILINE);

    @Test
    void everySettingHasARowWithItsDefault_andEveryRowIsASetting() throws IOException {
        Map<String, String[]> rows = rows(section(read("cli.md"), "## Options"));
        Set<String> documented = new TreeSet<>();
        for (String first : rows.keySet()) {
            for (String key : first.split("`, `")) {
                documented.add(key);
            }
        }
        Set<String> settings = Setting.all().stream().map(Setting::key).collect(Collectors.toCollection(TreeSet::new));
        assertThat(documented).as("options in docs/cli.md").isEqualTo(settings);

        for (Setting s : Setting.all()) {
            String[] cells = rowOf(rows, s.key());
            String shown = cells[0].trim().replace("`", "");
            if (!s.defaultValue().isEmpty()) {
                assertThat(shown).as("default of %s in docs/cli.md", s.key()).startsWith(s.defaultValue());
            } else {
                assertThat(shown).as("default of %s in docs/cli.md (none in the code)", s.key())
                        .doesNotStartWith("true").doesNotStartWith("false").doesNotMatch("^\\d.*");
            }
        }
    }

    @Test
    void aSettingHasAFlagUnlessItsRowSaysNoFlag() throws IOException {
        Map<String, String[]> rows = rows(section(read("cli.md"), "## Options"));
        Set<String> flags = new TreeSet<>();
        collectOptions(Commands.commandLine(Hermetic.environment()), flags);
        List<String> wrong = new ArrayList<>();
        for (Setting s : Setting.all()) {
            String meaning = String.join("|", rowOf(rows, s.key()));
            boolean hasFlag = flags.contains("--" + s.key());
            boolean onlyNegative = meaning.contains("flag `--no-" + s.key() + "` only");
            boolean noFlag = meaning.contains("no flag");
            if (onlyNegative) {
                if (hasFlag || !flags.contains("--no-" + s.key())) {
                    wrong.add(s.key() + ": documented with only --no-" + s.key());
                }
            } else if (noFlag == hasFlag) {
                wrong.add(s.key() + (noFlag ? ": documented without a flag, but --" + s.key() + " exists"
                        : ": has no flag --" + s.key() + "; its row must say 'no flag'"));
            }
        }
        assertThat(wrong).isEmpty();
    }

    @Test
    void everyCommandHasARow_andEveryRowIsACommand() throws IOException {
        Map<String, String[]> rows = rows(section(read("cli.md"), "## Commands"));
        CommandLine root = Commands.commandLine(Hermetic.environment());
        Set<String> commands = new TreeSet<>(root.getSubcommands().keySet());
        commands.remove("help");
        Set<String> documented = new TreeSet<>();
        for (String first : rows.keySet()) {
            assertThat(first).as("a command row").startsWith("runbus ");
            String[] words = first.split(" ");
            documented.add(words[1]);
            CommandLine command = root.getSubcommands().get(words[1]);
            assertThat(command).as("command %s of docs/cli.md", words[1]).isNotNull();
            for (String sub : command.getSubcommands().keySet()) {
                if (!sub.equals("help")) {
                    assertThat(rows.keySet().stream().filter(r -> r.startsWith("runbus " + words[1] + " ")))
                            .as("subcommand %s %s in docs/cli.md", words[1], sub)
                            .anyMatch(r -> r.matches(".*[ |\\\\]" + Pattern.quote(sub) + "([ \\\\|].*)?$"));
                }
            }
        }
        assertThat(documented).as("commands in docs/cli.md").isEqualTo(commands);
    }

    /**
     * Every flag of every command, walked in picocli's own tree, is documented: a setting's flag by its row under
     * "Options" (the tests above), any other by a row of "Flags of the commands" that names the command (or its
     * parent, for all its subcommands; or "every command") and shows the flag's default. Each such row is a flag
     * of each command it names, so a row cannot outlive its flag either.
     */
    @Test
    void everyFlagOfEveryCommandHasARowNamingTheCommand_andEveryRowIsTrue() throws IOException {
        Map<String, String[]> rows = rows(section(read("cli.md"), "### Flags of the commands"));
        Set<String> settingFlags = new TreeSet<>();
        for (Setting s : Setting.all()) {
            settingFlags.add("--" + s.key());
            settingFlags.add("--no-" + s.key());
        }
        Map<String, CommandLine> commands = new LinkedHashMap<>();
        collectCommands(Commands.commandLine(Hermetic.environment()), "runbus", commands);
        List<String> wrong = new ArrayList<>();
        for (Map.Entry<String, CommandLine> command : commands.entrySet()) {
            for (CommandLine.Model.OptionSpec o : command.getValue().getCommandSpec().options()) {
                List<String> names = List.of(o.names());
                if (o.hidden() || names.stream().anyMatch(settingFlags::contains)) {
                    continue;
                }
                Map.Entry<String, String[]> row = rows.entrySet().stream()
                        .filter(r -> List.of(r.getKey().split("`, `")).containsAll(names)).findFirst().orElse(null);
                if (row == null) {
                    wrong.add(command.getKey() + " " + String.join(", ", names) + ": no row names it");
                } else if (!covers(row.getValue()[0], command.getKey())) {
                    wrong.add(command.getKey() + " " + o.longestName() + ": its row does not name the command");
                } else if (o.defaultValue() != null && !row.getValue()[1].contains(o.defaultValue())) {
                    wrong.add(command.getKey() + " " + o.longestName() + ": its row does not show the default "
                            + o.defaultValue());
                }
            }
        }
        for (Map.Entry<String, String[]> row : rows.entrySet()) {
            List<String> names = List.of(row.getKey().split("`, `"));
            List<String> named = commandsNamed(row.getValue()[0]);
            boolean every = row.getValue()[0].contains("every command");
            if (named.isEmpty() && !every) {
                wrong.add(row.getKey() + ": its row names no command");
            }
            for (Map.Entry<String, CommandLine> command : commands.entrySet()) {
                boolean has = command.getValue().getCommandSpec().options().stream()
                        .anyMatch(o -> List.of(o.names()).containsAll(names));
                boolean leaf = command.getValue().getSubcommands().keySet().stream().allMatch("help"::equals);
                if (!has && (every || leaf && covers(row.getValue()[0], command.getKey()))) {
                    wrong.add(row.getKey() + ": documented for " + command.getKey() + ", which has no such flag");
                }
            }
            for (String c : named) {
                if (!commands.containsKey("runbus " + c)) {
                    wrong.add(row.getKey() + ": names `" + c + "`, which is not a command");
                }
            }
        }
        assertThat(wrong).as("flags of the commands in docs/cli.md").isEmpty();
    }

    /**
     * Every {@code runbus} command docs/runbook.md quotes (a line of a {@code sh} block, or a code span that starts with
     * {@code runbus}, after any {@code VAR=value} in front) parses with the program's own definitions and names a
     * command that runs (not a group of subcommands): a flag renamed or removed, or a subcommand that went, fails here.
     */
    @Test
    void everyCommandTheRunbookQuotesParses() throws IOException {
        List<String> commands = runbookCommands(read("runbook.md"));
        assertThat(commands).as("commands quoted in docs/runbook.md").hasSizeGreaterThan(20);
        List<String> wrong = new ArrayList<>();
        for (String command : commands) {
            List<String> words = words(command);
            try {
                CommandLine.ParseResult parsed = Commands.commandLine(Hermetic.environment())
                        .parseArgs(words.subList(1, words.size()).toArray(new String[0]));
                while (parsed.hasSubcommand()) {
                    parsed = parsed.subcommand();
                }
                if (parsed.commandSpec().subcommands().keySet().stream().anyMatch(n -> !n.equals("help"))) {
                    wrong.add(command + ": names no command that runs, only a group of them");
                }
            } catch (CommandLine.ParameterException e) {
                wrong.add(command + ": " + e.getMessage());
            }
        }
        assertThat(wrong).as("commands of docs/runbook.md").isEmpty();
    }

    /**
     * docs/runbook.md has a section for every alert of docs/prometheus-alerts.yml, named by the alert, which its
     * {@code runbook} annotation names; and every link to a section of the runbook, from the runbook itself, the other
     * docs or the README, names a heading that exists.
     */
    @Test
    void everyAlertHasItsRunbookSection_andEveryLinkToOneArrives() throws IOException {
        String runbook = read("runbook.md");
        Set<String> anchors = new TreeSet<>();
        Matcher heading = Pattern.compile("(?m)^#+ (.+)$").matcher(runbook);
        while (heading.find()) {
            anchors.add(heading.group(1).toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9 -]", "")
                    .replace(' ', '-'));
        }
        List<String> wrong = new ArrayList<>();
        String alerts = read("prometheus-alerts.yml");
        Matcher alert = Pattern.compile("- alert: (\\w+)\\n(?:(?!- alert:)[\\s\\S])*?runbook: docs/runbook\\.md#(\\S+)")
                .matcher(alerts);
        Set<String> covered = new TreeSet<>();
        while (alert.find()) {
            covered.add(alert.group(1));
            if (!alert.group(2).equals(alert.group(1).toLowerCase(java.util.Locale.ROOT))) {
                wrong.add(alert.group(1) + ": its runbook annotation names #" + alert.group(2));
            }
        }
        Matcher named = Pattern.compile("- alert: (\\w+)").matcher(alerts);
        while (named.find()) {
            if (!covered.contains(named.group(1))) {
                wrong.add(named.group(1) + ": no runbook annotation");
            }
            if (!runbook.contains("\n### " + named.group(1) + "\n")) {
                wrong.add(named.group(1) + ": no section ### " + named.group(1) + " in docs/runbook.md");
            }
        }
        Map<String, String> texts = new LinkedHashMap<>();
        try (Stream<Path> docs = Files.list(DOCS)) {
            for (Path p : docs.filter(f -> f.toString().endsWith(".md") || f.toString().endsWith(".yml")).toList()) {
                texts.put(p.getFileName().toString(), Files.readString(p));
            }
        }
        texts.put("README.md", Files.readString(DOCS.resolveSibling("README.md")));
        for (Map.Entry<String, String> text : texts.entrySet()) {
            String prefix = text.getKey().equals("runbook.md") ? "\\]\\(" : "runbook\\.md";
            Matcher link = Pattern.compile(prefix + "#([a-z0-9-]+)").matcher(text.getValue());
            while (link.find()) {
                if (!anchors.contains(link.group(1))) {
                    wrong.add(text.getKey() + " links to runbook.md#" + link.group(1) + ", which is no heading");
                }
            }
        }
        assertThat(wrong).as("the runbook's sections and the links to them").isEmpty();
    }

    /**
     * The grants docs/security.md shows, for the runtime role and for a pruning role, are the statements
     * {@link RunsSchema#runtimeGrants} and {@link RunsSchema#pruneGrants} make (for schema runbus), comments aside.
     */
    @Test
    void theGrantsOfSecurityMdAreTheOnesTheCodeMakes() throws IOException {
        String security = read("security.md");
        List<String> blocks = new ArrayList<>();
        Matcher sql = Pattern.compile("```sql\\n([\\s\\S]*?)```").matcher(security);
        while (sql.find()) {
            blocks.add(sql.group(1).strip());
        }
        assertThat(blocks).as("SQL blocks of docs/security.md")
                .contains(statements(RunsSchema.runtimeGrants("runbus", "runbus_app")))
                .contains(statements(RunsSchema.pruneGrants("runbus", "runbus_prune")));
    }

    /** SQL without its comment lines. */
    private static String statements(String sql) {
        return sql.lines().filter(l -> !l.startsWith("--")).collect(Collectors.joining("\n")).strip();
    }

    /** The {@code runbus} commands of {@code sh} blocks and code spans, comments and variables in front taken off. */
    static List<String> runbookCommands(String text) {
        List<String> out = new ArrayList<>();
        StringBuilder prose = new StringBuilder(); // a code span may go on over a line break
        boolean inShell = false;
        boolean inOther = false;
        for (String line : text.split("\n")) {
            if (line.startsWith("```")) {
                if (inShell || inOther) {
                    inShell = false;
                    inOther = false;
                } else if (line.equals("```sh")) {
                    inShell = true;
                } else {
                    inOther = true; // messages runbus prints: they quote commands in prose
                }
                continue;
            }
            if (inShell) {
                String command = line.replaceAll("\\s+#.*$", "").replaceAll("^([A-Z_]+=\\S+ )+", "").strip();
                if (command.startsWith("runbus ")) {
                    out.add(command);
                }
            } else if (!inOther) {
                prose.append(line).append(' ');
            }
        }
        Matcher span = Pattern.compile("`([^`]+)`").matcher(prose);
        while (span.find()) {
            String command = span.group(1).replaceAll("^([A-Z_]+=\\S+ )+", "").strip();
            if (command.startsWith("runbus ")) {
                out.add(command);
            }
        }
        return out;
    }

    /** A command line's words, as a shell splits them: on spaces, single-quoted words kept whole. */
    private static List<String> words(String command) {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("'([^']*)'|(\\S+)").matcher(command);
        while (m.find()) {
            out.add(m.group(1) != null ? m.group(1) : m.group(2));
        }
        return out;
    }

    /** Whether a row's commands cell names {@code command} ("runbus dlq list"), its parent, or every command. */
    private static boolean covers(String cell, String command) {
        if (cell.contains("every command")) {
            return true;
        }
        String path = command.substring("runbus".length()).trim();
        return commandsNamed(cell).stream().anyMatch(c -> path.equals(c) || path.startsWith(c + " "));
    }

    /** The commands a cell names, each in backticks without "runbus": `dlq list`. */
    private static List<String> commandsNamed(String cell) {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("`([a-z][a-z -]*)`").matcher(cell);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    private static void collectCommands(CommandLine command, String path, Map<String, CommandLine> into) {
        into.put(path, command);
        command.getSubcommands().forEach((name, sub) -> {
            if (!name.equals("help")) {
                collectCommands(sub, path + " " + name, into);
            }
        });
    }

    @Test
    void everyRouteHasARowWithItsScope_andEveryRowIsARoute() throws Exception {
        Map<String, String[]> rows = rows(section(read("http-api.md"), "# HTTP API"));
        Map<String, String> documented = new LinkedHashMap<>();
        for (Map.Entry<String, String[]> row : rows.entrySet()) {
            String route = row.getKey().replaceAll("\\?.*$", "");
            documented.put(route, row.getValue()[0].trim());
        }
        Map<String, String> registered = new LinkedHashMap<>();
        try (TestServe serve = TestServe.start(Map.of())) {
            for (HttpApi.Route r : serve.server.routes()) {
                registered.put(r.method() + " " + r.path(), r.scope() == null ? "none" : r.scope().label());
            }
        }
        assertThat(documented).as("routes and scopes in docs/http-api.md").isEqualTo(registered);
    }

    private static void collectOptions(CommandLine command, Set<String> into) {
        command.getCommandSpec().options().forEach(o -> into.addAll(List.of(o.names())));
        command.getSubcommands().values().forEach(sub -> collectOptions(sub, into));
    }

    private static String[] rowOf(Map<String, String[]> rows, String key) {
        return rows.entrySet().stream().filter(e -> List.of(e.getKey().split("`, `")).contains(key))
                .map(Map.Entry::getValue).findFirst().orElseThrow(() -> new AssertionError("no row for " + key));
    }

    /** The rows of the first table after {@code heading}: first cell (unquoted) → the other cells. */
    private static Map<String, String[]> rows(String text) {
        Map<String, String[]> out = new LinkedHashMap<>();
        int start = text.indexOf("\n|");
        int end = text.indexOf("\n\n", start + 1);
        Matcher m = ROW.matcher(text.substring(start, end < 0 ? text.length() : end));
        while (m.find()) {
            String rest = m.group(2).endsWith("|") ? m.group(2).substring(0, m.group(2).length() - 1) : m.group(2);
            out.put(m.group(1).replace("\\|", "|"), rest.split("(?<!\\\\)\\|"));
        }
        assertThat(out).as("a table").isNotEmpty();
        return out;
    }

    private static String section(String text, String heading) {
        int at = text.indexOf(heading);
        assertThat(at).as("heading %s", heading).isNotNegative();
        return text.substring(at);
    }

    private static String read(String name) throws IOException {
        return Files.readString(DOCS.resolve(name));
    }
}
