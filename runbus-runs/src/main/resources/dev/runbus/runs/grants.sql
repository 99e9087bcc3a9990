-- What the runtime role of a runs layer needs, and nothing more: ${schema} and ${role} are replaced
-- (RunsSchema.runtimeGrants). Run it as the role that owns the schema (the migration role) after each migration:
-- a new migration may add a table. The runtime role then starts with RunsConfig.migrate(false) (--no-migrate).
-- No DELETE: serving and working delete nothing (deleting finished runs is another role's: grants_prune.sql).
-- No CREATE: the runtime role cannot change the schema.
GRANT USAGE ON SCHEMA ${schema} TO ${role};
GRANT SELECT ON ${schema}.schema_migrations TO ${role};
GRANT SELECT, INSERT, UPDATE ON ${schema}.runs, ${schema}.messages, ${schema}.run_effects,
    ${schema}.sweeper_state, ${schema}.flow_overrides, ${schema}.schedules, ${schema}.schedule_fires,
    ${schema}.scheduler_lease TO ${role};
-- Read only: the trigger that keeps the counts writes them with its owner's rights.
GRANT SELECT ON ${schema}.run_counts TO ${role};
GRANT USAGE ON SEQUENCE ${schema}.runs_submit_seq TO ${role};
-- Submitting in a caller's transaction (V014): the function runs with its owner's rights.
GRANT EXECUTE ON FUNCTION ${schema}.submit_run(text, text, text, text, text, integer, text, text) TO ${role};
