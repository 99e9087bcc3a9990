package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testing.RedisAcl;
import dev.runbus.testkit.RedisClusterProcess;
import dev.runbus.testkit.RedisServerProcess;
import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The worker and publisher ACLs ({@link RedisAcl}) on a Redis Cluster, where ACL users are per node: with
 * {@link RedisAcl#CLUSTER_EXTRA_COMMANDS} a worker consumes, retries, dead-letters and retains across the masters
 * and a publisher publishes and schedules, and no node's ACL LOG holds a denial for either.
 */
class RedisAclOnClusterTest {

    /**
     * The loops' errors but timeouts: a renewal or a call that outlived its wait on a busy host is reported and
     * tried again, and says nothing of what these tests check; anything Redis refused stays in.
     */
    private static final java.util.function.Predicate<String> TIMEOUTS_ASIDE = e -> !e.contains("timed out");

    private final String id = UUID.randomUUID().toString().substring(0, 8);
    private final String prefix = "test-acl-" + id;
    private final String password = UUID.randomUUID().toString();
    private final String worker = "runbus-test-worker-" + id;
    private final String publisher = "runbus-test-publisher-" + id;
    private final List<Bus> buses = new ArrayList<>();

    private static List<RedisServerProcess> nodes() {
        return RedisTarget.clusterProcess().nodes();
    }

    @AfterEach
    void cleanUp() {
        buses.forEach(Bus::close);
        nodes().forEach(n -> RedisClusterProcess.call(n, redis -> redis.aclDeluser(worker, publisher)));
        RedisTarget.cluster().deleteKeys(prefix);
    }

    private void createUsers() {
        // As runbus migrate does: the workers may call runbus's functions, not load them.
        ScriptLibrary.load(BusConfig.builder("redis-cluster://" + RedisTarget.clusterProcess().seeds()).build());
        for (RedisServerProcess node : nodes()) {
            RedisClusterProcess.call(node, redis -> {
                RedisAcl.setUser(redis, worker, password, prefix,
                        RedisAcl.WORKER_COMMANDS + " " + RedisAcl.CLUSTER_EXTRA_COMMANDS);
                RedisAcl.setUser(redis, publisher, password, prefix,
                        RedisAcl.PUBLISHER_COMMANDS + " " + RedisAcl.CLUSTER_EXTRA_COMMANDS);
                return null;
            });
        }
    }

    private String url(String user) {
        return "redis-cluster://" + user + ":" + password + "@" + RedisTarget.clusterProcess().seeds();
    }

    private Bus connect(BusConfig config) {
        Bus bus = Bus.connect(config);
        buses.add(bus);
        return bus;
    }

    /** Every denial any node's ACL LOG holds for the user. */
    private static List<String> denied(String user) {
        List<String> out = new ArrayList<>();
        for (RedisServerProcess node : nodes()) {
            for (Map<String, Object> e : RedisClusterProcess.call(node, redis -> redis.aclLog())) {
                if (user.equals(String.valueOf(e.get("username")))) {
                    out.add(node.port() + ": " + e.get("reason") + " " + e.get("object"));
                }
            }
        }
        return out;
    }

    @Test
    void aWorkerAndAPublisherWithTheirAclsWorkAcrossTheMasters() {
        createUsers();
        List<String> loopErrors = new java.util.concurrent.CopyOnWriteArrayList<>();
        AtomicLong trimmed = new AtomicLong();
        BusListener listener = new BusListener() {
            @Override
            public void onLoopError(String loop, Throwable error) {
                loopErrors.add(loop + ": " + error.getMessage());
            }

            @Override
            public void onRetentionTrimmed(String topic, long entries) {
                trimmed.addAndGet(entries);
            }
        };
        Bus workers = connect(BusConfig.builder(url(worker)).keyPrefix(prefix).partitions("orders", 3)
                .retentionAge(Duration.ZERO).retentionInterval(Duration.ofMillis(200)).listener(listener).build());
        Bus publishers = connect(BusConfig.builder(url(publisher)).keyPrefix(prefix).partitions("orders", 3)
                .listener(listener).build());
        Set<String> handled = ConcurrentHashMap.newKeySet();
        workers.subscribe("orders", "g", "c", d -> {
            if (d.message().type().equals("poison") || d.message().type().equals("retry") && d.attempt() == 1) {
                throw new IllegalStateException("fails on attempt " + d.attempt());
            }
            handled.add(d.message().key());
        }, SubscribeOptions.builder().blockTime(Duration.ofMillis(200)).maxDeliveries(2)
                .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(100))).build());

        for (int i = 0; i < 12; i++) {
            publishers.publisher().publish("orders", message("ok").withKey("k" + i));
        }
        publishers.publisher().publish("orders", message("retry").withKey("retried"));
        publishers.publisher().publish("orders", message("ok").withKey("delayed"), Duration.ofMillis(200));
        publishers.publisher().publish("orders", message("poison").withKey("poison"));

        Wait.until("12 keys, the retried and the delayed one handled", Duration.ofSeconds(20),
                () -> handled, h -> h.size() == 14);
        Wait.until("the poison message dead-lettered", Duration.ofSeconds(10),
                () -> workers.deadLetters().count("orders") == 1);
        Wait.until("retention trimmed", Duration.ofSeconds(10), () -> trimmed.get() > 0);
        assertThat(workers.inspector().partitions("orders", "g")).hasSize(3);
        assertThat(loopErrors).filteredOn(TIMEOUTS_ASIDE).as("errors of the bus's loops").isEmpty();
        assertThat(denied(worker)).as("denials of the worker").isEmpty();
        assertThat(denied(publisher)).as("denials of the publisher").isEmpty();
    }

    private static Message message(String type) {
        return Message.of(type, type.getBytes(StandardCharsets.UTF_8));
    }
}
