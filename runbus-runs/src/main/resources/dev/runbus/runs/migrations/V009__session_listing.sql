-- The index of one session's runs in the runs listing (Runs.list with a session): without it a rare session walked
-- runs_created_idx over the whole table. ${schema} is replaced when applied.
--
-- Partial, on the session ids an index entry can hold. A btree entry holds at most about 2,700 bytes, and session
-- ids had no bound before NewRun.MAX_ID_BYTES (2,000 bytes of UTF-8): an index on every row would fail to build on a
-- database that holds a longer incompressible one, and this migration with it. The rows above the bound stay as they
-- are, readable and updatable, outside this index; the listing cannot be asked for them (a session filter has the
-- same bound) and repeats the predicate so that PostgreSQL may use the index (RunListing.SESSION_INDEXED).
--
-- No CHECK constraint bounds the ids: even NOT VALID, one is checked on every UPDATE of a row, so a run stored with a
-- longer id could no longer be started, finished or failed. NewRun refuses them before they are written.
--
-- Built without CONCURRENTLY, as V006: writes to runs wait while it builds (seconds per million runs). On a large
-- table create it beforehand with CREATE INDEX CONCURRENTLY, under this name, with these columns and predicate.
CREATE INDEX IF NOT EXISTS runs_session_created_idx ON ${schema}.runs (session_id, created_at, id)
    WHERE octet_length(session_id) <= 2000;
