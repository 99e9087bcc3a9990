package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.runbus.internal.redis.RedisVersion;
import dev.runbus.testkit.OwnRedis;
import dev.runbus.testkit.RedisServerProcess;
import dev.runbus.testkit.TcpProxy;
import dev.runbus.testkit.Wait;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.Range;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A publish whose reply is lost with its connection: Lettuce re-sends the {@code XADD} after it reconnects. On a
 * server with {@code XADD … IDMP} (Redis 8.6) the re-sent one appends nothing and the publisher gets the first
 * entry's id; elsewhere, and with {@link PublishOptions#withoutIdempotentAppends()}, the message is appended twice
 * (at-least-once, which consumers absorb). Runs on the test's own server of the test binary: the machine's in
 * {@code mvn verify}, Redis 8.6.3 among others in .ci/other-servers, so each path is shown where it applies.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class IdempotentAppendsTest {

    private static final String TOPIC = "orders";
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    private final String prefix = "idmp-" + UUID.randomUUID();
    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void closeEverything() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private <T extends AutoCloseable> T opened(T resource) {
        open.add(resource);
        return resource;
    }

    private String stream() {
        return prefix + ":{" + TOPIC + "}:stream";
    }

    private static boolean hasIdmp(OwnRedis redis) {
        return RedisVersion.parse(redis.redis().info("server")).hasIdempotentAppends();
    }

    /**
     * Publishes through a proxy that swallows the replies until the server has appended {@code appended} entries,
     * then drops the connections: the client re-sends what had no answer. Returns what the publish returned.
     */
    private <T> T publishWithRepliesLost(OwnRedis redis, TcpProxy proxy, int appended,
                                         Function<Publisher, T> publish, PublishOptions options) throws Exception {
        Bus bus = opened(Bus.connect(BusConfig.builder(proxy.uri()).keyPrefix(prefix)
                .commandTimeout(PATIENCE).build()));
        Publisher publisher = bus.publisher(options);
        // The topic registered and both connections open (the batch one opens at its first batch): only XADDs below.
        publisher.publish(TOPIC, message("warm-up"));
        publisher.publishAll(TOPIC, List.of(message("warm-up batch")));
        redis.redis().del(stream());
        proxy.swallowReplies(true);
        CompletableFuture<T> sent = CompletableFuture.supplyAsync(() -> publish.apply(publisher));
        Wait.until("the server to append " + appended + " entries whose replies are lost", PATIENCE,
                () -> redis.redis().xlen(stream()) >= appended);
        proxy.dropConnections();
        proxy.swallowReplies(false);
        return sent.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    }

    private List<StreamMessage<String, String>> entries(OwnRedis redis) {
        return redis.redis().xrange(stream(), Range.create("-", "+"));
    }

    @Test
    void aPublishReSentAfterItsReplyWasLost_isAppendedOnceWhereTheServerTakesIdmp() throws Exception {
        OwnRedis redis = opened(OwnRedis.process());
        TcpProxy proxy = opened(TcpProxy.before(redis.uri()));
        String id = publishWithRepliesLost(redis, proxy, 1, p -> p.publish(TOPIC, message("once")),
                PublishOptions.DEFAULT);

        List<StreamMessage<String, String>> entries = entries(redis);
        if (hasIdmp(redis)) {
            assertThat(entries).as("entries appended").hasSize(1);
            assertThat(id).as("the id the publisher got: the first append's").isEqualTo(entries.get(0).getId());
        } else {
            assertThat(entries).as("entries appended on a server without IDMP: the re-send appends again")
                    .hasSize(2);
            assertThat(id).isEqualTo(entries.get(1).getId());
        }
    }

    @Test
    void withoutIdempotentAppends_theReSentPublishIsAppendedTwice_onEveryServer() throws Exception {
        OwnRedis redis = opened(OwnRedis.process());
        TcpProxy proxy = opened(TcpProxy.before(redis.uri()));
        publishWithRepliesLost(redis, proxy, 1, p -> p.publish(TOPIC, message("twice")),
                PublishOptions.DEFAULT.withoutIdempotentAppends());

        assertThat(entries(redis)).as("entries appended").hasSize(2);
    }

    @Test
    void aBatchReSentAfterItsRepliesWereLost_isAppendedOnceWhereTheServerTakesIdmp() throws Exception {
        OwnRedis redis = opened(OwnRedis.process());
        TcpProxy proxy = opened(TcpProxy.before(redis.uri()));
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            batch.add(message("batch-" + i));
        }
        List<String> ids = publishWithRepliesLost(redis, proxy, batch.size(), p -> p.publishAll(TOPIC, batch),
                PublishOptions.DEFAULT);

        List<StreamMessage<String, String>> entries = entries(redis);
        assertThat(ids).hasSize(batch.size());
        if (hasIdmp(redis)) {
            assertThat(entries).as("entries appended").hasSize(batch.size());
            assertThat(ids).as("the ids the publisher got: the first appends'")
                    .containsExactlyElementsOf(entries.stream().map(StreamMessage::getId).toList());
        } else {
            assertThat(entries).as("entries appended on a server without IDMP").hasSize(2 * batch.size());
        }
    }

    /**
     * A publish with a flow key parks the message (flow.lua); its reply lost with its connection, the client runs
     * the script again. On Redis 8.6 the park's XADD carries IDMP and the second run parks nothing more; elsewhere
     * the message waits twice (at-least-once). No subscription configured the topic, so both would stay parked.
     */
    @Test
    void aFlowKeyedPublishReSentAfterItsReplyWasLost_isParkedOnceWhereTheServerTakesIdmp() throws Exception {
        OwnRedis redis = opened(OwnRedis.process());
        TcpProxy proxy = opened(TcpProxy.before(redis.uri()));
        Bus bus = opened(Bus.connect(BusConfig.builder(proxy.uri()).keyPrefix(prefix).commandTimeout(PATIENCE)
                .build()));
        Publisher publisher = bus.publisher();
        String parked = prefix + ":{" + TOPIC + "}:flow:parked";
        String queue = prefix + ":{" + TOPIC + "}:flow:queue";
        publisher.publish(TOPIC, flowMessage("warm-up")); // the topic registered and the script loaded
        redis.redis().del(parked, queue);
        proxy.swallowReplies(true);
        CompletableFuture<String> sent = CompletableFuture.supplyAsync(
                () -> publisher.publish(TOPIC, flowMessage("once")));
        Wait.until("the server to park it, its reply lost", PATIENCE, () -> redis.redis().xlen(parked) >= 1);
        proxy.dropConnections();
        proxy.swallowReplies(false);
        String id = sent.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);

        List<StreamMessage<String, String>> entries = redis.redis().xrange(parked, Range.create("-", "+"));
        if (hasIdmp(redis)) {
            assertThat(entries).as("parked").hasSize(1);
            assertThat(redis.redis().zcard(queue)).as("waiting in its key's queue").isEqualTo(1);
            assertThat(id).as("the id the publisher got: the first park's").isEqualTo(entries.get(0).getId());
        } else {
            assertThat(entries).as("parked on a server without IDMP: the re-sent park parks again").hasSize(2);
            assertThat(redis.redis().zcard(queue)).isEqualTo(2);
        }
    }

    /**
     * The bus met Redis 8.6 at connect; then a server without IDMP took its address (a replica of an older
     * version promoted, a rolling downgrade). Its first append is refused, appends nothing, and is sent again
     * plainly; the bus sends plain XADDs from then on.
     */
    @Test
    void aServerThatRefusesIdmpAfterTheConnect_getsPlainAppends_andNothingIsLost() throws Exception {
        Path redis86 = redis86();
        assumeTrue(redis86 != null, "no Redis 8.6 build (RUNBUS_TEST_REDIS_SERVER or shared/redis-servers)");
        OwnRedis newer = opened(OwnRedis.of(RedisServerProcess.startWithEnvironment(redis86, java.util.Map.of())));
        // Under -Drunbus.redis.commandsUpTo=8.0 (CI's older path on 8.6) the bus never sends IDMP, here either.
        boolean idmp = hasIdmp(newer);
        OwnRedis older = opened(OwnRedis.embedded62());
        TcpProxy proxy = opened(TcpProxy.before(newer.uri()));
        Bus bus = opened(Bus.connect(BusConfig.builder(proxy.uri()).keyPrefix(prefix).commandTimeout(PATIENCE)
                .build()));
        Publisher publisher = bus.publisher();
        String first = publisher.publish(TOPIC, message("on 8.6"));
        List<Object> info = newer.redis().xinfoStream(stream());
        assertThat(info.get(info.indexOf("iids-added") + 1)).as("appends with IDMP on the first server (XINFO STREAM)")
                .isEqualTo(idmp ? 1L : 0L);

        proxy.forwardTo(older.uri());
        proxy.dropConnections();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ids.add(publisher.publish(TOPIC, message("on 6.2, " + i)));
        }
        ids.addAll(publisher.publishAll(TOPIC, List.of(message("batch a"), message("batch b"))));

        assertThat(first).isNotBlank();
        assertThat(older.redis().xrange(stream(), Range.create("-", "+")).stream().map(StreamMessage::getId)
                .toList()).as("every publish on the older server appended once").containsExactlyElementsOf(ids);
    }

    /**
     * The same with a park first, on a Redis 7 server that took the address (functions, no IDMP): flow.lua's
     * {@code XADD … IDMP} is refused inside the script, which parks nothing, and the park is sent again plainly.
     */
    @Test
    void aParkRefusedByAServerWithoutIdmpAfterTheConnect_isParkedOncePlainly() throws Exception {
        Path redis86 = redis86();
        assumeTrue(redis86 != null, "no Redis 8.6 build (RUNBUS_TEST_REDIS_SERVER or shared/redis-servers)");
        Path redis7 = redis7OnThePath();
        assumeTrue(redis7 != null, "no Redis 7 redis-server on the PATH");
        OwnRedis newer = opened(OwnRedis.of(RedisServerProcess.startWithEnvironment(redis86, java.util.Map.of())));
        assumeTrue(hasIdmp(newer), "the bus sends no IDMP here (-Drunbus.redis.commandsUpTo below 8.6)");
        OwnRedis older = opened(OwnRedis.of(RedisServerProcess.startWithEnvironment(redis7, java.util.Map.of())));
        TcpProxy proxy = opened(TcpProxy.before(newer.uri()));
        Bus bus = opened(Bus.connect(BusConfig.builder(proxy.uri()).keyPrefix(prefix).commandTimeout(PATIENCE)
                .build()));
        Publisher publisher = bus.publisher();
        publisher.publish(TOPIC, flowMessage("parked on 8.6"));

        proxy.forwardTo(older.uri());
        proxy.dropConnections();
        String parkedId = publisher.publish(TOPIC, flowMessage("parked on 7"));
        String again = publisher.publish(TOPIC, flowMessage("parked on 7, plainly from the start"));
        assertThat(older.redis().xrange(prefix + ":{" + TOPIC + "}:flow:parked", Range.create("-", "+"))
                .stream().map(StreamMessage::getId).toList()).as("each parked once on the older server")
                .containsExactly(parkedId, again);
    }

    /** The {@code redis-server} on the PATH when it is Redis 7 (functions, no IDMP); else null. */
    private static Path redis7OnThePath() throws Exception {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            Path candidate = Path.of(dir, "redis-server");
            if (java.nio.file.Files.isExecutable(candidate) && versionOf(candidate).startsWith("7.")) {
                return candidate;
            }
        }
        return null;
    }

    /** A Redis 8.6 server binary: the test binary when it is one, else the build beside the repository. */
    private static Path redis86() throws Exception {
        String named = System.getenv("RUNBUS_TEST_REDIS_SERVER");
        if (named != null && !named.equals("embedded") && versionOf(Path.of(named)).startsWith("8.6")) {
            return Path.of(named);
        }
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve("shared/redis-servers/redis-8.6.3/redis-server");
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    /** "8.6.3" from {@code redis-server --version} ("Redis server v=8.6.3 sha=…"); "" when it does not say. */
    private static String versionOf(Path binary) throws Exception {
        Process p = new ProcessBuilder(binary.toString(), "--version").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(10, TimeUnit.SECONDS);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("v=(\\S+)").matcher(out);
        return m.find() ? m.group(1) : "";
    }

    private static Message message(String text) {
        return Message.builder("order", text.getBytes(StandardCharsets.UTF_8)).build();
    }

    private static Message flowMessage(String text) {
        return Message.builder("order", text.getBytes(StandardCharsets.UTF_8)).flowKey("tenant-1").build();
    }
}
