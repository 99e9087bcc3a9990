package dev.runbus.server.http;

import io.javalin.security.RouteRole;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * What a token may do. Each route names the one scope it needs; {@code /health} needs none.
 *
 * <ul>
 *   <li>{@link #SUBMIT}: {@code POST /v1/runs};</li>
 *   <li>{@link #READ}: runs, their events, streams, partitions, dead letters, scheduled entries, metrics;</li>
 *   <li>{@link #ADMIN}: replaying and purging dead letters, cancelling pending runs and scheduled entries.</li>
 * </ul>
 * Scopes do not imply each other: a token that submits and follows its runs has {@code submit,read}.
 */
public enum Scope implements RouteRole {
    SUBMIT, READ, ADMIN;

    /** The name in token lines and messages: {@code submit}, {@code read}, {@code admin}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** {@code submit,read} → those scopes; an unknown or empty name is an error naming it. */
    public static Set<Scope> parseList(String text) {
        Set<Scope> out = EnumSet.noneOf(Scope.class);
        for (String part : text.split(",", -1)) {
            String name = part.trim();
            Scope found = null;
            for (Scope s : values()) {
                if (s.label().equals(name)) {
                    found = s;
                }
            }
            if (found == null) {
                throw new IllegalArgumentException("unknown scope '" + name + "': expected submit, read or admin");
            }
            out.add(found);
        }
        return out;
    }
}
