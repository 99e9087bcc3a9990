package dev.runbus.internal.redis;

import io.lettuce.core.RedisConnectionException;
import java.time.Duration;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens a connection of a bus that already reached its Redis, trying again while the connect fails within a budget:
 * a connect can fail for a moment on a deployment that works (a Sentinel failover, even a spurious one on a starved
 * machine, kills the clients of the old master, and a connect caught in its handshake fails; a master that was just
 * promoted is still loading), and a subscription must not fail at start for it. A connect that still fails when the
 * budget is spent fails with its last error. Pauses as {@link RetryBackoff}: 50 ms, doubling to 1 s.
 */
final class ConnectRetries {

    private static final Logger log = LoggerFactory.getLogger(ConnectRetries.class);

    private ConnectRetries() {
    }

    static <T> T open(String what, Duration budget, Supplier<T> connect) {
        long deadline = System.nanoTime() + budget.toNanos();
        RetryBackoff backoff = new RetryBackoff();
        boolean said = false;
        while (true) {
            try {
                return connect.get();
            } catch (RedisConnectionException e) {
                long pause = backoff.next();
                if (System.nanoTime() + pause * 1_000_000 > deadline) {
                    throw e;
                }
                if (!said) {
                    said = true;
                    log.warn("opening {} failed ({}); trying again for up to {}", what, e.getMessage(), budget);
                }
                try {
                    Thread.sleep(pause); // a pause between connects, with a deadline: not a wait for a condition
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }
}
