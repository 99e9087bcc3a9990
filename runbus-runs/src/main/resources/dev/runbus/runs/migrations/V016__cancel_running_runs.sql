-- Cancelling a running run (Runs.cancel, docs/runs.md "Cancel"): when the cancel was asked for. A run with a handler
-- at work stays 'running' in the status column, so every index and statement that knows running runs (the sweeper's,
-- the per-user order's) still sees it; the API shows it as cancelling. Whichever of its handler's end and the cancel
-- commits first decides: the attempt's end then writes cancelled instead of done or a retry, and a trigger of it that
-- arrives later writes cancelled instead of starting it. ${schema} is replaced when applied.
--
-- Nullable, without a default: adding it changes the catalog only, no row is rewritten.
ALTER TABLE ${schema}.runs ADD COLUMN IF NOT EXISTS cancel_requested_at timestamptz;
