-- test/value_fidelity.sql: every write stores exactly what an INSERT or UPDATE of the same
-- value would store, and leaves the target equal to the source by representation.
--
-- replace: for each shape of type (arrays of length-limited types, domains, domains over
-- arrays, arrays of domains, composites, numeric), a value a plain INSERT into the partition
-- refuses is refused with the same SQLSTATE, and nothing changes (fingerprint, log, no
-- staging table left); a value that fits is stored as the INSERT stores it.
-- merge: values equal by their type's equality but different in representation (a
-- case-insensitive collation, 1.0 and 1.00, '24:00:00' and '1 day', 0 and -0, jsonb numbers)
-- are written, so the scope's fingerprint equals the source's; a rerun writes nothing.
-- runs: the dry run without a key compares by representation and accepts json; a chunked
-- delete+insert whose source reads the target itself writes the source's rows, and a chunk
-- whose source returns nothing is refused unless allow_empty.
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(45);

CREATE DOMAIN vf_d3 AS varchar(3);
CREATE DOMAIN vf_d3a AS varchar(3)[];
CREATE DOMAIN vf_dn AS numeric(4,2);
CREATE TYPE vf_c3 AS (s varchar(3), n numeric(4,2));
CREATE TABLE vf (
	id int NOT NULL,
	day date NOT NULL,
	a varchar(3)[],
	b char(2)[],
	c bit(3)[],
	d varbit(3)[],
	e vf_d3,
	f vf_d3a,
	g vf_d3[],
	h vf_c3,
	i numeric(4,2),
	j numeric(4,2)[],
	k vf_dn,
	l vf_d3a[]
) PARTITION BY RANGE (day);
CREATE TABLE vf_01 PARTITION OF vf FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
INSERT INTO vf (id, day, a, e) SELECT g, date '2026-01-01' + g % 28, '{ab}', 'xy' FROM generate_series(1, 50) g;
CREATE TEMP TABLE vf_twin (LIKE vf);

-- state(): what a refused call must leave as it was
CREATE FUNCTION pg_temp.state() RETURNS text LANGUAGE sql AS $$
	SELECT format('%s log=%s stage=%s', (SELECT f::text FROM backfill_fingerprint(to_regclass('vf_01')) f),
				  (SELECT count(*) FROM backfill_log),
				  (SELECT count(*) FROM pg_class WHERE relname LIKE 'backfill\_stage\_%'))
