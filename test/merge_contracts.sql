-- test/merge_contracts.sql: what backfill_merge promises, each stated so that it can fail.
--
-- Counts are exactly what changed (k planted updates, inserts and missing rows); afterwards
-- the scope of the target equals the source (fingerprinted against a table built from the
-- expected result) and the rows outside the scope are untouched; a rerun is a no-op that
-- rewrites no row; comparisons are NULL-safe and work for types without equality; columns the
-- source lacks are left alone on update and take defaults on insert; delete_missing never
-- reaches outside the scope; partitioned targets, multi-column keys and identifiers that need
-- quoting work; the log row agrees with the result; a nearly unique key is refused.
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(68);

-- fp(rel, scope): the scope's fingerprint as text
CREATE FUNCTION pg_temp.fp(rel regclass, scope text DEFAULT NULL) RETURNS text LANGUAGE sql AS $$
	SELECT (backfill_fingerprint(rel, scope))::text
$$;
-- upd(rel): tuples updated, inserted and deleted in this transaction (all partitions of rel)
CREATE FUNCTION pg_temp.writes(rel regclass) RETURNS text LANGUAGE sql AS $$
	SELECT format('upd=%s ins=%s del=%s hot=%s', sum(n_tup_upd), sum(n_tup_ins), sum(n_tup_del), sum(n_tup_hot_upd))
	FROM pg_stat_xact_user_tables
	WHERE relid = rel OR relid IN (SELECT p.relid FROM pg_partition_tree(rel) p)
$$;
-- the log row of a merge, as the result it should agree with
CREATE FUNCTION pg_temp.logged(id bigint) RETURNS text LANGUAGE sql AS $$
	SELECT format('%s %s %s %s %s', operation, details->>'inserted', details->>'updated', details->>'deleted', details->>'unchanged')
	FROM backfill_log l WHERE l.id = logged.id
$$;

-- ============================================================ the main case: plain table, scope, delete_missing
CREATE TABLE mc (id bigint PRIMARY KEY, grp int NOT NULL, v int, note text DEFAULT 'dflt');
INSERT INTO mc SELECT g, CASE WHEN g <= 100 THEN 1 ELSE 2 END, g * 10, 'n' || g FROM generate_series(1, 200) g;
-- the source: grp 1 with ids 1..5 changed (5 updates), 6..10 missing (5 deletes), 1001..1005 new (5 inserts)
CREATE TABLE mc_src AS
	SELECT id, grp, CASE WHEN id <= 5 THEN v + 1 ELSE v END AS v, note FROM mc WHERE grp = 1 AND id NOT BETWEEN 6 AND 10
	UNION ALL SELECT g, 1, g, 'new' FROM generate_series(1001, 1005) g;
CREATE TABLE mc_expected AS SELECT * FROM mc_src;
CREATE TEMP TABLE mc_before AS SELECT pg_temp.fp('mc', 'grp <> 1') AS outside, (SELECT count(*) FROM backfill_log) AS logs;

CREATE TEMP TABLE r1 AS SELECT * FROM backfill_merge('mc', 'SELECT * FROM mc_src', ARRAY['id'], 'grp = 1', delete_missing => true);
SELECT is((SELECT row(inserted, updated, deleted, unchanged)::text FROM r1), '(5,5,5,90)', 'main: 5 inserted, 5 updated, 5 deleted, 90 unchanged');
SELECT is(pg_temp.fp('mc', 'grp = 1'), pg_temp.fp('mc_expected'), 'main: the scope of the target equals the source');
SELECT is(pg_temp.fp('mc', 'grp <> 1'), (SELECT outside FROM mc_before), 'main: rows outside the scope are untouched');
SELECT is((SELECT count(*) FROM mc WHERE grp = 2), 100::bigint, 'main: delete_missing deleted no row outside the scope (the source has none of them)');
SELECT is((SELECT count(*) FROM backfill_log), (SELECT logs + 1 FROM mc_before), 'main: one log row');
SELECT is(pg_temp.logged((SELECT log_id FROM r1)), 'merge 5 5 5 90', 'main: the log row agrees with the result');
SELECT is((SELECT row(target, rows_before, rows_after)::text FROM backfill_log WHERE id = (SELECT log_id FROM r1)),
          '(public.mc,100,100)', 'main: the log row names the target and the scope''s rows before and after');
