package dev.runbus.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The {@code ACL SETUSER} lines docs/security.md gives operators, read from it: what an operator types is what the
 * tests run. A line's user is {@code runbus-migrate}, {@code runbus-publisher} or {@code runbus-worker}; the
 * publisher's and the worker's come twice, with {@code +fcall} (Redis 7 and later) and with {@code +eval +evalsha}
 * (Redis 6.2, or {@code ScriptMode.EVAL}).
 */
public final class DocumentedAcl {

    /** The password placeholder of the documented lines. */
    public static final String PASSWORD = "<password>";

    private static final Path SECURITY = Path.of("..", "docs", "security.md");

    private DocumentedAcl() {
    }

    /** The documented line of {@code user} that holds {@code rule} ({@code +fcall} or {@code +eval}). */
    public static String line(String user, String rule) {
        List<String> found = new ArrayList<>();
        for (String line : lines()) {
            List<String> words = List.of(line.split(" "));
            if (words.get(2).equals(user) && words.contains(rule)) {
                found.add(line);
            }
        }
        if (found.size() != 1) {
            throw new IllegalStateException(SECURITY + " has " + found.size() + " ACL SETUSER lines of " + user
                    + " with " + rule + ", not one: " + found);
        }
        return found.get(0);
    }

    /**
     * The documented line that adds rules to {@code user} without resetting it (no {@code reset}): the flow-control
     * additions.
     */
    public static String addition(String user) {
        List<String> found = lines().stream().filter(l -> l.split(" ")[2].equals(user) && !l.contains(" reset "))
                .toList();
        if (found.size() != 1) {
            throw new IllegalStateException(SECURITY + " has " + found.size() + " ACL SETUSER lines adding to " + user
                    + ", not one: " + found);
        }
        return found.get(0);
    }

    /** Every {@code ACL SETUSER} line of docs/security.md, as written. */
    public static List<String> lines() {
        try {
            return Files.readAllLines(SECURITY).stream().map(String::strip)
                    .filter(l -> l.startsWith("ACL SETUSER ")).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The rules of a line (what follows {@code ACL SETUSER name}), with {@code password} for the placeholder. */
    public static List<String> rules(String line, String password) {
        List<String> words = List.of(line.split(" "));
        return words.subList(3, words.size()).stream()
                .map(w -> w.equals(">" + PASSWORD) ? ">" + password : w).toList();
    }

    /** The commands a line grants ({@code +name}, {@code +name|subcommand}), lower case, in its order. */
    public static Set<String> granted(String line) {
        Set<String> out = new LinkedHashSet<>();
        for (String w : line.split(" ")) {
            if (w.startsWith("+")) {
                out.add(w.substring(1));
            }
        }
        return out;
    }
}