$$;
-- same_refusal(col, expr): a plain INSERT of expr into column col of vf_01 fails, and
-- backfill_replace_partition with a source giving that value fails with the same SQLSTATE,
-- changing nothing
CREATE FUNCTION pg_temp.same_refusal(col text, expr text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	want text; got text; m text; before text := pg_temp.state();
BEGIN
	BEGIN
		EXECUTE format('INSERT INTO vf_01 (id, day, %I) SELECT 1, date ''2026-01-05'', %s', col, expr);
		RAISE EXCEPTION USING ERRCODE = 'P0004', MESSAGE = 'premise';
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS want = RETURNED_SQLSTATE;
	END;
	IF want = 'P0004' THEN
		RETURN ok(false, format('%s := %s', col, expr)) || E'\n' || diag('a plain INSERT took the value');
	END IF;
	BEGIN
		PERFORM backfill_replace_partition('vf_01', format('SELECT 1 AS id, $1 AS day, %s AS %I', expr, col));
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS got = RETURNED_SQLSTATE, m = MESSAGE_TEXT;
	END;
	IF got IS NOT DISTINCT FROM want AND pg_temp.state() = before THEN
		RETURN ok(true, format('replace refuses %s := %s with %s, as INSERT does', col, expr, want));
	END IF;
	RETURN ok(false, format('replace refuses %s := %s with %s, as INSERT does', col, expr, want)) || E'\n'
		|| diag(format('replace: %s %s; state %s => %s', coalesce(got, 'no error'), m, before, pg_temp.state()));
END $$;
-- same_store(col, expr): replace stores expr in column col exactly as a plain INSERT does
CREATE FUNCTION pg_temp.same_store(col text, expr text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	a text; b text;
BEGIN
	PERFORM backfill_replace_partition('vf_01', format('SELECT 1 AS id, $1 AS day, %s AS %I', expr, col));
	TRUNCATE vf_twin;
	EXECUTE format('INSERT INTO vf_twin (id, day, %I) SELECT 1, date ''2026-01-01'', %s', col, expr);
	a := (SELECT f::text FROM backfill_fingerprint(to_regclass('vf_01')) f);
	b := (SELECT f::text FROM backfill_fingerprint('vf_twin') f);
	RETURN is(a, b, format('replace stores %s := %s as INSERT does', col, expr));
END $$;

-- ============================================================ replace: refused as INSERT refuses
SELECT pg_temp.same_refusal('a', $$ARRAY['abcd']$$);
SELECT pg_temp.same_refusal('a', $$'{ab,abcd}'::varchar[]$$);
SELECT pg_temp.same_refusal('b', $$ARRAY['abc']$$);
SELECT pg_temp.same_refusal('c', $$ARRAY[B'1010']$$);
SELECT pg_temp.same_refusal('c', $$ARRAY[B'10']$$);
SELECT pg_temp.same_refusal('d', $$ARRAY[B'1010']::varbit[]$$);
SELECT pg_temp.same_refusal('e', $$'abcd'::text$$);
SELECT pg_temp.same_refusal('f', $$ARRAY['abcd']$$);
SELECT pg_temp.same_refusal('g', $$ARRAY['abcd']$$);
SELECT pg_temp.same_refusal('h', $$ROW('abcd', 1)$$);
SELECT pg_temp.same_refusal('i', $$123.4$$);
SELECT pg_temp.same_refusal('j', $$ARRAY[123.4]$$);
SELECT pg_temp.same_refusal('k', $$123.4$$);
SELECT pg_temp.same_refusal('l', $$ARRAY[ARRAY['abcd']]::text[]$$);

-- ============================================================ replace: what fits is stored as INSERT stores it
SELECT pg_temp.same_store('a', $$ARRAY['ab', 'abc']$$);
SELECT pg_temp.same_store('b', $$ARRAY['a']$$);
SELECT pg_temp.same_store('c', $$ARRAY[B'101']$$);
SELECT pg_temp.same_store('e', $$'ab'::text$$);
SELECT pg_temp.same_store('f', $$ARRAY['abc']$$);
SELECT pg_temp.same_store('g', $$ARRAY['ab']::text[]$$);
SELECT pg_temp.same_store('h', $$'(abc,1.5)'::vf_c3$$);
SELECT pg_temp.same_store('i', $$1.005$$);
SELECT pg_temp.same_store('j', $$ARRAY[1.005, 2]$$);
SELECT pg_temp.same_store('k', $$1.005::numeric$$);

-- ============================================================ merge: representation, not equality
CREATE TABLE mv (id int PRIMARY KEY, n numeric, iv interval, f float8, j jsonb, na numeric[], t text);
INSERT INTO mv SELECT g, 1.0, '24:00:00', 0, '{"a": 1.0}', '{1.0}', 'x' || g FROM generate_series(1, 10) g;
CREATE TABLE mv_src (LIKE mv);
INSERT INTO mv_src SELECT g, 1.00, '1 day', '-0', '{"a": 1.00}', '{1.00}', 'x' || g FROM generate_series(1, 10) g;
SELECT isnt((SELECT f::text FROM backfill_fingerprint('mv') f), (SELECT f::text FROM backfill_fingerprint('mv_src') f),
	'premise: the target differs from the source only in representation');
SELECT is((SELECT updated FROM backfill_merge('mv', 'TABLE mv_src', '{id}')), 10::bigint,
	'merge updates rows that differ only in representation');
SELECT is((SELECT f::text FROM backfill_fingerprint('mv') f), (SELECT f::text FROM backfill_fingerprint('mv_src') f),
	'after the merge the target''s fingerprint equals the source''s');
SELECT is((SELECT count(*) FROM backfill_diff('TABLE mv', 'TABLE mv_src', '{id}')), 0::bigint,
	'and backfill_diff sees no difference');
-- one column at a time: each kind of difference is seen on its own
UPDATE mv SET n = 1.0 WHERE id = 1;
UPDATE mv SET iv = '24:00:00' WHERE id = 2;
UPDATE mv SET f = 0 WHERE id = 3;
UPDATE mv SET j = '{"a": 1.0}' WHERE id = 4;
UPDATE mv SET na = '{1.0}' WHERE id = 5;
SELECT is((SELECT updated FROM backfill_merge('mv', 'TABLE mv_src', '{id}')), 5::bigint,
	'each column''s representation is compared on its own');
CREATE TEMP TABLE mv_before AS
	SELECT (SELECT array_agg(ctid ORDER BY id) FROM mv) AS ctids,
		   (SELECT n_tup_upd FROM pg_stat_xact_user_tables WHERE relid = 'mv'::regclass) AS upd;
SELECT is((SELECT updated FROM backfill_merge('mv', 'TABLE mv_src', '{id}')), 0::bigint, 'a rerun updates nothing');
SELECT is((SELECT array_agg(ctid ORDER BY id) FROM mv), (SELECT ctids FROM mv_before), 'a rerun keeps every ctid');
SELECT is((SELECT n_tup_upd FROM pg_stat_xact_user_tables WHERE relid = 'mv'::regclass), (SELECT upd FROM mv_before),
	'a rerun writes no tuple');
-- a source of another type is compared as it will be stored: an over-long value is an error
CREATE TABLE mvc (id int PRIMARY KEY, code varchar(3), codes varchar(3)[]);
INSERT INTO mvc VALUES (1, 'abc', '{abc}');
SELECT throws_ok($$SELECT * FROM backfill_merge('mvc', 'SELECT 1 AS id, ''abcd''::text AS code', '{id}')$$,
	'22001', NULL, 'merge refuses a value too long for varchar(3) whose cut would equal the row');
SELECT throws_ok($$SELECT * FROM backfill_merge('mvc', 'SELECT 1 AS id, ARRAY[''abcd''] AS codes', '{id}')$$,
	'22001', NULL, 'merge refuses an array element too long for varchar(3)[] whose cut would equal the row');

-- a case-insensitive (nondeterministic ICU) collation, key and value
SELECT CASE WHEN EXISTS (SELECT FROM pg_collation WHERE collprovider = 'i') THEN 1 ELSE 0 END AS icu \gset
\if :icu
CREATE COLLATION vf_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE mci (name text COLLATE vf_ci PRIMARY KEY, label text COLLATE vf_ci);
INSERT INTO mci VALUES ('alice', 'red'), ('bob', 'blue');
CREATE TABLE mci_src (LIKE mci INCLUDING ALL);
INSERT INTO mci_src VALUES ('Alice', 'Red'), ('bob', 'BLUE');
SELECT is((SELECT updated FROM backfill_merge('mci', 'TABLE mci_src', '{name}')), 2::bigint,
	'ICU: case-only corrections are written');
SELECT is((SELECT f::text FROM backfill_fingerprint('mci') f), (SELECT f::text FROM backfill_fingerprint('mci_src') f),
	'ICU: the target''s fingerprint equals the source''s, keys included');
SELECT is((SELECT updated FROM backfill_merge('mci', 'TABLE mci_src', '{name}')), 0::bigint, 'ICU: a rerun updates nothing');
\else
SELECT skip('ICU collations are not available on this server', 3);
\endif

-- ============================================================ runs: the dry run without a key, and chunks
CREATE TABLE dr (id int NOT NULL, day date NOT NULL, n numeric, j json, code varchar(3));
INSERT INTO dr SELECT g, date '2026-03-10' + g % 6, 1.0, '{"a": 1}', 'ab' FROM generate_series(1, 60) g;
CREATE TEMP TABLE dr_fp AS SELECT f::text AS fp FROM backfill_fingerprint('dr') f;
-- 1.0 becomes 1.00 in every row of the first chunk (20 rows): 20 removed, 20 added
CREATE TEMP TABLE dr_run AS SELECT backfill_plan('dr', '2026-03-10', '2026-03-12',
	$$SELECT id, day, 1.00 AS n, j, code FROM dr WHERE day >= $1 AND day < $2$$,
	options => '{"window_column": "day", "chunk": "2 days"}') AS id;
CREATE TEMP TABLE dr_dry AS SELECT * FROM backfill_dry_run((SELECT id FROM dr_run));
SELECT is((SELECT format('%s %s %s %s', rows_before, rows_after, added, removed) FROM dr_dry), '20 20 20 20',
	'dry run without a key: a json column is compared, 1.0 => 1.00 is a change');
SELECT is((SELECT jsonb_array_length(sample) FROM dr_dry), 10, 'dry run without a key: five samples of each side');
SELECT ok((SELECT fingerprint_before <> fingerprint_after FROM dr_dry), 'dry run: the fingerprints differ too');
-- the same rows again: nothing added or removed
CREATE TEMP TABLE dr_run2 AS SELECT backfill_plan('dr', '2026-03-10', '2026-03-12',
	$$SELECT id, day, n, j, code FROM dr WHERE day >= $1 AND day < $2$$,
	options => '{"window_column": "day", "chunk": "2 days"}') AS id;
SELECT is((SELECT format('%s %s %s %s %s', rows_before, rows_after, added, removed, fingerprint_before = fingerprint_after)
		   FROM backfill_dry_run((SELECT id FROM dr_run2))), '20 20 0 0 t',
	'a chunk whose source reads the target itself gets the target''s rows, not an empty chunk');
-- a source that returns nothing for a chunk that has rows
CREATE TEMP TABLE dr_run3 AS SELECT backfill_plan('dr', '2026-03-10', '2026-03-12',
	$$SELECT id, day, n, j, code FROM dr WHERE day >= $1 AND day < $2 AND false$$,
	options => '{"window_column": "day", "chunk": "2 days"}') AS id;
SELECT throws_like($$SELECT * FROM backfill_dry_run((SELECT id FROM dr_run3))$$,
	'%source returned no rows%', 'an empty chunk result is refused');
CREATE TEMP TABLE dr_run4 AS SELECT backfill_plan('dr', '2026-03-10', '2026-03-12',
	$$SELECT id, day, n, j, code FROM dr WHERE day >= $1 AND day < $2 AND false$$,
	options => '{"window_column": "day", "chunk": "2 days", "allow_empty": true}') AS id;
SELECT is((SELECT format('%s %s', rows_before, rows_after) FROM backfill_dry_run((SELECT id FROM dr_run4))), '20 0',
	'... unless allow_empty');
-- chunks are written with INSERT's assignment semantics
CREATE TEMP TABLE dr_run5 AS SELECT backfill_plan('dr', '2026-03-10', '2026-03-12',
	$$SELECT id, day, n, j, 'abcd'::text AS code FROM dr WHERE day >= $1 AND day < $2$$,
	options => '{"window_column": "day", "chunk": "2 days"}') AS id;
SELECT throws_ok($$SELECT * FROM backfill_dry_run((SELECT id FROM dr_run5))$$, '22001', NULL,
	'a chunk refuses a value too long for varchar(3)');
SELECT is((SELECT f::text FROM backfill_fingerprint('dr') f), (SELECT fp FROM dr_fp), 'the dry runs changed nothing');

SELECT * FROM finish();
ROLLBACK;
