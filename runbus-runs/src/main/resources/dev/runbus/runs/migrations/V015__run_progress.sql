-- A running run's latest progress (RunContext.progress, docs/runs.md "Progress"): written by the worker at most once
-- a second per run, kept after the run ends. ${schema} is replaced when applied.
--
-- Nullable, without defaults: adding them changes the catalog only, no row is rewritten.
ALTER TABLE ${schema}.runs ADD COLUMN IF NOT EXISTS progress_percent smallint;
ALTER TABLE ${schema}.runs ADD COLUMN IF NOT EXISTS progress_details text;
ALTER TABLE ${schema}.runs ADD COLUMN IF NOT EXISTS progress_at timestamptz;
