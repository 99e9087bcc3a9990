package dev.runbus.runs.internal.worker;

import dev.runbus.runs.RunStatus;
import dev.runbus.runs.internal.store.Expiry;
import dev.runbus.runs.internal.store.RunStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The start of attempts of unordered runs, capped by PostgreSQL's count. Redis counts deliveries per stream
 * entry, and loses them with its data: a trigger the sweeper republishes after a restart without persistence, a
 * failover or a FLUSHALL starts a new count. So the cap on executions is the run's {@code attempts} column
 * (counted since its last replay, migration V003): a run that already had {@code maxDeliveries} attempts is not
 * executed again but failed, in the same statement that would have started it, with an error that says so and
 * keeps the last handler error.
 *
 * <p>Every trigger that starts an attempt counts, duplicates included. So a duplicate trigger arriving while the
 * run's last allowed attempt still executes fails the run too, and that attempt's completion then finds it failed
 * (its replies are not kept). Waiting for that attempt instead would need to know whether it is live, which only
 * Redis knows, and Redis is what this cap does not trust.
 */
public final class RunAttempts {

    /**
     * One attempt to start: the run a trigger names, and the trigger's stream entry. {@code alone} for the bus's one
     * more delivery of a trigger started {@code maxDeliveries} times without an outcome, which runs alone among its
     * bus's handlers (a process that died beside another's poison counted a start of it): it may start the run once
     * more than {@code maxDeliveries}.
     */
    public record Request(UUID runId, String streamId, boolean alone) {

        public Request(UUID runId, String streamId) {
            this(runId, streamId, false);
        }
    }

    /** What one request found. */
    public sealed interface Start permits Started, GaveUp, NothingToDo {
    }

    /** The attempt started: the run is running, with one more attempt. */
    public record Started(RunStore.Attempt attempt) implements Start {
    }

    /** The run had used its attempts: it is failed now, with {@code reason} as its error; nothing runs. */
    public record GaveUp(UUID runId, String reason) implements Start {
    }

    /**
     * Nothing to do: the run is done, failed, cancelled or unknown (the short-circuit), or it had a cancel request
     * and is cancelled now, or this request is one more trigger of a run in the same call beyond its remaining
     * attempts.
     */
    public record NothingToDo() implements Start {
    }

    private static final NothingToDo NOTHING = new NothingToDo();


    private final DataSource dataSource;
    private final int maxDeliveries;
    private final String sql;

    public RunAttempts(DataSource dataSource, String schema, int maxDeliveries) {
        if (maxDeliveries < 1) {
            throw new IllegalArgumentException("maxDeliveries must be at least 1, got " + maxDeliveries);
        }
        this.dataSource = dataSource;
        this.maxDeliveries = maxDeliveries;
        String runs = schema + ".runs";
        String used = "(x.attempts - x.attempts_at_replay)";
        // The subquery locks the rows (in id order, so two batches cannot deadlock) and reads their current
        // attempts, so the grant is computed on the row it updates; RETURNING then hands the grant back.
        // A run named n times in one call gets up to n attempts, as many as it has left: maxDeliveries, one more
        // for a trigger that runs alone (its cap).
        // A run with a cancel request (its attempt's worker died while it was cancelling) is granted nothing and
        // ends cancelled here instead of running again; a pending run past its expiry ends expired (V016, V017).
        this.sql = "UPDATE " + runs + " r SET"
                + " status = CASE WHEN g.cancelled THEN '" + RunStatus.CANCELLED.sql() + "'"
                + " WHEN g.expired THEN '" + RunStatus.EXPIRED.sql() + "'"
                + " WHEN g.granted > 0 THEN '" + RunStatus.RUNNING.sql() + "' ELSE '"
                + RunStatus.FAILED.sql() + "' END,"
                + " attempts = r.attempts + GREATEST(g.granted, 0),"
                + " stream_id = CASE WHEN g.granted > 0 THEN g.stream_id ELSE r.stream_id END,"
                + " error = CASE WHEN g.granted > 0 OR g.cancelled THEN r.error"
                + " WHEN g.expired THEN " + Expiry.error("r") + " ELSE g.gave_up END,"
                + " started_at = CASE WHEN g.granted > 0 THEN COALESCE(r.started_at, now()) ELSE r.started_at END,"
                + " finished_at = CASE WHEN g.granted > 0 THEN r.finished_at ELSE now() END,"
                + " next_attempt_at = NULL, updated_at = now()"
                + " FROM (SELECT x.id, x.status, v.stream_id, x.cancel_requested_at IS NOT NULL AS cancelled,"
                + " " + Expiry.overdue("x") + " AS expired,"
                + " CASE WHEN x.cancel_requested_at IS NULL AND NOT " + Expiry.overdue("x")
                + " THEN LEAST(v.n, v.cap - " + used + ") ELSE 0 END AS granted,"
                + " 'gave up after ' || " + used + " || ' attempts (maxDeliveries " + maxDeliveries + ")'"
                + " || COALESCE('; last error: ' || x.error, '') AS gave_up"
                + " FROM " + runs + " x JOIN (SELECT id, max(stream_id) AS stream_id, count(*) AS n, max(cap) AS cap"
                + " FROM unnest(?::uuid[], ?::text[], ?::int[]) AS u(id, stream_id, cap) GROUP BY id) v"
                + " ON x.id = v.id"
                // id = ANY lets the planner use the primary key; the join alone scans the table. The status test
                // is one no index covers (see statusIn).
                + " WHERE x.id = ANY (?::uuid[]) AND " + RunStore.statusIn("x.status", RunStatus.RUNNING)
                + " ORDER BY x.id FOR UPDATE OF x) g"
                + " WHERE r.id = g.id AND (g.granted > 0 OR g.cancelled OR g.expired"
                + " OR g.status IN (" + RunStore.sources(RunStatus.FAILED) + "))"
                + " RETURNING r.id, r.idempotency_key, r.session_id, r.user_id, r.input, r.attempts, g.granted,"
                + " r.error, g.cancelled OR g.expired, r.timeout_ms";
    }

