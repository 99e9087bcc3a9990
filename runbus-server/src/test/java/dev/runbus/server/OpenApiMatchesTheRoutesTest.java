package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.server.http.HttpApi;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The hand-written OpenAPI document against the routes a running server registers: every route documented, every
 * documented operation registered, each with its scope (the operation's security requirement; none when empty);
 * and the server serves that very document without a token.
 */
class OpenApiMatchesTheRoutesTest {

    @Test
    void everyRouteIsDocumentedWithItsScope_andEveryDocumentedRouteExists() throws Exception {
        JsonNode doc = resource();
        assertThat(doc.get("openapi").asText()).isEqualTo("3.1.0");
        Map<String, String> documented = new TreeMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> paths = doc.get("paths").fields(); paths.hasNext(); ) {
            Map.Entry<String, JsonNode> path = paths.next();
            for (Iterator<Map.Entry<String, JsonNode>> ops = path.getValue().fields(); ops.hasNext(); ) {
                Map.Entry<String, JsonNode> op = ops.next();
                documented.put(op.getKey().toUpperCase(java.util.Locale.ROOT) + " " + path.getKey(), scope(op.getValue()));
            }
        }
        Map<String, String> registered = new TreeMap<>();
        try (TestServe serve = TestServe.start(Map.of())) {
            for (HttpApi.Route r : serve.server.routes()) {
                registered.put(r.method() + " " + r.path(), r.scope() == null ? "none" : r.scope().label());
            }
            HttpResponse<String> served = serve.get("/v1/openapi.json", null);
            assertThat(served.statusCode()).isEqualTo(200);
            assertThat(served.headers().firstValue("Content-Type").orElse("")).startsWith("application/json");
            assertThat(TestServe.json(served)).isEqualTo(doc);
        }
        assertThat(documented).as("operations and scopes in openapi.json").isEqualTo(registered);
    }

    /** The scope an operation's security requirement names: {"bearer": ["read"]}, or none for an empty list. */
    private static String scope(JsonNode operation) {
        JsonNode security = operation.get("security");
        assertThat(security).as("every operation states its security").isNotNull();
        if (security.isEmpty()) {
            return "none";
        }
        assertThat(security).hasSize(1);
        JsonNode scopes = security.get(0).get("bearer");
        assertThat(scopes).hasSize(1);
        return scopes.get(0).asText();
    }

    private static JsonNode resource() throws Exception {
        try (InputStream in = OpenApiMatchesTheRoutesTest.class.getResourceAsStream("/dev/runbus/server/openapi.json")) {
            return Json.MAPPER.readTree(in);
        }
    }
}
