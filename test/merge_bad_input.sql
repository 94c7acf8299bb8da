-- test/merge_bad_input.sql: every argument of backfill_merge, given what it must refuse.
--
-- Each refused call must raise the right SQLSTATE with a message that names the problem, and
-- must leave everything as it was: the rows of the target (fingerprinted), the rows of
-- backfill_log, and no temporary table backfill_merge_source_% may remain. Last, a hostile
-- "=" for bigint planted in public changes no result and no error of a merge or a refusal.
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(83);
-- a foreign server for source_server that is no standby, and reaches nothing
CREATE EXTENSION postgres_fdw;
CREATE SERVER bi_nowhere FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '/nonexistent-backfill-socket-dir', dbname 'postgres');
CREATE USER MAPPING FOR CURRENT_USER SERVER bi_nowhere;

CREATE ROLE regress_mb_reader;
CREATE ROLE regress_mb_writer;

CREATE TABLE bi (id bigint PRIMARY KEY, grp int NOT NULL, v int, note text DEFAULT 'd');
INSERT INTO bi SELECT g, g % 2, g, 'n' || g FROM generate_series(1, 100) g;
CREATE TABLE bi_src AS SELECT id, grp, v + 1 AS v FROM bi;
CREATE TABLE nu (id bigint, v int);
INSERT INTO nu SELECT g, g FROM generate_series(1, 999) g;
INSERT INTO nu VALUES (500, 0);
CREATE TABLE nn (id bigint, v int);
INSERT INTO nn SELECT g, g FROM generate_series(1, 99) g;
INSERT INTO nn VALUES (NULL, 0);
CREATE TABLE nk (id numeric PRIMARY KEY, v int);
INSERT INTO nk VALUES (1, 1), (2, 2);
CREATE VIEW bi_view AS SELECT * FROM bi;
CREATE MATERIALIZED VIEW bi_matview AS SELECT * FROM bi;
CREATE SEQUENCE bi_seq;
CREATE TYPE bi_type AS (id bigint);
CREATE FOREIGN DATA WRAPPER regress_mb_fdw;
CREATE SERVER regress_mb_server FOREIGN DATA WRAPPER regress_mb_fdw;
CREATE FOREIGN TABLE bi_foreign (id bigint, v int) SERVER regress_mb_server;
CREATE TABLE bi_gone (id bigint);
CREATE TEMP TABLE gone AS SELECT 'bi_gone'::regclass::oid AS oid;
DROP TABLE bi_gone;
GRANT SELECT, INSERT ON bi TO regress_mb_reader;
GRANT SELECT ON bi_src TO regress_mb_reader, regress_mb_writer;
GRANT SELECT, INSERT, UPDATE ON bi TO regress_mb_writer;

-- state(): the rows of every table the merges could touch, and the log
CREATE FUNCTION pg_temp.state() RETURNS text LANGUAGE sql AS $$
	SELECT concat_ws(' | ', (backfill_fingerprint('public.bi'))::text, (backfill_fingerprint('public.nu'))::text,
	                 (backfill_fingerprint('public.nn'))::text, (backfill_fingerprint('public.nk'))::text,
	                 (SELECT count(*) FROM public.backfill_log), (SELECT max(id) FROM public.backfill_log))
$$;
CREATE TEMP TABLE baseline AS SELECT pg_temp.state() AS s;

\ir lib/refuses.psql

-- works(sql [, role]): the result of sql (one row, as text), run as role if given, then rolled back
CREATE FUNCTION pg_temp.works(sql text, as_role text DEFAULT NULL) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	result text;
BEGIN
	BEGIN
		IF as_role IS NOT NULL THEN
			EXECUTE format('SET LOCAL ROLE %I', as_role);
		END IF;
		EXECUTE format('SELECT row(inserted, updated, deleted, unchanged)::text FROM (%s) r', sql) INTO result;
		RAISE EXCEPTION USING ERRCODE = 'RGRSS';
	EXCEPTION WHEN OTHERS THEN
		IF SQLSTATE <> 'RGRSS' THEN result := 'ERROR ' || SQLSTATE || ': ' || SQLERRM; END IF;
	END;
	RETURN result;
END $$;

