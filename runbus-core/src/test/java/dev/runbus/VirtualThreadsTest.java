package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.testkit.RedisTarget;
import dev.runbus.testkit.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Handlers on virtual threads (Java 21+). The code is compiled for Java 17, so the executor is created
 * reflectively; the test carries the {@code jdk21} tag and runs only on a JDK that has virtual threads
 * (the build's jdk21 profile; .ci/run runs it on JDK 25).
 */
@Tag("jdk21")
class VirtualThreadsTest {

    @Test
    void handlersRunOnVirtualThreads() throws Exception {
        RedisTarget redis = RedisTarget.local();
        String prefix = "rbtest-" + UUID.randomUUID().toString().substring(0, 8);
        ExecutorService virtual = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor")
                .invoke(null);
        Set<String> seen = ConcurrentHashMap.newKeySet();
        Set<Boolean> onVirtual = ConcurrentHashMap.newKeySet();
        try (Bus bus = Bus.connect(BusConfig.builder(redis.uri()).keyPrefix(prefix).build())) {
            bus.subscribe("vt", "g", "c1", d -> {
                onVirtual.add((Boolean) Thread.class.getMethod("isVirtual").invoke(Thread.currentThread()));
                Thread.sleep(5); // blocking work parks the virtual thread, not a carrier
                seen.add(d.message().id());
            }, SubscribeOptions.builder().concurrency(200).executor(virtual).blockTime(Duration.ofMillis(200))
                    .build());
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < 2000; i++) {
                batch.add(Message.builder("t", ("p" + i).getBytes(StandardCharsets.UTF_8)).id("v-" + i).build());
            }
            bus.publisher().publishAll("vt", batch);
            Wait.until("all handled", Duration.ofSeconds(30), () -> seen.size() == 2000);
            Wait.until("PEL empty", Duration.ofSeconds(10),
                    () -> bus.inspector().groups("vt").get(0).pending() == 0);
        } finally {
            virtual.shutdown();
            redis.deleteKeys(prefix);
        }
        assertThat(onVirtual).containsExactly(true);
    }
}
