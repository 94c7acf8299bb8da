-- test/security.sql: hostile objects, privileges and the append-only log.
--
-- 1. Objects that a user with CREATE on public could plant to shadow what backfill's own SQL
--    calls (operators, aggregates, functions, types, a temporary table of the same name) do
--    not change any result or error of fingerprint, assert_unique, diff, reconcile, a plan or
--    a dry run, with the
--    default search_path and with public searched before pg_catalog.
-- 2. A role without privileges cannot write backfill_log nor read, through backfill, a table it
--    cannot SELECT; what it reads through backfill is what row security lets it see.
-- 3. The owner of backfill_log (here the superuser) cannot update, delete or truncate it.
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(54);

-- ============================================================ hostile objects
CREATE TABLE sec_u (id int, grp int, flag boolean, amount numeric(10,2), label text);
INSERT INTO sec_u SELECT g, g % 4, g % 3 = 0, g * 1.25, 'l' || g FROM generate_series(1, 400) g;
CREATE TABLE sec_v AS SELECT * FROM sec_u;
UPDATE sec_v SET amount = amount + 1 WHERE id IN (3, 30);
DELETE FROM sec_v WHERE id = 300;
INSERT INTO sec_v VALUES (401, 1, true, 9.99, 'new');
CREATE TABLE sec_d AS SELECT * FROM sec_u;
INSERT INTO sec_d SELECT * FROM sec_u WHERE id IN (7, 8, 9);
INSERT INTO sec_d SELECT * FROM sec_u WHERE id = 7;
CREATE TABLE sec_n AS SELECT * FROM sec_u;
UPDATE sec_n SET id = NULL WHERE id IN (5, 6);
CREATE TABLE sec_i AS SELECT * FROM sec_u;
CREATE UNIQUE INDEX ON sec_i (id);
CREATE TABLE sec_p (id int NOT NULL, day date NOT NULL, amount numeric(10,2)) PARTITION BY RANGE (day);
CREATE TABLE sec_p_1 PARTITION OF sec_p FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
CREATE TABLE sec_p_2 PARTITION OF sec_p FOR VALUES FROM ('2026-03-02') TO ('2026-03-03');
INSERT INTO sec_p SELECT id, date '2026-03-01' + id % 2, amount FROM sec_u;
CREATE TABLE sec_days AS SELECT id, day, amount * 2 AS amount FROM sec_p;

-- capture(): results and errors of every function on these tables, as text.
CREATE FUNCTION pg_temp.capture() RETURNS TABLE (name text, val text) LANGUAGE plpgsql AS $$
DECLARE
	s text; m text; d text; r bigint;
BEGIN
	name := 'fingerprint';
	val := (backfill_fingerprint('public.sec_u'::regclass))::text;
	RETURN NEXT;
	name := 'fingerprint with scope';
	val := (backfill_fingerprint('public.sec_u'::regclass, 'flag'))::text;
	RETURN NEXT;
	name := 'assert_unique';
	val := backfill_assert_unique('public.sec_u'::regclass, ARRAY['id', 'grp'])::text;
	RETURN NEXT;
	name := 'assert_unique with scope';
	val := backfill_assert_unique('public.sec_d'::regclass, ARRAY['id'], 'id OPERATOR(pg_catalog.>) 10')::text;
	RETURN NEXT;
	name := 'assert_unique proven by an index';
	val := backfill_assert_unique('public.sec_i'::regclass, ARRAY['id'], 'flag')::text;
	RETURN NEXT;
	name := 'assert_unique duplicates';
	BEGIN
		val := backfill_assert_unique('public.sec_d'::regclass, ARRAY['id'])::text;
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL;
		val := format('%s %s / %s', s, m, d);
	END;
	RETURN NEXT;
	name := 'assert_unique NULLs';
	BEGIN
		val := backfill_assert_unique('public.sec_n'::regclass, ARRAY['id'])::text;
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL;
		val := format('%s %s / %s', s, m, d);
	END;
	RETURN NEXT;
	name := 'diff';
	SELECT string_agg(format('%s %s %s %s', x.change, x.key, x.a_row, x.b_row), '; ' ORDER BY x.key::text COLLATE "C")
	INTO val FROM backfill_diff('TABLE public.sec_u', 'TABLE public.sec_v', ARRAY['id']) x;
	RETURN NEXT;
	name := 'diff duplicates';
	BEGIN
		PERFORM backfill_diff('TABLE public.sec_u', 'TABLE public.sec_d', ARRAY['id']);
		val := 'no error';
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL;
		val := format('%s %s / %s', s, m, d);
	END;
	RETURN NEXT;
	name := 'reconcile';
	SELECT string_agg(format('%s %s %s %s %s', x.measure, x.target_value, x.source_value, x.difference, x.ok), '; ')
	INTO val FROM backfill_reconcile('TABLE public.sec_v', 'TABLE public.sec_u',
	                                 ARRAY['pg_catalog.count(*)', 'pg_catalog.sum(amount)', 'pg_catalog.max(id)'],
	                                 1, false) x;
	RETURN NEXT;
	name := 'reconcile raising';
	BEGIN
		PERFORM backfill_reconcile('TABLE public.sec_v', 'TABLE public.sec_u',
		                           ARRAY['pg_catalog.count(*)', 'pg_catalog.sum(amount)'], 0.5);
		val := 'no error';
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL;
		val := format('%s %s / %s', s, m, d);
	END;
	RETURN NEXT;
	name := 'plan and dry run';
	r := backfill_plan('public.sec_p'::regclass, '2026-03-01', '2026-03-03',
		'SELECT id, day, amount FROM public.sec_days WHERE day OPERATOR(pg_catalog.>=) $1 AND day OPERATOR(pg_catalog.<) $2',
		key => ARRAY['id'], options => '{"reconcile": ["pg_catalog.count(*)", "pg_catalog.sum(amount)"]}');
	SELECT string_agg(t.partition || ' ' || t.range_from || ' ' || t.range_to, ', ' ORDER BY t.task) || ' | ' ||
		   (SELECT row(y.rows_before, y.rows_after, y.fingerprint_before, y.fingerprint_after, y.added, y.removed, y.changed,
					   y.reconciled, y.reconcile)::text FROM backfill_dry_run(r) y)
	INTO val FROM backfill_tasks t WHERE t.run_id = r;
	RETURN NEXT;
