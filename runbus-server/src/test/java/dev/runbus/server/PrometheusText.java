package dev.runbus.server;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A strict parser of Prometheus's text exposition format 0.0.4, for tests: it fails on anything Prometheus's own
 * parser refuses (a bad metric or label name, a label value with an unknown escape or no closing quote, a value
 * that is not a float, a TYPE given twice or after its family's samples, a family's samples apart from each other,
 * a sample that names no family of its TYPE, the same series twice).
 */
final class PrometheusText {

    private static final Pattern NAME = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Pattern LABEL = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");
    private static final Set<String> TYPES = Set.of("counter", "gauge", "histogram", "summary", "untyped");

    /** One sample: its name, its labels (in order), its value. */
    record Sample(String name, Map<String, String> labels, double value) {
    }

    /** A family: its TYPE (untyped when none was given), its HELP (null when none) and its samples. */
    record Family(String name, String type, String help, List<Sample> samples) {
    }

    private PrometheusText() {
    }

    /** The families of {@code text} by name, in order; fails with the line number on the first violation. */
    static Map<String, Family> parse(String text) {
        Map<String, Family> families = new LinkedHashMap<>();
        Set<String> closed = new HashSet<>();
        Set<String> series = new HashSet<>();
        String current = null;
        String[] lines = text.split("\n", -1);
        if (!text.isEmpty() && !text.endsWith("\n")) {
            throw new IllegalArgumentException("the text does not end with a line feed");
        }
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            int n = i + 1;
            if (line.isEmpty()) {
                continue;
            }
            try {
                if (line.startsWith("#")) {
                    String[] parts = line.split(" ", 4);
                    if (parts.length < 3 || !(parts[1].equals("HELP") || parts[1].equals("TYPE"))) {
                        continue; // a comment
                    }
                    String name = parts[2];
                    require(NAME.matcher(name).matches(), "bad metric name " + name);
                    Family f = families.get(name);
                    if (f != null && !f.samples().isEmpty() || closed.contains(name)) {
                        throw new IllegalArgumentException(parts[1] + " of " + name + " after its samples");
                    }
                    if (parts[1].equals("TYPE")) {
                        require(parts.length == 4 && TYPES.contains(parts[3]), "bad TYPE line");
                        require(f == null || f.type() == null, "a second TYPE for " + name);
                        families.put(name, new Family(name, parts[3], f == null ? null : f.help(), new ArrayList<>()));
                    } else {
                        require(f == null || f.help() == null, "a second HELP for " + name);
                        String help = parts.length == 4 ? parts[3] : "";
                        checkEscapes(help, false);
                        families.put(name, new Family(name, f == null ? null : f.type(), help, new ArrayList<>()));
                    }
                    continue;
                }
                Sample s = sample(line);
                String family = familyOf(s.name(), families);
                if (!family.equals(current)) {
                    require(!closed.contains(family), "samples of " + family + " apart from each other");
                    if (current != null) {
                        closed.add(current);
                    }
                    current = family;
                }
                require(series.add(s.name() + new TreeMap<>(s.labels())), "the series " + s.name() + s.labels()
                        + " twice");
                families.computeIfAbsent(family, f -> new Family(f, "untyped", null, new ArrayList<>())).samples().add(s);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("line " + n + ": " + e.getMessage() + ": " + line, e);
            }
        }
        families.replaceAll((name, f) -> f.type() == null ? new Family(name, "untyped", f.help(), f.samples()) : f);
        return families;
    }

    /** The family a sample belongs to: its own name, or for a summary or histogram the name less the suffix. */
    private static String familyOf(String name, Map<String, Family> families) {
        Family own = families.get(name);
        if (own != null) {
            return name;
        }
        for (String suffix : List.of("_sum", "_count", "_bucket")) {
            if (name.endsWith(suffix)) {
                Family f = families.get(name.substring(0, name.length() - suffix.length()));
                if (f != null && (f.type().equals("summary") || f.type().equals("histogram"))) {
                    require(!suffix.equals("_bucket") || f.type().equals("histogram"), "_bucket of a summary");
                    return f.name();
                }
            }
        }
        return name;
    }

    private static Sample sample(String line) {
        Matcher m = NAME.matcher(line);
        require(m.lookingAt(), "no metric name");
        String name = m.group();
        int at = m.end();
        Map<String, String> labels = new LinkedHashMap<>();
        if (at < line.length() && line.charAt(at) == '{') {
            at++;
            while (line.charAt(at) != '}') {
                Matcher l = LABEL.matcher(line).region(at, line.length());
                require(l.lookingAt(), "bad label name");
                String label = l.group();
                at = l.end();
                require(line.startsWith("=\"", at), "no =\" after label " + label);
                at += 2;
                StringBuilder value = new StringBuilder();
                while (true) {
                    require(at < line.length(), "label value without its closing quote");
                    char c = line.charAt(at++);
                    if (c == '"') {
                        break;
                    }
                    if (c == '\\') {
                        require(at < line.length(), "a lone backslash");
                        char e = line.charAt(at++);
                        require(e == '\\' || e == '"' || e == 'n', "unknown escape \\" + e);
                        value.append(e == 'n' ? '\n' : e);
                    } else {
                        value.append(c);
                    }
                }
                require(labels.put(label, value.toString()) == null, "label " + label + " twice");
                require(at < line.length(), "labels without their closing brace");
                if (line.charAt(at) == ',') {
                    at++;
                    require(at < line.length(), "labels without their closing brace");
                }
            }
            at++;
        }
        require(at < line.length() && line.charAt(at) == ' ', "no space before the value");
        String[] rest = line.substring(at + 1).split(" ");
        require(rest.length == 1 || rest.length == 2 && rest[1].matches("-?\\d+"), "bad value or timestamp");
        return new Sample(name, labels, value(rest[0]));
    }

    private static double value(String v) {
        switch (v) {
            case "NaN":
                return Double.NaN;
            case "+Inf":
                return Double.POSITIVE_INFINITY;
            case "-Inf":
                return Double.NEGATIVE_INFINITY;
            default:
                require(v.matches("[-+]?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?"), "bad value " + v);
                return Double.parseDouble(v);
        }
    }

    /** HELP text escapes only backslash and line feed. */
    private static void checkEscapes(String s, boolean quotes) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) == '\\') {
                require(i + 1 < s.length(), "a lone backslash");
                char e = s.charAt(++i);
                require(e == '\\' || e == 'n' || quotes && e == '"', "unknown escape \\" + e);
            }
        }
    }

    private static void require(boolean ok, String problem) {
        if (!ok) {
            throw new IllegalArgumentException(problem);
        }
    }
}
