package dev.runbus.runs.internal.store;

import dev.runbus.runs.RunStatus;

/**
 * The SQL of run expiry (migration V017, {@code NewRun.expireAfter}), shared by the statements that find a run past
 * it: the attempt starts, which end such a run instead of starting it, and the sweeper, which ends those whose
 * triggers are late or lost. All by PostgreSQL's clock.
 */
public final class Expiry {

    private Expiry() {
    }

    /**
     * Whether the run aliased {@code alias} is pending past its expiry and never started: it will never start. Only a
     * first start is bounded: a replayed run is pending again, started before, and is not expired.
     */
    public static String overdue(String alias) {
        return "(" + alias + ".status = '" + RunStatus.PENDING.sql() + "' AND " + alias + ".started_at IS NULL"
                + " AND " + alias + ".expires_at IS NOT NULL AND " + alias + ".expires_at <= now())";
    }

    /** The error an expired run keeps, naming its expiry, for the row aliased {@code alias}. */
    public static String error(String alias) {
        return "'expired at ' || to_char(" + alias + ".expires_at AT TIME ZONE 'UTC',"
                + " 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') || ' before it started'";
    }
}