SELECT is((SELECT fingerprint_after FROM backfill_log WHERE id = (SELECT log_id FROM r1)), (backfill_fingerprint('mc', 'grp = 1')).hash,
          'main: the logged fingerprint after is the scope''s');
SELECT is((SELECT row(details->'key', details->>'scope', details->'delete_missing', details->>'source')::text FROM backfill_log WHERE id = (SELECT log_id FROM r1)),
          row('"id"'::jsonb, 'grp = 1', 'true'::jsonb, 'SELECT * FROM mc_src')::text, 'main: the log details name key, scope, delete_missing and source');

-- the no-op rerun: nothing written, no row rewritten
CREATE TEMP TABLE rerun_before AS SELECT pg_temp.writes('mc') AS w, (SELECT ctid FROM mc WHERE id = 50) AS ctid50,
	(SELECT ctid FROM mc WHERE id = 1) AS ctid1, pg_temp.fp('mc') AS fp;
SELECT ok((SELECT w FROM rerun_before) ~ '^upd=5 ins=205 del=5 ', 'premise: the statistics see the first merge''s writes: ' || (SELECT w FROM rerun_before));
CREATE TEMP TABLE r2 AS SELECT * FROM backfill_merge('mc', 'SELECT * FROM mc_src', ARRAY['id'], 'grp = 1', delete_missing => true);
SELECT is((SELECT row(inserted, updated, deleted, unchanged)::text FROM r2), '(0,0,0,100)', 'rerun: 0 inserted, updated, deleted; 100 unchanged');
SELECT is(pg_temp.writes('mc'), (SELECT w FROM rerun_before), 'rerun: no tuple updated, inserted or deleted (no dead tuple)');
SELECT is((SELECT ctid FROM mc WHERE id = 50), (SELECT ctid50 FROM rerun_before), 'rerun: an unchanged row keeps its ctid');
SELECT is((SELECT ctid FROM mc WHERE id = 1), (SELECT ctid1 FROM rerun_before), 'rerun: an updated-before row keeps its ctid');
SELECT is(pg_temp.fp('mc'), (SELECT fp FROM rerun_before), 'rerun: the table is as it was');
SELECT is(pg_temp.logged((SELECT log_id FROM r2)), 'merge 0 0 0 100', 'rerun: logged as a no-op');

-- delete_missing false: missing rows stay
CREATE TEMP TABLE r3 AS SELECT * FROM backfill_merge('mc', 'SELECT * FROM mc_src WHERE id > 20', ARRAY['id'], 'grp = 1');
SELECT is((SELECT row(inserted, updated, deleted, unchanged)::text FROM r3), '(0,0,0,85)', 'no delete_missing: nothing deleted');
SELECT is((SELECT count(*) FROM mc WHERE grp = 1), 100::bigint, 'no delete_missing: the rows the source lacks are still there');
-- delete_missing with a source lacking rows inside the scope only: exactly those go
CREATE TEMP TABLE r4 AS SELECT * FROM backfill_merge('mc', 'SELECT * FROM mc_src WHERE id > 20', ARRAY['id'], 'grp = 1', delete_missing => true);
SELECT is((SELECT row(inserted, updated, deleted, unchanged)::text FROM r4), '(0,0,15,85)', 'delete_missing: the 15 rows in scope the source lacks are deleted');
SELECT is((SELECT count(*) FROM mc WHERE id <= 20), 0::bigint, 'delete_missing: ids 1..20 are gone from the scope');
SELECT is((SELECT count(*) FROM mc WHERE grp = 2), 100::bigint, 'delete_missing: grp 2 is whole');
-- no scope: the whole table is the scope
CREATE TABLE mc_all AS SELECT * FROM mc WHERE id % 3 <> 0;
UPDATE mc_all SET v = -v WHERE id % 7 = 0;
INSERT INTO mc_all VALUES (5000, 3, 1, 'x'), (5001, 3, NULL, NULL);
CREATE TEMP TABLE r5_want AS SELECT format('(2,%s,%s,%s)', (SELECT count(*) FROM mc_all WHERE id % 7 = 0 AND id < 5000),
	(SELECT count(*) FROM mc WHERE id % 3 = 0), (SELECT count(*) FROM mc_all WHERE id % 7 <> 0 AND id < 5000)) AS w;
