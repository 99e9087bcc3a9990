package dev.runbus.server.http;

import io.javalin.http.Context;
import java.util.Optional;

/** {@code Authorization: Bearer <token>} against the configured {@link ApiTokens}. Never from the URL. */
final class BearerTokens implements Authenticator {

    private final ApiTokens tokens;

    BearerTokens(ApiTokens tokens) {
        this.tokens = tokens;
    }

    @Override
    public Optional<Caller> authenticate(Context ctx) {
        String header = ctx.header("Authorization");
        if (header == null || header.length() < 8 || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return Optional.empty();
        }
        return tokens.match(header.substring(7).trim()).map(t -> Caller.token(t.name(), t.scopes()));
    }
}