    /** The statement of {@link #start}, for tests of its plan. */
    String sql() {
        return sql;
    }

    public int maxDeliveries() {
        return maxDeliveries;
    }

    /**
     * pending|running → running with one more attempt, remembering the stream entry of this attempt, for many
     * runs in one statement; or running → failed for a run out of attempts. One result per request, in order.
     */
    public List<Start> start(List<Request> requests) throws SQLException {
        Map<UUID, Row> rows = new HashMap<>();
        Map<UUID, String> newest = newestEntryPerRun(requests);
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = RunStore.planEachExecution(c.prepareStatement(sql))) {
            Object[] ids = new Object[requests.size()];
            String[] streams = new String[requests.size()];
            Integer[] caps = new Integer[requests.size()];
            for (int i = 0; i < requests.size(); i++) {
                ids[i] = requests.get(i).runId();
                streams[i] = newest.get(requests.get(i).runId());
                caps[i] = requests.get(i).alone() ? maxDeliveries + 1 : maxDeliveries;
            }
            ps.setArray(1, c.createArrayOf("uuid", ids));
            ps.setArray(2, c.createArrayOf("text", streams));
            ps.setArray(3, c.createArrayOf("int4", caps));
            ps.setArray(4, c.createArrayOf("uuid", ids));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    UUID id = rs.getObject(1, UUID.class);
                    rows.put(id, new Row(new RunStore.Attempt(id, rs.getString(2), rs.getString(3), rs.getString(4),
                            rs.getString(5), rs.getInt(6), RunStore.Attempt.timeoutOf(rs, 10)), rs.getInt(7),
                            rs.getString(8), rs.getBoolean(9)));
                }
            }
        }
        return handOut(requests, rows);
    }

    /**
     * What the statement returned for one run: its last attempt, how many it was granted, its error, and whether
     * it ended instead (cancelled: it had a cancel request; expired: it was pending past its expiry).
     */
    private record Row(RunStore.Attempt last, int granted, String error, boolean cancelled) {
    }

    /**
     * The granted attempts of a run go to its requests with the newest entries (so the entry the run now names
     * is one that executes), numbered in request order; a run that gave up reports it once.
     */
    private static List<Start> handOut(List<Request> requests, Map<UUID, Row> rows) {
        Map<UUID, Set<Integer>> executing = new HashMap<>();
        Map<UUID, List<Integer>> byRun = new HashMap<>();
        for (int i = 0; i < requests.size(); i++) {
            byRun.computeIfAbsent(requests.get(i).runId(), k -> new ArrayList<>()).add(i);
        }
        byRun.forEach((run, indexes) -> {
            Row row = rows.get(run);
            if (row == null || row.granted() <= 0) {
                return;
            }
            List<Integer> newestFirst = new ArrayList<>(indexes);
            newestFirst.sort(Comparator.comparing((Integer i) -> requests.get(i).streamId(), StreamIds::compare)
                    .reversed());
            executing.put(run, new HashSet<>(newestFirst.subList(0, Math.min(row.granted(), newestFirst.size()))));
        });
        List<Start> out = new ArrayList<>(requests.size());
        Map<UUID, Integer> handed = new HashMap<>();
        Set<UUID> reported = new HashSet<>();
        for (int i = 0; i < requests.size(); i++) {
            UUID run = requests.get(i).runId();
            Row row = rows.get(run);
            if (row == null || row.cancelled()) {
                out.add(NOTHING);
            } else if (row.granted() <= 0) {
                out.add(reported.add(run) ? new GaveUp(run, row.error()) : NOTHING);
            } else if (executing.get(run).contains(i)) {
                int k = handed.merge(run, 1, Integer::sum);
                RunStore.Attempt last = row.last();
                out.add(new Started(new RunStore.Attempt(run, last.idempotencyKey(), last.sessionId(), last.userId(),
                        last.input(), last.attempt() - row.granted() + k, last.timeout())));
            } else {
                out.add(NOTHING);
            }
        }
        return out;
    }

    /**
     * The newest stream entry of each run named in {@code requests}: it is the run's current attempt. Chosen
     * here rather than in the statement, where ordering an aggregate halves the worker's throughput.
     */
    static Map<UUID, String> newestEntryPerRun(List<Request> requests) {
        Map<UUID, String> newest = new HashMap<>();
        for (Request r : requests) {
            newest.merge(r.runId(), r.streamId(), (a, b) -> StreamIds.compare(a, b) >= 0 ? a : b);
        }
        return newest;
    }
}
