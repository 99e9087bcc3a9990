package dev.runbus.spring;

import dev.runbus.BusListener;
import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The last error of each of the bus's background loops (read loops, reclaimers, keep-alive, retention …), for the
 * health indicator: a loop that fails keeps running and tries again, so its last error and when it happened are
 * what an operator can act on. Listener calls do no I/O.
 */
final class LoopErrors implements BusListener {

    /** The last error of one loop. */
    record LastError(Instant at, String error) {
    }

    private final Map<String, LastError> last = new ConcurrentHashMap<>();
    private final Clock clock;

    LoopErrors(Clock clock) {
        this.clock = clock;
    }

    @Override
    public void onLoopError(String loop, Throwable error) {
        last.put(loop, new LastError(clock.instant(), error.getClass().getSimpleName() + ": " + error.getMessage()));
    }

    Map<String, LastError> snapshot() {
        return new LinkedHashMap<>(last);
    }
}