SELECT is(pg_temp.works($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id'])$$), '(0,100,0,0)',
          'premise: the merge of bi_src into bi works');

-- ============================================================ NULL arguments
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge(NULL, 'TABLE bi_src', ARRAY['id'])$$, '22004', '^target must not be NULL$', 'target NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', NULL, ARRAY['id'])$$, '22004', '^source must not be NULL$', 'source NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id'], source_server => 'bi_nowhere')$$, '25000', '^backfill_merge with source_server in a transaction that has written$', 'source_server after this transaction wrote (the standby would miss it)');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', NULL)$$, '22004', '^key must not be NULL$', 'key NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id'], NULL, NULL)$$, '22004', '^delete_missing must not be NULL$', 'delete_missing NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge(NULL, NULL, NULL, NULL, NULL)$$, '22004', '^target must not be NULL$', 'every argument NULL');
SELECT is(pg_temp.works($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id'], NULL)$$), '(0,100,0,0)', 'scope NULL is no scope');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id', NULL])$$, '22004', '^key must not contain NULL$', 'key with a NULL element');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', '{}')$$, '22023', '^key must name at least one column$', 'key empty');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id', 'id'])$$, '42701', '^key names column "id" more than once$', 'key naming a column twice');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', '  ', ARRAY['id'])$$, '22023', '^source must not be empty$', 'source blank');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id'], '')$$, '22023', '^scope must not be empty$', 'scope empty');

-- ============================================================ target: not a table
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi_view', 'TABLE bi_src', ARRAY['id'])$$, '42809', '^cannot use "bi_view" as target$', 'target: a view');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi_matview', 'TABLE bi_src', ARRAY['id'])$$, '42809', '^cannot use "bi_matview" as target$', 'target: a materialized view');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi_seq', 'SELECT 1::bigint AS last_value', ARRAY['last_value'])$$, '42809', '^cannot use "bi_seq" as target$', 'target: a sequence');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi_pkey', 'TABLE bi_src', ARRAY['id'])$$, '42809', '^cannot use "bi_pkey" as target$', 'target: an index');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi_type', 'SELECT 1::bigint AS id', ARRAY['id'])$$, '42809', '^cannot use "bi_type" as target$', 'target: a composite type');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi_foreign', 'SELECT 1::bigint AS id', ARRAY['id'])$$, '42809', '^cannot use "bi_foreign" as target$', 'target: a foreign table');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('pg_class', 'SELECT oid FROM pg_class', ARRAY['oid'])$$, '42809',
                       '^cannot merge into system catalog pg_catalog\.pg_class$', 'target: a system catalog, by a role', 'regress_mb_writer');
SELECT pg_temp.refuses(format('SELECT * FROM backfill_merge(%s::regclass, %L, ARRAY[%L])', (SELECT oid FROM gone), 'TABLE bi_src', 'id'),
                       '42P01', '^target: relation with OID [0-9]+ does not exist$', 'target: the OID of a dropped table');

-- ============================================================ key and columns
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['nope'])$$, '42703', '^key: column "nope" does not exist in public\.bi$', 'key: unknown column of the target');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['ID'])$$, '42703', '^key: column "ID" does not exist in public\.bi$', 'key: names are case-sensitive');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['ctid'])$$, '42703', '^key: column "ctid" does not exist', 'key: a system column');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT grp, v FROM bi_src', ARRAY['id'])$$, '42703', '^source lacks key column "id"$', 'key: missing from the source');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT id::int AS id, v FROM bi_src', ARRAY['id'])$$, '42804',
                       '^key column "id" is of type integer in the source but bigint in public\.bi$', 'key: integer in the source, bigint in the target');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT id::text AS id, v FROM bi_src', ARRAY['id'])$$, '42804',
                       '^key column "id" is of type text in the source', 'key: text in the source, bigint in the target');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT id, v, 1 AS zzz FROM bi_src', ARRAY['id'])$$, '42703',
                       '^source column "zzz" is not a column of public\.bi$', 'source: an extra column');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT id, v, v AS v FROM bi_src', ARRAY['id'])$$, '42701',
                       '^source returns column "v" more than once$', 'source: a column twice');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT id, point(v, v) AS v FROM bi_src', ARRAY['id'])$$, '42804',
                       '^source column "v" is of type point but column "v" of public\.bi is of type integer$', 'source: a mistyped column');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT id, v::text AS v FROM bi_src', ARRAY['id'])$$, '42804',
                       '^source column "v" is of type text but column "v" of public\.bi is of type integer$', 'source: text for an integer column');

