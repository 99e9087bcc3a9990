-- Submission order, for runs in per-user order (RunsConfig.ordered). ${schema} is replaced when applied.

-- A sequence, not created_at: timestamps tie (a whole group-committed batch shares one now()) and two
-- processes' clocks differ. Within one user the numbers follow commit order, because an ordered submission
-- holds a per-user lock from its insert to its commit (RunStore.insertAll).
CREATE SEQUENCE IF NOT EXISTS ${schema}.runs_submit_seq AS BIGINT;

-- Added without a default first, so that adding the column does not rewrite the table; existing runs are then
-- numbered once in (created_at, id) order, the best order they have.
ALTER TABLE ${schema}.runs ADD COLUMN IF NOT EXISTS submit_seq BIGINT;
UPDATE ${schema}.runs r SET submit_seq = o.n
    FROM (SELECT id, nextval('${schema}.runs_submit_seq') AS n
          FROM (SELECT id FROM ${schema}.runs WHERE submit_seq IS NULL ORDER BY created_at, id) s) o
    WHERE r.id = o.id;
ALTER TABLE ${schema}.runs ALTER COLUMN submit_seq SET DEFAULT nextval('${schema}.runs_submit_seq');
ALTER TABLE ${schema}.runs ALTER COLUMN submit_seq SET NOT NULL;
ALTER SEQUENCE ${schema}.runs_submit_seq OWNED BY ${schema}.runs.submit_seq;

-- The index the order check reads ("the earliest unfinished run of user X before number N") is not created here
-- but by the first runs layer configured for per-user order (ordered_index.sql): runs that are not ordered do
-- not pay for maintaining it on every submission and attempt.
