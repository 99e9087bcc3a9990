-- Counts of finished runs, so that /metrics and `runbus stats` need not scan every run ever made (RunCounts).
-- ${schema} is replaced when applied.

-- Unfinished runs are counted from the runs table through runs_unfinished_idx (partial: pending and running
-- only, as small as the backlog). Finished runs only grow, so they are counted here: per status, in slots, so that
-- transactions finishing runs at once on different connections do not all wait for the lock of one row. The
-- count of a status is the sum of its slots.
CREATE TABLE IF NOT EXISTS ${schema}.run_counts (
    status TEXT    NOT NULL,
    slot   INTEGER NOT NULL,
    n      BIGINT  NOT NULL,
    PRIMARY KEY (status, slot)
);

-- A trigger rather than the statements that finish runs (completion, giving up, dead letter, replay): it sees
-- every change, written by this runbus or by hand, in the same transaction, so the counts stay exact. Once per
-- statement, from the transition tables: a group commit of 500 completions is one upsert, not 500. A statement
-- moves each row from its old status to its new one, so a status's change is (rows with it after) - (rows with it
-- before), without pairing the rows. It runs with the rights of its owner, the role that migrates (SECURITY
-- DEFINER, with a search path that cannot be turned against it): the runtime role may read the counts but not
-- write them, and needs no right on run_counts to write runs. A TRUNCATE of runs empties them.
CREATE OR REPLACE FUNCTION ${schema}.run_counts_track() RETURNS trigger LANGUAGE plpgsql
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        DELETE FROM ${schema}.run_counts;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO ${schema}.run_counts AS c (status, slot, n)
        SELECT status, pg_backend_pid() % 16, sum(d) FROM (
            SELECT status, 1 AS d FROM new_runs WHERE status IN ('done', 'failed')
            UNION ALL
            SELECT status, -1 AS d FROM old_runs WHERE status IN ('done', 'failed')) x
        GROUP BY status HAVING sum(d) <> 0
        ON CONFLICT (status, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO ${schema}.run_counts AS c (status, slot, n)
        SELECT status, pg_backend_pid() % 16, count(*) FROM new_runs WHERE status IN ('done', 'failed')
        GROUP BY status
        ON CONFLICT (status, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO ${schema}.run_counts AS c (status, slot, n)
        SELECT status, pg_backend_pid() % 16, -count(*) FROM old_runs WHERE status IN ('done', 'failed')
        GROUP BY status
        ON CONFLICT (status, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS run_counts_update ON ${schema}.runs;
CREATE TRIGGER run_counts_update AFTER UPDATE ON ${schema}.runs
    REFERENCING OLD TABLE AS old_runs NEW TABLE AS new_runs
    FOR EACH STATEMENT EXECUTE FUNCTION ${schema}.run_counts_track();
DROP TRIGGER IF EXISTS run_counts_insert ON ${schema}.runs;
CREATE TRIGGER run_counts_insert AFTER INSERT ON ${schema}.runs
    REFERENCING NEW TABLE AS new_runs
    FOR EACH STATEMENT EXECUTE FUNCTION ${schema}.run_counts_track();
DROP TRIGGER IF EXISTS run_counts_delete ON ${schema}.runs;
CREATE TRIGGER run_counts_delete AFTER DELETE ON ${schema}.runs
    REFERENCING OLD TABLE AS old_runs
    FOR EACH STATEMENT EXECUTE FUNCTION ${schema}.run_counts_track();

DROP TRIGGER IF EXISTS run_counts_truncate ON ${schema}.runs;
CREATE TRIGGER run_counts_truncate AFTER TRUNCATE ON ${schema}.runs
    FOR EACH STATEMENT EXECUTE FUNCTION ${schema}.run_counts_track();

-- The runs finished before this migration, counted once. CREATE TRIGGER above locked the table against writes
-- until this transaction commits, so no run finishes between the triggers and this count. On a large table
-- that count holds writes to runs off for as long as it takes: apply this migration at a quiet time.
DELETE FROM ${schema}.run_counts;
INSERT INTO ${schema}.run_counts (status, slot, n)
    SELECT status, 0, count(*) FROM ${schema}.runs WHERE status IN ('done', 'failed') GROUP BY status;
