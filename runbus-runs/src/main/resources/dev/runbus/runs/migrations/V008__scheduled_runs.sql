-- Delayed runs (Runs.submit with a delay): the id of the run's trigger in the bus's delay set while it waits there,
-- so that cancelling the run also removes its trigger. Null for a run published at once. When the run is due is
-- kept in next_attempt_at (V003), which the sweeper already leaves alone until it is overdue. ${schema} is replaced
-- when applied. A column without a default: adding it does not rewrite the table.
ALTER TABLE ${schema}.runs ADD COLUMN IF NOT EXISTS scheduled_id TEXT;
