package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.Message;
import dev.runbus.RetryPolicy;
import dev.runbus.SubscribeOptions;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TestServers;
import dev.runbus.testkit.Wait;
import java.io.PrintWriter;
import java.io.Writer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The operator's view of delayed entries: {@code runbus scheduled list|cancel}, {@code GET/DELETE /v1/scheduled},
 * the {@code runbus_scheduled_depth} gauge, and the scheduled counts of {@code runbus stats} and {@code /v1/streams}, on
 * real Redis and PostgreSQL. Entries are scheduled by a bus that subscribes to none of their topics, so no mover
 * takes them away while the test looks (except the runs topic, whose entries are due hours ahead).
 */
class ScheduledAdminTest {

    static final Duration WAIT = Duration.ofSeconds(30);
    static RunbusServer server;
    static Bus bus;
    static String schema;
    static String prefix;
    static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        schema = "sched_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        prefix = "rbsched-" + UUID.randomUUID().toString().substring(0, 8);
        Map<Setting, String> flags = new EnumMap<>(Setting.class);
        flags.put(Setting.REDIS_URL, RedisTarget.local().uri());
        flags.put(Setting.DATABASE_URL, DemoEndToEndTest.DATABASE);
        flags.put(Setting.SCHEMA, schema);
        flags.put(Setting.KEY_PREFIX, prefix);
        flags.put(Setting.PORT, "0");
        flags.put(Setting.HOST, "127.0.0.1");
        flags.put(Setting.HANDLER, DemoHandler.class.getName());
        flags.put(Setting.METER_REFRESH, "200ms"); // the gauge this test reads follows in a fraction of a second
        server = RunbusServer.start(Settings.resolve(flags, Map.of(), null), new PrintWriter(Writer.nullWriter()));
        bus = Bus.connect(BusConfig.builder(RedisTarget.local().uri()).keyPrefix(prefix).partitions("parted", 3)
                .build());
    }

    @AfterAll
    static void stop() throws Exception {
        bus.close();
        server.close();
        RedisTarget.local().deleteKeys(prefix);
        TestServers.dropSchema(schema);
    }

    @Test
    void cliListsSoonestFirstWithTheCountAndCancelsOnce() throws Exception {
        String topic = "reminders";
        Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        Instant overdueAt = now.minus(Duration.ofMinutes(2));
        Instant soonAt = now.plus(Duration.ofMinutes(10));
        String later = bus.publisher().publish(topic, message("m-later", "reminder"), Duration.ofHours(1));
        Instant afterLater = Instant.now();
        String soon = bus.publisher().publishAt(topic, message("m-soon", "invoice").withKey("customer-7"), soonAt);
        String overdue = bus.publisher().publishAt(topic, message("m-overdue", "reminder"), overdueAt);

        Cli all = cli("scheduled", "list", topic);
        assertThat(all.exitCode).as(all.err).isZero();
        List<String> lines = all.out.lines().toList();
        assertThat(lines.get(0)).isEqualTo("3 scheduled on topic " + topic);
        assertThat(Arrays.asList(lines.get(1).split("\\s{2,}")))
                .containsExactly("id", "due at", "due", "attempts", "for group", "message id", "type", "key");
        List<List<String>> rows = rows(all.out);
        assertThat(rows).hasSize(3);
        assertThat(rows.get(0)).containsExactly(overdue, overdueAt.toString(), rows.get(0).get(2), "0", "-",
                "m-overdue", "reminder", "-");
        assertThat(rows.get(0).get(2)).matches("overdue by 2m \\d\\ds");
        assertThat(rows.get(1)).containsExactly(soon, soonAt.toString(), rows.get(1).get(2), "0", "-", "m-soon",
                "invoice", "customer-7");
        assertThat(rows.get(1).get(2)).matches("in (9m \\d\\ds|10m 00s)");
        assertThat(rows.get(2)).containsExactly(later, rows.get(2).get(1), rows.get(2).get(2), "0", "-", "m-later",
                "reminder", "-");
        assertThat(Instant.parse(rows.get(2).get(1))).isBetween(now.plus(Duration.ofHours(1)),
                afterLater.plus(Duration.ofHours(1)));
        assertThat(rows.get(2).get(2)).matches("in (59m \\d\\ds|1h 00m)");
        assertThat(lines.get(lines.size() - 1)).isEqualTo("showing all 3");

        Cli two = cli("scheduled", "list", topic, "--limit", "2");
        assertThat(rows(two.out)).extracting(r -> r.get(0)).containsExactly(overdue, soon);
        assertThat(two.out.lines().toList()).first().isEqualTo("3 scheduled on topic " + topic);
        assertThat(two.lastLine()).isEqualTo("showing the soonest 2 of 3");

        JsonNode json = Json.MAPPER.readTree(cli("scheduled", "list", topic, "--json").out);
        assertThat(json.get("topic").asText()).isEqualTo(topic);
        assertThat(json.get("count").asLong()).isEqualTo(3);
        assertThat(json.get("entries")).hasSize(3);
        JsonNode first = json.get("entries").get(1);
        assertThat(first.get("id").asText()).isEqualTo(soon);
        assertThat(first.get("due_at").asText()).isEqualTo(soonAt.toString());
        assertThat(first.get("attempts").asLong()).isZero();
        assertThat(first.get("for_group").isNull()).isTrue();
        assertThat(first.get("message_id").asText()).isEqualTo("m-soon");
        assertThat(first.get("type").asText()).isEqualTo("invoice");
        assertThat(first.get("key").asText()).isEqualTo("customer-7");

        Cli cancel = cli("scheduled", "cancel", topic, soon);
        assertThat(cancel.exitCode).as(cancel.err).isZero();
        assertThat(cancel.out).isEqualTo("cancelled " + soon + System.lineSeparator());
        assertThat(bus.scheduled().count(topic)).isEqualTo(2);
        assertThat(cli("scheduled", "list", topic).out.lines().findFirst()).hasValue("2 scheduled on topic " + topic);
        assertThat(rows(cli("scheduled", "list", topic).out)).extracting(r -> r.get(0)).containsExactly(overdue, later);

        Cli again = cli("scheduled", "cancel", topic, soon);
        assertThat(again.exitCode).isEqualTo(2);
        assertThat(again.out).isEmpty();
        assertThat(again.err.strip()).isEqualTo("runbus: no scheduled entry " + soon + " on " + topic);

        Cli malformed = cli("scheduled", "cancel", topic, "x@1");
        assertThat(malformed.exitCode).isEqualTo(2);
        assertThat(malformed.err.strip())
                .isEqualTo("runbus: topic " + topic + " has one partition: its ids carry none, got 'x@1'");
        assertThat(bus.scheduled().count(topic)).isEqualTo(2);
    }

    @Test
    void cliUsageErrorsExitTwo() {
        Cli none = Cli.run("scheduled");
        assertThat(none.exitCode).isEqualTo(2);
        assertThat(none.err).contains("missing subcommand: list or cancel");
        Cli noTopic = cli("scheduled", "list");
        assertThat(noTopic.exitCode).isEqualTo(2);
        assertThat(noTopic.err).contains("TOPIC");
        Cli noId = cli("scheduled", "cancel", "reminders");
        assertThat(noId.exitCode).isEqualTo(2);
        assertThat(noId.err).contains("ID");
        Cli badLimit = cli("scheduled", "list", "reminders", "--limit", "0");
        assertThat(badLimit.exitCode).isEqualTo(2);
        assertThat(badLimit.err.strip()).isEqualTo("runbus: --limit must be at least 1");
        Cli badTopic = cli("scheduled", "list", "");
        assertThat(badTopic.exitCode).isEqualTo(2);
        Cli help = Cli.run("scheduled", "--help");
        assertThat(help.exitCode).isZero();
        assertThat(help.out).contains("Usage: runbus scheduled").contains("list").contains("cancel")
                .contains("/v1/scheduled");
        assertThat(Cli.run("--help").out).contains("scheduled");
        assertThat(Cli.run("scheduled", "list", "--help").out).contains("--limit").contains("default 20")
                .contains("--redis-url").contains("--key-prefix").contains("--json");
    }

    @Test
    void aRetryIsListedWithItsAttemptsAndGroup() throws Exception {
        String topic = "retried";
        try (Bus worker = Bus.connect(BusConfig.builder(RedisTarget.local().uri()).keyPrefix(prefix).build())) {
            worker.subscribe(topic, "workers", "w1", d -> {
                throw new IllegalStateException("not yet");
            }, SubscribeOptions.builder().retryPolicy(RetryPolicy.fixed(Duration.ofHours(1))).maxDeliveries(5)
                    .blockTime(Duration.ofMillis(200)).build());
            worker.publisher().publish(topic, message("m-fails", "job"));
            Wait.until("the failed entry scheduled for its retry", WAIT, () -> bus.scheduled().count(topic) == 1);
        }
        List<List<String>> rows = rows(cli("scheduled", "list", topic).out);
        assertThat(rows).hasSize(1);
        assertThat(rows.get(0).subList(3, 8)).containsExactly("1", "workers", "m-fails", "job", "-");
        assertThat(rows.get(0).get(2)).matches("in (59m \\d\\ds|1h 00m)");
        JsonNode entry = Json.MAPPER.readTree(cli("scheduled", "list", topic, "--json").out).get("entries").get(0);
        assertThat(entry.get("attempts").asLong()).isEqualTo(1);
        assertThat(entry.get("for_group").asText()).isEqualTo("workers");
    }

    @Test
    void idsOfAPartitionedTopicNameTheirPartition() throws Exception {
        String topic = "parted";
        String id = bus.publisher().publish(topic, message("m-keyed", "job").withKey("customer-7"),
                Duration.ofMinutes(5));
        assertThat(id).matches(".+@[0-2]");
        String bare = id.substring(0, id.lastIndexOf('@'));

        Cli unqualified = cli("scheduled", "cancel", topic, bare);
        assertThat(unqualified.exitCode).isEqualTo(2);
        assertThat(unqualified.err).contains("has 3 partitions");
        HttpResponse<String> badId = delete("/v1/scheduled/" + bare + "?topic=" + topic);
        assertThat(badId.statusCode()).isEqualTo(400);
        assertThat(json(badId).get("error").asText()).contains("has 3 partitions");
        assertThat(rows(cli("scheduled", "list", topic).out)).extracting(r -> r.get(0)).containsExactly(id);

        assertThat(delete("/v1/scheduled/" + id + "?topic=" + topic).statusCode()).isEqualTo(204);
        assertThat(bus.scheduled().count(topic)).isZero();
        Cli empty = cli("scheduled", "list", topic);
        assertThat(empty.out).isEqualTo("0 scheduled on topic " + topic + System.lineSeparator());
    }

    /** The runs topic is the server's configured one: the default of the routes and the topic of the gauge. */
    @Test
    void httpListsAndCancelsAndTheGaugeStreamsAndStatsCountTheEntries() throws Exception {
        Instant at1 = Instant.now().truncatedTo(ChronoUnit.MILLIS).plus(Duration.ofHours(1));
        String first = bus.publisher().publishAt("runs", message("m-run-1", "run"), at1);
        String second = bus.publisher().publish("runs", message("m-run-2", "run").withKey("user-1"),
                Duration.ofHours(2));

        HttpResponse<String> list = get("/v1/scheduled");
        assertThat(list.statusCode()).as(list.body()).isEqualTo(200);
        JsonNode body = json(list);
        assertThat(body.get("topic").asText()).isEqualTo("runs");
        assertThat(body.get("count").asLong()).isEqualTo(2);
        assertThat(body.get("entries")).hasSize(2);
        JsonNode e = body.get("entries").get(0);
        assertThat(e.get("id").asText()).isEqualTo(first);
        assertThat(e.get("due_at").asText()).isEqualTo(at1.toString());
        assertThat(e.get("attempts").asLong()).isZero();
        assertThat(e.get("for_group").isNull()).isTrue();
        assertThat(e.get("message_id").asText()).isEqualTo("m-run-1");
        assertThat(e.get("type").asText()).isEqualTo("run");
        assertThat(e.get("key").isNull()).isTrue();
        assertThat(body.get("entries").get(1).get("id").asText()).isEqualTo(second);
        assertThat(body.get("entries").get(1).get("key").asText()).isEqualTo("user-1");
        JsonNode one = json(get("/v1/scheduled?topic=runs&limit=1"));
        assertThat(one.get("count").asLong()).isEqualTo(2);
        assertThat(one.get("entries")).extracting(n -> n.get("id").asText()).containsExactly(first);
        assertCounted(2);

        HttpResponse<String> cancelled = delete("/v1/scheduled/" + first);
        assertThat(cancelled.statusCode()).as(cancelled.body()).isEqualTo(204);
        assertThat(cancelled.body()).isEmpty();
        HttpResponse<String> gone = delete("/v1/scheduled/" + first);
        assertThat(gone.statusCode()).isEqualTo(404);
        assertThat(json(gone).get("error").asText()).isEqualTo("no scheduled entry " + first + " on runs");
        assertThat(json(get("/v1/scheduled")).get("entries")).extracting(n -> n.get("id").asText())
                .containsExactly(second);
        assertCounted(1);

        HttpResponse<String> malformed = delete("/v1/scheduled/x@1");
        assertThat(malformed.statusCode()).isEqualTo(400);
        assertThat(json(malformed).get("field").asText()).isEqualTo("id");
        assertThat(json(malformed).get("error").asText()).contains("scheduled entry's id");
        HttpResponse<String> noSuchPartition = delete("/v1/scheduled/0000000000000001-00000001@1");
        assertThat(noSuchPartition.statusCode()).isEqualTo(400);
        assertThat(json(noSuchPartition).get("error").asText()).contains("one partition");
        for (String limit : List.of("0", "soon", "10001")) {
            HttpResponse<String> bad = get("/v1/scheduled?limit=" + limit);
            assertThat(bad.statusCode()).as(limit).isEqualTo(400);
            assertThat(json(bad).get("field").asText()).isEqualTo("limit");
        }
        assertCounted(1);

        assertThat(delete("/v1/scheduled/" + second + "?topic=runs").statusCode()).isEqualTo(204);
        assertCounted(0);
    }

    /** The runs topic's scheduled count, read through /metrics, /v1/streams and runbus stats (table and JSON). */
    private static void assertCounted(long n) throws Exception {
        // The gauge is read on its own loop (every --meter-refresh), not at the scrape.
        String metrics = Wait.until("the scheduled gauge at " + n, Duration.ofSeconds(30), () -> {
            try {
                return get("/metrics").body();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, t -> t.contains("runbus_scheduled_depth{topic=\"runs\"} " + n + ".0\n"));
        assertThat(metrics).contains("# HELP runbus_scheduled_depth Entries waiting in the topic's delay sets (delayed "
                + "publishes and retries)\n# TYPE runbus_scheduled_depth gauge\n");
        JsonNode runs = null;
        for (JsonNode s : json(get("/v1/streams")).get("streams")) {
            if (s.get("topic").asText().equals("runs")) {
                runs = s;
            }
        }
        assertThat(runs).isNotNull();
        assertThat(runs.get("scheduled").asLong()).isEqualTo(n);
        Cli stats = cli("stats", "--json");
        assertThat(stats.exitCode).as(stats.err).isZero();
        assertThat(Json.MAPPER.readTree(stats.out).at("/streams/runs/scheduled").asLong()).isEqualTo(n);
        assertThat(cli("stats").out.lines().filter(l -> l.startsWith("scheduled ")).map(l -> l.split("\\s{2,}"))
                .filter(r -> r[1].equals("runs")).map(r -> r[2])).containsExactly(Long.toString(n));
    }

    private static Message message(String id, String type) {
        return Message.builder(type, id.getBytes(StandardCharsets.UTF_8)).id(id).build();
    }

    /** The command against this test's Redis and key prefix. */
    private static Cli cli(String... args) {
        return Cli.run(Stream.concat(Arrays.stream(args),
                Stream.of("--redis-url", RedisTarget.local().uri(), "--key-prefix", prefix)).toArray(String[]::new));
    }

    /** The cells of the table's rows: the lines between the rule under the headers and the footer. */
    private static List<List<String>> rows(String out) {
        List<List<String>> rows = new ArrayList<>();
        boolean inTable = false;
        for (String line : out.lines().toList()) {
            if (line.startsWith("--")) {
                inTable = true;
            } else if (inTable && !line.startsWith("showing ")) {
                rows.add(Arrays.asList(line.split("\\s{2,}")));
            }
        }
        return rows;
    }

    static HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> delete(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).DELETE()
                .build(), HttpResponse.BodyHandlers.ofString());
    }

    static JsonNode json(HttpResponse<String> r) throws Exception {
        return Json.MAPPER.readTree(r.body());
    }
}
