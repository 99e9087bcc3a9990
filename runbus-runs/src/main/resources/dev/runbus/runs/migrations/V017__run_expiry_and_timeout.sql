-- Expiry and execution timeouts of runs (NewRun.withExpireAfter, NewRun.withTimeout; docs/runs.md "Timeouts and
-- expiry"). ${schema} is replaced when applied.
--
-- expires_at: a run still pending at this time (PostgreSQL's clock) is never started: its next trigger, or the
-- sweeper, makes it expired, final like done, failed and cancelled. timeout_ms: how long one attempt's handler may
-- run before it is told to stop and, after the cancel grace, interrupted; the attempt then fails as any other.
-- Nullable, without defaults: adding them changes the catalog only, no row is rewritten.
ALTER TABLE ${schema}.runs ADD COLUMN IF NOT EXISTS expires_at timestamptz;
ALTER TABLE ${schema}.runs ADD COLUMN IF NOT EXISTS timeout_ms bigint;

-- The check of V007 widened by one status. NOT VALID: every existing row passed the narrower check. Expired runs are
-- outside runs_unfinished_idx (pending, running): the sweeper never looks at them again and they are not counted
-- unfinished.
ALTER TABLE ${schema}.runs DROP CONSTRAINT IF EXISTS runs_status_check;
ALTER TABLE ${schema}.runs ADD CONSTRAINT runs_status_check
    CHECK (status IN ('pending', 'running', 'done', 'failed', 'cancelled', 'expired')) NOT VALID;

-- Expired runs are counted like the other finished ones (no run is expired before this migration).
CREATE OR REPLACE FUNCTION ${schema}.run_counts_track() RETURNS trigger LANGUAGE plpgsql
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        DELETE FROM ${schema}.run_counts;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO ${schema}.run_counts AS c (status, slot, n)
        SELECT status, pg_backend_pid() % 16, sum(d) FROM (
            SELECT status, 1 AS d FROM new_runs WHERE status IN ('done', 'failed', 'cancelled', 'expired')
            UNION ALL
            SELECT 'failed-without-dead-letter', 1 FROM new_runs WHERE status = 'failed' AND dead_letter_id IS NULL
            UNION ALL
            SELECT status, -1 AS d FROM old_runs WHERE status IN ('done', 'failed', 'cancelled', 'expired')
            UNION ALL
            SELECT 'failed-without-dead-letter', -1 FROM old_runs WHERE status = 'failed' AND dead_letter_id IS NULL
        ) x
        GROUP BY status HAVING sum(d) <> 0
        ON CONFLICT (status, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO ${schema}.run_counts AS c (status, slot, n)
        SELECT status, pg_backend_pid() % 16, count(*) FROM (
            SELECT status FROM new_runs WHERE status IN ('done', 'failed', 'cancelled', 'expired')
            UNION ALL
            SELECT 'failed-without-dead-letter' FROM new_runs WHERE status = 'failed' AND dead_letter_id IS NULL
        ) x
        GROUP BY status
        ON CONFLICT (status, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO ${schema}.run_counts AS c (status, slot, n)
        SELECT status, pg_backend_pid() % 16, -count(*) FROM (
            SELECT status FROM old_runs WHERE status IN ('done', 'failed', 'cancelled', 'expired')
            UNION ALL
            SELECT 'failed-without-dead-letter' FROM old_runs WHERE status = 'failed' AND dead_letter_id IS NULL
        ) x
        GROUP BY status
        ON CONFLICT (status, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    END IF;
    RETURN NULL;
END
$$;
