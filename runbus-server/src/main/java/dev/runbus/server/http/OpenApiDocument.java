package dev.runbus.server.http;

import io.javalin.http.Context;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * {@code GET /v1/openapi.json}: the OpenAPI 3.1 document of this API, written by hand as a resource file next to
 * docs/http-api.md (a test holds it to the registered routes and their scopes). Served without a token: it says
 * what the public docs say and holds no data, and a client or a code generator reads it before it has a token.
 */
final class OpenApiDocument {

    static final String RESOURCE = "/dev/runbus/server/openapi.json";

    private final byte[] document;

    OpenApiDocument() {
        try (InputStream in = OpenApiDocument.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the jar");
            }
            document = in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    void serve(Context ctx) {
        ctx.contentType("application/json").result(document);
    }
}
