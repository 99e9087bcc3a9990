package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.internal.flow.FlowCaps;
import dev.runbus.internal.redis.Keys;
import dev.runbus.internal.redis.RedisLink;
import dev.runbus.internal.scripts.ScriptCalls;
import dev.runbus.testing.DocumentedAcl;
import dev.runbus.testing.RedisAcl;
import dev.runbus.testkit.OwnRedis;
import dev.runbus.testkit.TcpProxy;
import dev.runbus.testkit.Wait;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The ACL lines docs/security.md gives operators are exactly what runbus needs: a user made from each line runs its
 * part of runbus on a Redis of the test's own, and that server's command statistics ({@code INFO commandstats},
 * reset before the part runs, counting the commands the scripts call as well as those sent) show that every command
 * sent was granted (none rejected, and the ACL LOG holds no denial) and that every command granted was sent. A
 * right nobody uses is a right a stolen password gives for nothing. {@link RedisAclTest} runs the same lines ({@link
 * RedisAcl} is checked against them here) on every server runbus supports.
 */
class DocumentedAclTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    /** What any user may send without a right: logging in. */
    private static final Set<String> NEED_NO_RIGHT = Set.of("hello", "auth");

    private final OwnRedis redis = OwnRedis.process();
    private final String password = UUID.randomUUID().toString();
    private final List<String> loopErrors = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        redis.close();
    }

    @Test
    void theTestsListsAreTheDocumentedLines() {
        assertThat(RedisAcl.setUserLine("runbus-migrate", DocumentedAcl.PASSWORD, "runbus", RedisAcl.MIGRATE_COMMANDS)
                .replace(" ~runbus:*", "")).isEqualTo(DocumentedAcl.line("runbus-migrate", "+function|load"));
        assertThat(line("runbus-publisher", RedisAcl.PUBLISHER_COMMANDS))
                .isEqualTo(DocumentedAcl.line("runbus-publisher", "+fcall"));
        assertThat(line("runbus-publisher", RedisAcl.PUBLISHER_COMMANDS_62))
                .isEqualTo(DocumentedAcl.line("runbus-publisher", "+eval"));
        assertThat(line("runbus-worker", RedisAcl.WORKER_COMMANDS)).isEqualTo(DocumentedAcl.line("runbus-worker", "+fcall"));
        assertThat(line("runbus-worker", RedisAcl.WORKER_COMMANDS_62))
                .isEqualTo(DocumentedAcl.line("runbus-worker", "+eval"));
        assertThat(DocumentedAcl.addition("runbus-publisher"))
                .isEqualTo(RedisAcl.addLine("runbus-publisher", RedisAcl.FLOW_PUBLISHER_EXTRA_COMMANDS));
        assertThat(DocumentedAcl.addition("runbus-worker"))
                .isEqualTo(RedisAcl.addLine("runbus-worker", RedisAcl.FLOW_WORKER_EXTRA_COMMANDS));
        assertThat(DocumentedAcl.lines()).as("every documented line is one of the seven").hasSize(7);
    }

    private static String line(String user, String commands) {
        return RedisAcl.setUserLine(user, DocumentedAcl.PASSWORD, "runbus", commands);
    }

    @Test
    void theMigrationUserLoadsTheLibraryWithWhatItIsGranted() {
        String line = DocumentedAcl.line("runbus-migrate", "+function|load");
        String uri = user("runbus-migrate", line);
        resetStats();
        ScriptLibrary.load(BusConfig.builder(uri).build());
        assertSentIsGranted("runbus-migrate", line, Set.of());
    }

    @Test
    void thePublisherUserPublishesWithWhatItIsGrantedUsingAllOfIt() throws Exception {
        publishes(DocumentedAcl.line("runbus-publisher", "+fcall"), ScriptMode.AUTO);
    }

    @Test
    void thePublisherUserOfEvalPublishesWithWhatItIsGrantedUsingAllOfIt() throws Exception {
        publishes(DocumentedAcl.line("runbus-publisher", "+eval"), ScriptMode.EVAL);
    }

    @Test
    void thePublisherUserWithTheFlowAdditionPublishesFlowKeyedMessages() throws Exception {
        publishes(DocumentedAcl.line("runbus-publisher", "+fcall"), ScriptMode.AUTO,
                DocumentedAcl.addition("runbus-publisher"));
    }

    @Test
    void theWorkerUserWorksWithWhatItIsGrantedUsingAllOfIt() {
        works(DocumentedAcl.line("runbus-worker", "+fcall"), ScriptMode.AUTO);
    }

    @Test
    void theWorkerUserOfEvalWorksWithWhatItIsGrantedUsingAllOfIt() {
        works(DocumentedAcl.line("runbus-worker", "+eval"), ScriptMode.EVAL);
    }

    @Test
    void theWorkerUserWithTheFlowAdditionRunsAFlowControlledSubscription() {
        works(DocumentedAcl.line("runbus-worker", "+fcall"), ScriptMode.AUTO, DocumentedAcl.addition("runbus-worker"));
    }

    /**
     * Everything a publishing bus does: publish, publish a batch, publish with a delay and at a time, with a key; and
     * a delayed publish whose reply is lost with its connection, which the client sends again once reconnected (the
     * second run of schedule.lua finds its id taken and reads the due time it has).
     */
    private void publishes(String line, ScriptMode mode) throws Exception {
        publishes(line, mode, null);
    }

    /**
     * {@link #publishes(String, ScriptMode)}, and with {@code addition} (the flow-control rules) flow-keyed messages
     * too, on a topic whose caps a subscription configured (a cap of 1, a rate and a topic cap), so that the first is
     * let in.
     */
    private void publishes(String line, ScriptMode mode, String addition) throws Exception {
        loadLibrary();
        user("runbus-publisher", line);
        if (addition != null) {
            add(addition);
            try (RedisLink link = RedisLink.open(redis.uri(), Duration.ofSeconds(5))) {
                new FlowCaps(ScriptCalls.auto(link.sync()), link.sync(), null, new Keys(BusConfig.DEFAULT_KEY_PREFIX),
                        "flowing").configure("g", 1, Duration.ofMinutes(1), FlowRate.perSecond(1000).withBurst(2), 4);
            }
        }
        resetStats();
        try (TcpProxy proxy = TcpProxy.before(redis.uri());
             Bus bus = Bus.connect(config(proxy.uri(), mode).partitions("keyed", 2)
                     .redisCredentials(RedisCredentials.of("runbus-publisher", password.toCharArray())).build())) {
            Publisher publisher = bus.publisher();
            publisher.publish("orders", message("one"));
            publisher.publishAll("orders", List.of(message("two"), message("three")));
            publisher.publish("orders", message("in an hour"), Duration.ofHours(1));
            publisher.publishAt("orders", message("tomorrow"), Instant.now().plus(Duration.ofDays(1)));
            publisher.publish("keyed", "user-1", message("keyed"));
            if (addition != null) {
                for (int n = 0; n < 2; n++) { // the first let in, the second waits behind the cap of 1
                    publisher.publish("flowing", Message.builder("job", new byte[] {(byte) n}).flowKey("t").build());
                }
            }

            String delaySet = new Keys(BusConfig.DEFAULT_KEY_PREFIX).delayed("orders");
            proxy.swallowRepliesFrom(new Keys(BusConfig.DEFAULT_KEY_PREFIX).delayedEntries("orders"));
            CompletableFuture<String> resent = CompletableFuture.supplyAsync(
                    () -> publisher.publish("orders", message("sent twice"), Duration.ofHours(2)));
            // ZCARD, which the publisher's line does not grant: the statistics tell it apart.
            Wait.until("the delayed publish ran, its reply lost", WAIT, () -> redis.redis().zcard(delaySet) == 3);
            proxy.swallowReplies(false);
            proxy.dropConnections(); // the call is unanswered: the client sends it again once reconnected
            assertThat(resent.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isNotEmpty();
            assertThat(redis.redis().zcard(delaySet)).as("scheduled once").isEqualTo(3);
        }
        assertThat(loopErrors).as("errors of the bus's loops").isEmpty();
        assertSentIsGranted("runbus-publisher", addition == null ? line : line + " " + addition, Set.of());
        if (addition != null) { // after the statistics: XLEN is not the publisher's
            assertThat(redis.redis().xlen(BusConfig.DEFAULT_KEY_PREFIX + ":{flowing}:stream")).as("let in")
                    .isEqualTo(1);
        }
    }

    /**
     * Everything a subscribing bus does, and what the runs layer's worker asks of it: reads, acks, a retry, a handler
     * that outlasts minIdle (its claim kept alive), a dead letter listed, read and replayed, a delayed entry moved in,
     * a scheduled entry listed and cancelled, an ordered group's leases and a retry in place, a batch handler, ack
     * before work, retention and dead-letter retention, the janitor deleting a consumer that left and sweeping a start
     * record whose group an operator deleted, the inspector and the gauges, heartbeats, a subscription's close that
     * ends its blocked read.
     */
    private void works(String line, ScriptMode mode) {
        works(line, mode, null);
    }

    /**
     * {@link #works(String, ScriptMode)}, and with {@code addition} (the flow-control rules) a subscription with a
     * cap, a rate and a topic cap too, its key's cap, rate and weight and the topic's cap changed live.
     */
    private void works(String line, ScriptMode mode, String addition) {
        loadLibrary();
        String uri = user("runbus-worker", line);
        if (addition != null) {
            add(addition);
        }
        resetStats();
        AtomicLong trimmed = new AtomicLong();
        BusConfig config = config(uri, mode).heartbeatInterval(Duration.ofMillis(200))
                .consumerDeadAfter(Duration.ofSeconds(1)).janitorInterval(Duration.ofMillis(200))
                .retentionAge(Duration.ZERO).retentionInterval(Duration.ofMillis(200))
                .deadLetterRetention(Duration.ofHours(1)).partitions("keyed", 2)
                .meterRegistry(new SimpleMeterRegistry()).meterRefreshInterval(Duration.ofMillis(200))
                .listener(new BusListener() {
                    @Override
                    public void onRetentionTrimmed(String topic, long entries) {
                        trimmed.addAndGet(entries);
                    }

                    @Override
                    public void onLoopError(String loop, Throwable error) {
                        loopErrors.add(loop + ": " + error.getMessage());
                    }
                }).build();
        try (Bus bus = Bus.connect(config)) {
            Map<String, Long> handled = new ConcurrentHashMap<>();
            AtomicBoolean poisonFails = new AtomicBoolean(true);
            SubscribeOptions options = SubscribeOptions.builder().blockTime(Duration.ofMillis(200))
                    .minIdle(Duration.ofMillis(400)).keepAliveInterval(Duration.ofMillis(100))
                    .claimInterval(Duration.ofMillis(100)).maxDeliveries(2)
                    .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(100))).build();
            bus.subscribe("orders", "g", "c1", d -> {
                String type = d.message().type();
                if (type.equals("poison") && poisonFails.get() || type.equals("retry") && d.attempt() == 1) {
                    throw new IllegalStateException("fails on attempt " + d.attempt());
                }
                if (type.equals("slow")) {
                    Thread.sleep(700); // work that outlasts minIdle: the keep-alive holds the claim meanwhile
                }
                handled.merge(type, d.attempt(), Math::max);
            }, options);
            bus.subscribe("keyed", "og", "o1", d -> {
                if (d.message().type().equals("retry") && d.attempt() == 1) {
                    throw new IllegalStateException("an ordered entry retried in place");
                }
                handled.merge("keyed " + d.message().key(), d.attempt(), Math::max);
            }, options.toBuilder().ordered(true).leaseTime(Duration.ofSeconds(1)).build());
            bus.subscribeBatch("batched", "bg", "b1", batch -> {
                for (Delivery d : batch.deliveries()) {
                    if (d.attempt() == 1 && d.message().type().equals("retry")) {
                        batch.fail(d, new IllegalStateException("a batch's delivery retried"));
                    } else {
                        batch.succeed(d);
                        handled.merge("batched " + d.message().type(), d.attempt(), Math::max);
                    }
                }
            }, options);
            bus.subscribe("telemetry", "tg", "t1", d -> handled.merge("telemetry", d.attempt(), Math::max),
                    options.toBuilder().ackMode(AckMode.BEFORE_WORK).retryPolicy(RetryPolicy.onIdle()).build());
            // A consumer that leaves: the janitor deletes it once it is idle past consumerDeadAfter.
            bus.subscribe("orders", "g", "gone", d -> { }, options).close();

            Publisher publisher = bus.publisher();
            for (String type : List.of("ok", "retry", "poison", "slow")) {
                publisher.publish("orders", message(type));
            }
            publisher.publish("orders", message("delayed"), Duration.ofMillis(200));
            for (String key : List.of("a", "b", "c", "d")) {
                publisher.publish("keyed", key, message(key.equals("b") ? "retry" : "k"));
            }
            publisher.publishAll("batched", List.of(message("ok"), message("retry")));
            publisher.publish("telemetry", message("t"));

            if (addition != null) {
                bus.subscribe("flowing", "fg", "f1", d -> handled.merge("flowing", 1L, Long::sum), options.toBuilder()
                        .retryPolicy(RetryPolicy.onIdle()).flowCap(1).flowRate(FlowRate.perSecond(50).withBurst(2))
                        .flowTopicCap(3).build());
                for (int n = 0; n < 4; n++) {
                    publisher.publish("flowing", Message.builder("job", new byte[] {(byte) n}).flowKey("t").build());
                }
                bus.setFlowCap("flowing", "t", 2);
                bus.setFlowRate("flowing", "t", FlowRate.perSecond(100));
                bus.setFlowWeight("flowing", "t", 2);
                bus.setFlowTopicCap("flowing", 4);
                Wait.until("the four flow-keyed messages handled", WAIT, () -> handled.getOrDefault("flowing", 0L) == 4);
            }
            Wait.until("everything handled", WAIT, () -> handled.keySet().containsAll(List.of("ok", "retry", "slow",
                    "delayed", "keyed a", "keyed b", "keyed c", "keyed d", "batched ok", "batched retry", "telemetry")));
            assertThat(handled.get("retry")).isEqualTo(2L);
            assertThat(handled.get("keyed b")).isEqualTo(2L);
            assertThat(handled.get("batched retry")).isEqualTo(2L);

            Wait.until("the poison message dead-lettered", WAIT, () -> bus.deadLetters().count("orders") == 1);
            DeadLetter dead = bus.deadLetters().list("orders", null, 10).get(0);
            assertThat(bus.deadLetters().partitions("orders")).isEqualTo(1);
            assertThat(bus.deadLetters().listPartition("orders", 0, null, 10)).hasSize(1);
            assertThat(bus.deadLetters().get("orders", dead.id())).isPresent();
            poisonFails.set(false);
            bus.deadLetters().replay("orders", dead.id());
            Wait.until("the replayed dead letter handled", WAIT, () -> handled.containsKey("poison"));

            String later = publisher.publish("orders", message("later"), Duration.ofHours(1));
            assertThat(bus.scheduled().list("orders", 10)).hasSize(1);
            assertThat(bus.scheduled().count("orders")).isEqualTo(1);
            assertThat(bus.scheduled().cancel("orders", later)).isTrue();

            Wait.until("retention trimmed what every group acknowledged", WAIT, () -> trimmed.get() > 0);
            Wait.until("the consumer that left deleted", WAIT,
                    () -> bus.inspector().consumers("orders", "g").stream().noneMatch(c -> c.name().equals("gone")));
            assertThat(bus.pruneDeadConsumers("orders", "g")).isEmpty();

            assertThat(bus.inspector().streams()).extracting(Inspector.StreamInfo::topic).contains("orders", "keyed");
            assertThat(bus.inspector().stream("orders")).isPresent();
            assertThat(bus.inspector().groups("orders")).extracting(Inspector.GroupInfo::name).containsExactly("g");
            assertThat(bus.inspector().pending("orders", "g", 10)).isEmpty();
            assertThat(bus.inspector().pendingEntry("orders", "g", "0-1")).isEmpty();
            assertThat(bus.inspector().partitions("keyed", "og")).hasSize(2);
            assertThat(bus.inspector().retention("orders")).hasSize(1);

            startRecordOfADeletedGroupSwept(bus, options);
        }
        assertThat(loopErrors).as("errors of the bus's loops").noneMatch(e -> e.contains("NOPERM"));
        assertSentIsGranted("runbus-worker", addition == null ? line : line + " " + addition, Set.of());
    }

    /**
     * An operator deletes a group (XGROUP DESTROY, from another tool) while an entry of it is running here: the
     * janitor's sweep finds the group gone and removes the whole start record, counting its fields (HLEN).
     */
    private void startRecordOfADeletedGroupSwept(Bus bus, SubscribeOptions options) {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Subscription held = bus.subscribe("swept", "doomed", "s1", d -> {
            started.countDown();
            release.await(2 * WAIT.toSeconds(), TimeUnit.SECONDS); // outlasts the wait below: its end removes nothing
        }, options.toBuilder().concurrency(1).batchSize(1).minIdle(Duration.ofMinutes(1)).build());
        // The one handler holds the first; the other two fill the subscription's room (concurrency + 2 × batchSize),
        // so that its read loop reads nothing more, and does not create the group again, before the janitor sweeps.
        for (int i = 0; i < 3; i++) {
            bus.publisher().publish("swept", message("held"));
        }
        Keys keys = new Keys(BusConfig.DEFAULT_KEY_PREFIX);
        String startRecord = keys.starts("swept", "doomed");
        try {
            assertThat(started.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("the held entry's handler started").isTrue();
            // KEYS and XGROUP DESTROY, which the worker's line does not grant: the statistics tell them apart.
            Wait.until("the start record written", WAIT, () -> !redis.redis().keys(startRecord).isEmpty());
            Wait.until("all three read: no room for more", WAIT, () -> held.inFlight() == 3);
            redis.redis().xgroupDestroy(keys.stream("swept"), "doomed");
            Wait.until("the start record of the deleted group removed", WAIT,
                    () -> redis.redis().keys(startRecord).isEmpty());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } finally {
            release.countDown();
        }
    }

    /** Loads runbus's function library as {@code runbus migrate} does, before the statistics are reset. */
    private void loadLibrary() {
        ScriptLibrary.load(BusConfig.builder(redis.uri()).build());
    }

    private BusConfig.Builder config(String uri, ScriptMode mode) {
        return BusConfig.builder(uri).scriptMode(mode).listener(new BusListener() {
            @Override
            public void onLoopError(String loop, Throwable error) {
                loopErrors.add(loop + ": " + error.getMessage());
            }
        });
    }

    /** Creates the user from the documented line, as an operator would type it; returns the URL that logs in as it. */
    private String user(String name, String line) {
        CommandArgs<String, String> args = new CommandArgs<>(StringCodec.UTF8).add("SETUSER").add(name)
                .addValues(DocumentedAcl.rules(line, password));
        redis.redis().dispatch(CommandType.ACL, new StatusOutput<>(StringCodec.UTF8), args);
        return redis.uri().replace("://", "://" + name + ":" + password + "@");
    }

    /** Adds the rules of a documented addition line ({@code ACL SETUSER <user> <rules>}) to its user. */
    private void add(String addition) {
        List<String> words = List.of(addition.split(" "));
        CommandArgs<String, String> args = new CommandArgs<>(StringCodec.UTF8).add("SETUSER").add(words.get(2))
                .addValues(words.subList(3, words.size()));
        redis.redis().dispatch(CommandType.ACL, new StatusOutput<>(StringCodec.UTF8), args);
    }

    /** From here on the statistics count what the user sends (and this connection's own few commands, not granted). */
    private void resetStats() {
        redis.redis().configResetstat();
        redis.redis().aclLogReset();
    }

    /**
     * What the server executed since {@link #resetStats()}, and what it rejected, against what {@code line} grants:
     * nothing rejected, no denial logged for {@code user}, and every granted command executed but {@code unsent}.
     */
    private void assertSentIsGranted(String user, String line, Set<String> unsent) {
        Map<String, long[]> stats = commandStats();
        Set<String> granted = DocumentedAcl.granted(line);
        Set<String> rejected = new TreeSet<>();
        Set<String> sent = new TreeSet<>();
        stats.forEach((command, callsAndRejected) -> {
            if (callsAndRejected[0] > 0) {
                sent.add(command);
            }
            if (callsAndRejected[1] > 0) {
                rejected.add(command);
            }
        });
        List<String> denials = redis.redis().aclLog().stream().filter(e -> user.equals(String.valueOf(e.get("username"))))
                .map(e -> e.get("reason") + " " + e.get("object") + " in " + e.get("context")).toList();
        assertThat(denials).as("what Redis denied %s (ACL LOG); sent: %s", user, sent).isEmpty();
        assertThat(rejected).as("commands Redis rejected (INFO commandstats)").isEmpty();
        Set<String> grantedNotSent = new TreeSet<>(granted);
        grantedNotSent.removeAll(sent);
        assertThat(grantedNotSent).as("granted to %s and never sent; sent: %s", user, sent)
                .containsExactlyInAnyOrderElementsOf(unsent);
        Set<String> sentNotGranted = new TreeSet<>(sent);
        sentNotGranted.removeAll(granted);
        sentNotGranted.removeAll(NEED_NO_RIGHT);
        sentNotGranted.removeAll(thisTestsOwn());
        assertThat(sentNotGranted).as("sent and not granted to %s", user).isEmpty();
    }

    /** What this test's own connection sends after the reset; none of it is granted to the user it checks. */
    private static Set<String> thisTestsOwn() {
        return Set.of("config|resetstat", "acl|log", "keys", "xgroup|destroy", "zcard");
    }

    /** {@code INFO commandstats}: per command ({@code xgroup|create}), its calls and its rejected calls. */
    private Map<String, long[]> commandStats() {
        Map<String, long[]> out = new TreeMap<>();
        for (String l : redis.redis().info("commandstats").split("\r?\n")) {
            if (!l.startsWith("cmdstat_")) {
                continue;
            }
            String command = l.substring("cmdstat_".length(), l.indexOf(':'));
            long calls = 0;
            long rejected = 0;
            for (String field : l.substring(l.indexOf(':') + 1).split(",")) {
                String[] kv = field.split("=");
                if (kv[0].equals("calls")) {
                    calls = Long.parseLong(kv[1]);
                } else if (kv[0].equals("rejected_calls")) {
                    rejected = Long.parseLong(kv[1]);
                }
            }
            out.put(command, new long[] {calls, rejected});
        }
        return out;
    }

    private static Message message(String type) {
        return Message.of(type, type.getBytes(StandardCharsets.UTF_8));
    }
}