END $$;

CREATE TEMP TABLE clean AS SELECT * FROM pg_temp.capture();

-- The hostile objects: each would change a result if backfill's SQL resolved it.
CREATE FUNCTION public.regress_true(int, int) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE OPERATOR public.= (LEFTARG = int, RIGHTARG = int, FUNCTION = public.regress_true);
CREATE FUNCTION public.regress_false(bigint, int) RETURNS boolean LANGUAGE sql AS 'SELECT false';
CREATE OPERATOR public.> (LEFTARG = bigint, RIGHTARG = int, FUNCTION = public.regress_false);
CREATE FUNCTION public.regress_false8(bigint, bigint) RETURNS boolean LANGUAGE sql AS 'SELECT false';
CREATE OPERATOR public.> (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = public.regress_false8);
CREATE FUNCTION public.regress_zero_state(bigint) RETURNS bigint LANGUAGE sql AS 'SELECT 0::pg_catalog.int8';
CREATE AGGREGATE public.count(*) (SFUNC = public.regress_zero_state, STYPE = bigint, INITCOND = '0');
CREATE FUNCTION public.regress_zero_sum(numeric, bigint) RETURNS numeric LANGUAGE sql AS 'SELECT 0::pg_catalog.numeric';
CREATE AGGREGATE public.sum(bigint) (SFUNC = public.regress_zero_sum, STYPE = numeric, INITCOND = '0');
CREATE FUNCTION public.regress_zero_sumn(numeric, numeric) RETURNS numeric LANGUAGE sql AS 'SELECT 0::pg_catalog.numeric';
CREATE AGGREGATE public.sum(numeric) (SFUNC = public.regress_zero_sumn, STYPE = numeric, INITCOND = '0');
CREATE FUNCTION public.hash_record_extended(record, bigint) RETURNS bigint LANGUAGE plpgsql AS 'BEGIN RETURN 0; END';
CREATE FUNCTION public.int8(numeric) RETURNS bigint LANGUAGE sql AS 'SELECT 42::pg_catalog.int8';
CREATE FUNCTION public.numeric(bigint) RETURNS numeric LANGUAGE sql AS 'SELECT 42::pg_catalog.numeric';
CREATE FUNCTION public.row_to_json(record) RETURNS json LANGUAGE plpgsql AS $$BEGIN RETURN '{}'; END$$;
CREATE FUNCTION public.coalesce(numeric, int) RETURNS numeric LANGUAGE sql AS 'SELECT 42::pg_catalog.numeric';
CREATE DOMAIN public.int8 AS integer;
CREATE DOMAIN public.numeric AS integer;
-- a temporary table with the name of a table under test, and other rows
CREATE TEMP TABLE sec_u AS SELECT * FROM public.sec_u WHERE id < 10;

