-- Flow keys' limits in place of the workers' (Runs.setFlowOverride, docs/flow-control.md): kept here so that they
-- outlive a Redis that lost its data; the sweeper sets them in Redis again at every sweep. ${schema} is replaced
-- when applied. A NULL leaves the workers' own; a key set back to the workers' keeps its row, all NULL (the runtime
-- role deletes nothing).
CREATE TABLE IF NOT EXISTS ${schema}.flow_overrides (
    flow_key     text PRIMARY KEY,
    cap          integer,
    rate_permits integer,
    rate_per_ms  bigint,
    rate_burst   integer,
    weight       double precision,
    updated_at   timestamptz NOT NULL DEFAULT now()
);
