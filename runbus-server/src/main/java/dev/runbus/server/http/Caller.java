package dev.runbus.server.http;

import dev.runbus.runs.KeyScope;
import java.util.EnumSet;
import java.util.Set;

/**
 * Who sent a request, as the access layer established it: a token's name and scopes, or, when the server runs
 * without tokens, the client's address with every scope. Per-caller limits (event streams, submission rate)
 * are counted by {@link #key()}; idempotency keys belong to {@link #keyScope()}.
 */
public record Caller(String name, Set<Scope> scopes, boolean anonymous) {

    /** Without tokens every client may read every run anyway, so one scope is shared by all. */
    private static final KeyScope WITHOUT_TOKENS = KeyScope.of("no-token");

    public Caller {
        scopes = Set.copyOf(scopes);
    }

    static Caller token(String name, Set<Scope> scopes) {
        return new Caller(name, scopes, false);
    }

    /** A caller on a server without tokens: every scope, counted by address. */
    static Caller anonymous(String address) {
        return new Caller(address, EnumSet.allOf(Scope.class), true);
    }

    public boolean may(Scope scope) {
        return scopes.contains(scope);
    }

    /** What limits are counted by: the token's name, or the client address without tokens. */
    String key() {
        return (anonymous ? "address:" : "token:") + name;
    }

    /**
     * Whose idempotency keys this caller's are: the token's (by name, so a rotated token with the same name keeps
     * its keys), or, without tokens, the one scope all clients share. Never the address: a client's retry may come
     * from another one.
     */
    KeyScope keyScope() {
        return anonymous ? WITHOUT_TOKENS : KeyScope.of("token:" + name);
    }
}
