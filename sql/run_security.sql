-- sql/run_security.sql: a run never runs code of a role's making with the extension owner's
-- rights.
--
-- A run's window values are typed by the target's partition key, and a type can run code of
-- its owner's making when a text becomes a value: a domain's CHECK, at any depth (a composite's
-- field, an array's element, a range's subtype).  A role with no right but TEMP makes such a
-- key, all in pg_temp, whose CHECK tries to make the role superuser whenever it runs as
-- anyone else.  Planning, running, dry-running, retrying, skipping, pausing, resuming and
-- cancelling a run on it must leave the role as it was, and the CHECK must have run, each
-- time, as the role itself.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS backfill;
DROP ROLE IF EXISTS regress_temp_only;
RESET client_min_messages;
CREATE ROLE regress_temp_only LOGIN;	-- TEMP on the database, as PUBLIC has by default
SET ROLE regress_temp_only;

SET regress.path = 'setup';
CREATE TABLE pg_temp.seen (path text, who name NOT NULL);
CREATE FUNCTION pg_temp.watch(v int) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO pg_temp.seen VALUES (current_setting('regress.path', true), current_user);
	IF current_user <> 'regress_temp_only' THEN
		BEGIN
			EXECUTE 'ALTER ROLE regress_temp_only SUPERUSER';
		EXCEPTION WHEN OTHERS THEN
			NULL;
		END;
	END IF;
	RETURN v IS NOT NULL;
END $$;
CREATE DOMAIN pg_temp.watched AS int CHECK (pg_temp.watch(VALUE));
CREATE TYPE pg_temp.day_key AS (d pg_temp.watched);

-- a composite key whose field is the domain, and an array key whose element is
CREATE TABLE pg_temp.by_composite (k pg_temp.day_key NOT NULL, v int) PARTITION BY RANGE (k);
CREATE TABLE pg_temp.by_composite_1 PARTITION OF pg_temp.by_composite FOR VALUES FROM ('(1)') TO ('(2)');
CREATE TABLE pg_temp.by_composite_2 PARTITION OF pg_temp.by_composite FOR VALUES FROM ('(2)') TO ('(3)');
INSERT INTO pg_temp.by_composite VALUES ('(1)', 10), ('(2)', 20);
CREATE TABLE pg_temp.by_array (k pg_temp.watched[] NOT NULL, v int) PARTITION BY RANGE (k);
CREATE TABLE pg_temp.by_array_1 PARTITION OF pg_temp.by_array FOR VALUES FROM ('{1}') TO ('{2}');
CREATE TABLE pg_temp.by_array_2 PARTITION OF pg_temp.by_array FOR VALUES FROM ('{2}') TO ('{3}');
INSERT INTO pg_temp.by_array VALUES ('{1}', 10), ('{2}', 20);

SET regress.path = 'plan';
SELECT backfill_plan('pg_temp.by_composite', '(1)', '(3)',
	$$SELECT k, v + 1 AS v FROM pg_temp.by_composite WHERE k >= $1 AND k < $2$$) AS composite_run \gset
SELECT backfill_plan('pg_temp.by_array', '{1}', '{3}',
	$$SELECT k, v + 1 AS v FROM pg_temp.by_array WHERE k >= $1 AND k < $2$$) AS array_run \gset
SELECT backfill_plan('pg_temp.by_composite', '(1)', '(2)',
	$$SELECT k, v FROM pg_temp.by_composite WHERE k >= $1 AND k < $2$$) AS cancelled_run \gset
SET client_min_messages = warning;	-- the NOTICEs name the session's own pg_temp schema

SET regress.path = 'dry run';
-- dry run, then a run of one task, a retry of it, the run to its end
SELECT task, rows_after FROM backfill_dry_run(:composite_run);
SELECT task, rows_after FROM backfill_dry_run(:array_run, 2);
SET regress.path = 'run';
CALL backfill_run(:composite_run, 1);
SET regress.path = 'retry';
SELECT backfill_retry(:composite_run, 1);
SET regress.path = 'run';
CALL backfill_run(:composite_run);
SELECT sum(v) AS composite_sum FROM pg_temp.by_composite;
-- a skip, a pause, a resume, a run, a cancel
SET regress.path = 'skip';
SELECT backfill_skip(:array_run, 1, 'kept as it is');
SET regress.path = 'pause';
SELECT backfill_pause(:array_run);
SET regress.path = 'resume';
SELECT backfill_resume(:array_run);
SET regress.path = 'run';
CALL backfill_run(:array_run);
SELECT sum(v) AS array_sum FROM pg_temp.by_array;
SET regress.path = 'dry run';
SELECT task, rows_after FROM backfill_dry_run(:cancelled_run);
SET regress.path = 'cancel';
SELECT backfill_cancel(:cancelled_run);
RESET client_min_messages;
SET regress.path = 'progress';
SELECT run_id = :composite_run AS composite, status, tasks_done, tasks_skipped FROM backfill_progress
	WHERE run_id IN (:composite_run, :array_run, :cancelled_run) ORDER BY run_id;
RESET ROLE;

-- the CHECK ran (where a path compares windows), and only ever as the role; the role is what
-- it was
SELECT path, count(*) > 0 AS check_ran, count(*) FILTER (WHERE who <> 'regress_temp_only') AS ran_as_another
	FROM pg_temp.seen GROUP BY path ORDER BY path COLLATE "C";
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_temp_only';
DROP OWNED BY regress_temp_only;
DROP ROLE regress_temp_only;

-- A run's throttle_query and critical_query run as the role calling the run, never as the
-- target's owner: a member of the owner's role (granted it without SET on 16 and later, so it
-- may not become the owner, so the run merges: a replacement gives its new table to the
-- owner) plans and runs, and a critical_query that pauses the run unless it runs as that
-- member lets the run finish.
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_thr_member;
DROP ROLE IF EXISTS regress_thr_owner;
RESET client_min_messages;
CREATE ROLE regress_thr_owner;
CREATE ROLE regress_thr_member LOGIN;
DO $$
BEGIN
	IF current_setting('server_version_num')::int >= 160000 THEN
		EXECUTE 'GRANT regress_thr_owner TO regress_thr_member WITH INHERIT TRUE, SET FALSE';
	ELSE
		EXECUTE 'GRANT regress_thr_owner TO regress_thr_member';
	END IF;
END $$;
GRANT CREATE ON SCHEMA public TO regress_thr_owner;
CREATE TABLE thr (id int NOT NULL, day date NOT NULL, v int, PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
CREATE TABLE thr_0301 PARTITION OF thr FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
INSERT INTO thr SELECT g, '2026-03-01', g FROM generate_series(1, 10) g;
ALTER TABLE thr OWNER TO regress_thr_owner;
ALTER TABLE thr_0301 OWNER TO regress_thr_owner;
SET ROLE regress_thr_member;
SELECT backfill_plan('thr', '2026-03-01', '2026-03-02', $$SELECT id, day, v + 1 AS v FROM thr WHERE day >= $1 AND day < $2$$,
	'merge', ARRAY['id', 'day'], options => jsonb_build_object('critical_query', 'SELECT current_user <> ''regress_thr_member''')) AS thr_run \gset
SET client_min_messages = error;
CALL backfill_run(:thr_run);
RESET client_min_messages;
RESET ROLE;
SELECT status, throttle_reason IS NULL AS never_paused FROM backfill_runs WHERE id = :thr_run;
SELECT sum(v) AS thr_sum FROM thr;
DROP TABLE thr;
REVOKE CREATE ON SCHEMA public FROM regress_thr_owner;
DROP ROLE regress_thr_member;
DROP ROLE regress_thr_owner;
