package dev.runbus.runs;

import java.util.Objects;

/** One reply a handler produces; the store numbers them 1..n in the order returned. */
public record Reply(String role, String content) {

    public Reply {
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(content, "content");
    }

    public static Reply assistant(String content) {
        return new Reply("assistant", content);
    }
}