CREATE TEMP TABLE hostile AS SELECT * FROM pg_temp.capture();
SET LOCAL search_path = public, pg_catalog;
CREATE TEMP TABLE hostile_first AS SELECT * FROM pg_temp.capture();
-- proof that the hostile objects are live under this search_path
CREATE TEMP TABLE premise AS
SELECT (SELECT 1 = 2) AS eq_true, (SELECT count(*) FROM public.sec_u) AS count_zero,
       (SELECT 3::bigint > 1) AS gt_false, (SELECT typnamespace::regnamespace::text FROM pg_type WHERE oid = pg_typeof(1.5::int8)) AS int8_schema;
RESET search_path;
DROP TABLE pg_temp.sec_u;
DROP DOMAIN public.int8, public.numeric;
DROP AGGREGATE public.count(*), public.sum(bigint), public.sum(numeric);
DROP OPERATOR public.= (int, int), public.> (bigint, int), public.> (bigint, bigint);

SELECT is((SELECT row(eq_true, count_zero, gt_false, int8_schema)::text FROM premise),
          '(t,0,f,public)',
          'premise: with public first, = , count(*), > and int8 resolve to the hostile objects');
SELECT is((SELECT count(*) FROM clean WHERE val IS NOT NULL), 12::bigint, 'premise: 12 results captured');
SELECT ok((SELECT val FROM clean WHERE name = 'plan and dry run') ~ '^public.sec_p_1 2026-03-01 2026-03-02, public.sec_p_2 2026-03-02 2026-03-03 \| \(200,200,[0-9a-f]+,[0-9a-f]+,0,0,200,t,',
		  'premise: the plan has its two tasks, and the dry run sees every amount changed and reconciles');
SELECT ok((SELECT val FROM clean WHERE name = 'assert_unique duplicates') LIKE '23505 %',
          'premise: the duplicates are reported');

SELECT is(h.val, c.val, 'hostile objects, default search_path: same ' || c.name)
FROM clean c LEFT JOIN hostile h USING (name) ORDER BY c.name;
SELECT is(h.val, c.val, 'hostile objects, public before pg_catalog: same ' || c.name)
FROM clean c LEFT JOIN hostile_first h USING (name) ORDER BY c.name;

-- ============================================================ a role without privileges
CREATE ROLE regress_reader;
CREATE TABLE sec_secret (id int, v text);
INSERT INTO sec_secret VALUES (1, 'secret');
REVOKE ALL ON sec_secret FROM PUBLIC;

-- row security: the reader sees the rows of group 1 only
CREATE TABLE sec_rls AS SELECT * FROM sec_u;
ALTER TABLE sec_rls ENABLE ROW LEVEL SECURITY;
CREATE POLICY regress_grp1 ON sec_rls FOR SELECT TO regress_reader USING (grp = 1);
GRANT SELECT ON sec_rls TO regress_reader;
CREATE TABLE sec_rls_visible AS SELECT * FROM sec_u WHERE grp = 1;
GRANT SELECT ON sec_rls_visible TO regress_reader;

INSERT INTO backfill_log (logged_by, operation, target) VALUES (current_user, 'regress', 'public.sec_u'),
	(current_user, 'regress', 'public.sec_secret'), (current_user, 'regress', 'public.sec_rls_visible');
CREATE TEMP TABLE log_before AS SELECT (backfill_fingerprint('backfill_log_data'))::text AS fp;
GRANT SELECT ON log_before TO regress_reader;

SET ROLE regress_reader;
SELECT throws_ok($$INSERT INTO backfill_log (logged_by, operation, target) VALUES ('regress_reader', 'forged', 'public.sec_u')$$,
                 '42501', 'permission denied for view backfill_log', 'reader: INSERT into backfill_log refused');
SELECT throws_ok($$INSERT INTO backfill_log_data (logged_by, operation, target) VALUES ('regress_reader', 'forged', 'public.sec_u')$$,
                 '42501', 'permission denied for table backfill_log_data', 'reader: INSERT into backfill_log_data refused');
SELECT throws_ok($$UPDATE backfill_log SET target = 'x'$$,
                 '42501', 'permission denied for view backfill_log', 'reader: UPDATE of backfill_log refused');
SELECT throws_ok($$DELETE FROM backfill_log$$,
                 '42501', 'permission denied for view backfill_log', 'reader: DELETE from backfill_log refused');
SELECT throws_ok($$TRUNCATE backfill_log_data$$,
                 '42501', 'permission denied for table backfill_log_data', 'reader: TRUNCATE of backfill_log_data refused');