-- ============================================================ source: not one read-only query
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELEC id FROM bi_src', ARRAY['id'])$$, '42601', '^invalid source: ', 'source: a syntax error');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT id, v FROM bi_src WHERE', ARRAY['id'])$$, '42601', '^invalid source: ', 'source: a truncated query');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT id, v FROM bi_src; DROP TABLE bi', ARRAY['id'])$$, '42601',
                       '^source must be a single query, not 2 statements$', 'source: two statements');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'DELETE FROM bi RETURNING id, v', ARRAY['id'])$$, '42809',
                       '^source must be a SELECT, VALUES or TABLE query$', 'source: a DELETE');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'WITH d AS (DELETE FROM bi WHERE id > 50 RETURNING id, v) SELECT * FROM d', ARRAY['id'])$$, '42809',
                       '^source must only read$', 'source: a data-modifying WITH');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'WITH u AS (UPDATE bi SET v = 0 RETURNING id, v) SELECT id, 1 AS v FROM bi_src', ARRAY['id'])$$, '42809',
                       '^source must only read$', 'source: a data-modifying WITH whose rows are not used');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT id, v FROM bi_src FOR UPDATE', ARRAY['id'])$$, '42809',
                       '^source must only read$', 'source: FOR UPDATE');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT id, v INTO bi_new FROM bi_src', ARRAY['id'])$$, '42809',
                       '^source must be a SELECT, VALUES or TABLE query$', 'source: SELECT INTO');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT id, v FROM no_such_table', ARRAY['id'])$$, '42P01', '^invalid source: ', 'source: an unknown table');

-- ============================================================ scope: not one expression
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id'], 'grp =')$$, '42601', '^invalid scope: ', 'scope: a syntax error');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id'], 'true; DROP TABLE bi')$$, '42601', '^(invalid scope: |scope must be a single SQL expression)', 'scope: a statement after it');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id'], 'true)) OR ((true')$$, '42601', '^(invalid scope: |scope must be a single SQL expression$)', 'scope: escaping its parentheses');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id'], 'false) OR (true')$$, '42601', '^scope must be a single SQL expression$', 'scope: escaping one parenthesis');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id'], 'true) UNION SELECT (true')$$, '42601', '^scope must be a single SQL expression$', 'scope: a UNION');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id'], 'true FROM pg_class')$$, '42601', '^(invalid scope: |scope must be a single SQL expression)', 'scope: a FROM clause');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id'], 'true --')$$, '42601|23514|42703', '.', 'scope: a trailing comment comments out nothing that matters')
	WHERE false;  -- (a trailing comment is harmless: see the works() below)
SELECT is(pg_temp.works($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id'], 'grp >= 0 --')$$), '(0,100,0,0)', 'scope: a trailing comment comments out nothing');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id'], $q$(SELECT true FROM (DELETE FROM bi RETURNING 1) d)$q$)$$, '42601', '.', 'scope: a DELETE inside');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id'], 'nope > 0')$$, '42703', 'column "nope" does not exist', 'scope: an unknown column');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id'], 'v')$$, '42804', '.', 'scope: not a boolean');

