-- The attempts cap and the retry schedule of a run (RunAttempts, RunFailures). ${schema} is replaced when applied.

-- Attempts the run had when it was last replayed. The cap compares attempts - attempts_at_replay with the runs'
-- maxDeliveries: PostgreSQL's count is the truth (Redis can lose a trigger's delivery count), and a replay, the
-- operator's decision to try again, gives the run a fresh budget. A constant default: no table rewrite.
ALTER TABLE ${schema}.runs ADD COLUMN IF NOT EXISTS attempts_at_replay INTEGER NOT NULL DEFAULT 0;

-- When the next attempt of a failing run is due by the retry policy; NULL while an attempt runs, when none is due
-- (no attempts left) and once the run is finished. For people and tools: nothing schedules by it.
ALTER TABLE ${schema}.runs ADD COLUMN IF NOT EXISTS next_attempt_at TIMESTAMPTZ;

-- Unfinished runs start with a fresh budget: before this migration a replay did not record where its budget
-- started, so a replayed run may already show maxDeliveries attempts or more, and would be failed on its next
-- trigger without running. (At most one extra budget, once, for the runs in flight at the upgrade.)
UPDATE ${schema}.runs SET attempts_at_replay = attempts WHERE status IN ('pending', 'running');
