-- test/fuzz.sql: every SQL-callable function of backfill, fed seeded random arguments.
--
-- Each call takes its arguments from pools of good, odd and bad values (NULLs, wrong object
-- kinds, dropped objects, odd identifiers, broken SQL fragments, reversed and misaligned
-- ranges, malformed options).  Whatever it is given, a call must either succeed or fail with
-- an error of the caller's making: never an internal error (class XX), never a lost
-- connection, and a failed call must leave every table, the log and the run tables exactly as
-- they were, with no staging table left behind.  Each call runs in a subtransaction rolled
-- back afterwards, so each starts from the same state.  The seed is fixed: the same calls run
-- every time, and a failure names the call to replay.
--
-- The pools hold hostile shapes too: records nested deeper than the stack allows, arrays of
-- length-limited types and domains over them (with values that fit and values a plain INSERT
-- refuses), a role whose row-level security policy hides half of a table, and session
-- settings that change how values print, array arguments far over their cap, and rows of the
-- state tables forged by the database owner (claiming to be backfill's own: none may pass
-- for it, and no forged task may be dry-run).  Each call runs either as the test's role under
-- its settings or under one of those: a fingerprint must not change with the settings, the
-- restricted role must never see a count or fingerprint over rows it cannot read, and no
-- value longer than its column allows may ever be written.
BEGIN;
SET LOCAL client_min_messages = warning;
SET LOCAL datestyle = 'ISO, YMD';
SET LOCAL statement_timeout = '20s';
-- a small stack, so that a record nested 5,000 deep exceeds it
SET LOCAL max_stack_depth = '512kB';
SELECT plan(8);

