package dev.runbus.testing;

import dev.runbus.Delivery;
import dev.runbus.Message;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** The messages and the per-key count of the flow-control tests. */
public final class FlowJobs {

    private FlowJobs() {
    }

    /** Message {@code n} of {@code flowKey}; its payload is {@code <flowKey>-<n>}. */
    public static Message job(String flowKey, int n) {
        return Message.builder("job", (flowKey + "-" + n).getBytes(StandardCharsets.UTF_8)).flowKey(flowKey).build();
    }

    /** A delivery's payload as text. */
    public static String body(Delivery d) {
        return new String(d.message().payload(), StandardCharsets.UTF_8);
    }

    /**
     * Handler calls running per flow key, and the most seen at once. A handler ends before its ack releases its slot,
     * so this count is never above the slots held in Redis.
     */
    public static final class PerKey {
        private final Map<String, AtomicInteger> running = new ConcurrentHashMap<>();
        private final AtomicInteger most = new AtomicInteger();

        public void start(String key) {
            int now = running.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
            most.accumulateAndGet(now, Math::max);
        }

        public void end(String key) {
            running.get(key).decrementAndGet();
        }

        /** The most calls of one key that ran at once. */
        public int most() {
            return most.get();
        }
    }
}