SELECT ok((SELECT w FROM r5_want) ~ '^\(2,[1-9][0-9]*,[1-9][0-9]*,[1-9][0-9]*\)$', 'premise: the no-scope case plants updates, deletes and unchanged rows');
CREATE TEMP TABLE r5 AS SELECT * FROM backfill_merge('mc', 'TABLE mc_all', ARRAY['id'], scope => 'true', delete_missing => true);
SELECT is((SELECT row(inserted, updated, deleted, unchanged)::text FROM r5), (SELECT w FROM r5_want),
          'whole table (scope => ''true''): counts over the whole table');
SELECT is(pg_temp.fp('mc'), pg_temp.fp('mc_all'), 'whole table (scope => ''true''): the table equals the source');

-- ============================================================ NULL-safe comparison
CREATE TABLE ns (id int PRIMARY KEY, v int, t text);
INSERT INTO ns VALUES (1, NULL, NULL), (2, NULL, 'a'), (3, 1, 'a'), (4, 1, NULL), (5, 1, 'a');
CREATE TABLE ns_src (id int, v int, t text);
INSERT INTO ns_src VALUES (1, NULL, NULL), (2, 1, 'a'), (3, NULL, 'a'), (4, 1, NULL), (5, 1, 'a');
CREATE TEMP TABLE ns_ctid AS SELECT id, ctid AS c FROM ns;
CREATE TEMP TABLE r6 AS SELECT * FROM backfill_merge('ns', 'TABLE ns_src', ARRAY['id']);
SELECT is((SELECT row(inserted, updated, deleted, unchanged)::text FROM r6), '(0,2,0,3)', 'NULL-safe: NULL->1 and 1->NULL updated, NULL->NULL and equal rows unchanged');
SELECT is(pg_temp.fp('ns'), pg_temp.fp('ns_src'), 'NULL-safe: the table equals the source');
SELECT is((SELECT array_agg(n.id ORDER BY n.id) FROM ns n JOIN ns_ctid c USING (id) WHERE n.ctid = c.c), ARRAY[1, 4, 5],
          'NULL-safe: exactly the unchanged rows keep their ctid');

-- ============================================================ types without equality: json, point
CREATE TABLE jp (id int PRIMARY KEY, j json, p point, jb jsonb, a int[]);
INSERT INTO jp VALUES (1, '{"a":1}', '(1,2)', '{"a":1}', '{1,NULL}'), (2, '{"a":1}', '(1,2)', '{"a":1}', '{1}'),
	(3, NULL, NULL, NULL, NULL), (4, '[]', '(0,0)', '[]', '{}'), (5, '[]', '(0,0)', '[]', '{}'), (6, '[]', NULL, '[]', '{}');
CREATE TABLE jp_src (id int, j json, p point, jb jsonb, a int[]);
INSERT INTO jp_src VALUES (1, '{"a":1}', '(1,2)', '{"a":1}', '{1,NULL}'), (2, '{"a":2}', '(1,2)', '{"a":1}', '{1}'),
	(3, NULL, NULL, NULL, NULL), (4, '[]', '(0,1)', '[]', '{}'), (5, '[]', '(0,0)', '[]', '{}'), (6, '[]', '(0,0)', '[]', '{}');
