-- Cancelled runs (Runs.cancel): a status a pending run can take instead of starting, final like done and failed.
-- ${schema} is replaced when applied.

-- The check of V001, named by PostgreSQL, widened by one status. NOT VALID: every existing row passed the
-- narrower check, so reading the whole table again would prove nothing. ALTER TABLE locks runs (reads too) until
-- this transaction commits, a moment since nothing is scanned; no run changes while the counting function below
-- is replaced.
ALTER TABLE ${schema}.runs DROP CONSTRAINT IF EXISTS runs_status_check;
ALTER TABLE ${schema}.runs ADD CONSTRAINT runs_status_check
    CHECK (status IN ('pending', 'running', 'done', 'failed', 'cancelled')) NOT VALID;

-- Cancelled runs are counted like done and failed ones, by the trigger function of V004 and V005 (no run is
-- cancelled before this migration, so there is nothing to count once). They are outside runs_unfinished_idx,
-- whose predicate is (pending, running): the sweeper never looks at them and they are not counted unfinished.
CREATE OR REPLACE FUNCTION ${schema}.run_counts_track() RETURNS trigger LANGUAGE plpgsql
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        DELETE FROM ${schema}.run_counts;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO ${schema}.run_counts AS c (status, slot, n)
        SELECT status, pg_backend_pid() % 16, sum(d) FROM (
            SELECT status, 1 AS d FROM new_runs WHERE status IN ('done', 'failed', 'cancelled')
            UNION ALL
            SELECT 'failed-without-dead-letter', 1 FROM new_runs WHERE status = 'failed' AND dead_letter_id IS NULL
            UNION ALL
            SELECT status, -1 AS d FROM old_runs WHERE status IN ('done', 'failed', 'cancelled')
            UNION ALL
            SELECT 'failed-without-dead-letter', -1 FROM old_runs WHERE status = 'failed' AND dead_letter_id IS NULL
        ) x
        GROUP BY status HAVING sum(d) <> 0
        ON CONFLICT (status, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO ${schema}.run_counts AS c (status, slot, n)
        SELECT status, pg_backend_pid() % 16, count(*) FROM (
            SELECT status FROM new_runs WHERE status IN ('done', 'failed', 'cancelled')
            UNION ALL
            SELECT 'failed-without-dead-letter' FROM new_runs WHERE status = 'failed' AND dead_letter_id IS NULL
        ) x
        GROUP BY status
        ON CONFLICT (status, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO ${schema}.run_counts AS c (status, slot, n)
        SELECT status, pg_backend_pid() % 16, -count(*) FROM (
            SELECT status FROM old_runs WHERE status IN ('done', 'failed', 'cancelled')
            UNION ALL
            SELECT 'failed-without-dead-letter' FROM old_runs WHERE status = 'failed' AND dead_letter_id IS NULL
        ) x
        GROUP BY status
        ON CONFLICT (status, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    END IF;
    RETURN NULL;
END
$$;
