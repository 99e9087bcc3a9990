-- The index of runs in per-user order (RunsConfig.ordered), created by the first ordered runs layer rather than by
-- a migration: runs that are not ordered do not pay for it. ${schema} is replaced when applied.

-- "The earliest unfinished run of user X before number N" (OrderedAttempts): partial, like runs_unfinished_idx,
-- so a run is in it only while pending or running (its insert and its start add an entry; done and failed rows
-- add none) and it stays as small as the backlog. CREATE INDEX blocks writes to runs while it builds: on a large
-- table, create it beforehand (CONCURRENTLY) under this name.
CREATE INDEX IF NOT EXISTS runs_user_unfinished_idx
    ON ${schema}.runs (user_id, submit_seq) WHERE status IN ('pending', 'running');
