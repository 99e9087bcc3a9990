package dev.runbus.runs.internal.store;

import dev.runbus.runs.NewRun;
import dev.runbus.runs.RecordedEffect;
import dev.runbus.runs.Reply;
import dev.runbus.runs.Run;
import dev.runbus.runs.RunStatus;
import dev.runbus.runs.StoredReply;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * The SQL of a run's submission, completion and reads (its attempt starts are in {@code RunAttempts} and
 * {@code OrderedAttempts}, its failures and replays in {@code RunFailures}, the sweeper's statements in
 * {@code SweeperStore}). Each status change is written as
 * {@code UPDATE ... WHERE status IN (legal sources)} with the sources taken from {@link RunStatus}, so an
 * illegal transition changes no row.
 */
public final class RunStore {

    /** Who holds an idempotency key. */
    public record KeyOwner(UUID runId, String bodyHash, RunStatus status) {
    }

    /** A run as an attempt starts it. */
    public record Attempt(UUID runId, String idempotencyKey, String sessionId, String userId, String input,
                          int attempt, java.time.Duration timeout) {

        /** An attempt without a timeout of its run's own. */
        public Attempt(UUID runId, String idempotencyKey, String sessionId, String userId, String input,
                       int attempt) {
            this(runId, idempotencyKey, sessionId, userId, input, attempt, null);
        }

        /** The run's own timeout (its {@code timeout_ms} column), null for none. */
        public static java.time.Duration timeoutOf(ResultSet rs, int column) throws SQLException {
            long ms = rs.getLong(column);
            return rs.wasNull() ? null : java.time.Duration.ofMillis(ms);
        }
    }

    private final DataSource dataSource;
    private final String schema;
    private final String runs;
    private final String messages;
    private final boolean ordered;
    private final TimedReads reads;
    private final String insertSql;
    private final String lookupSql;
    private final String completeSql;

    public RunStore(DataSource dataSource, String schema) {
        this(dataSource, schema, false);
    }

    /**
     * @param ordered runs in per-user order: each insert first locks its users (see {@link #insertAll}), so that
     *                within one user submission numbers follow commit order
     */
    public RunStore(DataSource dataSource, String schema, boolean ordered) {
        this(dataSource, schema, ordered, Duration.ZERO);
    }

    /** @param readTimeout how long each of the callers' reads (get, replies, effects) may take; zero: no limit */
    public RunStore(DataSource dataSource, String schema, boolean ordered, Duration readTimeout) {
        this.dataSource = AutoCommitDataSource.of(dataSource);
        this.reads = new TimedReads(this.dataSource, readTimeout);
        this.schema = schema;
        this.runs = schema + ".runs";
        this.messages = schema + ".messages";
        this.insertSql = "INSERT INTO " + runs
                + " (id, idempotency_key, input_hash, session_id, user_id, input, status, next_attempt_at, flow_key,"
                + " priority, flow_sub_key, expires_at, timeout_ms)"
                + " SELECT u.id, u.k, u.h, u.s, u.u, u.i, u.st, now() + u.delay_ms * interval '1 millisecond', u.f,"
                + " u.p, u.fs, now() + u.expire_ms * interval '1 millisecond', u.timeout_ms"
                + " FROM unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[],"
                + " ?::text[], ?::bigint[], ?::text[], ?::smallint[], ?::text[], ?::bigint[], ?::bigint[])"
                + " AS u(id, k, h, s, u, i, st, delay_ms, f, p, fs, expire_ms, timeout_ms)"
                + " ON CONFLICT (idempotency_key) DO NOTHING RETURNING idempotency_key, id";
        this.lookupSql = "SELECT idempotency_key, id, input_hash, status FROM " + runs
                + " WHERE idempotency_key = ANY (?)";
        // A run whose cancel was asked for while its handler worked (V016) ends cancelled, its replies kept.
        this.completeSql = "WITH done AS (UPDATE " + runs + " SET status = CASE WHEN cancel_requested_at IS NULL"
                + " THEN ? ELSE '" + RunStatus.CANCELLED.sql() + "' END, error = NULL,"
                + " next_attempt_at = NULL, finished_at = now(), updated_at = now()"
                + " WHERE id = ANY (?::uuid[]) AND " + statusIn("status", RunStatus.DONE)
                + " RETURNING id, (extract(epoch FROM finished_at - created_at) * 1000000)::bigint AS micros,"
                + " status),"
                + " replies AS (INSERT INTO " + messages + " (run_id, seq, role, content)"
                + " SELECT r.run_id, r.seq, r.role, r.content"
                + " FROM unnest(?::uuid[], ?::int[], ?::text[], ?::text[]) AS r(run_id, seq, role, content)"
                + " WHERE r.run_id IN (SELECT id FROM done) ON CONFLICT (run_id, seq) DO NOTHING)"
                + " SELECT id, micros, status FROM done";
        this.ordered = ordered;
    }

