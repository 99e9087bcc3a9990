-- Submitting a run inside the caller's own transaction (Runs.within, docs/runs.md "Submitting in your
-- transaction"): the run row is written there, and its trigger is published once that transaction commits, by a
-- relay that LISTENs for the NOTIFY sent at commit (and polls, and the sweeper is the last resort). A rollback leaves
-- no run and no trigger. ${schema} is replaced when applied.

-- True while a run written in a caller's transaction waits for a relay to publish its trigger; NULL otherwise (every
-- run before this migration and every run submitted by Runs.submit). Nullable, without a default: adding it changes
-- the catalog only.
ALTER TABLE ${schema}.runs ADD COLUMN IF NOT EXISTS outbox boolean;

-- The relay's poll: the few runs whose trigger waits for it. Empty but for a moment after each commit.
CREATE INDEX IF NOT EXISTS runs_outbox_idx ON ${schema}.runs (created_at) WHERE outbox;

-- SHA-256 over length-prefixed parts, as the Java side hashes idempotency keys and bodies (IdempotencyKeys): the
-- decimal length of each part's bytes, ':', the bytes. So a run submitted here and one submitted from Java with the
-- same key and body are the same submission.
CREATE OR REPLACE FUNCTION ${schema}.runbus_sha256(parts bytea[]) RETURNS text LANGUAGE sql IMMUTABLE
    SET search_path = pg_catalog, pg_temp AS $$
    SELECT encode(sha256(coalesce(string_agg(convert_to(length(p)::text || ':', 'UTF8') || p, ''::bytea
        ORDER BY i), ''::bytea)), 'hex')
    FROM unnest(parts) WITH ORDINALITY AS t(p, i)
$$;

-- Submits a run in the calling transaction and returns its id, whether this call created it, and its status. The
-- arguments are NewRun's (docs/runs.md): a session, a user and an input (required); an idempotency key (NULL: derived
-- from session, user, input, flow key and the current second, as Runs.submit derives one), a flow key, a priority
-- (0 to 9; NULL: 4), a flow sub-key and a key scope (NULL: global). Errors: SQLSTATE RB400 names the argument that is
-- wrong; RB409 when the key names a run with another body. A created run is marked for the relay and a NOTIFY wakes
-- it at commit, on channel runbus_runs_ and the first 16 hex digits of the SHA-256 of the schema's name (a channel
-- name has at most 63 bytes; RunsRelay listens there). It runs with its owner's rights (the role that migrates): a role that may only call
-- it submits runs without any right on the tables (grants.sql grants it to the runtime role).
CREATE OR REPLACE FUNCTION ${schema}.submit_run(
        p_session_id text, p_user_id text, p_input text, p_idempotency_key text DEFAULT NULL,
        p_flow_key text DEFAULT NULL, p_priority integer DEFAULT NULL, p_flow_sub_key text DEFAULT NULL,
        p_scope text DEFAULT NULL)
    RETURNS TABLE (run_id uuid, created boolean, status text) LANGUAGE plpgsql
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_flow bytea;
    v_given text;
    v_key text;
    v_hash text;
    v_id uuid := md5(random()::text || clock_timestamp()::text || pg_backend_pid()::text)::uuid;
    v_owner record;
