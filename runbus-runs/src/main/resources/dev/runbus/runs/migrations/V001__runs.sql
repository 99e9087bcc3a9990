-- The runs layer's tables. ${schema} is replaced by RunsConfig.schema when applied.

CREATE TABLE IF NOT EXISTS ${schema}.runs (
    id              UUID        PRIMARY KEY,
    -- Guard 1: one run per idempotency key, whatever the number of submissions.
    idempotency_key TEXT        NOT NULL UNIQUE,
    -- SHA-256 of session, user and input: the same key with another body is a conflict, not a reuse.
    input_hash      TEXT        NOT NULL,
    session_id      TEXT        NOT NULL,
    user_id         TEXT        NOT NULL,
    input           TEXT        NOT NULL,
    status          TEXT        NOT NULL DEFAULT 'pending'
                                CHECK (status IN ('pending', 'running', 'done', 'failed')),
    attempts        INTEGER     NOT NULL DEFAULT 0,
    error           TEXT,
    -- The stream entry of the attempt in progress, so the sweeper can ask Redis whether it is still live.
    stream_id       TEXT,
    dead_letter_id  TEXT,
    republished     INTEGER     NOT NULL DEFAULT 0,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    started_at      TIMESTAMPTZ,
    finished_at     TIMESTAMPTZ
);

-- The sweeper looks for unfinished runs that have not moved for a while.
CREATE INDEX IF NOT EXISTS runs_unfinished_idx
    ON ${schema}.runs (updated_at) WHERE status IN ('pending', 'running');

CREATE TABLE IF NOT EXISTS ${schema}.messages (
    run_id     UUID        NOT NULL REFERENCES ${schema}.runs (id),
    seq        INTEGER     NOT NULL CHECK (seq >= 1),
    role       TEXT        NOT NULL,
    content    TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- Guard 2: two executions of one run leave one set of replies.
    UNIQUE (run_id, seq)
);

CREATE TABLE IF NOT EXISTS ${schema}.run_effects (
    run_id          UUID        NOT NULL REFERENCES ${schema}.runs (id),
    name            TEXT        NOT NULL,
    idempotency_key TEXT        NOT NULL,
    result          TEXT,
    initiated_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    completed_at    TIMESTAMPTZ,
    -- An effect is initiated at most once per run.
    PRIMARY KEY (run_id, name)
);

-- Small named values the sweeper keeps between rounds (the last dead letter it reconciled).
CREATE TABLE IF NOT EXISTS ${schema}.sweeper_state (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
