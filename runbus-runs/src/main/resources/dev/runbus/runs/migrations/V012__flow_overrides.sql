-- Flow keys' limits in place of the workers' (Runs.setFlowOverride, docs/flow-control.md): kept here so that they
-- outlive a Redis that lost its data; the sweeper sets them in Redis again at every sweep. ${schema} is replaced
-- when applied. A NULL leaves the workers' own; a key set back to the workers' keeps its row, all NULL (the runtime
-- role deletes nothing). The checks refuse what no override can be (a new table: they cost nothing to add).
CREATE TABLE IF NOT EXISTS ${schema}.flow_overrides (
    flow_key        text PRIMARY KEY,
    cap             integer CHECK (cap >= 0),
    rate_permits    integer CHECK (rate_permits >= 1),
    rate_per_micros bigint CHECK (rate_per_micros >= 1),
    rate_burst      integer CHECK (rate_burst >= 1),
    weight          double precision CHECK (weight >= 0.000001 AND weight <= 1000000),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CHECK ((rate_permits IS NULL) = (rate_per_micros IS NULL) AND (rate_permits IS NULL) = (rate_burst IS NULL))
);
