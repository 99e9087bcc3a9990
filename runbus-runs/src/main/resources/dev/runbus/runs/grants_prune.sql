-- What a role that deletes finished runs (Runs.deleteFinished, runbus runs prune) needs, and nothing more: ${schema}
-- and ${role} are replaced (RunsSchema.pruneGrants). Run it as the role that owns the schema (the migration role)
-- after each migration. The role then starts its runs layer with RunsConfig.migrate(false) (RUNBUS_MIGRATE=false).
-- SELECT: the deletes find finished runs by status and time, and their replies and effects by run. No INSERT, no
-- UPDATE: it cannot submit, start or finish a run. The counts of finished runs go down through their trigger, which
-- writes them with its owner's rights.
GRANT USAGE ON SCHEMA ${schema} TO ${role};
GRANT SELECT ON ${schema}.schema_migrations TO ${role};
GRANT SELECT, DELETE ON ${schema}.runs, ${schema}.messages, ${schema}.run_effects TO ${role};