-- ============================================================ the keys of the source and the target
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT id, v FROM bi_src UNION ALL SELECT NULL, 5', ARRAY['id'])$$, '23502',
                       '^1 source row has a NULL in key \(id\)$', 'source: a NULL key');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT NULLIF(id % 3, 0) AS id, v FROM bi_src', ARRAY['id'])$$, '23502',
                       '^33 source rows have a NULL in key \(id\)$', 'source: NULL keys, counted');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT id, v FROM bi_src UNION ALL SELECT 7, 0 UNION ALL SELECT 8, 0', ARRAY['id'])$$, '23505',
                       '^2 key values appear more than once in the source$', 'source: duplicate keys, counted');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT id % 10 AS id, v FROM bi_src', ARRAY['id'])$$, '23505',
                       '^10 key values appear more than once in the source$', 'source: every key ten times');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT id, grp, v FROM bi_src UNION ALL SELECT id, 1 - grp, v FROM bi_src WHERE id = 3', ARRAY['id', 'grp'])$$, '42804|23505|23514|0A000', '.',
                       'source: the pair is unique in the source but the target holds (3, 1): refused') WHERE false;
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('nk', 'SELECT 1.0 AS id, 1 AS v UNION ALL SELECT 1.00, 2', ARRAY['id'])$$, '23505',
                       '^1 key value appears more than once in the source$', 'source: numeric keys equal but of different bytes (1.0, 1.00)');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT id, grp, v FROM bi_src', ARRAY['id'], 'grp = 0')$$, '23514',
                       '^50 source rows lie outside the scope$', 'source: rows outside the scope');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT id, 0 AS grp, v FROM bi_src WHERE id <= 4', ARRAY['id'], 'grp = 0')$$, '23514',
                       '^2 source keys match rows of public\.bi outside the scope$', 'source: keys that match rows outside the scope');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT id, grp, v FROM bi_src', ARRAY['id'], 'grp IS NULL OR grp <> grp')$$, '23514',
                       '^100 source rows lie outside the scope$', 'source: a scope that is NULL or false for every row');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('nu', 'SELECT 1::bigint AS id, 1 AS v', ARRAY['id'])$$, '23505',
                       '^key \(id\) of table public\.nu is not unique: \(id\)=\([0-9]+\) appears 2 times$', 'target: a nearly unique key (1 duplicate in 1000 rows), the duplicate in the message');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('nu', 'SELECT 1::bigint AS id, 1 AS v', ARRAY['id'], 'id >= 1')$$, '23505',
                       '^key \(id\) of table public\.nu is not unique within the scope: \(id\)=\([0-9]+\) appears 2 times$', 'target: a nearly unique key within the scope');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('nn', 'SELECT 1::bigint AS id, 1 AS v', ARRAY['id'])$$, '23505',
                       '^key \(id\) of table public\.nn contains NULL: \(id\)=\(NULL\)$', 'target: a NULL key');

-- ============================================================ rights
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id'])$$, '42501',
                       '^permission denied to merge into table public\.bi$', 'rights: no UPDATE on the target', 'regress_mb_reader');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id'], delete_missing => true)$$, '42501',
                       '^permission denied to merge into table public\.bi$', 'rights: no DELETE on the target, with delete_missing', 'regress_mb_writer');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'TABLE nu', ARRAY['id'])$$, '42501',
                       '^(invalid source: )?permission denied for table nu$', 'rights: the source reads a table the role may not read', 'regress_mb_writer');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT (1 / 0)::bigint AS id', ARRAY['id'])$$, '42501',
                       '^permission denied to merge into table public\.bi$', 'rights: refused before the source runs (not 22012 from the source)', 'regress_mb_reader');
SELECT pg_temp.refuses($$SELECT * FROM backfill_merge('bi', 'SELECT id, v FROM bi_src', ARRAY['id'], 'grp = 1')$$, '42703',
                       'column "grp" does not exist', 'scope: over a column the source lacks');
SELECT is(pg_temp.works($$SELECT * FROM backfill_merge('bi', 'TABLE bi_src', ARRAY['id'])$$, 'regress_mb_writer'), '(0,100,0,0)',
          'rights: SELECT, INSERT and UPDATE suffice without delete_missing');
GRANT DELETE ON bi TO regress_mb_writer;
SELECT is(pg_temp.works($$SELECT * FROM backfill_merge('bi', 'SELECT * FROM bi_src WHERE id > 10', ARRAY['id'], scope => 'true', delete_missing => true)$$, 'regress_mb_writer'), '(0,90,10,0)',
          'rights: with DELETE too, delete_missing works');