CREATE TEMP TABLE jp_ctid AS SELECT id, ctid AS c FROM jp;
CREATE TEMP TABLE r7 AS SELECT * FROM backfill_merge('jp', 'TABLE jp_src', ARRAY['id']);
SELECT is((SELECT row(inserted, updated, deleted, unchanged)::text FROM r7), '(0,3,0,3)', 'json/point: a changed json, a changed point, a NULL point filled are updates; equal rows are not');
SELECT is(pg_temp.fp('jp'), pg_temp.fp('jp_src'), 'json/point: the table equals the source');
SELECT is((SELECT array_agg(n.id ORDER BY n.id) FROM jp n JOIN jp_ctid c USING (id) WHERE n.ctid = c.c), ARRAY[1, 3, 5],
          'json/point: exactly the unchanged rows keep their ctid');
CREATE TEMP TABLE r7b AS SELECT * FROM backfill_merge('jp', 'TABLE jp_src', ARRAY['id']);
SELECT is((SELECT row(inserted, updated, deleted, unchanged)::text FROM r7b), '(0,0,0,6)', 'json/point: the rerun changes nothing');

-- ============================================================ a source lacking a column
CREATE TABLE dm (id int PRIMARY KEY, v int, note text DEFAULT 'dflt', made timestamptz DEFAULT '2000-01-01');
INSERT INTO dm VALUES (1, 1, 'keep', '1999-01-01'), (2, 2, 'keep2', '1999-01-01');
CREATE TEMP TABLE r8 AS SELECT * FROM backfill_merge('dm', 'SELECT id, v FROM (VALUES (1, 10), (2, 2), (3, 30)) s (id, v)', ARRAY['id']);
SELECT is((SELECT row(inserted, updated, deleted, unchanged)::text FROM r8), '(1,1,0,1)', 'missing column: 1 inserted, 1 updated, 1 unchanged');
SELECT is((SELECT string_agg(format('%s:%s:%s:%s', id, v, note, made::date), ' ' ORDER BY id) FROM dm),
          '1:10:keep:1999-01-01 2:2:keep2:1999-01-01 3:30:dflt:2000-01-01',
          'missing column: left alone on update, the default on insert');
-- the source with only the key: inserts only
CREATE TEMP TABLE r9 AS SELECT * FROM backfill_merge('dm', 'SELECT 4 AS id UNION ALL SELECT 1', ARRAY['id']);
SELECT is((SELECT row(inserted, updated, deleted, unchanged)::text FROM r9), '(1,0,0,1)', 'key-only source: the new key inserted, the old one unchanged');
SELECT is((SELECT format('%s:%s:%s', v, note, made::date) FROM dm WHERE id = 4), ':dflt:2000-01-01', 'key-only source: defaults');

