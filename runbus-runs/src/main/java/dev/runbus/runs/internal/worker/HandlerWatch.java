package dev.runbus.runs.internal.worker;

import dev.runbus.runs.RunCancellation;
import dev.runbus.runs.internal.store.RunCancels;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the handlers running in this worker that their run's cancel was asked for, and interrupts those still at
 * work {@code grace} later. Three threads, so that no one of them stalls another's work:
 * <ul>
 *   <li>the listener, with one connection of the pool held while the worker runs: it LISTENs on the schema's cancel
 *       channel ({@link RunCancels#channel}), where each cancel of a running run NOTIFYs at its commit, and every
 *       {@code checkInterval} while a handler runs it reads which of their runs have a cancel request, the fallback
 *       for a notification lost with a broken connection (its reads give up after {@link #READ_TIMEOUT_MILLIS});</li>
 *   <li>the clock, which never waits for PostgreSQL: it tells the handlers whose attempt timed out and interrupts
 *       those past their grace, every {@link #TICK_MILLIS};</li>
 *   <li>the callbacks' thread, which runs the handlers' {@code onCancel} callbacks, one after another.</li>
 * </ul>
 * A handler is told once; the interrupt reaches its thread only while that thread still runs the handler
 * ({@link Watched#close} under the same lock), so it never hits the next run the thread takes.
 *
 * <p>The same path serves execution timeouts: a handler still at work when its attempt's timeout is over is told as
 * of a cancel, and interrupted {@code grace} later; its worker then fails the attempt ({@link Watched#timedOut}).
 */
public final class HandlerWatch implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(HandlerWatch.class);
    /** The longest wait for a notification: how soon a close or a check is noticed. */
    private static final long MAX_WAIT_MILLIS = 200;
    /** How often the clock looks for timed-out attempts and interrupts that are due. */
    static final long TICK_MILLIS = 100;
    /** The longest a check of the running runs may wait for PostgreSQL before the listener reconnects. */
    static final int READ_TIMEOUT_MILLIS = 10_000;

    private final DataSource dataSource;
    private final String channel;
    private final String checkSql;
    private final long checkIntervalNanos;
    private final long graceNanos;
    /** The attempts' timeout for runs without one of their own; 0 for none. */
    private final long defaultTimeoutNanos;
    private final Set<Watched> running = ConcurrentHashMap.newKeySet();
    private final Thread thread;
    private final java.util.concurrent.ScheduledExecutorService clock;
    private final java.util.concurrent.ExecutorService callbackThread;
    private volatile boolean closed;

    public HandlerWatch(DataSource dataSource, String schema, Duration checkInterval, Duration grace) {
        this(dataSource, schema, checkInterval, grace, Duration.ZERO);
    }

    /** {@code defaultTimeout}: how long an attempt may run when its run has no timeout of its own (zero: for ever). */
    public HandlerWatch(DataSource dataSource, String schema, Duration checkInterval, Duration grace,
                        Duration defaultTimeout) {
        this.defaultTimeoutNanos = defaultTimeout.toNanos();
        this.dataSource = dataSource;
        this.channel = RunCancels.channel(schema);
        this.checkSql = "SELECT id FROM " + schema + ".runs WHERE id = ANY (?::uuid[])"
                + " AND cancel_requested_at IS NOT NULL";
        this.checkIntervalNanos = checkInterval.toNanos();
        this.graceNanos = grace.toNanos();
        this.thread = new Thread(this::run, "runbus-runs-cancel-watch");
        this.thread.setDaemon(true);
        this.clock = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> daemon(r,
                "runbus-runs-handler-clock"));
        this.callbackThread = java.util.concurrent.Executors.newSingleThreadExecutor(r -> daemon(r,
                "runbus-runs-cancel-callbacks"));
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /** A watch that is never started, so it tells nothing: for workers made without one (tests of their logic). */
    static HandlerWatch idle() {
        return new HandlerWatch(null, "runbus", Duration.ofSeconds(1), Duration.ZERO);
    }

    public HandlerWatch start() {
        thread.start();
        clock.scheduleWithFixedDelay(() -> {
            try {
                interruptDue();
            } catch (Throwable e) { // one bad turn never stops the clock
                log.warn("the handlers' clock failed a turn", e);
            }
        }, TICK_MILLIS, TICK_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
        return this;
    }

    /**
     * Watches the calling thread while it runs the handler of {@code runId}'s attempt, until {@link Watched#close}
     * (on the same thread), with {@code timeout} (null: the default one) as its attempt's timeout.
     */
    Watched watch(UUID runId, Duration timeout) {
        long nanos = timeout != null ? timeout.toNanos() : defaultTimeoutNanos;
        Watched w = new Watched(runId, Thread.currentThread(), nanos > 0 ? Duration.ofNanos(nanos) : null);
        running.add(w);
        return w;
    }

    /** One handler at work: what it is told, and whether its thread may still be interrupted. */
    final class Watched implements RunCancellation, AutoCloseable {
        private final UUID runId;
        private final Thread handlerThread;
        private final List<Runnable> callbacks = new ArrayList<>();
        /** The attempt's timeout (null: none), and when it is over (System.nanoTime). */
        private final Duration timeout;
        private final long deadline;
        private volatile boolean requested;
        private volatile boolean timedOut;
        /** When to interrupt (System.nanoTime), once requested; guarded by this. */
        private long interruptAt;
        private boolean finished;
        private boolean interrupted;

        private Watched(UUID runId, Thread handlerThread, Duration timeout) {
            this.runId = runId;
            this.handlerThread = handlerThread;
            this.timeout = timeout;
            this.deadline = timeout == null ? 0 : System.nanoTime() + timeout.toNanos();
        }

        /** Whether the attempt ran past its timeout: it is failed, whatever the handler did after. */
        boolean timedOut() {
            return timedOut;
        }

        Duration timeout() {
            return timeout;
        }

        /** Tells the handler its attempt timed out, if it did and was not told of a cancel already. */
        void timeOutIfDue(long now) {
            if (timeout != null && !requested && now - deadline >= 0) {
                synchronized (this) {
                    if (finished) {
                        return;
                    }
                    timedOut = true;
                }
                log.info("run {}: its attempt is still at work after its timeout of {}; its handler is told", runId,
                        timeout);
                request();
            }
        }

        @Override
        public boolean isRequested() {
            return requested;
        }

        @Override
        public void onRequest(Runnable callback) {
            Objects.requireNonNull(callback, "callback");
            synchronized (this) {
                if (!requested) {
                    callbacks.add(callback);
                    return;
                }
            }
            callback.run();
        }

        /** Tells the handler, once: the flag, the callbacks (on their thread), and the interrupt due after grace. */
        void request() {
            List<Runnable> toRun;
            synchronized (this) {
                if (requested || finished) {
                    return;
                }
                requested = true;
                interruptAt = System.nanoTime() + graceNanos;
                toRun = new ArrayList<>(callbacks);
                callbacks.clear();
            }
            log.debug("run {}: cancel asked for; its handler is told", runId);
            for (Runnable r : toRun) {
                try {
                    callbackThread.execute(() -> {
                        try {
                            r.run();
                        } catch (Throwable e) { // one callback never stops the others
                            log.warn("a cancel callback of run {} threw", runId, e);
                        }
                    });
                } catch (java.util.concurrent.RejectedExecutionException closing) {
                    log.debug("run {}: the watch is closed; its cancel callback does not run", runId);
                }
            }
            interruptIfDue(System.nanoTime());
        }

        /** Interrupts the handler's thread if its grace is over and it still runs this handler. */
        synchronized void interruptIfDue(long now) {
            if (requested && !finished && !interrupted && now - interruptAt >= 0) {
                interrupted = true;
                log.info("run {}: its handler is still at work {} ms after its cancel was asked for; interrupting"
                        + " thread {}", runId, graceNanos / 1_000_000, handlerThread.getName());
                handlerThread.interrupt();
            }
        }

        /**
         * The handler returned or threw: no interrupt after this. Called on the handler's thread, which then drops an
         * interrupt of this watch that the handler left set, so the thread's next task does not inherit it.
         */
        @Override
        public void close() {
            boolean clear;
            synchronized (this) {
                finished = true;
                clear = interrupted;
            }
            running.remove(this);
            if (clear && Thread.currentThread() == handlerThread) {
                Thread.interrupted();
            }
        }
    }

    private void run() {
        long pause = 100;
        while (!closed) {
            try (Connection c = dataSource.getConnection()) {
                c.setAutoCommit(true);
                // A check that PostgreSQL does not answer (a half-open connection) gives up and reconnects; the
                // notifications' own waits set their timeouts themselves.
                c.setNetworkTimeout(Runnable::run, READ_TIMEOUT_MILLIS);
                try {
                    try (Statement st = c.createStatement()) {
                        st.execute("LISTEN " + channel);
                    }
                    PGConnection pg = c.unwrap(PGConnection.class);
                    pause = 100;
                    long nextCheck = System.nanoTime(); // at once: what was asked for while nobody listened
                    while (!closed) {
                        long now = System.nanoTime();
                        if (now - nextCheck >= 0) {
                            check(c);
                            nextCheck = now + checkIntervalNanos;
                        }
                        long waitMillis = Math.max(1, Math.min(MAX_WAIT_MILLIS,
                                (nextCheck - System.nanoTime()) / 1_000_000));
                        PGNotification[] notes = pg.getNotifications((int) waitMillis);
                        if (notes != null) {
                            for (PGNotification n : notes) {
                                requested(n.getParameter());
                            }
                        }
                    }
                } finally {
                    unlisten(c);
                }
            } catch (Throwable e) {
                if (closed) {
                    return;
                }
                // A broken connection never stops the watch: the clock keeps the handlers' timeouts and interrupts
                // meanwhile, and the check after reconnecting finds what was asked for while nobody listened.
                log.warn("the cancel watch lost PostgreSQL ({}); trying again in {} ms", e.toString(), pause);
                try {
                    Thread.sleep(pause);
                } catch (InterruptedException interrupted) {
                    if (closed) {
                        return;
                    }
                    log.warn("the cancel watch was interrupted while not closed; it goes on");
                }
                pause = Math.min(5_000, pause * 2);
            }
        }
    }

    private void requested(String parameter) {
        UUID id;
        try {
            id = UUID.fromString(parameter);
        } catch (IllegalArgumentException notARunId) {
            log.debug("ignored a cancel notification that names no run: {}", parameter);
            return;
        }
        for (Watched w : running) {
            if (w.runId.equals(id)) {
                w.request();
            }
        }
    }

    /** Reads which running runs of this worker have a cancel request. */
    private void check(Connection c) throws SQLException {
        if (running.isEmpty()) {
            return;
        }
        Set<UUID> ids = new HashSet<>();
        for (Watched w : running) {
            if (!w.requested) {
                ids.add(w.runId);
            }
        }
        if (ids.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement(checkSql)) {
            ps.setArray(1, c.createArrayOf("uuid", ids.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    requested(rs.getString(1));
                }
            }
        }
    }

    private void interruptDue() {
        long now = System.nanoTime();
        for (Watched w : running) {
            w.timeOutIfDue(now);
            w.interruptIfDue(now);
        }
    }

    private static void unlisten(Connection c) {
        try (Statement st = c.createStatement()) {
            st.execute("UNLISTEN *");
        } catch (SQLException | RuntimeException e) {
            log.debug("the cancel watch's connection could not stop listening; it is closed with the pool's next check",
                    e);
        }
    }

    /** Stops the watch; handlers still running are no longer told or interrupted. */
    @Override
    public void close() {
        closed = true;
        clock.shutdownNow();
        callbackThread.shutdown();
        thread.interrupt();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
