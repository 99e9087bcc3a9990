package dev.runbus.examples;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Delivery;
import dev.runbus.Message;
import dev.runbus.Partitioner;
import dev.runbus.SubscribeOptions;
import dev.runbus.Subscription;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TestServers;
import dev.runbus.testkit.Wait;
import io.lettuce.core.Consumer;
import io.lettuce.core.XReadArgs;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docs/wire-format.md holds for a program in another language: the Python programs of {@code runbus-examples/python}
 * consume what runbus's Java publisher published, in a group beside runbus's consumers, and publish what a Java
 * subscription receives, on the real Redis.
 */
class PythonWireFormatTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    private final RedisTarget redis = RedisTarget.local();
    private final String prefix = TestServers.newPrefix("python-wire");

    /** A message as either side sees it: what the two must agree on. */
    record Seen(String streamId, String id, String type, String key, long publishedAt, Map<String, String> headers,
                List<Byte> payload) {
        static Seen of(String streamId, Message m) {
            return new Seen(streamId, m.id(), m.type(), m.key(), m.publishedAt().toEpochMilli(), m.headers(),
                    bytes(m.payload()));
        }

        /** A line the Python consumer printed. */
        static Seen of(JsonNode line) {
            Map<String, String> headers = new LinkedHashMap<>();
            line.get("headers").fields().forEachRemaining(h -> headers.put(h.getKey(), h.getValue().asText()));
            return new Seen(line.get("stream_id").asText(), line.get("id").asText(), line.get("type").asText(),
                    line.get("key").isNull() ? null : line.get("key").asText(), line.get("published_at").asLong(),
                    headers,
                    bytes(Base64.getDecoder().decode(line.get("payload_base64").asText())));
        }
    }

    @BeforeAll
    static void pythonIsThere() throws Exception {
        PythonScript.python();
    }

    @AfterEach
    void removeKeys() {
        redis.deleteKeys(prefix);
    }

    @Test
    void pythonConsumesWhatJavaPublished_inAGroup_andAcksEachMessage() throws Exception {
        List<Message> messages = List.of(
                Message.builder("order.created", utf8("{\"order\":1}")).id("o-1")
                        .header("tenant", "acme").header("note", "two words, a: colon").build(),
                Message.builder("order.noted", utf8("Grüße aus 日本 ✓ 🚀")).key("日本")
                        .header("city", "Zürich").header("emoji", "🚀").header("empty", "").build(),
                Message.builder("blob", allBytes()).header("content-type", "application/octet-stream").build(),
                Message.of("", new byte[0]));
        String stream = prefix + ":{orders}:stream";
        String deleted = redis.redis().xadd(stream, Map.of("id", "deleted-while-pending", "type", "order.created"));
        List<Seen> published = new ArrayList<>();
        try (Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix(prefix).build())) {
            for (Message m : messages) {
                published.add(Seen.of(bus.publisher().publish("orders", m), m));
            }
        }
        // Replayed to another group: the Python consumer acks it without handling it.
        redis.redis().xadd(stream, Map.of("id", "for-others", "type", "order.created", "for_group", "others"));
        // A previous run of py-1 read the first three and stopped before acking them: they are its pending entries,
        // which a consumer re-reads first (a consumer reading only new entries would never see them again). The
        // first is deleted from the stream meanwhile: it comes back without fields, to be acked, not handled.
        redis.redis().xgroupCreate(XReadArgs.StreamOffset.from(stream, "0"), "py-billing");
        assertThat(redis.redis().xreadgroup(Consumer.from("py-billing", "py-1"), XReadArgs.Builder.count(3),
                XReadArgs.StreamOffset.lastConsumed(stream))).hasSize(3);
        redis.redis().xdel(stream, deleted);

        PythonScript.Result run = consume("orders", "py-billing", "py-1");

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(seen(run)).containsExactlyElementsOf(published);
        assertThat(run.err()).contains("entry " + deleted + " was deleted from the stream while pending; acked");
        assertThat(redis.redis().xpending(stream, "py-billing").getCount()).as("pending after the Python consumer")
                .isZero();
        assertThat(redis.redis().exists(prefix + ":{orders}:starts:py-billing")).as("start records left").isZero();
        assertThat(redis.redis().zscore(prefix + ":{orders}:heartbeats:py-billing", "py-1"))
                .as("heartbeat after a clean stop").isNull();
    }

    @Test
    void pythonReadsEveryPartitionOfAPartitionedTopic_underTheIdsJavaHandsOut() throws Exception {
        List<Seen> published = new ArrayList<>();
        BusConfig config = BusConfig.builder(redis.uri()).keyPrefix(prefix).partitions("events", 4).build();
        try (Bus bus = Bus.connect(config)) {
            List<Message> messages = new ArrayList<>();
            for (int i = 1; i <= 8; i++) {
                messages.add(Message.builder("event", utf8("event " + i)).key("user-" + i).header("n", "" + i).build());
            }
            List<String> ids = bus.publisher().publishAll("events", messages);
            for (int i = 0; i < ids.size(); i++) {
                published.add(Seen.of(ids.get(i), messages.get(i)));
            }

            PythonScript.Result run = consume("events", "py-events", "py-1");

            assertThat(run.exitCode()).as(run.err()).isZero();
            assertThat(seen(run)).containsExactlyInAnyOrderElementsOf(published);
            assertThat(published).extracting(Seen::streamId).extracting(id -> id.substring(id.indexOf('@') + 1))
                    .as("partitions used").hasSizeGreaterThan(1);
            assertThat(bus.inspector().groups("events")).singleElement()
                    .satisfies(g -> assertThat(g.pending()).as("pending on every partition").isZero());
        }
    }

    @Test
    void javaReceivesWhatPythonPublished() throws Exception {
        String input = String.join("\n",
                "{\"id\": \"p-1\", \"type\": \"payment.made\", \"key\": \"user-1\","
                        + " \"payload_text\": \"{\\\"amount\\\": 42}\","
                        + " \"headers\": {\"tenant\": \"acme\", \"traceparent\": \"" + TRACEPARENT + "\"}}",
                "{\"id\": \"p-2\", \"type\": \"payment.noted\", \"key\": \"日本\", \"payload_text\": \"Grüße ✓ 🚀\","
                        + " \"headers\": {\"city\": \"Zürich\"}}",
                "{\"id\": \"p-3\", \"type\": \"blob\", \"key\": \"user-42\", \"payload_base64\": \""
                        + Base64.getEncoder().encodeToString(allBytes()) + "\"}",
                "{\"id\": \"p-4\", \"type\": \"unkeyed\"}");
        PythonScript.Result run = PythonScript.run("publisher.py", input, "--redis-url", redis.uri(),
                "--key-prefix", prefix, "--topic", "payments", "--partitions", "3");
        assertThat(run.exitCode()).as(run.err()).isZero();
        Map<String, JsonNode> written = new LinkedHashMap<>();
        for (String line : run.lines()) {
            JsonNode printed = JSON.readTree(line);
            written.put(printed.get("id").asText(), printed);
        }
        assertThat(written).containsOnlyKeys("p-1", "p-2", "p-3", "p-4");

        List<Delivery> received = new CopyOnWriteArrayList<>();
        BusConfig config = BusConfig.builder(redis.uri()).keyPrefix(prefix).partitions("payments", 3).build();
        try (Bus bus = Bus.connect(config);
             Subscription s = bus.subscribe("payments", "java-payments", "java-1", received::add)) {
            Wait.until("the Java subscription received the 4 messages", WAIT, () -> received.size() >= 4);
        }

        assertThat(received).extracting(d -> Seen.of(d.streamId(), d.message())).containsExactlyInAnyOrder(
                written(written.get("p-1"), "payment.made", "user-1", Map.of("tenant", "acme",
                        "traceparent", TRACEPARENT), utf8("{\"amount\": 42}")),
                written(written.get("p-2"), "payment.noted", "日本", Map.of("city", "Zürich"), utf8("Grüße ✓ 🚀")),
                written(written.get("p-3"), "blob", "user-42", Map.of(), allBytes()),
                written(written.get("p-4"), "unkeyed", null, Map.of(), new byte[0]));
        for (Delivery d : received) {
            if (d.message().key() != null) {
                assertThat(d.streamId()).as("the partition of key %s", d.message().key())
                        .endsWith("@" + Partitioner.partitionOf(d.message().key(), 3));
            }
            assertThat(d.deliveryCount()).isEqualTo(1);
        }
    }

    @Test
    void aMessageThePythonHandlerFailedStaysPending_withItsStartCounted_forARunbusConsumerToTakeOver()
            throws Exception {
        String failing;
        try (Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix(prefix).build())) {
            bus.publisher().publish("jobs", Message.of("job.easy", utf8("easy")));
            failing = bus.publisher().publish("jobs", Message.builder("job.hard", utf8("hard")).id("hard-1").build());
        }

        PythonScript.Result run = PythonScript.run("consumer.py", "", "--redis-url", redis.uri(),
                "--key-prefix", prefix, "--topic", "jobs", "--group", "workers", "--consumer", "py-1", "--drain",
                "--fail-type", "job.hard");

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(seen(run)).extracting(Seen::type).containsExactly("job.easy");
        assertThat(run.err()).contains(failing + " failed");
        String stream = prefix + ":{jobs}:stream";
        assertThat(redis.redis().xpending(stream, "workers").getCount()).isEqualTo(1);
        assertThat(redis.redis().hget(prefix + ":{jobs}:starts:workers", failing)).as("starts recorded").isEqualTo("1");

        List<Delivery> taken = new CopyOnWriteArrayList<>();
        SubscribeOptions quickTakeover = SubscribeOptions.builder().minIdle(Duration.ofMillis(400))
                .claimInterval(Duration.ofMillis(100)).build();
        try (Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix(prefix).build());
             Subscription s = bus.subscribe("jobs", "workers", "java-1", taken::add, quickTakeover)) {
            Wait.until("the Java consumer took the failed entry over", WAIT, () -> !taken.isEmpty());
            Wait.until("nothing pending", WAIT, () -> redis.redis().xpending(stream, "workers").getCount() == 0);
        }
        assertThat(taken).singleElement().satisfies(d -> {
            assertThat(d.streamId()).isEqualTo(failing);
            assertThat(d.message().id()).isEqualTo("hard-1");
            assertThat(d.deliveryCount()).as("the Python start, then this one").isEqualTo(2);
        });
    }

    @Test
    void pythonRefusesAnOrderedGroup() throws Exception {
        try (Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix(prefix).build());
             Subscription s = bus.subscribe("ledger", "bookkeepers", "java-1", d -> { },
                     SubscribeOptions.builder().ordered(true).build())) {
            Wait.until("the ordered group has a member", WAIT,
                    () -> redis.redis().exists(prefix + ":{ledger}:members:bookkeepers") == 1);

            PythonScript.Result run = consume("ledger", "bookkeepers", "py-1");

            assertThat(run.exitCode()).isNotZero();
            assertThat(run.err()).contains("group bookkeepers of ledger is an ordered group");
            assertThat(run.lines()).isEmpty();
        }
    }

    private PythonScript.Result consume(String topic, String group, String consumer) throws Exception {
        return PythonScript.run("consumer.py", "", "--redis-url", redis.uri(), "--key-prefix", prefix,
                "--topic", topic, "--group", group, "--consumer", consumer, "--drain");
    }

    private static List<Seen> seen(PythonScript.Result run) throws Exception {
        List<Seen> out = new ArrayList<>();
        for (String line : run.lines()) {
            out.add(Seen.of(JSON.readTree(line)));
        }
        return out;
    }

    /** A message the Python publisher wrote: where and when as it printed them, the rest as it was given. */
    private static Seen written(JsonNode printed, String type, String key, Map<String, String> headers,
                                byte[] payload) {
        return new Seen(printed.get("stream_id").asText(), printed.get("id").asText(), type, key,
                printed.get("published_at").asLong(), headers, bytes(payload));
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Every byte value, NUL, CR, LF and bytes that are no UTF-8 among them. */
    private static byte[] allBytes() {
        byte[] b = new byte[256];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) i;
        }
        return b;
    }

    private static List<Byte> bytes(byte[] b) {
        List<Byte> out = new ArrayList<>(b.length);
        for (byte x : b) {
            out.add(x);
        }
        return out;
    }
}
