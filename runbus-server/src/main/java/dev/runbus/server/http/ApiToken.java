package dev.runbus.server.http;

import java.util.Set;

/**
 * One API token as the server keeps it: a name (for logs and limits), its scopes and the SHA-256 of the secret.
 * The secret itself is never stored; {@code runbus token create} shows it once.
 */
public record ApiToken(String name, Set<Scope> scopes, byte[] sha256) {

    public ApiToken {
        scopes = Set.copyOf(scopes);
        sha256 = sha256.clone();
    }

    @Override
    public byte[] sha256() {
        return sha256.clone();
    }

    /** The line for a tokens file: {@code NAME:SCOPE,SCOPE:SHA256-HEX}. */
    public String line() {
        StringBuilder scopeList = new StringBuilder();
        for (Scope s : Scope.values()) {
            if (scopes.contains(s)) {
                scopeList.append(scopeList.length() == 0 ? "" : ",").append(s.label());
            }
        }
        return name + ":" + scopeList + ":" + java.util.HexFormat.of().formatHex(sha256);
    }

    @Override
    public String toString() {
        return "ApiToken[" + name + ", " + scopes + "]";
    }
}