    public DataSource dataSource() {
        return dataSource;
    }

    public String schema() {
        return schema;
    }

    // ------------------------------------------------------------------ submit (guard 1)

    /**
     * One submission for {@link #insertAll}.
     *
     * @param delay how long until the run's trigger is due (its {@code next_attempt_at}, by PostgreSQL's clock), or
     *              null to publish it at once
     */
    public record Insert(UUID id, String key, String bodyHash, NewRun run, java.time.Duration delay) {

        public Insert(UUID id, String key, String bodyHash, NewRun run) {
            this(id, key, bodyHash, run, null);
        }
    }

    /**
     * What one insert found: the run holding its key and whether this insert created it; or, when the lookup of a
     * key that conflicted failed, why that is not known ({@code owner} null). Inserts created by the same call
     * know their outcome whatever became of the lookup.
     */
    public record Inserted(KeyOwner owner, boolean created, SQLException failure) {

        static Inserted of(KeyOwner owner, boolean created) {
            return new Inserted(owner, created, null);
        }

        static Inserted unknown(SQLException failure) {
            return new Inserted(null, false, failure);
        }
    }

    /**
     * Inserts many runs in one statement ({@code ON CONFLICT (idempotency_key) DO NOTHING}) and returns, per
     * insert in order, the run that now holds its key: the new one or the one that held it already. An insert
     * counts as created when the run holding its key is the one it carries ({@link Insert#id()}): so two inserts
     * with one key in the same call, the first creates and the second finds it; and a retry of an insert that
     * was committed before its call failed is still reported as created, so that its trigger gets published.
     *
     * <p>Unordered runs: the insert is one statement in auto-commit, one round trip; the keys that conflicted, if
     * any, are then looked up in a statement of their own, which sees every run committed before it. If that
     * lookup fails, the inserts it was for fail ({@link Inserted#failure()}) and the ones that created their runs
     * still report them: those runs are committed, and a caller told otherwise would submit them again.
     *
     * <p>Ordered runs: one transaction that first takes a lock per user of the batch (advisory, released at
     * commit), so a failure anywhere undoes the whole call. Without the locks, two processes submitting for one
     * user could commit out of number order: the later-numbered run, committed first, would find no earlier run and
     * start, and the earlier one, committed after, would find none either. With them, a run's number is drawn only
     * after every earlier-numbered run of its user is committed, so the order check in {@code OrderedAttempts} sees
     * all of them.
     *
     * @throws SQLException when the insert failed (nothing is committed), or for ordered runs anything failed
     */
    public List<Inserted> insertAll(List<Insert> inserts) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            if (!ordered) {
                return insertAll(c, inserts);
            }
            return Transactions.in(c, tx -> {
                lockUsers(tx, inserts);
                List<Inserted> out = insertAll(tx, inserts);
                for (Inserted in : out) {
                    if (in.failure() != null) {
                        throw in.failure();
                    }
                }
                return out;
            });
        }
    }

    private List<Inserted> insertAll(Connection c, List<Insert> inserts) throws SQLException {
        java.util.Map<String, UUID> created = new java.util.HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(insertSql)) {
            int n = inserts.size();
            Object[] ids = new Object[n];
            String[] keys = new String[n];
            String[] hashes = new String[n];
            String[] sessions = new String[n];
            String[] users = new String[n];
            String[] inputs = new String[n];
            String[] statuses = new String[n];
            Long[] delays = new Long[n];
            String[] flowKeys = new String[n];
            Short[] priorities = new Short[n];
            String[] subKeys = new String[n];
            Long[] expiries = new Long[n];
            Long[] timeouts = new Long[n];
            for (int i = 0; i < n; i++) {
                Insert in = inserts.get(i);
                ids[i] = in.id();
                keys[i] = in.key();
                hashes[i] = in.bodyHash();
                sessions[i] = in.run().sessionId();
                users[i] = in.run().userId();
                inputs[i] = in.run().input();
                statuses[i] = RunStatus.PENDING.sql();
                delays[i] = in.delay() == null ? null : in.delay().toMillis();
                flowKeys[i] = in.run().flowKey();
                priorities[i] = in.run().priority() == dev.runbus.Message.DEFAULT_PRIORITY ? null
                        : (short) in.run().priority();
                subKeys[i] = in.run().flowSubKey();
                expiries[i] = in.run().expireAfter() == null ? null : in.run().expireAfter().toMillis();
                timeouts[i] = in.run().timeout() == null ? null : in.run().timeout().toMillis();
            }
            ps.setArray(1, c.createArrayOf("uuid", ids));
            ps.setArray(2, c.createArrayOf("text", keys));
            ps.setArray(3, c.createArrayOf("text", hashes));
            ps.setArray(4, c.createArrayOf("text", sessions));
            ps.setArray(5, c.createArrayOf("text", users));
            ps.setArray(6, c.createArrayOf("text", inputs));
            ps.setArray(7, c.createArrayOf("text", statuses));
            ps.setArray(8, c.createArrayOf("bigint", delays));
            ps.setArray(9, c.createArrayOf("text", flowKeys));
            ps.setArray(10, c.createArrayOf("smallint", priorities));
            ps.setArray(11, c.createArrayOf("text", subKeys));
            ps.setArray(12, c.createArrayOf("bigint", expiries));
            ps.setArray(13, c.createArrayOf("bigint", timeouts));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    created.put(rs.getString(1), rs.getObject(2, UUID.class));
                }
            }
        }
        java.util.Map<String, KeyOwner> existing = new java.util.HashMap<>();
        SQLException lookupFailed = null;
        List<String> missing = inserts.stream().map(Insert::key).filter(k -> !created.containsKey(k)).toList();
        if (!missing.isEmpty()) {
            try (PreparedStatement ps = c.prepareStatement(lookupSql)) {
                ps.setArray(1, c.createArrayOf("text", missing.toArray()));
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        existing.put(rs.getString(1), new KeyOwner(rs.getObject(2, UUID.class), rs.getString(3),
                                RunStatus.fromSql(rs.getString(4))));
                    }
                }
            } catch (SQLException e) {
                if (ordered) {
                    throw e; // in the transaction: nothing of it may commit
                }
                lookupFailed = e;
            }
        }
        java.util.Map<UUID, String> hashOf = new java.util.HashMap<>();
        inserts.forEach(in -> hashOf.put(in.id(), in.bodyHash()));
        List<Inserted> out = new ArrayList<>(inserts.size());
        for (Insert in : inserts) {
            UUID newId = created.get(in.key());
            KeyOwner owner = newId != null ? new KeyOwner(newId, hashOf.get(newId), RunStatus.PENDING)
                    : existing.get(in.key());
            if (owner != null) {
                out.add(Inserted.of(owner, owner.runId().equals(in.id())));
            } else if (lookupFailed != null) {
                out.add(Inserted.unknown(lookupFailed));
            } else {
                out.add(Inserted.unknown(new SQLException("idempotency key " + in.key()
                        + " conflicted but no run holds it")));
            }
        }
        return out;
    }

    /** Transaction locks on the batch's users, taken in one order (by hash) so that two batches cannot deadlock. */
    private void lockUsers(Connection c, List<Insert> inserts) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_xact_lock(hashtext(?), s.k)"
                + " FROM (SELECT DISTINCT hashtext(u) AS k FROM unnest(?::text[]) AS u ORDER BY 1) s")) {
            ps.setString(1, "runbus.user." + runs);
            ps.setArray(2, c.createArrayOf("text", inserts.stream().map(i -> i.run().userId()).toArray()));
            ps.execute();
        }
    }

    // ------------------------------------------------------------------ attempts: see RunAttempts, OrderedAttempts

    /** One completion, for {@link #completeAll}. */
    public record Completion(UUID runId, List<Reply> replies) {
    }

    /**
     * What one completion did: whether it completed its run, and if so how long after its submission (PostgreSQL's
     * clock at both ends) and whether it ended cancelled (a cancel was asked for while its handler worked) rather
     * than done.
     */
    public record Completed(boolean completed, java.time.Duration sinceSubmit, boolean cancelled) {

        public Completed(boolean completed, java.time.Duration sinceSubmit) {
            this(completed, sinceSubmit, false);
        }
    }

    /**
     * Completes many runs in one statement, so in one transaction: runs still running are set done, and the
     * replies of exactly those runs are inserted {@code ON CONFLICT (run_id, seq) DO NOTHING} (guard 2). The
     * UPDATE locks each run's row: a second execution that finishes later waits, then finds the run done,
     * updates nothing and so inserts nothing — replies are never a mix of two executions. One result per
     * completion, in order: whether it completed its run, and when so, how long after its submission.
     */
    public List<Completed> completeAll(List<Completion> completions) throws SQLException {
        // The first completion of a run in this call is the one whose replies count.
        java.util.Map<UUID, Completion> first = new java.util.LinkedHashMap<>();
        completions.forEach(done -> first.putIfAbsent(done.runId(), done));
        List<Object> replyRuns = new ArrayList<>();
        List<Object> replySeqs = new ArrayList<>();
        List<Object> replyRoles = new ArrayList<>();
        List<Object> replyContents = new ArrayList<>();
        for (Completion done : first.values()) {
            int seq = 1;
            for (Reply r : done.replies()) {
                replyRuns.add(done.runId());
                replySeqs.add(seq++);
                replyRoles.add(r.role());
                replyContents.add(r.content());
            }
        }
        java.util.Map<UUID, Completed> completed = new java.util.HashMap<>();
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = planEachExecution(c.prepareStatement(completeSql))) {
            ps.setString(1, RunStatus.DONE.sql());
            ps.setArray(2, c.createArrayOf("uuid", first.keySet().toArray()));
            ps.setArray(3, c.createArrayOf("uuid", replyRuns.toArray()));
            ps.setArray(4, c.createArrayOf("int4", replySeqs.toArray()));
            ps.setArray(5, c.createArrayOf("text", replyRoles.toArray()));
            ps.setArray(6, c.createArrayOf("text", replyContents.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    completed.put(rs.getObject(1, UUID.class), new Completed(true,
                            java.time.Duration.ofNanos(rs.getLong(2) * 1000),
                            RunStatus.CANCELLED.sql().equals(rs.getString(3))));
                }
            }
        }
        List<Completed> out = new ArrayList<>(completions.size());
        for (Completion done : completions) {
            Completed c = completed.remove(done.runId());
            out.add(c != null ? c : new Completed(false, null));
        }
        return out;
    }

    /** The statement of {@link #completeAll}, for tests of its plan. */
    public String completeSql() {
        return completeSql;
    }

    /** Records where a delayed run's trigger waits in the delay set (for {@code Runs.cancel}). */
    public void scheduled(UUID id, String scheduledId) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("UPDATE " + runs + " SET scheduled_id = ? WHERE id = ?")) {
            ps.setString(1, scheduledId);
            ps.setObject(2, id);
            ps.executeUpdate();
        }
    }

    // ------------------------------------------------------------------ reads

    public Optional<Run> get(UUID id) throws SQLException {
        return reads.read(c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT " + RunRows.COLUMNS
                    + " FROM " + runs + " WHERE id = ?")) {
                ps.setObject(1, id);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        return Optional.empty();
                    }
                    return Optional.of(RunRows.read(rs));
                }
            }
        });
    }

    public List<StoredReply> replies(UUID id) throws SQLException {
        return repliesAfter(id, 0);
    }

    /** Replies with {@code seq} above {@code afterSeq}, in order (the unique (run_id, seq) index serves it). */
    public List<StoredReply> repliesAfter(UUID id, int afterSeq) throws SQLException {
        return reads.read(c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT seq, role, content, created_at FROM " + messages
                    + " WHERE run_id = ? AND seq > ? ORDER BY seq")) {
                ps.setObject(1, id);
                ps.setInt(2, afterSeq);
                List<StoredReply> out = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(new StoredReply(rs.getInt(1), rs.getString(2), rs.getString(3),
                                rs.getTimestamp(4).toInstant()));
                    }
                }
                return out;
            }
        });
    }

    /** The run's recorded effects, in the order they were initiated. */
    public List<RecordedEffect> effects(UUID id) throws SQLException {
        return reads.read(c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT name, idempotency_key, result, initiated_at,"
                    + " completed_at FROM " + schema + ".run_effects WHERE run_id = ? ORDER BY initiated_at, name")) {
                ps.setObject(1, id);
                List<RecordedEffect> out = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        java.sql.Timestamp completed = rs.getTimestamp(5);
                        out.add(new RecordedEffect(rs.getString(1), rs.getString(2),
                                completed == null ? Optional.empty() : Optional.ofNullable(rs.getString(3)),
                                rs.getTimestamp(4).toInstant(),
                                completed == null ? Optional.empty() : Optional.of(completed.toInstant())));
                    }
                }
                return out;
            }
        });
    }

    public static String sources(RunStatus target) {
        return RunStatus.sourcesOf(target).stream().map(s -> "'" + s.sql() + "'").collect(Collectors.joining(", "));
    }

    /**
     * The legal-source test of a status change for rows a statement finds by primary key: {@code column} is in the
     * sources of {@code target}, written as an expression no index covers ({@code column || ''}). Written plainly,
     * the test matches the predicate of runs_unfinished_idx (pending, running) or the first column of
     * runs_status_created_idx, and PostgreSQL's generic plan ANDs a full scan of that index with the primary key's
     * lookup. Every run passes through pending and running, so those index ranges hold an entry per run ever
     * started until vacuum removes it, which the planner does not count: on a table of 20,000 runs an attempt start
     * of a few runs read 40,000 index entries (3 ms) instead of its few rows by key (0.07 ms).
     */
    public static String statusIn(String column, RunStatus target) {
        return "(" + column + " || '') IN (" + sources(target) + ")";
    }

    /**
     * Has PostgreSQL plan the statement at each execution, for its ids and the table as it is then, instead of
     * pgjdbc preparing it on the server after a few executions, where the plan made once is kept. A plan made while
     * the table was small scans it whole, and a table of runs grows fast from empty: until autovacuum's next ANALYZE,
     * on a fresh table at 2,000 runs/s, every completion and attempt start read the table (20,000 rows a scan after
     * ten seconds). Planning costs a fraction of a millisecond per statement, and these run once per group commit,
     * not per run. Statements of another driver are left as they are.
     */
    public static PreparedStatement planEachExecution(PreparedStatement ps) throws SQLException {
        if (ps.isWrapperFor(org.postgresql.PGStatement.class)) {
            ps.unwrap(org.postgresql.PGStatement.class).setPrepareThreshold(0);
        }
        return ps;
    }

    /**
     * A run's priority from column {@code column} of {@code rs}: NULL (the default, or a run from before) is 4, and
     * so is a value no run can have (written by hand), so that its trigger can still be built.
     */
    public static int priorityOf(ResultSet rs, int column) throws SQLException {
        short p = rs.getShort(column);
        return rs.wasNull() || p < dev.runbus.Message.MIN_PRIORITY || p > dev.runbus.Message.MAX_PRIORITY
                ? dev.runbus.Message.DEFAULT_PRIORITY : p;
    }

    /**
     * A run's flow key, priority and sub-key from columns {@code column} to {@code column + 2} of {@code rs}
     * ({@code flow_key, priority, flow_sub_key}). A sub-key no run can have (written by hand) is left out, as a bad
     * priority is, so that the run's trigger can still be built: it only orders the key's waiting runs.
     */
    public static RunFlow flowOf(ResultSet rs, int column) throws SQLException {
        String subKey = rs.getString(column + 2);
        if (subKey != null) {
            try {
                dev.runbus.Message.checkFlowKey(subKey);
            } catch (IllegalArgumentException notASubKey) {
                subKey = null;
            }
        }
        return new RunFlow(rs.getString(column), priorityOf(rs, column + 1), subKey);
    }
}
