package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.runbus.Bus;
import dev.runbus.BusConfig;
import dev.runbus.DeadLetter;
import dev.runbus.Message;
import dev.runbus.SubscribeOptions;
import dev.runbus.Subscription;
import dev.runbus.runs.NewRun;
import dev.runbus.runs.Reply;
import dev.runbus.runs.RunStatus;
import dev.runbus.runs.Runs;
import dev.runbus.runs.RunsConfig;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.TestServers;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code runbus dlq replay --all} and {@code --since} on a topic of two partitions consumed in per-key order: every
 * dead letter goes back to its stream exactly once, each key's in the order its messages died, with progress on
 * stderr and parseable JSON on stdout; {@code --since} replays only those dead since then; a dead letter replayed
 * before is never replayed again.
 */
class DlqReplayAllCommandTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int OLD = 1200;
    private static final int NEW = 100;
    private static final int KEYS = 40;

    private final RedisTarget redis = RedisTarget.local();
    private final String prefix = "dlq-all-" + UUID.randomUUID().toString().substring(0, 8);

    @AfterEach
    void tearDown() {
        redis.deleteKeys(prefix);
    }

    @Test
    void replaysEachDeadLetterOnce_inItsKeysOrder_andSinceOnlyTheNewerOnes() throws Exception {
        AtomicBoolean healed = new AtomicBoolean();
        Map<String, List<String>> handledByKey = new ConcurrentHashMap<>();
        List<String> handled = new CopyOnWriteArrayList<>();
        try (Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix(prefix).partitions("jobs", 2).build());
             Subscription sub = bus.subscribe("jobs", "workers", "w1", d -> {
                 if (!healed.get()) {
                     throw new IllegalStateException("poison until healed");
                 }
                 handled.add(d.message().id());
                 handledByKey.computeIfAbsent(d.message().key(), k -> new CopyOnWriteArrayList<>())
                         .add(d.message().id());
             }, SubscribeOptions.builder().ordered(true).maxDeliveries(1).blockTime(Duration.ofMillis(100))
                     .build())) {
            publish(bus, "old", OLD);
            Wait.until("old messages dead-lettered", WAIT, () -> bus.deadLetters().count("jobs") == OLD);
            // Dead letters are stamped with this JVM's clock: every old one died before `since`, every new one after.
            Instant since = Instant.now().truncatedTo(ChronoUnit.MILLIS).plusMillis(1);
            Wait.until("the clock past since", WAIT, () -> Instant.now().isAfter(since));
            publish(bus, "new", NEW);
            Wait.until("new messages dead-lettered", WAIT, () -> bus.deadLetters().count("jobs") == OLD + NEW);
            Map<String, List<String>> diedByKey = diedByKey(bus);
            healed.set(true);

            Cli sinceRun = cli("dlq", "replay", "--since", since.toString(), "--json");
            assertThat(sinceRun.exitCode).as(sinceRun.err).isZero();
            JsonNode sinceJson = new ObjectMapper().readTree(sinceRun.out);
            assertThat(sinceJson.get("replayed").asLong()).isEqualTo(NEW);
            assertThat(sinceJson.get("dead_before_since").asLong()).isEqualTo(OLD);
            assertThat(sinceRun.err).contains(String.format("%,d dead letters of topic jobs to replay", NEW))
                    .contains(String.format("replayed %,d of %,d", NEW, NEW));
            Wait.until("the new ones handled", WAIT, () -> handled.size() == NEW);
            assertThat(handled).allMatch(id -> id.startsWith("new-")).doesNotHaveDuplicates();

            Cli allRun = cli("dlq", "replay", "--all", "--json");
            assertThat(allRun.exitCode).as(allRun.err).isZero();
            JsonNode allJson = new ObjectMapper().readTree(allRun.out); // stdout holds the JSON and nothing else
            assertThat(allJson.get("replayed").asLong()).isEqualTo(OLD);
            assertThat(allJson.get("replayed_before").asLong()).isEqualTo(NEW);
            assertThat(allJson.get("not_replayed")).isEmpty();
            List<String> progress = allRun.err.lines().filter(l -> l.startsWith("replayed ")).toList();
            assertThat(progress.size()).as(allRun.err).isGreaterThanOrEqualTo(3); // pages of 500 in two partitions
            assertThat(progress.get(progress.size() - 1)).isEqualTo(String.format("replayed %,d of %,d", OLD, OLD));

            Wait.until("every message handled", WAIT, () -> handled.size() == OLD + NEW);
            assertThat(handled).doesNotHaveDuplicates().hasSize(OLD + NEW);
            // Each key's in the order its messages died: the new ones (replayed first), then the old ones.
            Map<String, List<String>> expected = new LinkedHashMap<>();
            diedByKey.forEach((key, ids) -> {
                List<String> order = new ArrayList<>(ids.stream().filter(id -> id.startsWith("new-")).toList());
                order.addAll(ids.stream().filter(id -> id.startsWith("old-")).toList());
                expected.put(key, order);
            });
            assertThat(handledByKey).isEqualTo(expected);
            assertThat(bus.deadLetters().list("jobs", null, OLD + NEW)).allMatch(d -> d.replayedAs().isPresent());

            Cli again = cli("dlq", "replay", "--all", "--json");
            assertThat(again.exitCode).as(again.err).isZero();
            assertThat(new ObjectMapper().readTree(again.out).get("replayed").asLong()).isZero();
            assertThat(handled).hasSize(OLD + NEW);
        }
    }

    /**
     * A run's dead letter is replayed as {@code dlq replay ID} replays it, through the runs layer: the run goes back to
     * pending and runs again; a dead letter the run no longer names is left, as the API leaves it. Without
     * {@code --database-url} nothing at all is replayed.
     */
    @Test
    void runsDeadLettersGoBackToPendingThroughTheRunsLayer_andNeedTheDatabase() throws Exception {
        String schema = TestServers.newSchema("dlqall");
        org.postgresql.ds.PGSimpleDataSource db = new org.postgresql.ds.PGSimpleDataSource();
        db.setURL(TestServers.databaseUrl());
        AtomicBoolean healed = new AtomicBoolean();
        try (Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix(prefix).build());
             Runs runs = Runs.create(bus, db, RunsConfig.builder().schema(schema).consumer("w1")
                     .workerOptions(SubscribeOptions.builder().maxDeliveries(1).blockTime(Duration.ofMillis(100))
                             .build()).build())) {
            runs.startWorker(run -> {
                if (!healed.get()) {
                    throw new IllegalStateException("not yet");
                }
                return List.of(Reply.assistant("ok"));
            });
            List<UUID> ids = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                ids.add(runs.submit(NewRun.of("s", "u" + i, "input " + i)).runId());
            }
            Wait.until("runs failed", WAIT, () -> ids.stream()
                    .allMatch(id -> runs.get(id).orElseThrow().status() == RunStatus.FAILED)
                    && bus.deadLetters().count("runs") == 3);
            healed.set(true);
            String[] at = {"--redis-url", redis.uri(), "--key-prefix", prefix};

            Cli refused = Cli.run(concat(new String[] {"dlq", "replay", "--all"}, at));
            assertThat(refused.exitCode).isEqualTo(2);
            assertThat(refused.err).contains("3 of the dead letters to replay are triggers of runs")
                    .contains("--database-url").contains("nothing was replayed");
            assertThat(bus.deadLetters().list("runs", null, 10)).allMatch(d -> d.replayedAs().isEmpty());

            // As after the run died again on a newer trigger: the run names another dead letter than its first.
            String stale = bus.deadLetters().list("runs", null, 10).stream()
                    .filter(d -> d.message().id().equals(ids.get(0).toString())).findFirst().orElseThrow().id();
            try (java.sql.Connection c = db.getConnection(); java.sql.Statement st = c.createStatement()) {
                st.execute("UPDATE " + schema + ".runs SET dead_letter_id = '1-0' WHERE id = '" + ids.get(0) + "'");
            }
            String[] withDatabase = concat(at, new String[] {"--database-url", TestServers.databaseUrl(), "--schema",
                    schema});
            Cli notCurrent = Cli.run(concat(new String[] {"dlq", "replay", stale}, withDatabase));
            assertThat(notCurrent.exitCode).isEqualTo(2);
            assertThat(notCurrent.err).contains("dead letter " + stale + " is not the current one of run " + ids.get(0));

            Cli replayed = Cli.run(concat(new String[] {"dlq", "replay", "--all", "--json"}, withDatabase));
            assertThat(replayed.exitCode).as(replayed.err).isZero();
            JsonNode json = new ObjectMapper().readTree(replayed.out);
            assertThat(json.get("replayed").asLong()).isEqualTo(2);
            assertThat(json.get("not_replayed").get(0).get("id").asText()).isEqualTo(stale);
            assertThat(replayed.err).contains("not replayed: " + stale + ": dead letter " + stale
                    + " is not the current one of run " + ids.get(0));
            Wait.until("runs done", WAIT, () -> ids.subList(1, 3).stream()
                    .allMatch(id -> runs.get(id).orElseThrow().status() == RunStatus.DONE));
            assertThat(ids.subList(1, 3)).allMatch(id -> runs.replies(id).size() == 1);
            assertThat(runs.get(ids.get(0)).orElseThrow().status()).isEqualTo(RunStatus.FAILED);
            assertThat(bus.deadLetters().list("runs", null, 10)).filteredOn(d -> d.replayedAs().isPresent())
                    .hasSize(2);
        } finally {
            TestServers.dropSchema(schema);
        }
    }

    private static String[] concat(String[] a, String[] b) {
        String[] r = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    @Test
    void refusesAnIdWithAll_andATimeItCannotRead() {
        Cli both = cli("dlq", "replay", "1-0", "--all");
        assertThat(both.exitCode).isEqualTo(2);
        assertThat(both.err).contains("give one of: a dead letter ID, --all or --since TIME");
        Cli none = cli("dlq", "replay");
        assertThat(none.exitCode).isEqualTo(2);
        Cli badTime = cli("dlq", "replay", "--since", "yesterday");
        assertThat(badTime.exitCode).isEqualTo(2);
        assertThat(badTime.err).contains("--since must be an RFC 3339 time").contains("'yesterday'");
    }

    /** Messages {@code <name>-<i>}, keyed over {@link #KEYS} keys, published in one batch in this order. */
    private static void publish(Bus bus, String name, int count) {
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            messages.add(Message.builder("job", ("payload " + i).getBytes(StandardCharsets.UTF_8)).id(name + "-" + i)
                    .key("k" + (i % KEYS)).build());
        }
        bus.publisher().publishAll("jobs", messages);
    }

    /** Each key's message ids in the order their dead letters were made (each partition's dead letters in order). */
    private static Map<String, List<String>> diedByKey(Bus bus) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (int p = 0; p < bus.deadLetters().partitions("jobs"); p++) {
            for (DeadLetter d : bus.deadLetters().listPartition("jobs", p, null, OLD + NEW)) {
                out.computeIfAbsent(d.message().key(), k -> new ArrayList<>()).add(d.message().id());
            }
        }
        return out;
    }

    private Cli cli(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--redis-url", redis.uri(), "--key-prefix", prefix, "--topic", "jobs"));
        return Cli.run(all.toArray(new String[0]));
    }
}
