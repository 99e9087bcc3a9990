-- Failed runs that name no dead letter, counted apart (RunCounts.failedWithoutDeadLetter): a run also fails when
-- PostgreSQL's count of its attempts reaches maxDeliveries while its trigger is not at the bus's limit (triggers
-- republished by the sweeper, or lost with Redis's data, start their delivery count afresh). No dead letter is made
-- then, so an alert on the dead-letter depth does not see these failures: this count does. A run failed by its
-- ordered worker names its dead letter a moment later; until then it is counted here too. ${schema} is replaced
-- when applied.
--
-- The counter is one more status in run_counts, 'failed-without-dead-letter', kept by the same trigger function as
-- the others (V004): the rows of new_runs that are failed with no dead letter, minus those of old_runs.

-- No run changes while the function is replaced and its counter is counted once (below): writes to runs wait
-- until this transaction commits. Reads go on.
LOCK TABLE ${schema}.runs IN SHARE MODE;

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
            SELECT 'failed-without-dead-letter', 1 FROM new_runs WHERE status = 'failed' AND dead_letter_id IS NULL
            UNION ALL
            SELECT status, -1 AS d FROM old_runs WHERE status IN ('done', 'failed')
            UNION ALL
            SELECT 'failed-without-dead-letter', -1 FROM old_runs WHERE status = 'failed' AND dead_letter_id IS NULL
        ) x
        GROUP BY status HAVING sum(d) <> 0
        ON CONFLICT (status, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO ${schema}.run_counts AS c (status, slot, n)
        SELECT status, pg_backend_pid() % 16, count(*) FROM (
            SELECT status FROM new_runs WHERE status IN ('done', 'failed')
            UNION ALL
            SELECT 'failed-without-dead-letter' FROM new_runs WHERE status = 'failed' AND dead_letter_id IS NULL
        ) x
        GROUP BY status
        ON CONFLICT (status, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO ${schema}.run_counts AS c (status, slot, n)
        SELECT status, pg_backend_pid() % 16, -count(*) FROM (
            SELECT status FROM old_runs WHERE status IN ('done', 'failed')
            UNION ALL
            SELECT 'failed-without-dead-letter' FROM old_runs WHERE status = 'failed' AND dead_letter_id IS NULL
        ) x
        GROUP BY status
        ON CONFLICT (status, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    END IF;
    RETURN NULL;
END
$$;

-- The failed runs without a dead letter made before this migration, counted once (a read of the failed runs: at
-- a quiet time on a large table, as V004).
DELETE FROM ${schema}.run_counts WHERE status = 'failed-without-dead-letter';
INSERT INTO ${schema}.run_counts (status, slot, n)
    SELECT 'failed-without-dead-letter', 0, count(*) FROM ${schema}.runs
    WHERE status = 'failed' AND dead_letter_id IS NULL HAVING count(*) > 0;
