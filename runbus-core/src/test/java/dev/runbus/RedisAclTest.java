package dev.runbus;

import static dev.runbus.testkit.Deployment.LOCAL;
import static dev.runbus.testkit.Deployment.REDIS_62;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.testing.RedisAcl;
import dev.runbus.testkit.Deployment;
import dev.runbus.testkit.OnDeployments;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;

/**
 * runbus under least-privilege Redis ACL users ({@link RedisAcl}): a worker user can do all a subscribing bus
 * does, a publisher user all a publishing one does (from Redis 7 on with FCALL and no right to run scripts of
 * their own, the library loaded beforehand as {@code runbus migrate} does), and Redis denies neither anything (its ACL LOG stays empty
 * for them, which also catches a denial a background loop would only report to a listener). A user without a
 * right is refused with an error that names the command or the keys. On Redis 6.2 too: the lists with EVAL and
 * EVALSHA instead of FCALL, the older reply shapes and NOPERM texts.
 */
@OnDeployments({LOCAL, REDIS_62})
class RedisAclTest {

    /**
     * Redis's words for keys a user may not touch: "no permissions to access one of the keys used as arguments"
     * up to 7.0, "No permissions to access a key" from 7.2 (Valkey 8 too).
     */
    private static final String KEYS_DENIED = "(?i)no permissions to access (one of the keys|a key)";

    private final String id = UUID.randomUUID().toString().substring(0, 8);
    private final String prefix = "test-acl-" + id;
    private final String password = UUID.randomUUID().toString();
    private final List<String> users = new ArrayList<>();
    private final List<Bus> buses = new ArrayList<>();
    private final List<String> loopErrors = new CopyOnWriteArrayList<>();
    /**
     * The loops' errors but timeouts: a renewal or a call that outlived its wait on a busy host is reported and
     * tried again, and says nothing of what these tests check; anything Redis refused stays in.
     */
    private static final java.util.function.Predicate<String> TIMEOUTS_ASIDE = e -> !e.contains("timed out");

    @Parameter
    Deployment deployment;

    RedisTarget target() {
        return deployment.target();
    }

    private RedisClusterCommands<String, String> admin() {
        return target().redis();
    }

    /** The worker's list on this server: FCALL from Redis 7 on; EVAL and EVALSHA on 6.2, which has no functions. */
    String workerCommands() {
        return deployment == REDIS_62 ? RedisAcl.WORKER_COMMANDS_62 : RedisAcl.WORKER_COMMANDS;
    }

    String publisherCommands() {
        return deployment == REDIS_62 ? RedisAcl.PUBLISHER_COMMANDS_62 : RedisAcl.PUBLISHER_COMMANDS;
    }

    /** What {@code runbus migrate} does before the workers start: they may call runbus's functions, not load them. */
    @BeforeEach
    void loadTheFunctionLibrary() {
        ScriptLibrary.load(BusConfig.builder(target().uri()).build());
    }

    @AfterEach
    void cleanUp() {
        buses.forEach(Bus::close);
        if (!users.isEmpty()) {
            admin().aclDeluser(users.toArray(new String[0]));
        }
        target().deleteKeys(prefix);
    }

    private String user(String role, String keyPrefix, String commands) {
        String name = "runbus-test-" + role + "-" + id;
        RedisAcl.setUser(admin(), name, password, keyPrefix, commands);
        users.add(name);
        return name;
    }

    /** The test Redis's URL with this user and password in it. */
    private String uriOf(String user) {
        String uri = target().uri();
        int scheme = uri.indexOf("://") + 3;
        return uri.substring(0, scheme) + user + ":" + password + "@" + uri.substring(scheme);
    }

    private BusConfig.Builder config(String uri) {
        return BusConfig.builder(uri).keyPrefix(prefix).listener(new BusListener() {
            @Override
            public void onLoopError(String loop, Throwable error) {
                loopErrors.add(loop + ": " + error.getMessage());
            }
        });
    }

    private Bus connect(BusConfig config) {
        Bus bus = Bus.connect(config);
        buses.add(bus);
        return bus;
    }

    /**
     * What Redis denied this user, from its ACL LOG (the shared server's: other users' entries are skipped), but
     * for {@link #deniedToTheClientLibrary}. On Redis 7.2 and later (Valkey 8 too) it also catches the client
     * library's CLIENT SETINFO, which runbus turns off, as a denied {@code client|setinfo}.
     */
    private List<String> denied(String user) {
        List<String> out = new ArrayList<>();
        for (Map<String, Object> entry : admin().aclLog()) {
            if (user.equals(String.valueOf(entry.get("username")))) {
                out.add(entry.get("reason") + " " + entry.get("object") + " in " + entry.get("context"));
            }
        }
        out.removeAll(deniedToTheClientLibrary());
        return out;
    }