-- ============================================================ partitioned target, scope over two partitions, two-column key
CREATE TABLE pt (id int NOT NULL, day date NOT NULL, v int, PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
CREATE TABLE pt_01 PARTITION OF pt FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
CREATE TABLE pt_02 PARTITION OF pt FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');
CREATE TABLE pt_03 PARTITION OF pt FOR VALUES FROM ('2026-03-01') TO ('2026-04-01');
INSERT INTO pt SELECT g % 10, date '2026-01-01' + g / 10, g FROM generate_series(0, 899) g;
CREATE TEMP TABLE pt_scope AS SELECT $$day >= '2026-01-20' AND day < '2026-02-10'$$::text AS s;
CREATE TABLE pt_src AS
	SELECT id, day, CASE WHEN id = 3 THEN v + 1 ELSE v END AS v FROM pt
	WHERE day >= '2026-01-20' AND day < '2026-02-10' AND id <> 7
	UNION ALL SELECT 100, d::date, 0 FROM generate_series('2026-01-30'::date, '2026-02-02', '1 day') d;
CREATE TEMP TABLE pt_before AS SELECT pg_temp.fp('pt', 'NOT (' || s || ')') AS outside, pg_temp.fp('pt_01') AS p1, pg_temp.fp('pt_03') AS p3 FROM pt_scope;
CREATE TEMP TABLE r10 AS SELECT * FROM backfill_merge('pt', 'TABLE pt_src', ARRAY['id', 'day'], (SELECT s FROM pt_scope), true);
SELECT is((SELECT row(inserted, updated, deleted, unchanged)::text FROM r10), '(4,21,21,168)',
          'partitioned: 4 inserted over two partitions, 21 updated, 21 deleted, 168 unchanged');
SELECT is(pg_temp.fp('pt', (SELECT s FROM pt_scope)), pg_temp.fp('pt_src'), 'partitioned: the scope equals the source');
SELECT is(pg_temp.fp('pt', (SELECT 'NOT (' || s || ')' FROM pt_scope)), (SELECT outside FROM pt_before), 'partitioned: outside the scope untouched');
SELECT is(pg_temp.fp('pt_03'), (SELECT p3 FROM pt_before), 'partitioned: the partition outside the scope untouched');
SELECT is((SELECT array_agg(DISTINCT tableoid::regclass::text ORDER BY tableoid::regclass::text) FROM pt WHERE id = 100), ARRAY['pt_01', 'pt_02'],
          'partitioned: the new rows landed in both partitions');
CREATE TEMP TABLE r10b AS SELECT * FROM backfill_merge('pt', 'TABLE pt_src', ARRAY['id', 'day'], (SELECT s FROM pt_scope), true);
SELECT is((SELECT row(inserted, updated, deleted, unchanged)::text FROM r10b), '(0,0,0,193)', 'partitioned: the rerun changes nothing');
SELECT is(pg_temp.logged((SELECT log_id FROM r10)), 'merge 4 21 21 168', 'partitioned: the log row agrees');

-- ============================================================ a two-column key proven by checking (no unique index)
CREATE TABLE mk (a int, b text, v int);
INSERT INTO mk SELECT g / 3, (g % 3)::text, g FROM generate_series(0, 299) g;
CREATE TABLE mk_src AS SELECT a, b, CASE WHEN a = 5 THEN -v ELSE v END AS v FROM mk UNION ALL SELECT 1000, 'x', 1;
CREATE TEMP TABLE r11 AS SELECT * FROM backfill_merge('mk', 'TABLE mk_src', ARRAY['a', 'b']);
SELECT is((SELECT row(inserted, updated, deleted, unchanged)::text FROM r11), '(1,3,0,297)', 'two-column key, no index: 1 inserted, 3 updated');
SELECT is(pg_temp.fp('mk'), pg_temp.fp('mk_src'), 'two-column key, no index: the table equals the source');
-- a key value repeated in one column but not in the pair is no duplicate
SELECT is((SELECT count(*) FROM mk WHERE a = 5), 3::bigint, 'two-column key: the three rows sharing a are still three');

-- ============================================================ identifiers that need quoting
CREATE TABLE "Merge ""Odd"" Table name that is exactly sixty-three bytes long!!" (
	"Key ""A"" Col" int NOT NULL,
	"a key column whose name is exactly sixty-three bytes long......" text NOT NULL,
	"Value" int,
	PRIMARY KEY ("Key ""A"" Col", "a key column whose name is exactly sixty-three bytes long......"));
SELECT is(length('Merge "Odd" Table name that is exactly sixty-three bytes long!!'), 63, 'premise: the table name has 63 bytes');
SELECT is(length('a key column whose name is exactly sixty-three bytes long......'), 63, 'premise: the key column name has 63 bytes');
INSERT INTO "Merge ""Odd"" Table name that is exactly sixty-three bytes long!!" SELECT g, 'k' || g, g FROM generate_series(1, 10) g;
CREATE TABLE "Odd Src" AS SELECT * FROM "Merge ""Odd"" Table name that is exactly sixty-three bytes long!!";
UPDATE "Odd Src" SET "Value" = 0 WHERE "Key ""A"" Col" <= 2;
INSERT INTO "Odd Src" VALUES (11, 'k11', 11);
DELETE FROM "Odd Src" WHERE "Key ""A"" Col" = 10;
CREATE TEMP TABLE r12 AS SELECT * FROM backfill_merge('"Merge ""Odd"" Table name that is exactly sixty-three bytes long!!"',
	'SELECT * FROM "Odd Src"', ARRAY['Key "A" Col', 'a key column whose name is exactly sixty-three bytes long......'],
	'"Value" IS DISTINCT FROM 42 AND "Key ""A"" Col" > 0', true);
SELECT is((SELECT row(inserted, updated, deleted, unchanged)::text FROM r12), '(1,2,1,7)', 'quoted identifiers: 1 inserted, 2 updated, 1 deleted');
SELECT is(pg_temp.fp('"Merge ""Odd"" Table name that is exactly sixty-three bytes long!!"'), pg_temp.fp('"Odd Src"'), 'quoted identifiers: the table equals the source');
SELECT is((SELECT target FROM backfill_log WHERE id = (SELECT log_id FROM r12)), 'public."Merge ""Odd"" Table name that is exactly sixty-three bytes long!!"',
          'quoted identifiers: the log names the target quoted');
SELECT is(pg_temp.logged((SELECT log_id FROM r12)), 'merge 1 2 1 7', 'quoted identifiers: the log row agrees');

-- ============================================================ a nearly unique key is refused, nothing written
CREATE TABLE nu (id int, v int);
INSERT INTO nu SELECT g, g FROM generate_series(1, 999) g;
INSERT INTO nu VALUES (500, -1);
CREATE TEMP TABLE nu_before AS SELECT pg_temp.fp('nu') AS fp, (SELECT count(*) FROM backfill_log) AS logs, pg_temp.writes('nu') AS w;
SELECT throws_like($$SELECT * FROM backfill_merge('nu', 'SELECT id, v + 1 AS v FROM generate_series(1, 1100) id, LATERAL (SELECT id AS v) x', ARRAY['id'])$$,
                   '%key (id) of table public.nu is not unique%', 'nearly unique: refused (1 duplicate in 1000 rows)');
SELECT is(pg_temp.fp('nu'), (SELECT fp FROM nu_before), 'nearly unique: the table is as it was');
SELECT is((SELECT count(*) FROM backfill_log), (SELECT logs FROM nu_before), 'nearly unique: no log row');
SELECT is(pg_temp.writes('nu'), (SELECT w FROM nu_before), 'nearly unique: no tuple written');
SELECT throws_ok($$SELECT * FROM backfill_merge('nu', 'SELECT 1 AS id, 1 AS v', ARRAY['id'])$$, '23505', NULL,
                 'nearly unique: refused with 23505 even when the source touches no duplicate');
-- a scope that excludes the duplicate proves the key within it
CREATE TEMP TABLE r13 AS SELECT * FROM backfill_merge('nu', 'SELECT id, -id AS v FROM generate_series(1, 10) id', ARRAY['id'], 'id <= 10');
SELECT is((SELECT row(inserted, updated, deleted, unchanged)::text FROM r13), '(0,10,0,0)', 'nearly unique: within a scope free of the duplicate the merge works');

-- ============================================================ keys and scopes as they are stored
-- the source's values are held to the key and the scope as the target's columns store them
CREATE TABLE st_num (k numeric(5,0), v int);
INSERT INTO st_num VALUES (10, 1), (20, 2);
SELECT throws_ok($$SELECT * FROM backfill_merge('st_num', 'SELECT * FROM (VALUES (9.6, 5), (10, 6)) s(k, v)', ARRAY['k'])$$,
	'23505', '1 key value appears more than once in the source',
	'numeric(5,0): source keys 9.6 and 10 are one stored key, refused');
SELECT is((SELECT string_agg(format('%s:%s', k, v), ',' ORDER BY k) FROM st_num), '10:1,20:2', 'numeric(5,0): and nothing was written');
SELECT is((SELECT row(inserted, updated, deleted)::text FROM backfill_merge('st_num', 'SELECT * FROM (VALUES (9.6, 5)) s(k, v)', ARRAY['k'])),
	'(0,1,0)', 'numeric(5,0): a source key of 9.6 matches the stored 10 and updates it');
SELECT is((SELECT string_agg(format('%s:%s', k, v), ',' ORDER BY k) FROM st_num), '10:5,20:2',
	'numeric(5,0): one row of key 10, no duplicate left behind');
CREATE TABLE st_ts (k timestamp(0), v int);
SELECT throws_ok($$SELECT * FROM backfill_merge('st_ts', $q$SELECT * FROM (VALUES (timestamp '2026-03-01 12:00:00.4', 1), (timestamp '2026-03-01 12:00:00', 2)) s(k, v)$q$, ARRAY['k'])$$,
	'23505', '1 key value appears more than once in the source',
	'timestamp(0): source keys 12:00:00.4 and 12:00:00 are one stored key, refused');
SELECT throws_ok($$SELECT * FROM backfill_merge('st_num', 'SELECT * FROM (VALUES (9.6, 7)) s(k, v)', ARRAY['k'], scope => 'k < 10')$$,
	'23514', '1 source row lies outside the scope',
	'numeric(5,0): a source row of 9.6 is stored as 10, outside the scope k < 10, refused');

-- ============================================================ a day of a big table
-- A merge scoped to one day of a daily table reads that day's partition only: the target's
-- side of every join on the key is held to the source's range of the partition key, which
-- partition pruning uses; a key matching a row outside the scope is still found.
CREATE TABLE md (id bigint NOT NULL, day date NOT NULL, v int, PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
SELECT format('CREATE TABLE md_%s PARTITION OF md FOR VALUES FROM (%L) TO (%L)', to_char(d, 'MMDD'), d, d + 1)
FROM (SELECT date '2026-03-01' + g AS d FROM generate_series(0, 9) g) x \gexec
INSERT INTO md SELECT g, date '2026-03-01' + g % 10, g FROM generate_series(1, 2000) g;
ANALYZE md;
CREATE FUNCTION pg_temp.md_scans() RETURNS bigint LANGUAGE sql AS $$
	SELECT sum(pg_stat_get_xact_numscans(c.oid))::bigint FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
	WHERE i.inhparent = 'md'::regclass AND c.relname <> 'md_0305'
$$;
CREATE TEMP TABLE md_s0 AS SELECT pg_temp.md_scans() AS n;
CREATE TEMP TABLE md_r AS SELECT * FROM backfill_merge('md',
	$$SELECT id, day, v + 1 AS v FROM md WHERE day = '2026-03-05' UNION ALL SELECT 5004, date '2026-03-05', 1$$,
	'{id,day}', $$day = '2026-03-05'$$);
SELECT is((SELECT row(inserted, updated, deleted)::text FROM md_r), '(1,200,0)',
          'a day of ten: 200 rows updated, one inserted');
SELECT is(pg_temp.md_scans() - (SELECT n FROM md_s0), 0::bigint,
          'a day of ten: no other partition was read by the guards or the writes (the source reads that day only)');
SELECT is((SELECT sum(v) FROM md WHERE day = '2026-03-05'), (SELECT sum(g) + 200 + 1 FROM generate_series(1, 2000) g WHERE g % 10 = 4)::bigint,
          'a day of ten: the day holds the merged values');
SELECT throws_ok($$SELECT * FROM backfill_merge('md', 'SELECT 7::bigint AS id, date ''2026-03-07'' AS day, 1 AS v', '{id,day}', $s$day = '2026-03-05'$s$)$$,
	'23514', '1 source row lies outside the scope', 'a day of ten: a source row of another day is refused');
SELECT throws_ok($$SELECT * FROM backfill_merge('md', 'SELECT 1004::bigint AS id, date ''2026-03-05'' AS day, 5 AS v', '{id,day}',
	$s$day = '2026-03-05' AND v < 1000$s$)$$,
	'23514', '1 source key matches a row of public.md outside the scope',
	'a day of ten: a key in the scope matching a row of that day outside it is still found');

SELECT * FROM finish();
ROLLBACK;
