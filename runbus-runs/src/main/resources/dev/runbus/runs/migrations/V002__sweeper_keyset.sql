-- The sweeper pages through unfinished runs by (updated_at, id) after the last one it examined, so that runs
-- still live (never touched while they run) do not fill every sweep's batch. This index serves that order;
-- it replaces the one on updated_at alone.

CREATE INDEX IF NOT EXISTS runs_unfinished_keyset_idx
    ON ${schema}.runs (updated_at, id) WHERE status IN ('pending', 'running');

DROP INDEX IF EXISTS ${schema}.runs_unfinished_idx;
