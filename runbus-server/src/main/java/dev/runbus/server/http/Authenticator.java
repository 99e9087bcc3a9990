package dev.runbus.server.http;

import io.javalin.http.Context;
import java.util.Optional;

/**
 * One way a request proves who sent it. {@link AccessLayer} asks each in turn; the first that recognises the
 * request decides. Bearer tokens are one ({@link BearerTokens}); a browser session (a cookie set after a token
 * login, with a CSRF check on requests that change state) is meant to be another, added to the same list, so
 * that every route stays behind the one layer.
 */
public interface Authenticator {

    /**
     * @return the caller, or empty when the request carries no valid credentials of this kind. An invalid
     *     credential is reported as empty too: callers learn only that they are not authenticated, never which
     *     part was wrong.
     */
    Optional<Caller> authenticate(Context ctx);
}
