-- A run's flow sub-key (NewRun.flowSubKey, docs/flow-control.md, "Sub-keys"): its trigger is published with it, and
-- so is every trigger published again (the sweeper's, a replay's). ${schema} is replaced when applied.
--
-- Nullable, without a default: adding it changes the catalog only, no row is rewritten. NULL is no sub-key, for
-- every run before this migration and every run submitted without one.
ALTER TABLE ${schema}.runs ADD COLUMN IF NOT EXISTS flow_sub_key text;
