-- The indexes of the runs listing (Runs.list), newest first and paginated by keyset on (created_at, id): each
-- filter that narrows the list has an index that yields its runs already in that order, so a page reads about
-- limit rows of the index however deep it is and however rare the filtered runs are. ${schema} is replaced when
-- applied.
--
-- Built without CONCURRENTLY (a migration is one transaction): writes to runs wait while they are built, a few
-- seconds per million runs. Apply at a quiet time on a large table.

-- No filter, and the filters the other indexes do not lead with (session, created_after/created_before).
CREATE INDEX IF NOT EXISTS runs_created_idx ON ${schema}.runs (created_at, id);

-- One user's runs: a user may have few among millions.
CREATE INDEX IF NOT EXISTS runs_user_created_idx ON ${schema}.runs (user_id, created_at, id);

-- One status: pending or failed runs are few among many done ones.
CREATE INDEX IF NOT EXISTS runs_status_created_idx ON ${schema}.runs (status, created_at, id);