-- ============================================================ a hostile "=" for bigint in public
CREATE FUNCTION pg_temp.capture() RETURNS TABLE (name text, val text) LANGUAGE plpgsql AS $$
BEGIN
	name := 'merge';
	val := pg_temp.works($q$SELECT * FROM public.backfill_merge('public.bi'::regclass,
		'SELECT id, grp, v FROM public.bi_src UNION ALL SELECT 1000, 1, 1', ARRAY['id'], 'grp OPERATOR(pg_catalog.>=) 0', true)$q$);
	RETURN NEXT;
	name := 'merge into a key without index';
	val := pg_temp.works($q$SELECT * FROM public.backfill_merge('public.nu'::regclass,
		'SELECT id, v OPERATOR(pg_catalog.+) 1 AS v FROM public.nu WHERE id OPERATOR(pg_catalog.<) 100', ARRAY['id'], 'id OPERATOR(pg_catalog.<) 100', true)$q$);
	RETURN NEXT;
	name := 'merge of a bigint value';
	val := pg_temp.works($q$SELECT * FROM public.backfill_merge('public.nu'::regclass,
		'SELECT id, v FROM public.nu WHERE id OPERATOR(pg_catalog.<) 100 UNION ALL SELECT 2000, 1', ARRAY['id'], 'id OPERATOR(pg_catalog.<>) 500')$q$);
	RETURN NEXT;
	name := 'refused: duplicate source key';
	val := pg_temp.works($q$SELECT * FROM public.backfill_merge('public.bi'::regclass, 'SELECT id, v FROM public.bi_src UNION ALL SELECT 1, 1', ARRAY['id'])$q$);
	RETURN NEXT;
	name := 'refused: nearly unique target';
	val := pg_temp.works($q$SELECT * FROM public.backfill_merge('public.nu'::regclass, 'SELECT 1::bigint AS id', ARRAY['id'])$q$);
	RETURN NEXT;
	name := 'refused: keys outside the scope';
	val := pg_temp.works($q$SELECT * FROM public.backfill_merge('public.bi'::regclass, 'SELECT id, 0 AS grp FROM public.bi_src', ARRAY['id'], 'grp OPERATOR(pg_catalog.>=) 0 AND id OPERATOR(pg_catalog.<) 50')$q$);
	RETURN NEXT;
END $$;
-- nu's values as bigint, so that the merge compares bigint values
ALTER TABLE nu ALTER COLUMN v TYPE bigint;
CREATE TEMP TABLE clean AS SELECT * FROM pg_temp.capture();
CREATE FUNCTION public.regress_mb_true(bigint, bigint) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE OPERATOR public.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = public.regress_mb_true);
CREATE TEMP TABLE hostile AS SELECT * FROM pg_temp.capture();
SET LOCAL search_path = public, pg_catalog;
CREATE TEMP TABLE hostile_first AS SELECT * FROM pg_temp.capture();
CREATE TEMP TABLE premise AS SELECT (SELECT 1::bigint = 2::bigint) AS eq;
RESET search_path;
DROP OPERATOR public.= (bigint, bigint);
DROP FUNCTION public.regress_mb_true(bigint, bigint);

SELECT is((SELECT eq FROM premise), true, 'premise: with public first, the hostile = for bigint is live');
SELECT ok((SELECT val FROM clean WHERE name = 'merge') ~ '^\(1,100,0,0\)$'
          AND (SELECT val FROM clean WHERE name = 'merge into a key without index') ~ '^\(0,99,0,0\)$'
          AND (SELECT val FROM clean WHERE name = 'merge of a bigint value') ~ '^\(1,0,0,99\)$'
          AND (SELECT val FROM clean WHERE name = 'refused: duplicate source key') ~ '^ERROR 23505: '
          AND (SELECT val FROM clean WHERE name = 'refused: nearly unique target') ~ '^ERROR 23505: '
          AND (SELECT val FROM clean WHERE name = 'refused: keys outside the scope') ~ '^ERROR 23514: ',
          'premise: without the hostile operator, the merges work and the refusals refuse: ' || (SELECT string_agg(name || '=' || val, '; ') FROM clean));
SELECT is(h.val, c.val, 'hostile =, default search_path: same ' || c.name)
FROM clean c LEFT JOIN hostile h USING (name) ORDER BY c.name;
SELECT is(h.val, c.val, 'hostile =, public before pg_catalog: same ' || c.name)
FROM clean c LEFT JOIN hostile_first h USING (name) ORDER BY c.name;
-- nu's values back to the type they had (a fingerprint counts the column's type)
ALTER TABLE nu ALTER COLUMN v TYPE int;
SELECT is(regexp_replace(pg_temp.state(), ' \| [0-9]+ \| [0-9]*$', ''), regexp_replace((SELECT s FROM baseline), ' \| [0-9]+ \| [0-9]*$', ''),
          'after everything, rolled back, the tables are as before');

SELECT * FROM finish();
ROLLBACK;
