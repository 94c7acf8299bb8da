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
BEGIN;
SET LOCAL client_min_messages = warning;
SET LOCAL datestyle = 'ISO, YMD';
SET LOCAL statement_timeout = '20s';
SELECT plan(7);

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
	('rel', $$'fz_view'$$), ('rel', $$'fz_seq'$$), ('rel', $$'"fz odd ""name""; x"'$$), ('rel', $$'pg_class'$$),
	('rel', 'NULL'), ('rel', (SELECT oid FROM gone)), ('rel', $$'backfill_log'$$),
	('query', $$'SELECT * FROM fz_src WHERE day >= $1 AND day < $2'$$), ('query', $$'TABLE fz_src'$$),
	('query', $$'SELECT id, day, v FROM fz_src'$$), ('query', $$''$$), ('query', $$';'$$), ('query', $$'SELECT 1; SELECT 2'$$),
	('query', $$'DELETE FROM fz_src RETURNING *'$$), ('query', $$'SELECT ('$$), ('query', $$'SELECT * FROM fz_src WHERE day = $3'$$),
	('query', $$'SELECT * FROM fz_src FOR UPDATE'$$), ('query', $$'SELECT id, id AS id FROM fz_src'$$),
	('query', $$'SELECT * FROM fz_src WHERE false'$$), ('query', $$'SELECT 1/0 AS id'$$), ('query', 'NULL'),
	('query', $$'SELECT * FROM fz_src) x; DROP TABLE fz; --'$$), ('query', $$'SELECT id::text AS id, day, v FROM fz_src'$$),
	('query', $$'INSERT INTO fz_flat SELECT * FROM fz_src WHERE day = ''2026-03-11'''$$),
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
	('dry_run, mostly good', '{run,task}', 'SELECT count(*) FROM backfill_dry_run(%s, %s)');

-- one call: its outcome ('ok', or the SQLSTATE), whether a refused call changed anything
CREATE TEMP TABLE outcome (n int, call text, sqlstate text, message text, changed boolean, broken text);
CREATE FUNCTION pg_temp.try(n int, call text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	before text := pg_temp.state(); st text := 'ok'; msg text; after text; logs bigint := (SELECT count(*) FROM backfill_log);
	broken text;
BEGIN
	BEGIN
		EXECUTE call;
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
	INSERT INTO outcome VALUES (n, call, st, msg, after <> before, broken);
END $$;

SELECT setseed(0.20261129);
SELECT pg_temp.try(i, format(t.sql, VARIADIC (
	SELECT array_agg((SELECT p.val FROM pool p WHERE p.kind = a.kind ORDER BY random() + i * 0 LIMIT 1) ORDER BY a.ord)
	FROM unnest(t.args) WITH ORDINALITY AS a(kind, ord))))
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
		  NULL, 'fuzz: after every call that worked, no staging table was left and each write had one log record true to the data');
SELECT ok((SELECT count(DISTINCT sqlstate) FROM outcome) >= 8,
		  format('fuzz: the errors are varied (%s SQLSTATEs: %s)', (SELECT count(DISTINCT sqlstate) FROM outcome),
				 (SELECT string_agg(DISTINCT sqlstate, ' ') FROM outcome)));
SELECT is((SELECT string_agg(format('#%s %s: %s %s', n, call, sqlstate, message), E'\n') FROM outcome
		   WHERE sqlstate <> 'ok' AND (message IS NULL OR message = '' OR message LIKE '%cache lookup failed%'
									   OR message LIKE 'SPI_%' OR message LIKE 'could not %' AND sqlstate NOT IN ('55P03', '55000', '42P01'))),
		  NULL, 'fuzz: every error says what was wrong (no bare "cache lookup failed" or SPI message)');

SELECT diag('fuzz outcomes: ' || (SELECT string_agg(format('%s %s', sqlstate, c), ', ' ORDER BY c DESC)
								  FROM (SELECT sqlstate, count(*) AS c FROM outcome GROUP BY 1) x));
SELECT * FROM finish();
ROLLBACK;