    /**
     * Denials of what the client library sends on its own, and goes on without; none from Redis 7.0 on, which
     * refuses a CLIENT subcommand it does not know before it looks at the ACL. Lettuce asks for maintenance
     * notifications on connect ({@code CLIENT MAINT_NOTIFICATIONS}, for servers that announce their maintenance; none
     * of the versions tested here knows it) and goes on when it is refused: Redis 6.2 looks at the ACL before the
     * subcommand and logs it as a denied CLIENT. (Lettuce's CLIENT SETINFO, logged the same way, runbus turns off;
     * this entry cannot tell the two apart.)
     */
    List<String> deniedToTheClientLibrary() {
        return deployment == REDIS_62 ? List.of("command client in toplevel") : List.of();
    }

    private static Message message(String type) {
        return Message.of(type, type.getBytes(StandardCharsets.UTF_8));
    }

    private long streamLength(String topic) {
        return admin().xlen(prefix + ":{" + topic + "}:stream");
    }

    @Test
    void aWorkerWithTheWorkerAclConsumesRetriesDeadLettersMovesDelaysRetainsAndInspects() {
        String worker = user("worker", prefix, workerCommands());
        AtomicLong trimmed = new AtomicLong();
        BusConfig cfg = config(uriOf(worker)).heartbeatInterval(Duration.ofMillis(200))
                .consumerDeadAfter(Duration.ofSeconds(1)).janitorInterval(Duration.ofMillis(200))
                .retentionAge(Duration.ZERO).retentionInterval(Duration.ofMillis(200))
                .deadLetterRetention(Duration.ofHours(1)).partitions("keyed", 2)
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
        Bus bus = connect(cfg);
        Map<String, Long> handled = new ConcurrentHashMap<>();
        AtomicLong slowDeliveries = new AtomicLong();
        SubscribeOptions options = SubscribeOptions.builder().blockTime(Duration.ofMillis(200))
                .minIdle(Duration.ofMillis(400)).keepAliveInterval(Duration.ofMillis(100))
                .claimInterval(Duration.ofMillis(100)).maxDeliveries(2)
                .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(100))).build();
        bus.subscribe("orders", "g", "c1", d -> {
            String type = d.message().type();
            if (type.equals("poison") || type.equals("retry") && d.attempt() == 1) {
                throw new IllegalStateException("fails on attempt " + d.attempt());
            }
            if (type.equals("slow")) {
                Thread.sleep(700); // work that outlasts minIdle: the keep-alive holds the claim meanwhile
                slowDeliveries.set(d.deliveryCount());
            }
            handled.merge(type, d.attempt(), Math::max);
        }, options);
        Set<String> keyedHandled = ConcurrentHashMap.newKeySet();
        bus.subscribe("keyed", "og", "o1", d -> keyedHandled.add(d.message().key()),
                options.toBuilder().ordered(true).leaseTime(Duration.ofSeconds(1)).build());
        // A consumer that leaves: the janitor's pass deletes it once it is idle past consumerDeadAfter.
        bus.subscribe("orders", "g", "gone", d -> { }, options).close();

        Publisher publisher = bus.publisher();
        for (String type : List.of("ok", "retry", "poison", "slow")) {
            publisher.publish("orders", message(type));
        }
        publisher.publish("orders", message("delayed"), Duration.ofMillis(200));
        for (String key : List.of("a", "b", "c", "d")) {
            publisher.publish("keyed", message("k").withKey(key));
        }

        Wait.until("ok, retry (on attempt 2), slow and delayed handled; keyed a-d handled", Duration.ofSeconds(20),
                () -> handled.keySet().containsAll(List.of("ok", "retry", "slow", "delayed"))
                        && keyedHandled.size() == 4);
        assertThat(handled.get("retry")).as("the retry ran as attempt 2").isEqualTo(2L);
        assertThat(slowDeliveries.get()).as("the slow entry's claim kept alive: delivered once").isEqualTo(1L);
        Wait.until("the poison message dead-lettered", Duration.ofSeconds(10),
                () -> bus.deadLetters().count("orders") == 1);
        assertThat(bus.deadLetters().list("orders", null, 10)).extracting(dl -> dl.message().type())
                .containsExactly("poison");
        Wait.until("retention trimmed what every group acknowledged", Duration.ofSeconds(10), () -> trimmed.get() > 0);
        Wait.until("the consumer that left deleted", Duration.ofSeconds(10),
                () -> bus.inspector().consumers("orders", "g").stream().noneMatch(c -> c.name().equals("gone")));

        // The inspector's and the scheduled entries' reads.
        assertThat(bus.inspector().streams()).extracting(Inspector.StreamInfo::topic).contains("orders", "keyed");
        assertThat(bus.inspector().groups("orders")).extracting(Inspector.GroupInfo::name).containsExactly("g");
        assertThat(bus.inspector().pending("orders", "g", 10)).isEmpty();
        assertThat(bus.inspector().partitions("keyed", "og")).hasSize(2);
        assertThat(bus.inspector().retention("orders")).hasSize(1);
        publisher.publish("orders", message("later"), Duration.ofHours(1));
        assertThat(bus.scheduled().list("orders", 10)).hasSize(1);
        assertThat(bus.scheduled().count("orders")).isEqualTo(1);

        assertThat(loopErrors).filteredOn(TIMEOUTS_ASIDE).as("errors of the bus's loops").isEmpty();
        assertThat(denied(worker)).as("what Redis denied the worker (ACL LOG)").isEmpty();
    }

    @Test
    void aPublisherWithThePublisherAclPublishesAndSchedulesForWorkersToMoveButCannotSubscribe() {
        String publisherUser = user("publisher", prefix, publisherCommands());
        String workerUser = user("worker", prefix, workerCommands());
        // Credentials apart from the URL: the URL holds none.
        Bus bus = connect(config(target().uri()).partitions("keyed", 2)
                .redisCredentials(RedisCredentials.of(publisherUser, password.toCharArray())).build());
        Publisher publisher = bus.publisher();
        publisher.publish("orders", message("one"));
        publisher.publishAll("orders", List.of(message("two"), message("three"), message("four")));
        publisher.publish("orders", message("in 200 ms"), Duration.ofMillis(200));
        publisher.publishAt("orders", message("at 200 ms from now"), Instant.now().plusMillis(200));
        publisher.publish("keyed", message("k").withKey("user-1"));
        assertThat(streamLength("orders")).as("published at once").isEqualTo(4);
        assertThat(admin().zcard(prefix + ":{orders}:delayed")).as("scheduled").isEqualTo(2);

        // The topic's workers move the scheduled entries into the stream when due.
        Bus workers = connect(config(uriOf(workerUser)).build());
        Set<String> handled = ConcurrentHashMap.newKeySet();
        workers.subscribe("orders", "g", "c", d -> handled.add(d.message().type()),
                SubscribeOptions.builder().blockTime(Duration.ofMillis(200)).build());
        Wait.until("the 4 published and the 2 scheduled entries handled", Duration.ofSeconds(10),
                () -> handled, h -> h.size() == 6);
        assertThat(loopErrors).filteredOn(TIMEOUTS_ASIDE).as("errors of the bus's loops").isEmpty();
        assertThat(denied(publisherUser)).as("what Redis denied the publisher (ACL LOG)").isEmpty();
        assertThat(denied(workerUser)).as("what Redis denied the worker (ACL LOG)").isEmpty();

        assertThatThrownBy(() -> bus.subscribe("orders", "g", "c2", d -> { }))
                .isInstanceOf(RunbusException.class)
                .hasMessageContaining("creating group g of orders failed")
                // Redis 7 names 'xgroup|create'; 6.2 "the 'xgroup' command or its subcommand"
                .hasMessageContaining("no permissions to run the 'xgroup");
    }

    @Test
    void aPasswordGivenApartFromTheUrlKeepsTheUrlsUser() {
        String worker = user("urluser", prefix, workerCommands());
        String uri = target().uri().replace("://", "://" + worker + ":not-the-password@");
        Bus bus = connect(config(uri).redisPassword(password.toCharArray()).build());
        bus.publisher().publish("orders", message("x"));
        assertThat(admin().clientList()).as("connected as the URL's user").contains("user=" + worker + " ");
    }

    @Test
    void aWorkerWhoMayNotReadFromGroupsIsRefusedAtSubscribeNamingXreadgroup() {
        String user = user("noread", prefix, workerCommands() + " -xreadgroup");
        Bus bus = connect(config(uriOf(user)).build());
        assertThatThrownBy(() -> bus.subscribe("orders", "g", "c", d -> { }))
                .isInstanceOf(RunbusException.class)
                .hasMessageContaining("no permissions to run the 'xreadgroup' command");
    }

    @Test
    void aUserWithoutRightsToThePrefixsKeysIsRefusedNamingTheKeys() {
        String user = user("otherkeys", "someone-else", workerCommands());
        Bus bus = connect(config(uriOf(user)).build());
        assertThatThrownBy(() -> bus.publisher().publish("orders", message("x")))
                .isInstanceOf(RunbusException.class)
                .hasMessageContaining("NOPERM")
                .hasMessageFindingMatch(KEYS_DENIED);
        assertThatThrownBy(() -> bus.subscribe("orders", "g", "c", d -> { }))
                .isInstanceOf(RunbusException.class)
                .hasMessageFindingMatch(KEYS_DENIED);
    }
}
