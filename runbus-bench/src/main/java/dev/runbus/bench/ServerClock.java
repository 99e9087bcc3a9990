package dev.runbus.bench;

/**
 * The Redis server's clock as seen from this JVM: TIME, taken at the midpoint of its round trip, advanced with
 * {@link System#nanoTime()} (the benchmark and Redis share the host). Read again every {@value #RESYNC_MILLIS} ms
 * on a thread of its own, so that the two clocks cannot drift apart during a window; each read keeps the best
 * (shortest round trip) of {@value #READS}, and a read whose round trip took longer than twice
 * {@value #MAX_HALF_ROUND_TRIP_MICROS} µs (the host stalled) is not used. Its uncertainty is the largest half round
 * trip of a read used, or the largest correction a read made to the estimate before it, whichever is larger.
 */
final class ServerClock implements AutoCloseable {

    static final long RESYNC_MILLIS = 200;
    static final int READS = 3;
    static final long MAX_HALF_ROUND_TRIP_MICROS = 250;

    /** A reading: the server's time in µs at {@code nanos} on this JVM's clock. */
    private record Base(long micros, long nanos, long halfRoundTripNanos) {
    }

    private final RedisAdmin admin;
    private final Thread resync;
    private volatile Base base;
    private volatile long uncertaintyNanos;
    private volatile boolean closed;

    private ServerClock(RedisAdmin admin) {
        this.admin = admin;
        Base first = read();
        for (int i = 0; i < 10 && first.halfRoundTripNanos() > MAX_HALF_ROUND_TRIP_MICROS * 1_000; i++) {
            first = read();
        }
        this.base = first;
        this.uncertaintyNanos = base.halfRoundTripNanos();
        this.resync = new Thread(this::resyncLoop, "bench-server-clock");
        this.resync.setDaemon(true);
    }

    /** Reads the server's clock now and keeps reading it until {@link #close()}. */
    static ServerClock start(RedisAdmin admin) {
        ServerClock clock = new ServerClock(admin);
        clock.resync.start();
        return clock;
    }

    /** The server's time now, µs since the epoch. */
    long nowMicros() {
        Base b = base;
        return b.micros() + (System.nanoTime() - b.nanos()) / 1_000;
    }

    /** How far {@link #nowMicros()} may have been from the server's clock so far, in ms. */
    double uncertaintyMillis() {
        return uncertaintyNanos / 1e6;
    }

    private Base read() {
        Base best = null;
        for (int i = 0; i < READS; i++) {
            long before = System.nanoTime();
            long micros = admin.serverTimeMicros();
            long after = System.nanoTime();
            long half = (after - before) / 2;
            if (best == null || half < best.halfRoundTripNanos()) {
                best = new Base(micros, before + half, half);
            }
        }
        return best;
    }

    private void resyncLoop() {
        while (!closed) {
            Env.sleep(RESYNC_MILLIS);
            try {
                Base old = base;
                Base now = read();
                if (now.halfRoundTripNanos() > MAX_HALF_ROUND_TRIP_MICROS * 1_000) {
                    continue;
                }
                long correction = Math.abs(now.micros() * 1_000 - (old.micros() * 1_000 + now.nanos() - old.nanos()));
                uncertaintyNanos = Math.max(uncertaintyNanos, Math.max(now.halfRoundTripNanos(), correction));
                base = now;
            } catch (RuntimeException e) {
                // keep the last reading; the next one may succeed
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            resync.join(1_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