CREATE TABLE fz_src (id bigint, day date, v numeric(12,2), note text);
INSERT INTO fz_src SELECT g, date '2026-03-10' + (g % 4), g % 97, 'n' || g FROM generate_series(1, 400) g;
CREATE TABLE fz (id bigint NOT NULL, day date NOT NULL, v numeric(12,2), note text, PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
CREATE TABLE fz_0310 PARTITION OF fz FOR VALUES FROM ('2026-03-10') TO ('2026-03-11');
CREATE TABLE fz_0311 PARTITION OF fz FOR VALUES FROM ('2026-03-11') TO ('2026-03-12');
CREATE TABLE fz_0312 PARTITION OF fz FOR VALUES FROM ('2026-03-12') TO ('2026-03-13');
CREATE TABLE fz_default PARTITION OF fz DEFAULT;
INSERT INTO fz SELECT * FROM fz_src;
CREATE TABLE fz_flat (id bigint, day date, v numeric(12,2), note text);
INSERT INTO fz_flat SELECT * FROM fz_src;
CREATE TABLE "fz odd ""name""; x" (id bigint, day date, v numeric(12,2), note text);
CREATE VIEW fz_view AS SELECT * FROM fz_src;
CREATE SEQUENCE fz_seq;
CREATE TABLE fz_gone (id bigint);
CREATE TEMP TABLE gone AS SELECT 'fz_gone'::regclass::oid::text AS oid;
DROP TABLE fz_gone;
-- hostile shapes: deep records, typmod'd arrays and a domain over one, a restricted role
CREATE FUNCTION pg_temp.fz_nest(n int) RETURNS record LANGUAGE plpgsql AS $$
DECLARE r record := ROW(1);
BEGIN FOR i IN 1..n LOOP r := ROW(r); END LOOP; RETURN r; END $$;
CREATE DOMAIN fz_codes AS varchar(3)[];
CREATE TABLE fz_arr (id bigint NOT NULL, day date NOT NULL, tags varchar(3)[], codes fz_codes, flags bit(3)[],
	PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
CREATE TABLE fz_arr_0311 PARTITION OF fz_arr FOR VALUES FROM ('2026-03-11') TO ('2026-03-12');
INSERT INTO fz_arr SELECT id, day, ARRAY['t' || id % 10], ARRAY['c'], ARRAY[B'101'] FROM fz_src WHERE day = '2026-03-11';
-- values whose text depends on the session's settings
CREATE TABLE fz_kinds (id int, at timestamptz, span interval, r tstzmultirange, f float8, d date);
INSERT INTO fz_kinds SELECT g, timestamptz '2026-03-10 12:00+00' + g * interval '7 hours', g * interval '90 minutes',
	tstzmultirange(tstzrange(timestamptz '2026-03-10 00:00+00' + g * interval '1 day', timestamptz '2026-03-11 00:00+00' + g * interval '1 day')),
	g / 7.0, date '2026-03-10' + g FROM generate_series(1, 50) g;
CREATE ROLE regress_fz_rls;
GRANT SELECT ON fz_src, fz, fz_0310, fz_0311, fz_0312, fz_default, fz_flat, fz_arr, fz_arr_0311 TO regress_fz_rls;
ALTER TABLE fz_flat ENABLE ROW LEVEL SECURITY;
CREATE POLICY fz_even ON fz_flat USING (id % 2 = 0);
-- the database owner, who may append to the state tables (for its restores), forging rows
CREATE ROLE regress_fz_dbowner;
SELECT format('ALTER DATABASE %I OWNER TO regress_fz_dbowner', current_database()) \gexec
CREATE FUNCTION pg_temp.genuine() RETURNS text LANGUAGE sql AS $$
	SELECT concat_ws(' ', (SELECT count(*) FROM backfill_log_data WHERE origin = 'backfill'),
		(SELECT count(*) FROM backfill_runs_data WHERE origin = 'backfill'), (SELECT count(*) FROM backfill_tasks_data WHERE origin = 'backfill'))
$$;
-- one forgery: stmt run as the database owner, then a dry run of task; 'broken: ...' if a
-- forged row passed for backfill's own, or a forged task was dry-run
CREATE FUNCTION pg_temp.forge(stmt text, t int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE genuine text := pg_temp.genuine(); run bigint := (SELECT max(id) FROM backfill_runs_data); res text := 'dry-run';
BEGIN
	PERFORM set_config('role', 'regress_fz_dbowner', true);
	EXECUTE stmt;
	PERFORM set_config('role', 'none', true);
	IF pg_temp.genuine() <> genuine THEN
		RETURN 'broken: a row the database owner inserted passed for backfill''s own';
	END IF;
	BEGIN
		PERFORM count(*) FROM backfill_dry_run(run, t);
		IF EXISTS (SELECT FROM backfill_tasks_data d WHERE d.run_id = run AND d.task = t AND d.origin <> 'backfill') THEN
			RETURN format('broken: task %s, forged, was dry-run', t);
		END IF;
	EXCEPTION WHEN object_not_in_prerequisite_state THEN
		res := 'refused';
	END;
	RETURN res;
END $$;
-- a record of fz_flat, whose counts and fingerprints the restricted role must not see
SELECT backfill_merge('fz_flat', 'SELECT * FROM fz_src', '{id,day}');
-- a run and a log record to act on
CREATE TEMP TABLE fz_run AS SELECT backfill_plan('fz', '2026-03-10', '2026-03-12',
	'SELECT * FROM fz_src WHERE day >= $1 AND day < $2')::text AS id;
CREATE TEMP TABLE fz_log AS SELECT log_id::text AS id FROM backfill_replace_partition('fz_0312',
	'SELECT * FROM fz_src WHERE day >= $1 AND day < $2', keep_old => true);

-- everything a call could change
CREATE FUNCTION pg_temp.state() RETURNS text LANGUAGE sql AS $$
	SELECT concat_ws(' | ',
		(SELECT string_agg(format('%s=%s', c.relname, (backfill_fingerprint(c.oid)).hash), ',' ORDER BY c.relname)
		 FROM pg_class c WHERE c.relname LIKE 'fz%' AND c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace),
		(SELECT string_agg(c.relname, ',' ORDER BY c.relname) FROM pg_class c
		 WHERE c.relnamespace IN ('public'::regnamespace, pg_my_temp_schema()) AND c.relkind IN ('r', 'p')),
		(SELECT count(*) FROM backfill_log), (SELECT string_agg(status, ',' ORDER BY id) FROM backfill_runs),
		(SELECT string_agg(status || attempts, ',' ORDER BY run_id, task) FROM backfill_tasks))
$$;

-- the pools
CREATE TEMP TABLE pool (kind text, val text);
INSERT INTO pool VALUES
	('rel', $$'fz'$$), ('rel', $$'fz_0311'$$), ('rel', $$'fz_0310'$$), ('rel', $$'fz_default'$$), ('rel', $$'fz_flat'$$),
	('rel', $$'fz_view'$$), ('rel', $$'fz_seq'$$), ('rel', $$'"fz odd ""name""; x"'$$), ('rel', $$'pg_class'$$), ('rel', $$'fz_kinds'$$), ('rel', $$'fz_arr'$$), ('rel', $$'fz_arr_0311'$$),
	('rel', 'NULL'), ('rel', (SELECT oid FROM gone)), ('rel', $$'backfill_log'$$),
	('query', $$'SELECT * FROM fz_src WHERE day >= $1 AND day < $2'$$), ('query', $$'TABLE fz_src'$$),
	('query', $$'SELECT id, day, v FROM fz_src'$$), ('query', $$''$$), ('query', $$';'$$), ('query', $$'SELECT 1; SELECT 2'$$),
	('query', $$'DELETE FROM fz_src RETURNING *'$$), ('query', $$'SELECT ('$$), ('query', $$'SELECT * FROM fz_src WHERE day = $3'$$),
	('query', $$'SELECT * FROM fz_src FOR UPDATE'$$), ('query', $$'SELECT id, id AS id FROM fz_src'$$),
	('query', $$'SELECT * FROM fz_src WHERE false'$$), ('query', $$'SELECT 1/0 AS id'$$), ('query', 'NULL'),
	('query', $$'SELECT * FROM fz_src) x; DROP TABLE fz; --'$$), ('query', $$'SELECT id::text AS id, day, v FROM fz_src'$$),
	('query', $$'INSERT INTO fz_flat SELECT * FROM fz_src WHERE day = ''2026-03-11'''$$),
	('query', $$'SELECT 1 AS id, pg_temp.fz_nest(5000) AS v'$$), ('query', $$'SELECT pg_temp.fz_nest(5000) AS id'$$),
	('query', $$'SELECT id, day, tags, codes, flags FROM fz_arr_0311'$$),
	('scope', $$'day >= ''2026-03-11'''$$), ('scope', $$'1)'$$), ('scope', $$')) OR ((true'$$), ('scope', 'NULL'),
	('scope', $$''$$), ('scope', $$'true'$$), ('scope', $$'nope > 1'$$), ('scope', $$'v / 0 > 1'$$), ('scope', $$'1'$$),
	('key', $$'{id}'$$), ('key', $$'{id,day}'$$), ('key', $$'{}'$$), ('key', 'NULL'), ('key', $$'{nope}'$$), ('key', $$'{id,id}'$$),
	('key', $$'{NULL}'$$), ('key', $$'{"a b"}'$$), ('key', $$'{{id},{day}}'$$), ('key', $$'{note}'$$),
	('measures', $$'{count(*)}'$$), ('measures', $$'{sum(v)}'$$), ('measures', $$'{v}'$$), ('measures', $$'{}'$$),
	('measures', 'NULL'), ('measures', $$'{"sum(v))"}'$$), ('measures', $$'{max(note)}'$$), ('measures', $$'{NULL}'$$),
	('bool', 'true'), ('bool', 'false'), ('bool', 'NULL'),
	('int', '-1'), ('int', '0'), ('int', '1'), ('int', '5'), ('int', '2147483647'), ('int', 'NULL'),
	('num', '0'), ('num', '-1'), ('num', '0.5'), ('num', 'NULL'), ('num', $$'NaN'$$),
	('bound', $$'2026-03-10'$$), ('bound', $$'2026-03-11'$$), ('bound', $$'2026-03-12'$$), ('bound', $$'x'$$), ('bound', $$''$$),
	('bound', 'NULL'), ('bound', $$'2026-03-11 12:00'$$), ('bound', $$'infinity'$$), ('bound', $$'2026-02-30'$$),
	('strategy', $$'replace'$$), ('strategy', $$'merge'$$), ('strategy', $$'append'$$), ('strategy', 'NULL'), ('strategy', $$'REPLACE'$$),
	('options', $$'{}'$$), ('options', $$'[]'$$), ('options', $$'{"max_workers": "x"}'$$), ('options', $$'{"bogus": 1}'$$),
	('options', 'NULL'), ('options', $$'{"reconcile": ["count(*)"]}'$$), ('options', $$'{"chunk": "1 day", "window_column": "day"}'$$),
	('options', $$'{"reconcile": "x"}'$$), ('options', $$'{"on_error": "continue", "max_attempts": 1}'$$), ('options', $$'"x"'$$),
	('run', (SELECT id FROM fz_run)), ('run', '0'), ('run', '-1'), ('run', 'NULL'), ('run', '9223372036854775807'),
	('logid', (SELECT id FROM fz_log)), ('logid', '0'), ('logid', 'NULL'),
	('task', '1'), ('task', '2'), ('task', '0'), ('task', 'NULL'),
	('cron', $$'* * * * *'$$), ('cron', $$'x'$$), ('cron', 'NULL'),
	-- mostly good values, so that calls that write get through too and are checked
	('part', $$'fz_0310'$$), ('part', $$'fz_0311'$$), ('part', $$'fz_default'$$),
	('source', $$'SELECT * FROM fz_src WHERE day >= $1 AND day < $2'$$),
	('source', $$'SELECT id, day, v + 1 AS v FROM fz_src WHERE day >= $1 AND day < $2'$$),
	('source', $$'SELECT * FROM fz_src WHERE day >= $1 AND day < $2 AND id % 3 <> 0'$$),
	('mtarget', $$'fz_flat'$$), ('mtarget', $$'fz'$$), ('mtarget', $$'fz_0311'$$),
	('msource', $$'SELECT * FROM fz_src WHERE day = ''2026-03-11'''$$), ('msource', $$'SELECT id, day, v * 2 AS v FROM fz_src WHERE day = ''2026-03-11'''$$),
	('mkey', $$'{id}'$$), ('mkey', $$'{id,day}'$$),
	('mscope', $$'day = ''2026-03-11'''$$), ('mscope', 'NULL'),
	('pint', '1'), ('pint', '100'), ('pint', '1000'),
	('ptarget', $$'fz'$$), ('ptarget', $$'fz_flat'$$),
	('pbound', $$'2026-03-10'$$), ('pbound', $$'2026-03-11'$$), ('pbound', $$'2026-03-12'$$), ('pbound', $$'2026-03-13'$$),
	('pstrategy', $$'replace'$$), ('pstrategy', $$'merge'$$),
	-- arrays of length-limited types and a domain over one: values that fit, and values that do not
	('apart', $$'fz_arr_0311'$$), ('atarget', $$'fz_arr'$$), ('atarget', $$'fz_arr_0311'$$),
	('asource', $$'SELECT id, day, tags, codes, flags FROM fz_arr_0311'$$),
	('asource', $$'SELECT id, day, ARRAY[''xyz''] AS tags, ARRAY[''ab'', NULL] AS codes, flags FROM fz_arr_0311'$$),
	('asource', $$'SELECT id, day, ARRAY[''abcd''] AS tags, codes, flags FROM fz_arr_0311'$$),
	('asource', $$'SELECT id, day, tags, ARRAY[''abcd''] AS codes, flags FROM fz_arr_0311'$$),
	('asource', $$'SELECT id, day, tags, ARRAY[''abcd'']::varchar[] AS codes, flags FROM fz_arr_0311'$$),
	('asource', $$'SELECT id, day, tags, codes, ARRAY[B''1011''] AS flags FROM fz_arr_0311'$$),
	('asource', $$'SELECT id, day, tags, codes, ARRAY[B''11''] AS flags FROM fz_arr_0311'$$),
	-- records nested deeper than the stack allows, in a value or in the key, and one that is not
	('dquery', $$'SELECT 1 AS id, pg_temp.fz_nest(5000) AS v'$$), ('dquery', $$'SELECT pg_temp.fz_nest(5000) AS id, 1 AS v'$$),
	('dquery', $$'SELECT 1 AS id, pg_temp.fz_nest(50) AS v'$$), ('dkey', $$'{id}'$$), ('dkey', $$'{v}'$$),
	('krel', $$'fz_kinds'$$), ('kscope', 'NULL'), ('kscope', $$'id > 10'$$), ('kscope', $$'at > ''2026-03-12 00:00+00'''$$),
	-- who calls, and under which settings
	('session', 'none'), ('session', 'none'), ('session', 'none'), ('session', 'none'),
	('session', 'role=regress_fz_rls'), ('session', 'timezone=Pacific/Chatham'), ('session', 'datestyle=SQL, DMY'),
	('session', 'extra_float_digits=-15'), ('session', 'intervalstyle=iso_8601'), ('session', 'search_path=pg_catalog, public'),
	-- rows forged by the database owner, claiming to be backfill's own, and tasks to dry-run
	('forge', $$'INSERT INTO backfill_tasks_data (run_id, task, partition, range_from, range_to, origin) SELECT max(id), 7, ''public.fz_default'', ''1900-01-01'', ''2100-01-01'', ''backfill'' FROM backfill_runs_data'$$),
	('forge', $$'INSERT INTO backfill_tasks_data (run_id, task, partition, range_from, range_to) SELECT max(id), 0, ''public.fz_0310'', ''2026-03-10'', ''2026-03-11'' FROM backfill_runs_data'$$),
	('forge', $$'INSERT INTO backfill_tasks_data (run_id, task, range_from, range_to, origin) SELECT max(id), 7, ''2026-03-10'', ''2026-03-11'', ''backfill'' FROM backfill_runs_data'$$),
	('forge', $$'INSERT INTO backfill_log_data (logged_by, operation, target, partition, fingerprint_after, origin) VALUES (''regress_fz_rls'', ''replace'', ''public.fz'', ''public.fz_0310'', ''0'', ''backfill'')'$$),
	('forge', $$'INSERT INTO backfill_runs_data (planned_by, target, strategy, source, range_from, range_to, options, pinned, dependents, untouched, status, origin) SELECT planned_by, target, strategy, ''DELETE FROM fz RETURNING *'', ''1900-01-01'', ''2100-01-01'', options, pinned, dependents, untouched, ''planned'', ''backfill'' FROM backfill_runs_data ORDER BY id LIMIT 1'$$),
	('forge', $$'UPDATE backfill_tasks_data SET origin = ''outside'''$$), ('forge', $$'SET session_replication_role = replica'$$),
	('ftask', '7'), ('ftask', '0'), ('ftask', '1'),
	-- array arguments far over the cap of 1,664 elements
	('key', $$(SELECT array_agg('c' || g) FROM generate_series(1, 100000) g)$$), ('key', $$(SELECT array_agg('id') FROM generate_series(1, 5000))$$),
	('measures', $$(SELECT array_agg('count(*)') FROM generate_series(1, 100000))$$),
	('options', $$(SELECT jsonb_build_object('reconcile', jsonb_agg('count(*)'::text)) FROM generate_series(1, 100000))$$),
	('poptions', $$'{}'$$), ('poptions', $$'{"window_column": "day", "chunk": "1 day"}'$$), ('poptions', $$'{"reconcile": ["count(*)"], "max_workers": 2}'$$);
CREATE TEMP TABLE template (name text, args text[], sql text);
INSERT INTO template VALUES
	('fingerprint', '{rel,scope}', 'SELECT backfill_fingerprint(%s, %s)'),
	('diff', '{query,query,key}', 'SELECT count(*) FROM backfill_diff(%s, %s, %s)'),
	('assert_unique', '{rel,key,scope}', 'SELECT backfill_assert_unique(%s, %s, %s)'),
	('reconcile', '{query,query,measures,num,bool}', 'SELECT count(*) FROM backfill_reconcile(%s, %s, %s, %s, %s)'),
	('replace_partition', '{rel,query,bool,bool,int,int}', 'SELECT backfill_replace_partition(%s, %s, %s, %s, %s, %s)'),
	('undo', '{logid,int,int}', 'SELECT backfill_undo(%s, %s, %s)'),
	('merge', '{rel,query,key,scope,bool}', 'SELECT backfill_merge(%s, %s, %s, %s, %s)'),
	('probe', '{query,rel,scope,int}', 'SELECT backfill_probe_idempotency(%s, %s, %s, %s)'),
	('plan', '{rel,bound,bound,query,strategy,key,options}', 'SELECT backfill_plan(%s, %s, %s, %s, %s, %s, %s)'),
	('run', '{run,int}', 'CALL backfill_run(%s, %s)'),
	('dry_run', '{run,task}', 'SELECT count(*) FROM backfill_dry_run(%s, %s)'),
	('pause', '{run}', 'SELECT backfill_pause(%s)'),
	('resume', '{run}', 'SELECT backfill_resume(%s)'),
	('cancel', '{run}', 'SELECT backfill_cancel(%s)'),
	('retry', '{run,task}', 'SELECT backfill_retry(%s, %s)'),
	('schedule', '{run,cron,int}', 'SELECT backfill_schedule(%s, %s, %s)'),
	('visible', '{query}', 'SELECT backfill_visible(%s)'),
	('replace_partition, mostly good', '{part,source,bool,bool,pint,pint}', 'SELECT backfill_replace_partition(%s, %s, %s, %s, %s, %s)'),
	('merge, mostly good', '{mtarget,msource,mkey,mscope,bool}', 'SELECT backfill_merge(%s, %s, %s, %s, %s)'),
	('plan, mostly good', '{ptarget,pbound,pbound,source,pstrategy,mkey,poptions}', 'SELECT backfill_plan(%s, %s, %s, %s, %s, %s, %s)'),
	('dry_run, mostly good', '{run,task}', 'SELECT count(*) FROM backfill_dry_run(%s, %s)'),
	('replace_partition, arrays', '{apart,asource,bool,bool,pint,pint}', 'SELECT backfill_replace_partition(%s, %s, %s, %s, %s, %s)'),
	('merge, arrays', '{atarget,asource,mkey,mscope,bool}', 'SELECT backfill_merge(%s, %s, %s, %s, %s)'),
	('fingerprint, arrays', '{atarget,mscope}', 'SELECT backfill_fingerprint(%s, %s)'),
	('diff, deep', '{dquery,dquery,dkey}', 'SELECT count(*) FROM backfill_diff(%s, %s, %s)'),
	('fingerprint, settings', '{krel,kscope}', 'SELECT backfill_fingerprint(%s, %s)'),
	('forged state rows', '{forge,ftask}', 'SELECT pg_temp.forge(%s, %s)');

-- one call: its outcome ('ok', or the SQLSTATE), whether a refused call changed anything
CREATE TEMP TABLE outcome (n int, call text, session text, sqlstate text, message text, changed boolean, broken text);
CREATE FUNCTION pg_temp.try(n int, call text, session text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	before text := pg_temp.state(); st text := 'ok'; msg text; after text; logs bigint := (SELECT count(*) FROM backfill_log);
	broken text; base text; res text;
BEGIN
	BEGIN
		-- a fingerprint under the test's own settings, to compare with the same one under others
		-- (not of pg_class, whose rows autovacuum and other sessions update in place, seen by
		-- every snapshot: two reads of it may differ whatever the settings)
		IF call LIKE 'SELECT backfill_fingerprint(%' AND session NOT IN ('none', 'role=regress_fz_rls')
		   AND call NOT LIKE 'SELECT backfill_fingerprint(''pg_class''%' THEN
			EXECUTE call INTO base;
		END IF;
		IF session <> 'none' THEN
			PERFORM set_config(split_part(session, '=', 1), substr(session, strpos(session, '=') + 1), true);
		END IF;
		EXECUTE call INTO res;
		IF res LIKE 'broken: %' THEN
			broken := substr(res, 9);
		END IF;
		IF base IS NOT NULL AND res IS DISTINCT FROM base THEN
			broken := format('the fingerprint changed with %s: %s, not %s', session, res, base);
		END IF;
		IF session = 'role=regress_fz_rls' AND EXISTS (SELECT FROM backfill_log WHERE target_oid = 'fz_flat'::regclass
				AND num_nonnulls(rows_before, rows_after, fingerprint_before, fingerprint_after) > 0) THEN
			broken := 'a role whose policy hides rows of fz_flat saw counts or fingerprints of it in backfill_log';
		END IF;
		PERFORM set_config('role', 'none', true);
		-- nothing stored longer than its column allows, whatever the call was given
		IF EXISTS (SELECT FROM fz_arr, unnest(tags || codes::varchar[]) v WHERE length(v) > 3)
		   OR EXISTS (SELECT FROM fz_arr, unnest(flags) f WHERE length(f) <> 3) THEN
			broken := 'a value longer than its column allows was written to fz_arr';
		END IF;
		-- a call that worked: no staging table left; a write logged once, its record true to the data
		IF EXISTS (SELECT FROM pg_class WHERE relname LIKE 'backfill\_stage\_%') THEN
			broken := 'a staging table was left';
		ELSIF call ~ '^SELECT backfill_(replace_partition|undo|merge)' THEN
			IF (SELECT count(*) FROM backfill_log) <> logs + 1 THEN
				broken := 'not one log record';
			ELSIF NOT (SELECT fingerprint_after = (CASE WHEN partition IS NOT NULL THEN backfill_fingerprint(partition::regclass)
						   ELSE backfill_fingerprint(target::regclass, details->>'scope') END).hash
					   FROM backfill_log ORDER BY id DESC LIMIT 1) THEN
				broken := 'the log record''s fingerprint_after is not the data''s';
			END IF;
		END IF;
		RAISE EXCEPTION USING ERRCODE = 'FZZZZ';	-- undo what a call that worked did
	EXCEPTION WHEN OTHERS THEN
		IF SQLSTATE <> 'FZZZZ' THEN
			st := SQLSTATE;
			msg := SQLERRM;
		END IF;
	END;
	after := pg_temp.state();
	INSERT INTO outcome VALUES (n, call, session, st, msg, after <> before, broken);
END $$;

SELECT setseed(0.20261129);
SELECT pg_temp.try(i, format(t.sql, VARIADIC (
	SELECT array_agg((SELECT p.val FROM pool p WHERE p.kind = a.kind ORDER BY random() + i * 0 LIMIT 1) ORDER BY a.ord)
	FROM unnest(t.args) WITH ORDINALITY AS a(kind, ord))),
	(SELECT p.val FROM pool p WHERE p.kind = 'session' ORDER BY random() + i * 0 LIMIT 1))
FROM generate_series(1, 2000) i,
	 LATERAL (SELECT * FROM template ORDER BY random() + i * 0 LIMIT 1) t;

SELECT is((SELECT count(*) FROM outcome), 2000::bigint, 'fuzz: 2000 calls made, the connection alive throughout');
SELECT is((SELECT string_agg(format('#%s %s: %s %s', n, call, sqlstate, message), E'\n') FROM outcome WHERE sqlstate LIKE 'XX%'),
		  NULL, 'fuzz: no internal error (class XX)');
SELECT is((SELECT string_agg(format('#%s %s: %s', n, call, sqlstate), E'\n') FROM outcome WHERE changed),
		  NULL, 'fuzz: every call left the state as it was once rolled back, refused calls included (no staging table, no log row)');
SELECT ok((SELECT count(DISTINCT split_part(call, '(', 1)) FROM outcome WHERE sqlstate = 'ok'
		   AND call ~ '^SELECT (backfill_replace_partition|backfill_merge|backfill_plan|backfill_undo)') >= 3,
		  format('fuzz: calls that write worked too (%s calls worked in all: %s)', (SELECT count(*) FROM outcome WHERE sqlstate = 'ok'),
				 (SELECT string_agg(DISTINCT split_part(call, '(', 1), ', ') FROM outcome WHERE sqlstate = 'ok')));
SELECT is((SELECT string_agg(format('#%s %s: %s', n, call, broken), E'\n') FROM outcome WHERE broken IS NOT NULL),
		  NULL, 'fuzz: after every call that worked, no staging table was left, each write had one log record true to the data, and no forged row passed for backfill''s own');
SELECT ok((SELECT count(DISTINCT sqlstate) FROM outcome) >= 8,
		  format('fuzz: the errors are varied (%s SQLSTATEs: %s)', (SELECT count(DISTINCT sqlstate) FROM outcome),
				 (SELECT string_agg(DISTINCT sqlstate, ' ') FROM outcome)));
SELECT is((SELECT string_agg(format('#%s %s: %s %s', n, call, sqlstate, message), E'\n') FROM outcome
		   WHERE sqlstate <> 'ok' AND (message IS NULL OR message = '' OR message LIKE '%cache lookup failed%'
									   OR message LIKE 'SPI_%' OR message LIKE 'could not %' AND sqlstate NOT IN ('55P03', '55000', '42P01'))),
		  NULL, 'fuzz: every error says what was wrong (no bare "cache lookup failed" or SPI message)');

SELECT ok((SELECT count(*) FROM outcome WHERE sqlstate = '54001') > 0
		  AND (SELECT count(*) FROM outcome WHERE sqlstate IN ('22001', '22026')) > 0
		  AND (SELECT count(*) FROM outcome WHERE call ~ 'fz_arr' AND sqlstate = 'ok' AND call ~ '^SELECT backfill_(replace|merge)') > 0
		  AND (SELECT count(DISTINCT session) FROM outcome) = (SELECT count(DISTINCT val) FROM pool WHERE kind = 'session')
		  AND (SELECT count(*) FROM outcome WHERE session = 'role=regress_fz_rls' AND sqlstate = 'ok') > 0
		  AND (SELECT count(*) FROM outcome WHERE call LIKE 'SELECT backfill_fingerprint(''fz_kinds''%' AND sqlstate = 'ok'
			   AND session NOT IN ('none', 'role=regress_fz_rls')) > 0
		  AND (SELECT count(*) FROM outcome WHERE sqlstate = '54000') > 0
		  AND (SELECT count(*) FROM outcome WHERE call LIKE 'SELECT pg_temp.forge(%' AND sqlstate = 'ok') > 0,
		  format('fuzz: the hostile shapes were reached (%s arrays over the cap, %s forgeries tried, %s too deep, %s too long, %s array writes that worked, %s calls by the restricted role, %s under other settings, %s fingerprints of fz_kinds compared across settings)',
				 (SELECT count(*) FROM outcome WHERE sqlstate = '54000'),
				 (SELECT count(*) FROM outcome WHERE call LIKE 'SELECT pg_temp.forge(%' AND sqlstate = 'ok'),
				 (SELECT count(*) FROM outcome WHERE sqlstate = '54001'),
				 (SELECT count(*) FROM outcome WHERE sqlstate IN ('22001', '22026')),
				 (SELECT count(*) FROM outcome WHERE call ~ 'fz_arr' AND sqlstate = 'ok' AND call ~ '^SELECT backfill_(replace|merge)'),
				 (SELECT count(*) FROM outcome WHERE session = 'role=regress_fz_rls'),
				 (SELECT count(*) FROM outcome WHERE session NOT IN ('none', 'role=regress_fz_rls')),
				 (SELECT count(*) FROM outcome WHERE call LIKE 'SELECT backfill_fingerprint(''fz_kinds''%' AND sqlstate = 'ok'
				  AND session NOT IN ('none', 'role=regress_fz_rls'))));

SELECT diag('fuzz outcomes: ' || (SELECT string_agg(format('%s %s', sqlstate, c), ', ' ORDER BY c DESC)
								  FROM (SELECT sqlstate, count(*) AS c FROM outcome GROUP BY 1) x));
SELECT * FROM finish();
ROLLBACK;
