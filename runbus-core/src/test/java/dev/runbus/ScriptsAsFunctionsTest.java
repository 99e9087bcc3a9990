package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.runbus.testing.RedisAcl;
import dev.runbus.testkit.OwnRedis;
import dev.runbus.testkit.Wait;
import io.lettuce.core.FlushMode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * runbus's scripts as a Redis function library (Redis 7 and later), on a server of the test's own (a FUNCTION FLUSH
 * must never reach the server other tests share): a worker user with FCALL and no right to run scripts of its own
 * does all a worker does; one that may not load a missing library is told to run {@code runbus migrate}, and works
 * once it ran; a library flushed under a running bus is loaded again; and the EVAL mode still sends scripts.
 */
class ScriptsAsFunctionsTest {

    /**
     * The loops' errors but timeouts: a renewal or a call that outlived its wait on a busy host is reported and
     * tried again, and says nothing of what these tests check; anything Redis refused stays in.
     */
    private static final java.util.function.Predicate<String> TIMEOUTS_ASIDE = e -> !e.contains("timed out");

    private final String id = UUID.randomUUID().toString().substring(0, 8);
    private final String prefix = "test-fcall-" + id;
    private final String password = UUID.randomUUID().toString();
    private final List<Bus> buses = new ArrayList<>();
    private final List<String> loopErrors = new CopyOnWriteArrayList<>();
    private OwnRedis server;

    @BeforeEach
    void startServer() {
        server = OwnRedis.process();
        String version = server.redis().info("server").lines().filter(l -> l.startsWith("redis_version:"))
                .findFirst().orElseThrow().substring("redis_version:".length()).trim();
        assumeTrue(Integer.parseInt(version.split("\\.")[0]) >= 7, "functions need Redis 7; the server is " + version);
    }

    @AfterEach
    void stop() {
        buses.forEach(Bus::close);
        if (server != null) {
            server.close();
        }
    }

    private String user(String role, String commands) {
        String name = "runbus-" + role;
        List<String> args = new ArrayList<>(List.of("SETUSER", name));
        args.addAll(RedisAcl.rules(password, prefix, commands));
        server.redis().dispatch(io.lettuce.core.protocol.CommandType.ACL,
                new io.lettuce.core.output.StatusOutput<>(io.lettuce.core.codec.StringCodec.UTF8),
                new io.lettuce.core.protocol.CommandArgs<>(io.lettuce.core.codec.StringCodec.UTF8).addValues(args));
        return name;
    }

    private String uriOf(String user) {
        return server.uri().replace("redis://", "redis://" + user + ":" + password + "@");
    }

