package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Message;
import dev.runbus.SubscribeOptions;
import dev.runbus.server.http.ApiToken;
import dev.runbus.server.http.ApiTokens;
import dev.runbus.server.http.Scope;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Listings do bounded work per request: dead letters and streams are paged with an opaque cursor, a page across
 * partitions holds at most 1000 / partitions entries whatever the limit asked, and reads per second are limited
 * per token (429 with Retry-After). On a real serve, with dead letters, scheduled entries and topics made through
 * the bus in its key prefix.
 */
class HttpListingsTest {

    static final int PARTITIONS = 4;
    static final int DEAD = 12;
    static final int READ_RATE = 30;
    static TestServe serve;
    static String lister = ApiTokens.generate(new SecureRandom());
    static String reader = ApiTokens.generate(new SecureRandom());

    @BeforeAll
    static void start() {
        serve = TestServe.start(Map.of(Setting.API_TOKENS, String.join(";", line("lister", lister),
                line("reader", reader)), Setting.READ_RATE, Integer.toString(READ_RATE)));
        try (Bus bus = Bus.connect(BusConfig.builder(RedisTarget.local().uri()).keyPrefix(serve.prefix)
                .partitions("jobs", PARTITIONS).build())) {
            for (int i = 0; i < DEAD; i++) {
                bus.publisher().publish("jobs", "key-" + i, Message.of("poison",
                        Integer.toString(i).getBytes(StandardCharsets.UTF_8)));
            }
            for (int i = 0; i < 6; i++) {
                bus.publisher().publish("jobs", Message.of("later", new byte[0]).withKey("later-" + i), Duration.ofHours(1));
            }
            for (String topic : List.of("t-a", "t-b", "t-c", "t-d", "t-e")) {
                bus.publisher().publish(topic, Message.of("x", new byte[0]));
            }
            bus.subscribe("jobs", "workers", "w1", d -> {
                throw new IllegalStateException("poison");
            }, SubscribeOptions.builder().maxDeliveries(1).blockTime(Duration.ofMillis(200)).build());
            Wait.until(DEAD + " dead letters", Duration.ofSeconds(30),
                    () -> bus.deadLetters().count("jobs") == DEAD);
        }
    }

    private static String line(String name, String token) {
        return new ApiToken(name, Set.of(Scope.READ), ApiTokens.sha256(token)).line();
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    private static JsonNode ok(String path) throws Exception {
        HttpResponse<String> r = serve.get(path, lister);
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        return TestServe.json(r);
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    @Test
    void deadLettersArePagedWithACursorAndEachOnceInOrder() throws Exception {
        List<String> all = new ArrayList<>();
        ok("/v1/dead-letters?topic=jobs&limit=100").get("dead_letters").forEach(d -> all.add(d.get("id").asText()));
        assertThat(all).hasSize(DEAD);

        List<String> paged = new ArrayList<>();
        String cursor = null;
        int pages = 0;
        do {
            JsonNode page = ok("/v1/dead-letters?topic=jobs&limit=5" + (cursor == null ? "" : "&cursor=" + enc(cursor)));
            page.get("dead_letters").forEach(d -> paged.add(d.get("id").asText()));
            assertThat(page.get("limit").asInt()).isEqualTo(5);
            cursor = page.get("next_cursor").isNull() ? null : page.get("next_cursor").asText();
            pages++;
        } while (cursor != null && pages < 10);
        assertThat(paged).isEqualTo(all);
        assertThat(pages).isEqualTo(3);

        // The plain id still works as before, and names the same place a cursor does.
        JsonNode after = ok("/v1/dead-letters?topic=jobs&limit=5&after=" + enc(all.get(4)));
        assertThat(after.get("dead_letters").get(0).get("id").asText()).isEqualTo(all.get(5));
    }

    @Test
    void aPageAcrossPartitionsIsBoundedWhateverTheLimit() throws Exception {
        JsonNode page = ok("/v1/dead-letters?topic=jobs&limit=10000");
        assertThat(page.get("limit").asInt()).isEqualTo(1000 / PARTITIONS);
        assertThat(page.get("dead_letters")).hasSize(DEAD);
        assertThat(page.get("next_cursor").isNull()).isTrue();
        JsonNode scheduled = ok("/v1/scheduled?topic=jobs&limit=10000");
        assertThat(scheduled.get("limit").asInt()).isEqualTo(1000 / PARTITIONS);
        assertThat(scheduled.get("count").asLong()).isEqualTo(6);
        assertThat(scheduled.get("entries")).hasSize(6);
        // A topic of one partition may take the whole bound.
        assertThat(ok("/v1/dead-letters?topic=t-a&limit=10000").get("limit").asInt()).isEqualTo(1000);
    }

    @Test
    void streamsArePagedByTopic() throws Exception {
        List<String> topics = new ArrayList<>();
        String cursor = null;
        int pages = 0;
        do {
            JsonNode page = ok("/v1/streams?limit=2" + (cursor == null ? "" : "&cursor=" + enc(cursor)));
            page.get("streams").forEach(s -> topics.add(s.get("topic").asText()));
            cursor = page.get("next_cursor").isNull() ? null : page.get("next_cursor").asText();
            pages++;
        } while (cursor != null && pages < 20);
        assertThat(topics).containsAll(List.of("jobs", "t-a", "t-b", "t-c", "t-d", "t-e")).isSorted();
        assertThat(new HashSet<>(topics)).hasSameSizeAs(topics);
        JsonNode first = ok("/v1/streams");
        assertThat(first.get("streams")).hasSameSizeAs(topics.toArray());
        assertThat(ok("/v1/streams?limit=10000").get("limit").asInt()).isEqualTo(100);
    }

    @Test
    void aCursorThatIsNotOneIsTheClientsMistake() throws Exception {
        String streamsCursor = ok("/v1/streams?limit=1").get("next_cursor").asText();
        for (String path : List.of("/v1/dead-letters?topic=jobs&cursor=" + streamsCursor,
                "/v1/dead-letters?topic=jobs&cursor=%25%25", "/v1/streams?cursor=bm9wZQ",
                "/v1/dead-letters?topic=jobs&cursor=" + streamsCursor + "&after=1-1")) {
            HttpResponse<String> r = serve.get(path, lister);
            assertThat(r.statusCode()).as(path).isEqualTo(400);
            assertThat(TestServe.json(r).get("field").asText()).as(path).isEqualTo("cursor");
        }
    }

    @Test
    void readsPastTheRateAnswer429AndOtherTokensAreNotSlowed() throws Exception {
        // Reads that cost the server nothing past the rate check (a malformed id is refused before PostgreSQL is
        // asked): a read that went to PostgreSQL took long enough on a busy host for the bucket to refill as fast
        // as the loop emptied it, and no read was refused within 300.
        HttpResponse<String> refused = null;
        for (int i = 0; i < READ_RATE * 10 && refused == null; i++) {
            HttpResponse<String> r = serve.get("/v1/runs/not-a-run-id", reader);
            assertThat(r.statusCode()).isIn(400, 429);
            if (r.statusCode() == 429) {
                refused = r;
            }
        }
        assertThat(refused).as("a read refused within " + READ_RATE * 10 + " reads").isNotNull();
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(TestServe.json(refused).get("error").asText()).contains("too many reads");
        assertThat(serve.get("/v1/streams?limit=1", lister).statusCode()).isEqualTo(200);
    }
}