BEGIN
    IF p_session_id IS NULL OR p_session_id !~ E'\\S' OR octet_length(p_session_id) > 2000 THEN
        RAISE EXCEPTION USING ERRCODE = 'RB400', MESSAGE = 'sessionId: required, at most 2000 bytes';
    END IF;
    IF p_user_id IS NULL OR p_user_id !~ E'\\S' OR octet_length(p_user_id) > 2000 THEN
        RAISE EXCEPTION USING ERRCODE = 'RB400', MESSAGE = 'userId: required, at most 2000 bytes';
    END IF;
    IF p_input IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'RB400', MESSAGE = 'input: required';
    END IF;
    IF p_idempotency_key IS NOT NULL AND (p_idempotency_key !~ E'\\S' OR length(p_idempotency_key) > 200) THEN
        RAISE EXCEPTION USING ERRCODE = 'RB400', MESSAGE = 'idempotencyKey: 1 to 200 non-blank characters';
    END IF;
    IF p_flow_key IS NOT NULL AND (p_flow_key = '' OR octet_length(p_flow_key) > 256) THEN
        RAISE EXCEPTION USING ERRCODE = 'RB400', MESSAGE = 'flowKey: non-empty, at most 256 bytes';
    END IF;
    IF p_priority IS NOT NULL AND (p_priority < 0 OR p_priority > 9) THEN
        RAISE EXCEPTION USING ERRCODE = 'RB400', MESSAGE = 'priority: 0 to 9';
    END IF;
    IF p_priority IS NOT NULL AND p_priority <> 4 AND p_flow_key IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'RB400', MESSAGE = 'priority: another than 4 needs a flow key';
    END IF;
    IF p_flow_sub_key IS NOT NULL AND (p_flow_key IS NULL OR p_flow_sub_key = ''
            OR octet_length(p_flow_sub_key) > 256) THEN
        RAISE EXCEPTION USING ERRCODE = 'RB400', MESSAGE = 'flowSubKey: non-empty, at most 256 bytes, with a flow key';
    END IF;
    IF p_scope IS NOT NULL AND p_scope !~ E'\\S' THEN
        RAISE EXCEPTION USING ERRCODE = 'RB400', MESSAGE = 'scope: non-blank';
    END IF;
    -- The flow part of keys and hashes (IdempotencyKeys.flowPart): the flow key, its priority after a NUL when not
    -- 4, its sub-key after another NUL; none without a flow key.
    IF p_flow_key IS NOT NULL THEN
        v_flow := convert_to(p_flow_key, 'UTF8');
        IF p_priority IS NOT NULL AND p_priority <> 4 THEN
            v_flow := v_flow || decode('00', 'hex') || convert_to('priority=' || p_priority, 'UTF8');
        END IF;
        IF p_flow_sub_key IS NOT NULL THEN
            v_flow := v_flow || decode('00', 'hex') || convert_to('sub=' || p_flow_sub_key, 'UTF8');
        END IF;
    END IF;
    v_given := coalesce(p_idempotency_key, 'derived:' || ${schema}.runbus_sha256(
        ARRAY[convert_to(p_session_id, 'UTF8'), convert_to(p_user_id, 'UTF8'), convert_to(p_input, 'UTF8'),
              convert_to(floor(extract(epoch FROM clock_timestamp()))::bigint::text, 'UTF8')]
        || CASE WHEN v_flow IS NULL THEN ARRAY[]::bytea[] ELSE ARRAY[convert_to('flow', 'UTF8'), v_flow] END));
    v_key := CASE WHEN p_scope IS NULL THEN v_given
        ELSE 'scoped:' || ${schema}.runbus_sha256(ARRAY[convert_to(p_scope, 'UTF8'), convert_to(v_given, 'UTF8')]) END;
    v_hash := ${schema}.runbus_sha256(
        ARRAY[convert_to(p_session_id, 'UTF8'), convert_to(p_user_id, 'UTF8'), convert_to(p_input, 'UTF8')]
        || CASE WHEN v_flow IS NULL THEN ARRAY[]::bytea[] ELSE ARRAY[convert_to('flow', 'UTF8'), v_flow] END);
    -- Runs in per-user order (their order index exists): refused as Runs.submit refuses them (the user id keys the
    -- trigger, at most 1000 characters; no flow key), and the user's lock until this transaction ends, as
    -- RunStore.insertAll takes it, so that the user's runs are numbered in commit order.
    IF to_regclass('${schema}.runs_user_unfinished_idx') IS NOT NULL THEN
        IF char_length(p_user_id) > 1000 THEN
            RAISE EXCEPTION USING ERRCODE = 'RB400', MESSAGE = 'userId: at most 1000 characters for runs in '
                || 'per-user order (it keys the run''s trigger)';
        END IF;
        IF p_flow_key IS NOT NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'RB400', MESSAGE = 'flowKey: cannot be given to runs in per-user order';
        END IF;
        PERFORM pg_advisory_xact_lock(hashtext('runbus.user.${schema}.runs'), hashtext(p_user_id));
    END IF;
    INSERT INTO ${schema}.runs AS r (id, idempotency_key, input_hash, session_id, user_id, input, status, flow_key,
            priority, flow_sub_key, outbox)
        VALUES (v_id, v_key, v_hash, p_session_id, p_user_id, p_input, 'pending', p_flow_key,
            CASE WHEN p_priority = 4 THEN NULL ELSE p_priority END, p_flow_sub_key, true)
        ON CONFLICT (idempotency_key) DO NOTHING;
    IF FOUND THEN
        PERFORM pg_notify('runbus_runs_' || left(encode(sha256(convert_to('${schema}', 'UTF8')), 'hex'), 16),
            v_id::text);
        RETURN QUERY SELECT v_id, true, 'pending'::text;
        RETURN;
    END IF;
    SELECT r.id, r.input_hash, r.status INTO v_owner FROM ${schema}.runs r WHERE r.idempotency_key = v_key;
    IF v_owner.input_hash IS DISTINCT FROM v_hash THEN
        RAISE EXCEPTION USING ERRCODE = 'RB409', MESSAGE = 'idempotency key ' || v_given
            || ' names run ' || v_owner.id || ', submitted with another body', DETAIL = v_owner.id::text;
    END IF;
    RETURN QUERY SELECT v_owner.id, false, v_owner.status;
END
$$;

-- Only the roles granted it may submit this way (grants.sql): a function is callable by PUBLIC by default.
REVOKE ALL ON FUNCTION ${schema}.submit_run(text, text, text, text, text, integer, text, text) FROM PUBLIC;