    private BusConfig.Builder config(String uri) {
        return BusConfig.builder(uri).keyPrefix(prefix).partitions("keyed", 2).listener(new BusListener() {
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

    /** Calls of {@code command} the server counted (INFO commandstats), 0 when it never ran. */
    private long calls(String command) {
        for (String line : server.redis().info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_" + command + ":calls=")) {
                return Long.parseLong(line.substring(("cmdstat_" + command + ":calls=").length()).split(",")[0]);
            }
        }
        return 0;
    }

    private List<String> libraries() {
        List<String> names = new ArrayList<>();
        for (Map<String, Object> library : server.redis().functionList()) {
            names.add(String.valueOf(library.get("library_name")));
        }
        return names;
    }

    private List<String> denied(String user) {
        List<String> out = new ArrayList<>();
        for (Map<String, Object> entry : server.redis().aclLog()) {
            if (user.equals(String.valueOf(entry.get("username")))) {
                out.add(entry.get("reason") + " " + entry.get("object"));
            }
        }
        return out;
    }

    private static Message message(String type, String key) {
        Message m = Message.of(type, type.getBytes(StandardCharsets.UTF_8));
        return key == null ? m : m.withKey(key);
    }

    /** Publishes {@code n} plain and {@code n} keyed messages; waits until both groups handled all of them. */
    private void publishAndConsume(Bus bus, Set<String> plain, Set<String> keyed, int from, int n) {
        Publisher publisher = bus.publisher();
        for (int i = from; i < from + n; i++) {
            publisher.publish("orders", message("m" + i, null));
            publisher.publish("keyed", message("k" + i, "key-" + (i % 3)));
        }
        Wait.until((from + n) + " plain and keyed messages handled", Duration.ofSeconds(20),
                () -> plain.size() == from + n && keyed.size() == from + n);
    }

    private void subscribe(Bus bus, Set<String> plain, Set<String> keyed) {
        SubscribeOptions options = SubscribeOptions.builder().blockTime(Duration.ofMillis(200)).build();
        bus.subscribe("orders", "g", "c1", d -> plain.add(d.message().type()), options);
        bus.subscribe("keyed", "og", "o1", d -> keyed.add(d.message().type()),
                options.toBuilder().ordered(true).leaseTime(Duration.ofSeconds(2)).build());
    }

    @Test
    void aWorkerWithoutEvalPublishesConsumesAcksAndRunsOrderedPartitionsWithFcall() {
        assertThat(RedisAcl.WORKER_COMMANDS).doesNotContain("+eval").doesNotContain("+function").contains("+fcall");
        String admin = user("migrate", RedisAcl.MIGRATE_COMMANDS);
        assertThat(ScriptLibrary.load(BusConfig.builder(uriOf(admin)).build()).loadedOn()).hasSize(1);
        String worker = user("worker", RedisAcl.WORKER_COMMANDS);

        Bus bus = connect(config(uriOf(worker)).build());
        Set<String> plain = ConcurrentHashMap.newKeySet();
        Set<String> keyed = ConcurrentHashMap.newKeySet();
        subscribe(bus, plain, keyed);
        publishAndConsume(bus, plain, keyed, 0, 20);

        Wait.until("every entry acked", Duration.ofSeconds(10), () -> bus.inspector().pending("orders", "g", 100)
                .isEmpty() && bus.inspector().pending("keyed", "og", 100).isEmpty());
        assertThat(calls("fcall")).as("FCALLs").isPositive();
        assertThat(calls("eval") + calls("evalsha")).as("scripts sent as scripts").isZero();
        assertThat(loopErrors).filteredOn(TIMEOUTS_ASIDE).as("errors of the bus's loops").isEmpty();
        assertThat(denied(worker)).as("what Redis denied the worker (ACL LOG)").isEmpty();
    }

    @Test
    void aWorkerThatMayNotLoadTheMissingLibraryIsToldToRunMigrate_andWorksOnceItRan() {
        String worker = user("worker", RedisAcl.WORKER_COMMANDS);
        assertThat(libraries()).isEmpty();

        assertThatThrownBy(() -> connect(config(uriOf(worker)).build())).isInstanceOf(RunbusException.class)
                .hasMessageContaining(ScriptLibrary.name() + " is not loaded on")
                .hasMessageContaining("runbus migrate").hasMessageContaining("+function|load");

        String admin = user("migrate", RedisAcl.MIGRATE_COMMANDS);
        ScriptLibrary.Loaded first = ScriptLibrary.load(BusConfig.builder(uriOf(admin)).build());
        assertThat(first.functions()).isTrue();
        assertThat(first.library()).isEqualTo(ScriptLibrary.name());
        assertThat(first.loadedOn()).hasSize(1);
        assertThat(first.presentOn()).isEmpty();
        ScriptLibrary.Loaded again = ScriptLibrary.load(BusConfig.builder(uriOf(admin)).build());
        assertThat(again.loadedOn()).isEmpty();
        assertThat(again.presentOn()).isEqualTo(first.loadedOn());
        assertThat(libraries()).containsExactly(ScriptLibrary.name());

        Bus bus = connect(config(uriOf(worker)).build());
        Set<String> plain = ConcurrentHashMap.newKeySet();
        Set<String> keyed = ConcurrentHashMap.newKeySet();
        subscribe(bus, plain, keyed);
        publishAndConsume(bus, plain, keyed, 0, 5);
        assertThat(loopErrors).filteredOn(TIMEOUTS_ASIDE).as("errors of the bus's loops").isEmpty();
    }

    @Test
    void aWorkerWithTheEvalListIsToldToGrantFcallOrChooseEval_andRunsWithEval() {
        String worker = user("worker", RedisAcl.WORKER_COMMANDS_62);
        ScriptLibrary.load(BusConfig.builder(server.uri()).build());

        assertThatThrownBy(() -> connect(config(uriOf(worker)).build())).isInstanceOf(RunbusException.class)
                .hasMessageContaining("may not call runbus's functions").hasMessageContaining("grant the user +fcall")
                .hasMessageContaining("scriptMode EVAL");

        Bus bus = connect(config(uriOf(worker)).scriptMode(ScriptMode.EVAL).build());
        Set<String> plain = ConcurrentHashMap.newKeySet();
        Set<String> keyed = ConcurrentHashMap.newKeySet();
        subscribe(bus, plain, keyed);
        publishAndConsume(bus, plain, keyed, 0, 5);
        assertThat(loopErrors).filteredOn(TIMEOUTS_ASIDE).as("errors of the bus's loops").isEmpty();
        assertThat(denied(worker)).as("only the FCALL refused at connect").singleElement().asString()
                .contains("fcall");
    }

    @Test
    void aBusWhoseUserMayLoadLoadsTheMissingLibraryAtConnect() {
        assertThat(libraries()).isEmpty();
        connect(config(server.uri()).build());
        assertThat(libraries()).containsExactly(ScriptLibrary.name());
    }

    @Test
    void aLibraryFlushedUnderARunningBusIsLoadedAgainAndTheBusGoesOn() {
        Bus bus = connect(config(server.uri()).heartbeatInterval(Duration.ofMillis(100))
                .retentionInterval(Duration.ofMillis(100)).build());
        Set<String> plain = ConcurrentHashMap.newKeySet();
        Set<String> keyed = ConcurrentHashMap.newKeySet();
        subscribe(bus, plain, keyed);
        publishAndConsume(bus, plain, keyed, 0, 5);

        server.redis().functionFlush(FlushMode.SYNC); // the bus's loops may load it again at once: no check here
        publishAndConsume(bus, plain, keyed, 5, 5);
        bus.publisher().publish("orders", message("later", null), Duration.ofMillis(50));
        Wait.until("the delayed message handled", Duration.ofSeconds(10), () -> plain.contains("later"));

        assertThat(libraries()).containsExactly(ScriptLibrary.name());
        Wait.until("every entry acked", Duration.ofSeconds(10), () -> bus.inspector().pending("orders", "g", 100)
                .isEmpty() && bus.inspector().pending("keyed", "og", 100).isEmpty());
        assertThat(loopErrors).filteredOn(TIMEOUTS_ASIDE).as("errors of the bus's loops").isEmpty();
    }

    @Test
    void theEvalModeSendsScriptsAndLoadsNoLibrary() {
        Bus bus = connect(config(server.uri()).scriptMode(ScriptMode.EVAL).build());
        Set<String> plain = ConcurrentHashMap.newKeySet();
        Set<String> keyed = ConcurrentHashMap.newKeySet();
        subscribe(bus, plain, keyed);
        publishAndConsume(bus, plain, keyed, 0, 5);
        assertThat(calls("evalsha") + calls("eval")).isPositive();
        assertThat(calls("fcall")).isZero();
        assertThat(libraries()).isEmpty();
    }
}
