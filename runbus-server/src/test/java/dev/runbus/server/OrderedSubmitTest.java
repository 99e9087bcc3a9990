package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.runs.NewRun;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Submissions to a serve whose runs are in per-user order, where the user id keys each run's trigger. */
class OrderedSubmitTest {

    static TestServe serve;

    @BeforeAll
    static void start() {
        serve = TestServe.start(Map.of(Setting.ORDERED, "true"));
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    private static HttpResponse<String> submit(String userId) throws Exception {
        String body = "{\"session_id\":\"s1\",\"user_id\":" + Json.write(userId) + ",\"input\":\"x\"}";
        return serve.send(serve.request("/v1/runs").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)));
    }

    /**
     * Issue 20, item 6: a user id longer than a message key may be used to be inserted, and then cost its whole
     * group commit its triggers (every run of it answered as existing, 200 created=false). It is a 400 naming the
     * field and the limit, and nothing is written.
     */
    @Test
    void userIdLongerThanAMessageKey_is400NamingTheFieldAndWritesNothing() throws Exception {
        long rows = serve.runRows();
        long entries = serve.streamLength();

        HttpResponse<String> refused = submit("u".repeat(NewRun.MAX_ORDERED_USER_ID_LENGTH + 1));

        assertThat(refused.statusCode()).isEqualTo(400);
        JsonNode error = TestServe.json(refused);
        assertThat(error.get("field").asText()).isEqualTo("user_id");
        assertThat(error.get("error").asText()).startsWith("field 'user_id' has 1001 characters").contains("1000");
        assertThat(serve.runRows()).isEqualTo(rows);
        assertThat(serve.streamLength()).isEqualTo(entries);
    }

    @Test
    void userIdAsLongAsAMessageKeyMayBe_isCreated() throws Exception {
        long entries = serve.streamLength();

        HttpResponse<String> created = submit("u".repeat(NewRun.MAX_ORDERED_USER_ID_LENGTH));

        assertThat(created.statusCode()).isEqualTo(201);
        assertThat(TestServe.json(created).get("created").asBoolean()).isTrue();
        assertThat(serve.streamLength()).isEqualTo(entries + 1);
    }
}
