-- A run's priority among its flow key's waiting runs (NewRun.priority, docs/flow-control.md, "Priorities"): its
-- trigger is published with it, and so is every trigger published again (the sweeper's, a replay's). ${schema} is
-- replaced when applied.
--
-- Nullable, without a default: adding it changes the catalog only, no row is rewritten. NULL is the default
-- priority, 4, for every run before this migration and every run submitted without one.
ALTER TABLE ${schema}.runs ADD COLUMN IF NOT EXISTS priority smallint;
