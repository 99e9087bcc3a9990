-- Recurring schedules (Runs.schedules(), docs/schedules.md). ${schema} is replaced when applied.
--
-- A schedule's definition and state. next_fire_at is the compare-and-set of firing: a fire is one transaction that
-- moves it from the fire's time to the next, inserts the fire's run and its row in schedule_fires, and locks the
-- scheduler's lease row with the firer's token, so two schedulers (or a paused one that lost its lease) never fire
-- one time twice. NULL: it fires no more (past ends_at, or an expression that never matches again), or deleted
-- (deleted_at: the runtime role deletes no row).
CREATE TABLE IF NOT EXISTS ${schema}.schedules (
    name               text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9._:-]{1,200}$'),
    cron               text,
    interval_ms        bigint CHECK (interval_ms >= 1000),
    zone               text NOT NULL,
    jitter_ms          bigint NOT NULL CHECK (jitter_ms >= 0),
    starts_at          timestamptz,
    ends_at            timestamptz,
    paused             boolean NOT NULL DEFAULT false,
    overlap            text NOT NULL CHECK (overlap IN ('skip', 'buffer', 'cancel_running', 'allow_all')),
    overlap_buffer     integer NOT NULL DEFAULT 0 CHECK (overlap_buffer >= 0),
    misfire            text NOT NULL CHECK (misfire IN ('run_once', 'skip', 'catch_up')),
    catch_up_max       integer NOT NULL DEFAULT 0 CHECK (catch_up_max >= 0),
    catch_up_window_ms bigint NOT NULL DEFAULT 0 CHECK (catch_up_window_ms >= 0),
    misfire_grace_ms   bigint NOT NULL CHECK (misfire_grace_ms >= 1000),
    -- The run each fire makes (NewRun without its idempotency key).
    session_id         text NOT NULL,
    user_id            text NOT NULL,
    input              text NOT NULL,
    flow_key           text,
    priority           integer,
    flow_sub_key       text,
    timeout_ms         bigint,
    expire_after_ms    bigint,
    anchor_at          timestamptz NOT NULL DEFAULT now(),
    next_fire_at       timestamptz,
    last_fire_at       timestamptz,
    fired              bigint NOT NULL DEFAULT 0,
    skipped_overlap    bigint NOT NULL DEFAULT 0,
    missed             bigint NOT NULL DEFAULT 0,
    caught_up          bigint NOT NULL DEFAULT 0,
    deleted_at         timestamptz,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    CHECK ((cron IS NULL) <> (interval_ms IS NULL))
);
CREATE INDEX IF NOT EXISTS schedules_due_idx ON ${schema}.schedules (next_fire_at)
    WHERE next_fire_at IS NOT NULL AND NOT paused AND deleted_at IS NULL;

-- One row per fire that made, or waits to make, a run: its primary key is the second guard of exactly once. outcome:
-- fired (on time), caught_up (a missed fire its policy made), buffered (waiting behind an unfinished run, run_id
-- NULL until made), backfilled (Schedules.backfill), dropped (buffered when its schedule was deleted: never made).
-- token: the lease's fencing token of the process that wrote it.
CREATE TABLE IF NOT EXISTS ${schema}.schedule_fires (
    schedule_name text NOT NULL,
    fire_at       timestamptz NOT NULL,
    run_id        uuid,
    outcome       text NOT NULL CHECK (outcome IN ('fired', 'caught_up', 'buffered', 'backfilled', 'dropped')),
    token         bigint NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (schedule_name, fire_at)
);
CREATE INDEX IF NOT EXISTS schedule_fires_buffered_idx ON ${schema}.schedule_fires (schedule_name, fire_at)
    WHERE outcome = 'buffered';

-- The lease of the one process that fires: whoever finds it expired takes it with token + 1, its holder renews it.
-- A fire locks this row FOR SHARE with its token, so a takeover waits for a fire in progress, and a firer that lost
-- the lease fires nothing more.
CREATE TABLE IF NOT EXISTS ${schema}.scheduler_lease (
    id         integer PRIMARY KEY CHECK (id = 1),
    holder     text,
    token      bigint NOT NULL DEFAULT 0,
    expires_at timestamptz NOT NULL DEFAULT '-infinity'
);
INSERT INTO ${schema}.scheduler_lease (id) VALUES (1) ON CONFLICT (id) DO NOTHING;