SELECT throws_ok($$SELECT * FROM backfill_log_data$$,
                 '42501', 'permission denied for table backfill_log_data', 'reader: the table under backfill_log cannot be read directly');
SELECT throws_ok($$SELECT nextval('backfill_log_id_seq')$$,
                 '42501', NULL, 'reader: the log''s sequence cannot be advanced');
SELECT throws_ok($$SELECT backfill_log_guard()$$,
                 '42501', NULL, 'reader: the guard function cannot be called');
SELECT is((SELECT string_agg(target, ',' ORDER BY target) FROM backfill_log WHERE operation = 'regress'),
          'public.sec_rls_visible', 'reader: backfill_log shows the records of the tables it may read, and no other');
SELECT throws_ok($$SELECT backfill_fingerprint('sec_secret')$$,
                 '42501', 'permission denied for table sec_secret', 'reader: fingerprint of a table it cannot SELECT');
SELECT throws_ok($$SELECT backfill_fingerprint('sec_secret', 'id = 1')$$,
                 '42501', 'permission denied for table sec_secret', 'reader: scoped fingerprint of a table it cannot SELECT');
SELECT throws_ok($$SELECT backfill_assert_unique('sec_secret', '{id}')$$,
                 '42501', 'permission denied for table sec_secret', 'reader: assert_unique of a table it cannot SELECT');
SELECT throws_ok($$SELECT * FROM backfill_diff('TABLE sec_secret', 'TABLE sec_secret', '{id}')$$,
                 '42501', NULL, 'reader: diff over a table it cannot SELECT');
SELECT throws_ok($$SELECT * FROM backfill_reconcile('TABLE sec_secret', 'TABLE sec_secret', '{count(*)}')$$,
                 '42501', NULL, 'reader: reconcile over a table it cannot SELECT');
SELECT is((backfill_fingerprint('sec_rls'))::text, (backfill_fingerprint('sec_rls_visible'))::text,
          'reader: fingerprint covers only the rows row security lets it see');
SELECT is(backfill_assert_unique('sec_rls', '{id}'), 100::bigint,
          'reader: assert_unique checks only the rows row security lets it see');
RESET ROLE;
SELECT is((backfill_fingerprint('backfill_log_data'))::text, (SELECT fp FROM log_before),
          'backfill_log unchanged by the reader''s attempts');

-- ============================================================ append-only, for the owner too
SELECT is((SELECT tableowner::text FROM pg_tables WHERE schemaname = 'public' AND tablename = 'backfill_log_data'),
          current_user::text, 'premise: the current (super)user owns backfill_log_data');
SELECT throws_ok($$UPDATE backfill_log SET target = 'forged' WHERE operation = 'regress'$$,
                 '42501', 'backfill_log is append-only: its rows cannot be updated', 'owner: UPDATE refused');
SELECT throws_ok($$DELETE FROM backfill_log WHERE operation = 'regress'$$,
                 '42501', 'backfill_log is append-only: its rows cannot be deleted', 'owner: DELETE refused');
SELECT throws_ok($$TRUNCATE backfill_log_data$$,
                 '42501', 'backfill_log is append-only: it cannot be truncated', 'owner: TRUNCATE refused');
SELECT throws_ok($$INSERT INTO backfill_log_data (id, logged_by, operation, target)
                   SELECT id, logged_by, operation, 'forged' FROM backfill_log_data WHERE operation = 'regress'
                   ON CONFLICT (id) DO UPDATE SET target = excluded.target$$,
                 '42501', 'backfill_log is append-only: its rows cannot be updated', 'owner: INSERT ... ON CONFLICT DO UPDATE refused');
SELECT throws_ok($$MERGE INTO backfill_log_data l USING (SELECT 1) s ON l.operation = 'regress' WHEN MATCHED THEN DELETE$$,
                 '42501', 'backfill_log is append-only: its rows cannot be deleted', 'owner: MERGE ... DELETE refused');
SELECT throws_ok($$WITH gone AS (DELETE FROM backfill_log_data RETURNING 1) SELECT count(*) FROM gone$$,
                 '42501', 'backfill_log is append-only: its rows cannot be deleted', 'owner: DELETE in a WITH refused');
SELECT is((backfill_fingerprint('backfill_log_data'))::text, (SELECT fp FROM log_before),
          'backfill_log unchanged by the owner''s attempts');
SELECT throws_ok($$SELECT backfill_log_guard()$$,
                 '39P01', 'backfill_log_guard must be called as a trigger', 'the guard refuses to run outside a trigger');

SELECT * FROM finish();
ROLLBACK;
