-- A run's flow key (NewRun.flowKey, docs/flow-control.md): its trigger is published with it, so that a worker with a
-- flow cap or rate runs a tenant's runs within them. Kept with the run so that every trigger published again (the
-- sweeper's, a replay's) carries it too. ${schema} is replaced when applied.
--
-- Nullable, without a default: adding it changes the catalog only, no row is rewritten, and runs without a flow key
-- (every run before this migration) keep NULL.
ALTER TABLE ${schema}.runs ADD COLUMN IF NOT EXISTS flow_key text;
