package dev.runbus.runs;

import dev.runbus.Bus;
import dev.runbus.DeadLetterAlreadyReplayedException;
import dev.runbus.NoSuchDeadLetterException;
import dev.runbus.RunbusException;
import dev.runbus.SubscribeOptions;
import dev.runbus.Subscription;
import dev.runbus.runs.internal.worker.FailedRunMarker;
import dev.runbus.runs.internal.worker.HandlerWatch;
import dev.runbus.runs.internal.store.IdempotencyKeys;
import dev.runbus.runs.internal.worker.OrderedRunWorker;
import dev.runbus.runs.internal.worker.RetrySchedule;
import dev.runbus.runs.internal.store.FlowOverrideStore;
import dev.runbus.runs.internal.store.RunCancels;
import dev.runbus.runs.internal.meters.RunCountReader;
import dev.runbus.runs.internal.meters.RunMeters;
import dev.runbus.runs.internal.worker.RunAttempts;
import dev.runbus.runs.internal.worker.RunCommits;
import dev.runbus.runs.internal.worker.RunFailures;
import dev.runbus.runs.internal.store.RunListing;
import dev.runbus.runs.internal.store.RunPruning;
import dev.runbus.runs.internal.store.TimedReads;
import dev.runbus.runs.internal.store.RunStore;
import dev.runbus.runs.internal.store.OutboxStore;
import dev.runbus.runs.internal.store.ProgressStore;
import dev.runbus.runs.internal.store.RunFlow;
import dev.runbus.runs.internal.worker.ProgressWrites;
import dev.runbus.runs.internal.worker.RunWorker;
import dev.runbus.runs.internal.sweep.FlowOverrideSync;
import dev.runbus.runs.internal.sweep.OutboxRelay;
import dev.runbus.runs.internal.sweep.Sweeper;
import dev.runbus.runs.internal.worker.Triggers;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongConsumer;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs with exactly-once effects: PostgreSQL holds every run and its replies; the bus only triggers work. On a
 * {@link Bus} {@code bus} and a pooled {@link DataSource} {@code dataSource}:
 *
 * <!-- snippet: runbus-examples/src/main/java/dev/runbus/examples/JavadocExamples.java#runs -->
 * <pre>{@code
 * try (Runs runs = Runs.create(bus, dataSource, RunsConfig.builder().build())) {   // applies migrations
 *     runs.startWorker(run -> List.of(Reply.assistant("you said: " + run.input())));
 *     runs.startSweeper();   // republishes runs whose trigger Redis lost
 *     // The same idempotency key again finds the same run (created() false) and publishes nothing.
 *     SubmitResult submitted = runs.submit(new NewRun("session-1", "user-1", "hello", "hello-1"));
 *     System.out.println("run " + submitted.runId() + " " + submitted.status());   // a service keeps runs open
 * }   // stops the sweeper and the worker (running handlers finish); the bus stays open
 * }</pre>
 *
 * Guarantees: one run per idempotency key (a duplicate submission publishes nothing); one set of replies per
 * run however many times it executes; effects through {@link RunContext#effects()} initiated at most once;
 * every run ends done, failed or (by {@link #cancel}) cancelled, whatever crashes or
 * Redis data loss happen on the way (the sweeper republishes what the stream forgot).
 */
public final class Runs implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Runs.class);

    /**
     * The longest delay of a delayed run: a trigger that waits longer is more likely a mistake (a time in
     * milliseconds read as seconds) than a plan, and each waits in Redis's memory.
     */
    public static final Duration MAX_DELAY = Duration.ofDays(30);

    private final Bus bus;
    private final RunsConfig config;
    private final RunStore store;
    private final RunFailures failures;
    private final RunCommits commits;
    private final Sweeper sweeper;
    private final FailedRunMarker marker;
    private final AutoCloseable listenerHandle;
    private final RunMeters meters;
    private final RunListing listing;
    private final RunCancels cancels;
    private final RunPruning pruning;
    private final FlowOverrideStore overrideStore;
    private final FlowOverrideSync overrides;
    private final OutboxStore outbox;
    /** Publishes the triggers of runs submitted in callers' transactions; started with the sweeper. */
    private OutboxRelay relay;
    /** The worker's handlers' progress reports, written once a second; made with the worker. */
    private ProgressWrites progress;
    /** Tells the worker's handlers of their runs' cancels; made with the worker. */
    private HandlerWatch watch;
    private Subscription worker;
    /** Where the worker's run handlers run, when this layer owns the threads. */
    private ExecutorService ownedHandlers;
    private ScheduledExecutorService sweeperLoop;

    private Runs(Bus bus, RunsConfig config, RunStore store) {
        this.bus = bus;
        this.config = config;
        this.store = store;
        int maxDeliveries = config.workerOptions().maxDeliveries();
        this.failures = new RunFailures(store.dataSource(), config.schema(), maxDeliveries);
        this.meters = RunMeters.of(config.meterRegistry(), config.meterRegistry() == null ? null
                : new RunCountReader(store.dataSource(), config.schema()).start(config.meterRefreshInterval()));
        this.commits = new RunCommits(store, new RunAttempts(store.dataSource(), config.schema(), maxDeliveries), bus,
                config.topic(), config.ordered(), config.flowControlled(), meters);
        this.sweeper = new Sweeper(store.dataSource(), failures, bus, config);
        this.marker = new FailedRunMarker(failures, config.topic(), config.group());
        this.listenerHandle = bus.addListener(marker);
        this.listing = new RunListing(new TimedReads(store.dataSource(), config.readTimeout()), config.schema());
        this.cancels = new RunCancels(store.dataSource(), config.schema());
        this.pruning = new RunPruning(store.dataSource(), config.schema());
        this.overrideStore = new FlowOverrideStore(store.dataSource(), config.schema());
        this.overrides = new FlowOverrideSync(bus, config.topic(), overrideStore);
        this.outbox = new OutboxStore(config.schema());
    }

    /**
     * Submits runs in the caller's own transaction on {@code connection} (the outbox, built in): see
     * {@link RunsInTransaction}. The connection is used, never committed, rolled back or closed here.
     */
    public RunsInTransaction within(java.sql.Connection connection) {
        return new RunsInTransaction(connection, this, outbox);
    }

    /**
     * Publishes now the triggers of every run submitted in a caller's transaction and committed, that no relay
     * published yet; returns how many. The relay started with the sweeper does this at each commit and every second.
     *
     * @throws RunStoreException when PostgreSQL fails; a {@link RunbusException} when Redis does (the runs stay marked)
     */
    public int relayOnce() {
        try {
            return new OutboxRelay(store.dataSource(), bus, config, OUTBOX_POLL).relayAll();
        } catch (SQLException e) {
            throw new RunStoreException("relaying the triggers of runs submitted in transactions failed: "
                    + e.getMessage(), e);
        }
    }

    /** How often the relay looks for marked runs besides the commits' notifications. */
    static final Duration OUTBOX_POLL = Duration.ofSeconds(1);

    /** What {@link #submit} refuses before anything is written, whoever writes. */
    void checkSubmittable(NewRun request) {
        checkKeyable(request);
        if (config.ordered() && request.flowKey() != null) {
            throw new InvalidRunException("flowKey", "cannot be given to runs in per-user order: a flow key chooses "
                    + "its trigger's partition in place of the user id");
        }
    }

    void countSubmitted(boolean created) {
        meters.submitted(created);
    }

    /**
     * Applies the schema's migrations (safe to repeat), and for runs in per-user order the index their order
     * check reads, and returns a runs layer that can submit and read. With {@link RunsConfig#migrate()} off it
     * creates nothing and checks instead that the schema is current ({@link RunsSchema#check}). The runs layer
     * commits its own writes: it turns auto-commit on for each connection it takes from {@code dataSource} (most of
     * its writes are one statement each; those that need a transaction open one), so a pool configured without
     * auto-commit is fine, but {@code dataSource} must hand out connections of its own, as a pool does: not a
     * transaction-aware or JTA data source that hands the caller's transaction's connection, which would be committed.
     *
     * @throws IllegalStateException when a migration fails, or (migrate off) the schema is not current
     */
    public static Runs create(Bus bus, DataSource dataSource, RunsConfig config) {
        Objects.requireNonNull(bus, "bus");
        Objects.requireNonNull(dataSource, "dataSource");
        Objects.requireNonNull(config, "config");
        if (config.migrate()) {
            RunsSchema.migrate(dataSource, config.schema(), config.ordered());
        } else {
            RunsSchema.check(dataSource, config.schema(), config.ordered());
        }
        return new Runs(bus, config, new RunStore(dataSource, config.schema(), config.ordered(), config.readTimeout()));
    }

    /**
     * Creates the run, or finds the one its idempotency key already names. A new run's trigger is published
     * after its row is committed; for an existing run nothing is published. Keys are global: every caller of this
     * method shares them ({@link KeyScope#GLOBAL}).
     *
     * @throws IdempotencyConflictException when the key names a run with another session, user or input
     * @throws InvalidRunException          (an {@link IllegalArgumentException}) when runs are in per-user order
     *                                      and the user id is longer than {@link NewRun#MAX_ORDERED_USER_ID_LENGTH}:
     *                                      it could not key the run's trigger; nothing is written
     */
    public SubmitResult submit(NewRun request) {
        return submit(request, KeyScope.GLOBAL);
    }

    /**
     * {@link #submit(NewRun)} with the idempotency key (given, or derived when there is none) compared only with
     * the keys of the same {@code scope}: a key of another scope, or a global one, never names this run, and a
     * duplicate or a conflict names only a run of this scope. Keys stored before scopes existed are global.
     *
     * @throws IdempotencyConflictException when the key names a run of this scope with another session, user or
     *                                      input; its message names the key as the caller gave it
     */
    public SubmitResult submit(NewRun request, KeyScope scope) {
        return submit(request, scope, Duration.ZERO);
    }

    /**
     * {@link #submit(NewRun)} for later: the run is pending at once (with {@link Run#nextAttemptAt()} at its due
     * time), and its trigger waits {@code delay} in the bus's delay set, due on the Redis server's clock like any
     * delayed publish; the sweeper leaves it alone until it is overdue. {@link #cancel} also takes the trigger out.
     * A duplicate submission finds the existing run and schedules nothing.
     *
     * @throws InvalidRunException (an {@link IllegalArgumentException}) when {@code delay} is negative or longer
     *                             than {@link #MAX_DELAY}, or runs are in per-user order (a run waiting for its
     *                             time would hold up every later run of its user)
     */
    public SubmitResult submit(NewRun request, Duration delay) {
        return submit(request, KeyScope.GLOBAL, delay);
    }

    /** {@link #submit(NewRun, KeyScope)} and {@link #submit(NewRun, Duration)} together. */
    public SubmitResult submit(NewRun request, KeyScope scope, Duration delay) {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(delay, "delay");
        checkDelay(delay);
        checkExpiry(request, delay);
        checkSubmittable(request);
        String flowPart = IdempotencyKeys.flowPart(request.flowKey(), request.priority(), request.flowSubKey());
        String given = request.idempotencyKey() != null ? request.idempotencyKey()
                : IdempotencyKeys.derive(request.sessionId(), request.userId(), request.input(), flowPart,
                        Instant.now().getEpochSecond());
        String key = scope.owner().map(owner -> IdempotencyKeys.scoped(owner, given)).orElse(given);
        String bodyHash = IdempotencyKeys.bodyHash(request.sessionId(), request.userId(), request.input(), flowPart);
        try {
            RunStore.Inserted s = commits.submit(new RunCommits.Submission(
                    new RunStore.Insert(UUID.randomUUID(), key, bodyHash, request, delay.isZero() ? null : delay),
                    bus.currentTraceContext()));
            if (s.created()) {
                meters.submitted(true);
                return new SubmitResult(s.owner().runId(), true, RunStatus.PENDING);
            }
            if (!s.owner().bodyHash().equals(bodyHash)) {
                throw new IdempotencyConflictException(given, s.owner().runId());
            }
            meters.submitted(false);
            return new SubmitResult(s.owner().runId(), false, s.owner().status());
        } catch (SQLException e) {
            throw new RunStoreException("submitting a run failed: " + e.getMessage(), e);
        }
    }

    void checkDelay(Duration delay) {
        if (delay.isNegative() || delay.compareTo(MAX_DELAY) > 0) {
            throw new InvalidRunException("delay", "must be between 0 and " + MAX_DELAY.toDays() + " days, not "
                    + delay);
        }
        if (config.ordered() && !delay.isZero()) {
            throw new InvalidRunException("delay", "cannot be given to runs in per-user order: a run waiting for its"
                    + " time would hold up every later run of its user");
        }
    }

    /** Refuses an expiry that would come before the run's delay is over: such a run could never start. */
    static void checkExpiry(NewRun request, Duration delay) {
        if (request.expireAfter() != null && request.expireAfter().compareTo(delay) <= 0) {
            throw new InvalidRunException("expireAfter", "must be longer than the run's delay (" + delay
                    + "), or the run expires before it may start; got " + request.expireAfter());
        }
    }

    /**
     * Refuses, before the insert, a user id that cannot key an ordered run's trigger. Found only after the insert,
     * it failed the publish of its whole group commit (and every sweep that met the run threw).
     */
    private void checkKeyable(NewRun request) {
        int length = request.userId().length();
        if (config.ordered() && length > NewRun.MAX_ORDERED_USER_ID_LENGTH) {
            throw new InvalidRunException("userId", "has " + length + " characters, more than the "
                    + NewRun.MAX_ORDERED_USER_ID_LENGTH + " allowed: runs in per-user order publish their trigger with"
                    + " the user id as its message key, and a message key has at most "
                    + NewRun.MAX_ORDERED_USER_ID_LENGTH + " characters");
        }
    }

    /**
     * The run is committed; if its trigger cannot be published now, the sweeper publishes it later. Ordered runs'
     * triggers are keyed by the user.
     */
    private void publishTrigger(UUID id, String userId, RunFlow flow) {
        try {
            bus.publisher().publish(config.topic(), Triggers.of(id, config.ordered() ? userId : null, Map.of(),
                    flow.onlyIf(config.flowControlled())));
        } catch (RunbusException e) {
            log.warn("run {} is stored but its trigger could not be published ({}); the sweeper will publish it",
                    id, e.getMessage());
        }
    }

    public Optional<Run> get(UUID runId) {
        try {
            return store.get(runId);
        } catch (SQLException e) {
            throw new RunStoreException("reading run " + runId + " failed: " + e.getMessage(), e);
        }
    }

    /**
     * A page of runs matching {@code query}, newest first; {@link RunPage#next()} continues it. Every page reads
     * about {@code limit} rows of an index, however deep it is (keyset pagination on creation time and id). A listed
     * run carries neither its input nor its idempotency key (both empty texts: a page reads no more than a listing
     * shows); {@link #get} has them.
     *
     * @throws RunStoreException when PostgreSQL fails, or the read takes longer than
     *                           {@link RunsConfig#readTimeout()}
     */
    public RunPage list(RunQuery query) {
        Objects.requireNonNull(query, "query");
        try {
            return listing.list(query);
        } catch (SQLException e) {
            throw new RunStoreException("listing runs failed: " + e.getMessage(), e);
        }
    }

    /** Replies in order of {@code seq}; empty until the run is done. */
    public List<StoredReply> replies(UUID runId) {
        try {
            return store.replies(runId);
        } catch (SQLException e) {
            throw new RunStoreException("reading replies of run " + runId + " failed: " + e.getMessage(), e);
        }
    }

    /** Replies with {@code seq} above {@code afterSeq}, in order: what a follower of the run has not seen yet. */
    public List<StoredReply> replies(UUID runId, int afterSeq) {
        try {
            return store.repliesAfter(runId, afterSeq);
        } catch (SQLException e) {
            throw new RunStoreException("reading replies of run " + runId + " failed: " + e.getMessage(), e);
        }
    }

    /** The run's effects as recorded ({@link Effects}), in the order they were initiated; empty for none. */
    public List<RecordedEffect> effects(UUID runId) {
        try {
            return store.effects(runId);
        } catch (SQLException e) {
            throw new RunStoreException("reading effects of run " + runId + " failed: " + e.getMessage(), e);
        }
    }

    /**
     * Cancels a run that is not finished, and says what it is now.
     *
     * <ul>
     *   <li>A pending run, or a running one between attempts (waiting for a retry), becomes
     *       {@link RunStatus#CANCELLED} at once and never starts again: a delayed run's trigger is taken out of the
     *       delay set; a trigger still in the stream is acked by the worker without a handler call; the sweeper never
     *       republishes it.</li>
     *   <li>A running run with a handler at work becomes {@link RunStatus#CANCELLING}: its handler is told within
     *       moments ({@link RunContext#isCancelRequested()}, {@link RunContext#onCancel}), pushed by PostgreSQL's
     *       NOTIFY at this call's commit and checked every {@code RunsConfig.cancelCheckInterval} besides; after
     *       {@code RunsConfig.cancelGrace} its thread is interrupted. When the attempt ends, however it ends, the run
     *       is cancelled, never retried (its replies, if it returned any, are kept). If its worker dies first, the
     *       trigger's next delivery (a takeover, the sweeper's republish) cancels it without running it.</li>
     * </ul>
     *
     * A cancel and a completion that race end in one state: whichever commits first decides, and a run that is done
     * first makes this call throw. Cancelling a cancelled or cancelling run changes nothing (a retried call
     * succeeds).
     *
     * @return {@link RunStatus#CANCELLED} or {@link RunStatus#CANCELLING}
     * @throws RunNotFoundException          when there is no such run
     * @throws IllegalRunTransitionException when the run is done, failed or expired
     */
    public RunStatus cancel(UUID runId) {
        Objects.requireNonNull(runId, "runId");
        RunCancels.Cancelled cancelled;
        try {
            cancelled = cancels.cancel(runId);
        } catch (SQLException e) {
            throw new RunStoreException("cancelling run " + runId + " failed: " + e.getMessage(), e);
        }
        if (cancelled.done()) {
            cancelled.scheduledId().ifPresent(id -> unschedule(runId, id));
            return cancelled.status();
        }
        Run run = get(runId).orElseThrow(() -> new RunNotFoundException(runId));
        if (run.status() != RunStatus.CANCELLED) {
            throw new IllegalRunTransitionException(runId, run.status(), RunStatus.CANCELLED);
        }
        return RunStatus.CANCELLED;
    }

    /** Takes a cancelled run's trigger out of the delay set: tidiness, as a trigger left there is acked when due. */
    private void unschedule(UUID runId, String scheduledId) {
        try {
            bus.scheduled().cancel(config.topic(), scheduledId);
        } catch (RuntimeException e) {
            log.info("run {} is cancelled; its scheduled trigger {} could not be removed ({}) and will be acked when"
                    + " due", runId, scheduledId, e.getMessage());
        }
    }

    /** The largest batch of {@link #deleteFinished}: one statement deletes and locks at most this many runs. */
    public static final int MAX_DELETE_BATCH = 10_000;

    /**
     * How many runs finished (done, failed, cancelled or expired) before {@code finishedBefore}: what
     * {@link #deleteFinished}
     * would delete now. Reads every such run's index entry: seconds on millions of runs.
     *
     * @throws RunStoreException when PostgreSQL fails
     */
    public long countFinished(Instant finishedBefore) {
        checkBound(finishedBefore);
        try {
            return pruning.count(finishedBefore);
        } catch (SQLException e) {
            throw new RunStoreException("counting finished runs failed: " + e.getMessage(), e);
        }
    }

    /** {@link #deleteFinished(Instant, int, LongConsumer)} without progress. */
    public long deleteFinished(Instant finishedBefore, int batchSize) {
        return deleteFinished(finishedBefore, batchSize, deleted -> { });
    }

    /**
     * Deletes the runs that finished (done, failed, cancelled or expired) before {@code finishedBefore}, with their
     * replies and
     * effects, and returns how many. Never a pending run (a delayed one included) nor a running one: the status is
     * checked again as each row is deleted, so a failed run replayed meanwhile stays. In batches of {@code batchSize}
     * runs, each one statement that commits on its own: only the batch's rows are locked, and only while it runs, so
     * the workers and the API go on; a call that stops half-way (PostgreSQL failed) leaves the batches before deleted,
     * and can simply be made again. {@code afterEachBatch} is told the number deleted so far after each batch. The
     * counts of {@link #counts()} go down by the runs deleted. A dead letter of a deleted run stays in Redis;
     * replayed, its trigger finds no run and is acknowledged.
     *
     * <p>The database role needs {@code DELETE} on the runs tables, which the runtime role of {@link
     * RunsSchema#runtimeGrants} does not have: run it as the migration role, or as a role given
     * {@link RunsSchema#pruneGrants}.
     *
     * @param batchSize 1 to {@link #MAX_DELETE_BATCH}
     * @throws IllegalArgumentException when {@code batchSize} is out of range or {@code finishedBefore} is outside
     *                                  {@link RunQuery#EARLIEST} to {@link RunQuery#LATEST}
     * @throws RunStoreException        when PostgreSQL fails
     */
    public long deleteFinished(Instant finishedBefore, int batchSize, LongConsumer afterEachBatch) {
        checkBound(finishedBefore);
        Objects.requireNonNull(afterEachBatch, "afterEachBatch");
        if (batchSize < 1 || batchSize > MAX_DELETE_BATCH) {
            throw new IllegalArgumentException("batchSize must be between 1 and " + MAX_DELETE_BATCH + ", not "
                    + batchSize);
        }
        try {
            return pruning.delete(finishedBefore, batchSize, afterEachBatch);
        } catch (SQLException e) {
            throw new RunStoreException("deleting finished runs failed: " + e.getMessage(), e);
        }
    }

    private static void checkBound(Instant finishedBefore) {
        Objects.requireNonNull(finishedBefore, "finishedBefore");
        if (!RunQuery.inRange(finishedBefore)) {
            throw new IllegalArgumentException("finishedBefore must be between " + RunQuery.EARLIEST + " and "
                    + RunQuery.LATEST + ", not " + finishedBefore);
        }
    }

    /**
     * Sends a failed run back: failed → pending, then its dead letter is replayed to the stream (and marked
     * replayed there). All or nothing: if Redis refuses the replay, the run is put back as it was (failed, with
     * its dead letter) and the exception thrown, so the call can be repeated. When Redis cannot say whether it ran
     * the replay, or the run cannot be put back (PostgreSQL failed too, or a worker started it), the call returns:
     * the run is pending and the sweeper publishes a trigger that was lost. Without a dead letter (purged, or
     * Redis lost it) a new trigger is published (if that fails, the sweeper publishes it). A replayed
     * dead letter keeps the key it was published with, so an ordered run's comes back to its user's partition.
     * In per-user order the replayed run waits for earlier unfinished runs of its user, but a later run that
     * already started (the replayed run was failed, so finished, then) is not undone.
     *
     * @throws RunNotFoundException          when there is no such run
     * @throws IllegalRunTransitionException when the run is not failed
     */
    public void replay(UUID runId) {
        RunFailures.Replay replay;
        try {
            replay = failures.beginReplay(runId);
        } catch (SQLException e) {
            throw new RunStoreException("replaying run " + runId + " failed: " + e.getMessage(), e);
        }
        if (!replay.began()) {
            Run run = get(runId).orElseThrow(() -> new RunNotFoundException(runId));
            throw new IllegalRunTransitionException(runId, run.status(), RunStatus.PENDING);
        }
        // Committed before Redis is asked: a worker that reads the replayed entry must find the run pending.
        Optional<String> dl = replay.deadLetterId();
        try {
            if (dl.isPresent()) {
                bus.deadLetters().replay(config.topic(), dl.get());
                return;
            }
        } catch (DeadLetterAlreadyReplayedException | NoSuchDeadLetterException e) {
            log.info("dead letter of run {} cannot be replayed ({}); publishing a new trigger", runId, e.getMessage());
        } catch (RuntimeException redisFailed) {
            if (replayMayHaveHappened(runId, dl.get(), redisFailed)) {
                return;
            }
            if (undo(runId, replay.before(), redisFailed)) {
                throw redisFailed; // nothing changed: the caller may simply try again
            }
            return; // the run stays pending (or a worker started it): the replay stands, the sweeper sees to it
        }
        publishTrigger(runId, replay.userId(), replay.flow());
    }

    /**
     * Puts the run back as it was, so that a replay Redis refused changed nothing and can be repeated. Returns
     * false when it could not: the run started meanwhile, or PostgreSQL failed; the replay then stands.
     */
    private boolean undo(UUID runId, RunFailures.Before before, RuntimeException cause) {
        try {
            if (failures.undoReplay(runId, before)) {
                return true;
            }
            log.info("run {} started while its refused replay was being undone: the replay stands", runId);
        } catch (SQLException e) {
            log.warn("run {}: Redis refused its replay ({}) and undoing it failed ({}); the run is pending and the"
                    + " sweeper publishes its trigger", runId, cause.getMessage(), e.getMessage());
        }
        return false;
    }

    /**
     * After the dead letter's replay failed in Redis: whether it may have happened all the same (a reply lost
     * after Redis ran it). The dead letter is read again on the same connection, behind the failed command: if
     * it is not marked replayed, the replay did not happen and the run is put back as it was. If it is,
     * or Redis cannot say, the run is made pending: its trigger is then in the stream or, if lost, the
     * sweeper's to publish, and a second trigger for a pending run is absorbed like any duplicate.
     */
    private boolean replayMayHaveHappened(UUID runId, String deadLetterId, RuntimeException failure) {
        try {
            boolean replayed = bus.deadLetters().get(config.topic(), deadLetterId)
                    .map(d -> d.replayedAs().isPresent()).orElse(false);
            if (replayed) {
                log.info("replaying the dead letter of run {} failed ({}) after Redis ran it", runId,
                        failure.getMessage());
            }
            return replayed;
        } catch (RuntimeException unknown) {
            log.warn("replaying the dead letter of run {} failed ({}) and Redis cannot say whether it happened: the"
                    + " run is pending, and the sweeper publishes its trigger if it was lost", runId,
                    failure.getMessage());
            return true;
        }
    }

    /**
     * Starts this process's worker: one consumer named {@code config.consumer()} in {@code config.group()}.
     *
     * <p>Ordered ({@link RunsConfig#ordered()}): an ordered subscription with one handler call per trigger, on
     * the bus's threads or {@code workerOptions.executor()}; up to {@code concurrency} partitions run at once,
     * each one run at a time ({@link OrderedRunWorker}).
     *
     * <p>Unordered: each read batch of triggers starts its runs in one transaction; then up to
     * {@code workerOptions.concurrency()} run handlers run at once, on {@code workerOptions.executor()} when one
     * is given (it must be able to run that many tasks at once and never drop a task it accepted) or else on
     * threads of this layer's own; runs that finish together are completed in one transaction.
     */
    public synchronized Subscription startWorker(RunHandler handler) {
        Objects.requireNonNull(handler, "handler");
        if (worker != null) {
            throw new IllegalStateException("the worker of this Runs is already started");
        }
        SubscribeOptions options = config.workerSubscription();
        overrides.applyAll(); // before the subscription lets waiting triggers in under the workers' own limits
        RetrySchedule retries = new RetrySchedule(options);
        progress = new ProgressWrites(new ProgressStore(store.dataSource(), config.schema()));
        watch = new HandlerWatch(store.dataSource(), config.schema(), config.cancelCheckInterval(),
                config.cancelGrace(), config.executionTimeout()).start();
        if (config.ordered()) {
            worker = bus.subscribe(config.topic(), config.group(), config.consumer(),
                    new OrderedRunWorker(store, failures, commits, handler, bus, config.topic(),
                            options.maxDeliveries(), retries, progress, watch),
                    options.toBuilder().ordered(true).build());
            return worker;
        }
        Executor handlers = options.executor();
        if (handlers == null) {
            ownedHandlers = Executors.newFixedThreadPool(options.concurrency(), daemonThreads("runbus-run-"));
            handlers = ownedHandlers;
        }
        // The batch calls wait for their runs, so they must not take the threads the runs need: they get the
        // bus's own threads.
        worker = bus.subscribeBatch(config.topic(), config.group(), config.consumer(),
                new RunWorker(store, failures, commits, handler, handlers, retries, progress, watch),
                options.toBuilder().executor(null).build());
        return worker;
    }

    private static ThreadFactory daemonThreads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /**
     * Gives {@code flowKey} limits of its own in place of the workers' ({@link FlowOverride}; docs/flow-control.md,
     * "Overrides that outlive Redis"): written to PostgreSQL (committed when this returns), then set in Redis, where
     * they take effect at once as {@link Bus#setFlowCap} and the others do. Set in Redis again at every worker start
     * and sweep, so a Redis that lost its data gets them back. If Redis cannot be reached now, the override is kept
     * and the next sweep sets it (a warning says so). {@link FlowOverride#none()} gives the key the workers' limits
     * again.
     *
     * @return whether Redis has it now (false: stored, and the next sweep sets it)
     * @throws InvalidRunException when the flow key is not one a message can carry
     * @throws RunStoreException   when PostgreSQL fails: nothing changed
     */
    public boolean setFlowOverride(String flowKey, FlowOverride override) {
        Objects.requireNonNull(override, "override");
        try {
            dev.runbus.Message.checkFlowKey(flowKey);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new InvalidRunException("flowKey", String.valueOf(e.getMessage()));
        }
        try {
            return overrides.set(flowKey, override);
        } catch (SQLException e) {
            throw new RunStoreException("storing the flow override of " + flowKey + " failed: " + e.getMessage(), e);
        }
    }

    /**
     * Gives {@code flowKey} the workers' limits again: {@link #setFlowOverride} with {@link FlowOverride#none()};
     * returns whether Redis has them now.
     */
    public boolean clearFlowOverride(String flowKey) {
        return setFlowOverride(flowKey, FlowOverride.none());
    }

    /**
     * The flow keys with limits of their own (those set back to the workers' are left out), by key: the first
     * {@code limit} (1 to 1,000) after {@code afterKey} (null: from the first).
     */
    public Map<String, FlowOverride> flowOverrides(String afterKey, int limit) {
        if (limit < 1 || limit > 1000) {
            throw new InvalidRunException("limit", "must be 1 to 1000, not " + limit);
        }
        try {
            return overrideStore.page(afterKey, limit);
        } catch (SQLException e) {
            throw new RunStoreException("reading the flow overrides failed: " + e.getMessage(), e);
        }
    }

    /** The schedules made by {@link #schedules}, whose schedulers {@link #close} stops. */
    private final List<Schedules> schedules = new java.util.concurrent.CopyOnWriteArrayList<>();
    private Schedules systemSchedules;

    /**
     * Recurring schedules of runs (docs/schedules.md), on the system clock. {@link Schedules#startScheduler()} starts
     * this process's scheduler; {@link #close} stops it.
     */
    public synchronized Schedules schedules() {
        if (systemSchedules == null) {
            systemSchedules = schedules(java.time.Clock.systemUTC());
        }
        return systemSchedules;
    }

    /**
     * {@link #schedules()} on another clock, which decides which fires are due: to simulate time, or to fire by a
     * clock of the application's. A new one each call; {@link #close} stops the scheduler of each.
     */
    public Schedules schedules(java.time.Clock clock) {
        Schedules s = new Schedules(store.dataSource(), config.schema(), this, Objects.requireNonNull(clock, "clock"));
        schedules.add(s);
        return s;
    }

    /** Starts sweeping every {@code sweepInterval}; see {@link #sweepOnce()}. */
    public synchronized void startSweeper() {
        if (sweeperLoop != null) {
            return;
        }
        sweeperLoop = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "runbus-runs-sweeper");
            t.setDaemon(true);
            return t;
        });
        relay = new OutboxRelay(store.dataSource(), bus, config, OUTBOX_POLL).start();
        long every = config.sweepInterval().toMillis();
        sweeperLoop.scheduleWithFixedDelay(() -> {
            // Anything that escapes ends a scheduled task for good, silently: report it and keep sweeping.
            try {
                sweepOnce();
            } catch (Throwable t) {
                log.error("sweep failed; will try again in {} ms", every, t);
            }
        }, every, every, TimeUnit.MILLISECONDS);
    }

    /**
     * One sweep now: marks runs of new dead letters failed, and republishes unfinished runs older than
     * {@code sweepThreshold} that have no live delivery. Skipped when another process is sweeping.
     *
     * @throws RunbusException   when Redis cannot say which runs are live (a timeout, a lost connection): the
     *                           sweep stops before it republishes anything
     * @throws RunStoreException when PostgreSQL fails
     */
    public SweepResult sweepOnce() {
        try {
            SweepResult r = sweeper.sweepOnce();
            meters.republished(r.republished());
            return r;
        } catch (SQLException e) {
            throw new RunStoreException("sweep failed: " + e.getMessage(), e);
        }
    }

    /** How many runs of this layer's schema are in each status; see {@link RunCounts}. */
    public RunCounts counts() {
        return RunCounts.read(store.dataSource(), config.schema());
    }

    /** The run a dead letter of this layer's topic triggered, if it is a run trigger. */
    public Optional<UUID> runOf(dev.runbus.DeadLetter deadLetter) {
        return deadLetter.topic().equals(config.topic()) ? Triggers.runIdOf(deadLetter.message()) : Optional.empty();
    }

    /**
     * The run whose trigger {@code message} is (a message of type {@code runbus.run}), by the run id it carries,
     * without a database: for a tool that must tell a run's dead letter (replayed through {@link #replay}) from a
     * plain one before it connects to PostgreSQL. {@link #runOf} also checks the topic.
     */
    public static Optional<UUID> runIdOf(dev.runbus.Message message) {
        return Triggers.TYPE.equals(message.type()) ? Triggers.runIdOf(message) : Optional.empty();
    }

    public RunsConfig config() {
        return config;
    }

    /** Stops the sweeper and the worker (gracefully: see {@link Subscription#close()}); the bus stays open. */
    @Override
    public synchronized void close() {
        schedules.forEach(Schedules::close); // no fire is made without a worker and relay to run it
        if (relay != null) {
            relay.close();
        }
        if (sweeperLoop != null) {
            sweeperLoop.shutdownNow();
            try {
                sweeperLoop.awaitTermination(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (worker != null) {
            worker.close(); // its dead letters, made while it drains, still reach the marker
        }
        try {
            listenerHandle.close(); // no new dead letters for the marker, which stops below
        } catch (Exception e) {
            log.debug("removing the listener failed", e);
        }
        if (ownedHandlers != null) {
            ownedHandlers.shutdownNow();
        }
        if (progress != null) {
            progress.close(); // after the worker: the last reports of its handlers are written
        }
        if (watch != null) {
            watch.close(); // after the worker: its handlers are told of cancels until they end
        }
        commits.close();
        marker.close();
        meters.close();
    }
}
