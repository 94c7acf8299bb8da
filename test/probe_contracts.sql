-- test/probe_contracts.sql: what backfill_probe_idempotency promises, each stated so that it can fail.
--
-- An append is reported as not idempotent with exact counts and the "added" verdict; a
-- DELETE+INSERT of the window, a partition replacement and a merge on the key are idempotent,
-- and their first run's fingerprint is the one of the expected result (the probe sees the
-- transform's own writes). Nondeterministic columns (random(), clock_timestamp()) and
-- "v = v + 1" are not idempotent, with samples showing the column; writes outside the scope
-- are reported; after every probe the table, the log and the catalog are as they were.
-- Errors name the run that failed and keep the SQLSTATE; transaction control, empty and
-- invalid transforms, NULL arguments, out-of-range sample_rows and views are refused.
-- A sequence the transform draws from advances: the documented limit of the rollback.
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(139);

-- fp(rel, scope): the scope's fingerprint as text
CREATE FUNCTION pg_temp.fp(rel regclass, scope text DEFAULT NULL) RETURNS text LANGUAGE sql AS $$
	SELECT (backfill_fingerprint(rel, scope))::text
$$;
-- hash(rel, scope): the hash part only, as the probe reports it
CREATE FUNCTION pg_temp.hash(rel regclass, scope text DEFAULT NULL) RETURNS text LANGUAGE sql AS $$
	SELECT (backfill_fingerprint(rel, scope)).hash
$$;
CREATE FUNCTION pg_temp.logs() RETURNS bigint LANGUAGE sql AS $$ SELECT count(*) FROM backfill_log $$;

-- the source of every window: 100 rows per day over three days
CREATE TABLE pc_src (id bigint, day date, amount numeric(12,2));
INSERT INTO pc_src SELECT g, date '2026-03-14' + g % 3, g % 500 FROM generate_series(1, 300) g;

-- ============================================================ an append over an empty window
CREATE TABLE ap (id bigint, day date, amount numeric(12,2));
INSERT INTO ap SELECT * FROM pc_src WHERE day <> '2026-03-15';
CREATE TABLE ap_expected AS SELECT * FROM pc_src WHERE day = '2026-03-15';
CREATE TEMP TABLE ap_before AS SELECT pg_temp.fp('ap') AS fp, pg_temp.logs() AS logs;
CREATE TEMP TABLE p1 AS SELECT * FROM backfill_probe_idempotency(
	$$INSERT INTO ap SELECT * FROM pc_src WHERE day = '2026-03-15'$$, 'ap', $$day = '2026-03-15'$$);
SELECT is((SELECT idempotent FROM p1), false, 'append: not idempotent');
SELECT is((SELECT row(rows_before, rows_after_first, rows_after_second)::text FROM p1), '(0,100,200)',
          'append: 0 rows before, 100 after the first run, 200 = 2 * 100 after the second');
SELECT is((SELECT row(rows_only_after_first, rows_only_after_second)::text FROM p1), '(0,100)',
          'append: no row only after the first run, the 100 added rows only after the second');
SELECT ok((SELECT verdict FROM p1) LIKE 'not idempotent: the second run added 100 rows%',
          'append: the verdict says the second run added 100 rows: ' || (SELECT verdict FROM p1));
SELECT is((SELECT fingerprint_before FROM p1), pg_temp.hash('ap', $$day = '2026-03-15'$$), 'append: fingerprint_before is the window''s');
SELECT is((SELECT fingerprint_first FROM p1), pg_temp.hash('ap_expected'), 'append: fingerprint_first is the appended rows'' (the probe sees the first run''s writes)');
SELECT isnt((SELECT fingerprint_second FROM p1), (SELECT fingerprint_first FROM p1), 'append: fingerprint_second differs from fingerprint_first');
SELECT is((SELECT jsonb_array_length(sample->'only_after_first') || '/' || jsonb_array_length(sample->'only_after_second') FROM p1), '0/5',
          'append: the sample holds no row only after the first run and 5 (the default) only after the second');
SELECT is((SELECT count(*) FROM p1, jsonb_array_elements(sample->'only_after_second') e
           WHERE (e->>'day')::date = '2026-03-15' AND (e->>'id')::bigint IN (SELECT id FROM ap_expected)), 5::bigint,
          'append: the sampled rows are rows of the window the transform inserts');
SELECT is(pg_temp.fp('ap'), (SELECT fp FROM ap_before), 'append: afterwards the table is as it was');
SELECT is((SELECT count(*) FROM ap WHERE day = '2026-03-15'), 0::bigint, 'append: afterwards the window is empty again');
SELECT is(pg_temp.logs(), (SELECT logs FROM ap_before), 'append: no log row');

-- an append over a window that already holds rows: added rows, no "present n times"
CREATE TEMP TABLE p1b AS SELECT * FROM backfill_probe_idempotency(
	$$INSERT INTO ap SELECT * FROM pc_src WHERE day = '2026-03-14'$$, 'ap', $$day = '2026-03-14'$$);
SELECT is((SELECT row(idempotent, rows_before, rows_after_first, rows_after_second, rows_only_after_first, rows_only_after_second)::text FROM p1b),
          '(f,100,200,300,0,100)', 'append to a full window: 100 before, 200, 300; 100 rows only after the second run');
SELECT is((SELECT verdict FROM p1b), 'not idempotent: the second run added 100 rows (copies of rows the first run wrote); additive measures grow with every run',
          'append to a full window: the verdict does not claim rows are duplicated n times');

-- ============================================================ DELETE + INSERT of the window
CREATE TEMP TABLE p2 AS SELECT * FROM backfill_probe_idempotency(
	$$DELETE FROM ap WHERE day = '2026-03-15';
	  INSERT INTO ap SELECT * FROM pc_src WHERE day = '2026-03-15';$$, 'ap', $$day = '2026-03-15'$$);
SELECT is((SELECT idempotent FROM p2), true, 'delete+insert: idempotent');
SELECT is((SELECT row(rows_before, rows_after_first, rows_after_second, rows_only_after_first, rows_only_after_second)::text FROM p2),
          '(0,100,100,0,0)', 'delete+insert: 0, 100, 100 rows; none only after either run');
SELECT is((SELECT fingerprint_first FROM p2), pg_temp.hash('ap_expected'), 'delete+insert: the first run left the expected rows');
SELECT is((SELECT fingerprint_second FROM p2), (SELECT fingerprint_first FROM p2), 'delete+insert: the second run left the same');
SELECT is((SELECT sample FROM p2), NULL, 'delete+insert: no sample when idempotent');
SELECT is((SELECT verdict FROM p2), 'idempotent: a second run leaves the 100 rows of the window unchanged', 'delete+insert: the verdict');
SELECT is(pg_temp.fp('ap'), (SELECT fp FROM ap_before), 'delete+insert: afterwards the table is as it was');

-- a plain overwrite and a plain delete are idempotent too
SELECT is((SELECT idempotent FROM backfill_probe_idempotency($$UPDATE ap SET amount = 0 WHERE day = '2026-03-14'$$, 'ap', $$day = '2026-03-14'$$)),
          true, 'overwrite with a constant: idempotent');
SELECT is((SELECT row(idempotent, rows_before, rows_after_first, rows_after_second)::text
           FROM backfill_probe_idempotency($$DELETE FROM ap WHERE day = '2026-03-14'$$, 'ap', $$day = '2026-03-14'$$)),
          '(t,100,0,0)', 'delete of the window: idempotent, 100 rows before, none after');

-- ============================================================ partitioned: backfill_replace_partition and backfill_merge
CREATE TABLE rv (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2),
	PRIMARY KEY (order_id, order_date)) PARTITION BY RANGE (order_date);
CREATE TABLE rv_0314 PARTITION OF rv FOR VALUES FROM ('2026-03-14') TO ('2026-03-15');
CREATE TABLE rv_0315 PARTITION OF rv FOR VALUES FROM ('2026-03-15') TO ('2026-03-16');
CREATE TABLE rv_0316 PARTITION OF rv FOR VALUES FROM ('2026-03-16') TO ('2026-03-17');
INSERT INTO rv SELECT id, day, amount FROM pc_src;
CREATE TABLE rv_expected (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2));
INSERT INTO rv_expected SELECT id, day, -amount FROM pc_src WHERE day = '2026-03-15';
SELECT isnt(pg_temp.hash('rv_expected'), pg_temp.hash('rv', $$order_date = '2026-03-15'$$), 'premise: the recomputed window differs from the current one');
CREATE TEMP TABLE rv_before AS SELECT pg_temp.fp('rv') AS fp, pg_temp.fp('rv_0315') AS p15, pg_temp.logs() AS logs,
	(SELECT count(*) FROM pg_class WHERE relpersistence <> 't') AS rels,
	(SELECT array_agg(oid ORDER BY oid) FROM pg_class WHERE relname LIKE 'rv\_03%') AS rv_rels;
CREATE TEMP TABLE p3 AS SELECT * FROM backfill_probe_idempotency(
	$$SELECT backfill_replace_partition('rv_0315',
	    'SELECT id AS order_id, day AS order_date, -amount AS revenue FROM pc_src WHERE day >= $1 AND day < $2')$$,
	'rv', $$order_date >= '2026-03-15' AND order_date < '2026-03-16'$$);
SELECT is((SELECT idempotent FROM p3), true, 'replace partition: idempotent');
SELECT is((SELECT row(rows_before, rows_after_first, rows_after_second)::text FROM p3), '(100,100,100)', 'replace partition: 100 rows before and after each run');
SELECT is((SELECT fingerprint_first FROM p3), pg_temp.hash('rv_expected'), 'replace partition: the first run left the recomputed rows');
SELECT is((SELECT fingerprint_second FROM p3), (SELECT fingerprint_first FROM p3), 'replace partition: the second run left the same');
SELECT ok((SELECT verdict FROM p3) NOT LIKE '%outside%', 'replace partition: no write outside the scope reported');
SELECT is(pg_temp.fp('rv_0315'), (SELECT p15 FROM rv_before), 'replace partition: afterwards the partition is as it was');
SELECT is(pg_temp.fp('rv'), (SELECT fp FROM rv_before), 'replace partition: afterwards the table is as it was');
SELECT is((SELECT count(*) FROM pg_class WHERE relname LIKE 'backfill_stage%'), 0::bigint, 'replace partition: no staging table left');
SELECT is((SELECT array_agg(oid ORDER BY oid) FROM pg_class WHERE relname LIKE 'rv\_03%'), (SELECT rv_rels FROM rv_before),
          'replace partition: the partitions are the original relations, not swapped-in copies');
SELECT is((SELECT count(*) FROM pg_class WHERE relpersistence <> 't'), (SELECT rels FROM rv_before), 'replace partition: no relation left behind');
SELECT is(pg_temp.logs(), (SELECT logs FROM rv_before), 'replace partition: no log row');
SELECT is((SELECT relname::text FROM pg_class c JOIN pg_inherits i ON i.inhrelid = c.oid
           WHERE i.inhparent = 'rv'::regclass AND pg_get_expr(c.relpartbound, c.oid) LIKE 'FOR VALUES FROM (''2026-03-15'')%'), 'rv_0315',
          'replace partition: rv_0315 is still the partition of 2026-03-15');

CREATE TEMP TABLE p4 AS SELECT * FROM backfill_probe_idempotency(
	$$SELECT backfill_merge('rv',
	    'SELECT id AS order_id, day AS order_date, -amount AS revenue FROM pc_src WHERE day = ''2026-03-15''',
	    ARRAY['order_id', 'order_date'], scope => 'order_date = ''2026-03-15''')$$,
	'rv', $$order_date = '2026-03-15'$$);
SELECT is((SELECT idempotent FROM p4), true, 'merge: idempotent');
SELECT is((SELECT fingerprint_first FROM p4), pg_temp.hash('rv_expected'), 'merge: the first run left the merged rows');
SELECT is((SELECT fingerprint_second FROM p4), (SELECT fingerprint_first FROM p4), 'merge: the second run left the same');
SELECT is(pg_temp.fp('rv'), (SELECT fp FROM rv_before), 'merge: afterwards the table is as it was');
SELECT is(pg_temp.logs(), (SELECT logs FROM rv_before), 'merge: no log row');
-- a merge with delete_missing of a source lacking rows: still idempotent
SELECT is((SELECT row(idempotent, rows_before, rows_after_first, rows_after_second)::text FROM backfill_probe_idempotency(
	$$SELECT backfill_merge('rv', 'SELECT id AS order_id, day AS order_date, amount AS revenue FROM pc_src WHERE day = ''2026-03-16'' AND id <= 150',
	    ARRAY['order_id', 'order_date'], 'order_date = ''2026-03-16''', true)$$, 'rv', $$order_date = '2026-03-16'$$)),
          '(t,100,50,50)', 'merge with delete_missing: idempotent, 100 rows before, 50 after each run');
-- an append of the partition's rows into the parent: the primary key makes the second run fail,
-- and that is the verdict, not an error
SELECT is((SELECT row(idempotent, rows_before, rows_after_first)::text || ' ' || (verdict LIKE 'not idempotent: the second run of the transform failed: duplicate key value violates unique constraint %; a second run collides with what the first wrote, as an append does')
           FROM backfill_probe_idempotency('INSERT INTO rv SELECT id + 1000, day, amount FROM pc_src WHERE day = ''2026-03-15''', 'rv')),
          '(f,,) true', 'append under a primary key: not idempotent, the second run''s 23505 as the verdict');

-- ============================================================ nondeterministic columns
CREATE TABLE nd (id int PRIMARY KEY, r double precision, ts timestamptz);
INSERT INTO nd SELECT g, 0, '2000-01-01' FROM generate_series(1, 30) g;
CREATE TEMP TABLE nd_before AS SELECT pg_temp.fp('nd') AS fp;
CREATE TEMP TABLE p5 AS SELECT * FROM backfill_probe_idempotency($$UPDATE nd SET r = random() WHERE id <= 10$$, 'nd', 'id <= 10', 1000);
SELECT is((SELECT idempotent FROM p5), false, 'random(): not idempotent');
SELECT is((SELECT row(rows_after_first, rows_after_second, rows_only_after_first, rows_only_after_second)::text FROM p5), '(10,10,10,10)',
          'random(): all 10 rows of the window differ between the runs');
SELECT is((SELECT verdict FROM p5), 'not idempotent: the second run changed 10 of the 10 rows of the window again', 'random(): the verdict');
SELECT ok((SELECT bool_and(e ? 'r' AND (e->>'r')::float8 <> 0) FROM p5, jsonb_array_elements(sample->'only_after_first') e),
          'random(): the sample shows column r with the value the first run drew');
SELECT is((SELECT count(*) FROM p5, jsonb_array_elements(sample->'only_after_first') a, jsonb_array_elements(sample->'only_after_second') b
           WHERE a->'id' = b->'id' AND a->'r' <> b->'r' AND a->'ts' = b->'ts'), 10::bigint,
          'random(): for each id the two runs differ in r and only in r');
SELECT is(pg_temp.fp('nd'), (SELECT fp FROM nd_before), 'random(): afterwards the table is as it was');

CREATE TEMP TABLE p6 AS SELECT * FROM backfill_probe_idempotency($$UPDATE nd SET ts = clock_timestamp() WHERE id > 25$$, 'nd', 'id > 25', 1000);
SELECT is((SELECT row(idempotent, rows_only_after_first, rows_only_after_second)::text FROM p6), '(f,5,5)', 'clock_timestamp(): not idempotent, 5 rows each way');
SELECT is((SELECT count(*) FROM p6, jsonb_array_elements(sample->'only_after_first') a, jsonb_array_elements(sample->'only_after_second') b
           WHERE a->'id' = b->'id' AND (b->>'ts')::timestamptz > (a->>'ts')::timestamptz AND (a->>'ts')::timestamptz > '2000-01-01'), 5::bigint,
          'clock_timestamp(): the sample shows column ts, later after the second run than after the first');

-- an insert of random values: the rows of the two runs differ
CREATE TABLE ndi (k int, r double precision);
CREATE TEMP TABLE p6b AS SELECT * FROM backfill_probe_idempotency(
	$$DELETE FROM ndi; INSERT INTO ndi SELECT g, random() FROM generate_series(1, 4) g$$, 'ndi', NULL, 2);
SELECT is((SELECT row(idempotent, rows_after_first, rows_after_second, rows_only_after_first, rows_only_after_second)::text FROM p6b), '(f,4,4,4,4)',
          'delete+insert of random(): not idempotent, 4 rows each way');
SELECT is((SELECT jsonb_array_length(sample->'only_after_first') + jsonb_array_length(sample->'only_after_second') FROM p6b), 4,
          'sample_rows 2: two rows sampled each way');
SELECT ok((SELECT bool_and(e ? 'r') FROM p6b, jsonb_array_elements(sample->'only_after_second') e), 'delete+insert of random(): the sample shows column r');

-- ============================================================ v = v + 1: the probe sees its own writes
CREATE TABLE up (id int PRIMARY KEY, v int, note text);
INSERT INTO up SELECT g, g * 10, 'n' || g FROM generate_series(1, 50) g;
CREATE TEMP TABLE up_before AS SELECT pg_temp.fp('up') AS fp, pg_temp.hash('up', 'id <= 20') AS h;
CREATE TEMP TABLE p7 AS SELECT * FROM backfill_probe_idempotency('UPDATE up SET v = v + 1 WHERE id <= 20', 'up', 'id <= 20', 1000);
SELECT is((SELECT idempotent FROM p7), false, 'v = v + 1: not idempotent');
SELECT is((SELECT row(rows_before, rows_after_first, rows_after_second, rows_only_after_first, rows_only_after_second)::text FROM p7),
          '(20,20,20,20,20)', 'v = v + 1: the 20 rows of the window, all of them only after one run or the other');
SELECT is((SELECT fingerprint_before FROM p7), (SELECT h FROM up_before), 'v = v + 1: fingerprint_before is the window''s');
SELECT isnt((SELECT fingerprint_first FROM p7), (SELECT fingerprint_before FROM p7), 'v = v + 1: the first run changed the fingerprint');
SELECT isnt((SELECT fingerprint_second FROM p7), (SELECT fingerprint_first FROM p7), 'v = v + 1: the second run changed it again');
SELECT is((SELECT count(*) FROM p7, jsonb_array_elements(sample->'only_after_first') a, jsonb_array_elements(sample->'only_after_second') b,
           up u WHERE a->'id' = b->'id' AND u.id = (a->>'id')::int
             AND (a->>'v')::int = u.v + 1 AND (b->>'v')::int = u.v + 2 AND a->>'note' = u.note AND b->>'note' = u.note), 20::bigint,
          'v = v + 1: for each of the 20 ids the sample shows v + 1 after the first run and v + 2 after the second');
SELECT is((SELECT verdict FROM p7), 'not idempotent: the second run changed 20 of the 20 rows of the window again', 'v = v + 1: the verdict');
SELECT is(pg_temp.fp('up'), (SELECT fp FROM up_before), 'v = v + 1: afterwards the table is as it was');
SELECT is((SELECT sum(v) FROM up WHERE id <= 20), 2100::bigint, 'v = v + 1: afterwards the values are the original ones');

-- sample_rows 0: counts, but empty samples
CREATE TEMP TABLE p8 AS SELECT * FROM backfill_probe_idempotency('UPDATE up SET v = v + 1 WHERE id <= 20', 'up', 'id <= 20', 0);
SELECT is((SELECT sample FROM p8), '{"only_after_first": [], "only_after_second": []}'::jsonb, 'sample_rows 0: empty sample arrays');
SELECT is((SELECT row(rows_only_after_first, rows_only_after_second)::text FROM p8), '(20,20)', 'sample_rows 0: the counts are still there');
-- sample_rows 1000 (the maximum) is accepted
SELECT lives_ok($$SELECT * FROM backfill_probe_idempotency('UPDATE up SET v = v + 1 WHERE id <= 2', 'up', 'id <= 2', 1000)$$, 'sample_rows 1000 is accepted');

-- a delete of a different row each run: rows gone, not "changed again"
CREATE TEMP TABLE p9 AS SELECT * FROM backfill_probe_idempotency(
	'DELETE FROM up WHERE id = (SELECT min(id) FROM up WHERE id <= 20)', 'up', 'id <= 20');
SELECT is((SELECT row(idempotent, rows_after_first, rows_after_second, rows_only_after_first, rows_only_after_second)::text FROM p9),
          '(f,19,18,1,0)', 'delete of the smallest id: 19 then 18 rows; one row only after the first run');
SELECT is((SELECT (sample->'only_after_first'->0->>'id')::int FROM p9), 2, 'delete of the smallest id: the sample shows the row the second run deleted (id 2)');
SELECT is((SELECT verdict FROM p9), 'not idempotent: after the second run 1 rows of the window differ from what the first run left (1 rows gone, 0 rows new)',
          'delete of the smallest id: the verdict');

-- ============================================================ writes outside the scope
CREATE TEMP TABLE p10 AS SELECT * FROM backfill_probe_idempotency(
	'UPDATE up SET v = 0 WHERE id <= 20; DELETE FROM up WHERE id = 40', 'up', 'id <= 20');
SELECT is((SELECT idempotent FROM p10), false, 'outside: an idempotent window with a write outside it is not idempotent');
SELECT ok((SELECT verdict FROM p10) LIKE '%outside the scope%', 'outside: the verdict mentions outside the scope: ' || (SELECT verdict FROM p10));
SELECT is((SELECT fingerprint_second FROM p10), (SELECT fingerprint_first FROM p10), 'outside: the window itself is the same after both runs');
SELECT is(pg_temp.fp('up'), (SELECT fp FROM up_before), 'outside: afterwards the table is as it was');
-- an insert outside the scope, with a non-idempotent window
CREATE TEMP TABLE p11 AS SELECT * FROM backfill_probe_idempotency(
	'UPDATE up SET v = v + 1 WHERE id <= 20; INSERT INTO up SELECT coalesce(max(id), 0) + 1, 0, NULL FROM up', 'up', 'id <= 20');
SELECT is((SELECT idempotent FROM p11), false, 'outside and v + 1: not idempotent');
SELECT ok((SELECT verdict FROM p11) LIKE 'not idempotent: the second run changed 20 of the 20 rows of the window again%outside the scope%',
          'outside and v + 1: the verdict names both: ' || (SELECT verdict FROM p11));
-- a row for which the scope is NULL is outside it
CREATE TABLE sn (id int, v int);
INSERT INTO sn VALUES (1, 1), (2, NULL);
SELECT ok((SELECT NOT idempotent AND verdict LIKE '%outside the scope%' FROM backfill_probe_idempotency('UPDATE sn SET id = 3 WHERE v IS NULL', 'sn', 'v > 0')),
          'outside: a change to a row whose scope is NULL is a change outside the scope');
-- the same delete without a scope: the whole table is the window, nothing is outside
CREATE TEMP TABLE p12 AS SELECT * FROM backfill_probe_idempotency('DELETE FROM up WHERE id = 40', 'up');
SELECT is((SELECT row(idempotent, rows_before, rows_after_first, rows_after_second)::text FROM p12), '(t,50,49,49)',
          'scope NULL: the whole table is the window; deleting one row is idempotent');
SELECT is((SELECT fingerprint_before FROM p12), pg_temp.hash('up'), 'scope NULL: fingerprint_before is the whole table''s');
SELECT ok((SELECT verdict FROM p12) NOT LIKE '%outside%', 'scope NULL: no write outside reported');
-- the scope's rows only are compared: a write outside, without scope NULL, does not make the window differ
SELECT is((SELECT fingerprint_before FROM backfill_probe_idempotency('DELETE FROM up WHERE id = 40', 'up', 'id <= 20')), (SELECT h FROM up_before),
          'scope: fingerprint_before covers only the scope');

-- ============================================================ failing transforms
CREATE TEMP TABLE fail_before AS SELECT pg_temp.fp('up') AS fp, pg_temp.logs() AS logs;
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('UPDATE up SET v = 0 WHERE id = 1; SELECT 1/0', 'up')$$,
                 '22012', 'the first run of the transform failed: division by zero', 'failing: 1/0 fails the first run with 22012');
SELECT throws_like($$SELECT * FROM backfill_probe_idempotency('SELECT 1/0', 'up')$$,
                   'the first run of the transform failed%', 'failing: the message starts with the first run');
SELECT is(pg_temp.fp('up'), (SELECT fp FROM fail_before), 'failing: afterwards the table is as it was');
-- (throws_ok runs the call in its own block, which is rolled back anyway; the same within a savepoint of ours:)
SAVEPOINT s1;
DO $$ BEGIN PERFORM * FROM backfill_probe_idempotency('UPDATE up SET v = 0; SELECT 1/0', 'up'); EXCEPTION WHEN division_by_zero THEN NULL; END $$;
SELECT is(pg_temp.fp('up'), (SELECT fp FROM fail_before), 'failing: the first run''s writes are undone before the error leaves the probe');
RELEASE SAVEPOINT s1;

CREATE TABLE uq (k int, v int);
CREATE UNIQUE INDEX uq_k ON uq (k);
INSERT INTO uq VALUES (1, 1);
CREATE TEMP TABLE uq_before AS SELECT pg_temp.fp('uq') AS fp;
SELECT is((SELECT idempotent::text || ': ' || verdict FROM backfill_probe_idempotency('INSERT INTO uq VALUES (2, 2)', 'uq')),
          'false: not idempotent: the second run of the transform failed: duplicate key value violates unique constraint "uq_k": Key (k)=(2) already exists; a second run collides with what the first wrote, as an append does',
          'colliding on the second run (23505): not idempotent, naming the second run and the key');
SELECT is((SELECT idempotent::text || ': ' || verdict FROM backfill_probe_idempotency('INSERT INTO uq VALUES (1, 2)', 'uq', 'k = 1')),
          'false: not idempotent: the first run of the transform failed: duplicate key value violates unique constraint "uq_k": Key (k)=(1) already exists; the rows it writes are there already, as when an append is run again',
          'colliding on the first run, with a scope (the watched pass): not idempotent, naming the first run');
SELECT is(pg_temp.fp('uq'), (SELECT fp FROM uq_before), 'failing on the second run: afterwards the table is as it was');
SELECT is((SELECT count(*) FROM uq WHERE k = 2), 0::bigint, 'failing on the second run: the first run''s row is gone');
SELECT is(pg_temp.logs(), (SELECT logs FROM fail_before), 'failing: no log row');
-- the probe still works in this transaction after a failed probe
SELECT is((SELECT idempotent FROM backfill_probe_idempotency('INSERT INTO uq VALUES (2, 2) ON CONFLICT DO NOTHING', 'uq')), true,
          'after failures: an INSERT ... ON CONFLICT DO NOTHING is idempotent');
-- an error of a statement inside the transform keeps its SQLSTATE (undefined table, 42P01)
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('INSERT INTO no_such_table VALUES (1)', 'uq')$$,
                 '42P01', NULL, 'failing: an unknown table in the transform keeps 42P01');

-- ============================================================ transaction control and bad transforms
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('COMMIT', 'up')$$, '2D000', 'transform must not commit or roll back', 'COMMIT: 2D000');
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('UPDATE up SET v = 0; COMMIT', 'up')$$, '2D000', 'transform must not commit or roll back',
                 'a COMMIT after a statement: 2D000');
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('ROLLBACK', 'up')$$, '2D000', 'transform must not commit or roll back', 'ROLLBACK: 2D000');
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('BEGIN; UPDATE up SET v = 0; END', 'up')$$, '2D000', 'transform must not commit or roll back',
                 'BEGIN ... END: 2D000');
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('SAVEPOINT a; UPDATE up SET v = 0; ROLLBACK TO a', 'up')$$, '2D000', NULL,
                 'SAVEPOINT / ROLLBACK TO: 2D000');
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('DO $d$BEGIN COMMIT; END$d$', 'up')$$, '2D000', NULL,
                 'a COMMIT inside a DO block: 2D000 (the probe runs atomically)');
SELECT is(pg_temp.fp('up'), (SELECT fp FROM fail_before), 'transaction control: afterwards the table is as it was');

SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('', 'up')$$, '22023', 'transform must hold at least one statement', 'empty transform: 22023');
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency(E'  \n\t ', 'up')$$, '22023', 'transform must hold at least one statement', 'whitespace transform: 22023');
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('-- nothing to do', 'up')$$, '22023', 'transform must hold at least one statement', 'comment-only transform: 22023');
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('/* a */ ; ;', 'up')$$, '22023', 'transform must hold at least one statement', 'a comment and empty statements: 22023');
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('SELEC 1', 'up')$$, '42601', 'invalid transform: syntax error at or near "SELEC"', 'syntax error: 42601');
SELECT throws_like($$SELECT * FROM backfill_probe_idempotency('UPDATE up SET v = 0; UPDATE up SET', 'up')$$, 'invalid transform:%',
                   'a syntax error in the second statement: invalid transform, before anything runs');

-- ============================================================ arguments
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency(NULL, 'up')$$, '22004', 'transform must not be NULL', 'transform NULL: 22004');
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('SELECT 1', NULL)$$, '22004', 'target must not be NULL', 'target NULL: 22004');
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('SELECT 1', 'up', 'id <= 20', NULL)$$, '22004', 'sample_rows must not be NULL', 'sample_rows NULL: 22004');
SELECT is((SELECT row(idempotent, rows_before)::text FROM backfill_probe_idempotency('SELECT 1', 'up', NULL, 5)), '(t,50)', 'scope NULL: the whole table, 50 rows');
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('SELECT 1', 'up', 'id <= 20', -1)$$, '22023', 'sample_rows must be between 0 and 1000, not -1', 'sample_rows -1: 22023');
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('SELECT 1', 'up', 'id <= 20', 1001)$$, '22023', 'sample_rows must be between 0 and 1000, not 1001', 'sample_rows 1001: 22023');
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('SELECT 1', 'up', '')$$, '22023', NULL, 'scope empty: 22023');
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('SELECT 1', 'up', 'true) OR (true')$$, '42601', NULL, 'scope escaping its parentheses: 42601');
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('SELECT 1', 'up', 'no_such_column > 0')$$, '42703', NULL, 'scope naming an unknown column: 42703');
CREATE VIEW up_v AS SELECT * FROM up;
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('SELECT 1', 'up_v')$$, '42809', NULL, 'target a view: 42809');
CREATE MATERIALIZED VIEW up_mv AS SELECT * FROM up;
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('SELECT 1', 'up_mv')$$, '42809', NULL, 'target a materialized view: 42809');
SELECT is((SELECT idempotent FROM backfill_probe_idempotency('SELECT 1', 'up')), true, 'a transform that writes nothing is idempotent');

-- ============================================================ what the rollback undoes and what it cannot
-- settings the transform changes are undone
SET LOCAL work_mem = '4MB';
SELECT lives_ok($$SELECT * FROM backfill_probe_idempotency('SET LOCAL work_mem = ''77MB''; SET search_path = pg_catalog; UPDATE public.up SET v = 0', 'up')$$,
                'settings: a transform that SETs runs');
SELECT is(current_setting('work_mem'), '4MB', 'settings: work_mem is as it was');
SELECT ok(current_setting('search_path') LIKE '%public%', 'settings: search_path is as it was');
-- tables the transform creates are gone
SELECT lives_ok($$SELECT * FROM backfill_probe_idempotency('CREATE TABLE IF NOT EXISTS pc_made (x int); INSERT INTO pc_made VALUES (1)', 'up')$$,
                'DDL: a transform that creates a table runs');
SELECT is(to_regclass('pc_made'), NULL, 'DDL: the table it created is gone');
-- a quoted target and scope
CREATE TABLE "Probe ""Odd"" T" ("Id" int, "V al" int);
INSERT INTO "Probe ""Odd"" T" SELECT g, g FROM generate_series(1, 10) g;
SELECT is((SELECT row(idempotent, rows_before, rows_only_after_first, rows_only_after_second)::text FROM backfill_probe_idempotency(
	'UPDATE "Probe ""Odd"" T" SET "V al" = "V al" * 2 WHERE "Id" <= 3', '"Probe ""Odd"" T"', '"Id" <= 3')), '(f,3,3,3)',
          'quoted identifiers: v * 2 is not idempotent, 3 rows each way');
-- the probe's own working tables must not clash with the caller's: a temp table of the session
-- named like one of them must not make the probe fail
CREATE TEMP TABLE backfill_probe_first (r text);
SELECT lives_ok($$SELECT * FROM backfill_probe_idempotency('UPDATE up SET v = v + 1 WHERE id <= 2', 'up', 'id <= 2')$$,
                'names: a session temp table named backfill_probe_first does not break the probe of a non-idempotent transform');
DROP TABLE backfill_probe_first;
-- a sequence advances: the documented limit
CREATE SEQUENCE pc_seq;
CREATE TABLE sq (id bigint DEFAULT nextval('pc_seq'), v int);
CREATE TEMP TABLE seq_before AS SELECT nextval('pc_seq') AS n;
CREATE TEMP TABLE p13 AS SELECT * FROM backfill_probe_idempotency('INSERT INTO sq (v) VALUES (1)', 'sq');
SELECT is((SELECT row(idempotent, rows_after_first, rows_after_second)::text FROM p13), '(f,1,2)', 'sequence: an insert drawing ids is not idempotent');
SELECT is((SELECT count(*) FROM sq), 0::bigint, 'sequence: the rows are rolled back');
SELECT cmp_ok(nextval('pc_seq'), '>', (SELECT n + 1 FROM seq_before), 'sequence: known limit: the values the transform drew stay drawn');

-- ============================================================ a transform that changes nothing
CREATE TEMP TABLE p14 AS SELECT * FROM backfill_probe_idempotency(
	$$UPDATE ap SET amount = amount WHERE day = '2026-03-14'$$, 'ap', $$day = '2026-03-14'$$);
SELECT is((SELECT idempotent FROM p14), true, 'no-op: a transform that writes the same values is idempotent');
SELECT is((SELECT verdict FROM p14),
          'idempotent, and the transform changed no row of the window (its 100 rows are the same before and after both runs)',
          'no-op: the verdict says the transform changed no row of the window');
SELECT is((SELECT verdict FROM p2) LIKE '%changed no row%', false, 'no-op: a transform that fills an empty window is not called a no-op');

-- ============================================================ a write outside the scope by the second run only
-- The first run puts a marker row in the window; the second, finding it, rewrites rows outside.
CREATE TABLE o2 (id bigint, day date, v int);
INSERT INTO o2 SELECT g, date '2026-03-14' + g % 2, 1 FROM generate_series(1, 20) g;
CREATE TEMP TABLE o2_before AS SELECT pg_temp.fp('o2') AS fp;
CREATE TEMP TABLE p15 AS SELECT * FROM backfill_probe_idempotency(
	$$UPDATE o2 SET v = v + 1 WHERE day = '2026-03-14' AND EXISTS (SELECT FROM o2 WHERE id = 999);
	  INSERT INTO o2 SELECT 999, '2026-03-15', 1 WHERE NOT EXISTS (SELECT FROM o2 WHERE id = 999);$$,
	'o2', $$day = '2026-03-15'$$);
SELECT is((SELECT fingerprint_second FROM p15), (SELECT fingerprint_first FROM p15),
          'outside, second run: the window is the same after both runs');
SELECT is((SELECT idempotent FROM p15), false, 'outside, second run: a write outside the scope by the second run only is not idempotent');
SELECT is((SELECT verdict FROM p15),
          'not a repair of the window: the second run changed rows outside the scope (a second run leaves the 11 rows of the window unchanged)',
          'outside, second run: the verdict names the second run');
SELECT is(pg_temp.fp('o2'), (SELECT fp FROM o2_before), 'outside, second run: afterwards the table is as it was');

-- ============================================================ a role without TEMPORARY
-- The close look keeps the two states without temporary tables: a role that may not create
-- them is probed like any other, the differing rows counted and sampled.
CREATE ROLE regress_pc_notemp;
DO $$ BEGIN EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database()); END $$;
CREATE TABLE nt (id int, v int);
INSERT INTO nt SELECT g, g FROM generate_series(1, 20) g;
ALTER TABLE nt OWNER TO regress_pc_notemp;
CREATE FUNCTION pg_temp.probe_as(r text, transform text, rel text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE v text;
BEGIN
	EXECUTE format('SET LOCAL ROLE %I', r);
	BEGIN
		SELECT row(idempotent, rows_only_after_first, rows_only_after_second,
				   jsonb_array_length(sample->'only_after_first'), sample->'only_after_second'->0)::text
		INTO v FROM backfill_probe_idempotency(transform, rel::regclass, sample_rows => 3);
	EXCEPTION WHEN OTHERS THEN v := SQLSTATE || ': ' || SQLERRM;
	END;
	RESET ROLE;
	RETURN v;
END $$;
SELECT is(has_database_privilege('regress_pc_notemp', current_database(), 'TEMPORARY'), false,
          'no TEMPORARY: the role may not create temporary tables');
SELECT is(pg_temp.probe_as('regress_pc_notemp', $$UPDATE nt SET v = v + 1 WHERE id <= 4$$, 'nt'),
          '(f,4,4,3,"{""v"": 3, ""id"": 1}")',
          'no TEMPORARY: the runs differ, and the probe counts and samples the rows without a temporary table');
SELECT is(pg_temp.probe_as('regress_pc_notemp', $$INSERT INTO nt VALUES (1, 1), (1, 1)$$, 'nt'),
          '(f,0,2,0,"{""v"": 1, ""id"": 1}")',
          'no TEMPORARY: an append counts its duplicates as a multiset');
SELECT is((SELECT row(count(*), sum(v))::text FROM nt), '(20,210)', 'no TEMPORARY: afterwards the table is as it was');

-- ============================================================ a replacement in the probe gathers no statistics
-- The probe rolls its runs back, and with them a replaced partition's planner statistics: its
-- replacements skip ANALYZE. Counted by an expression index whose function draws from a sequence
-- (which no rollback takes back): ANALYZE evaluates it for each sampled row, the fill and the
-- index build for each row.
CREATE SEQUENCE an_evals;
CREATE FUNCTION an_counted(v bigint) RETURNS bigint LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	PERFORM nextval('public.an_evals');
	RETURN v;
END $$;
CREATE FUNCTION pg_temp.evals() RETURNS bigint LANGUAGE sql AS $$ SELECT nextval('an_evals') $$;
CREATE TABLE an (id bigint, day date) PARTITION BY RANGE (day);
CREATE TABLE an_1 PARTITION OF an FOR VALUES FROM ('2026-03-14') TO ('2026-03-15');
CREATE INDEX ON an (an_counted(id));
CREATE TABLE an_src AS SELECT g::bigint AS id, date '2026-03-14' AS day FROM generate_series(1, 5) g;
INSERT INTO an SELECT * FROM an_src;
CREATE TEMP TABLE an_counts (step text, evals bigint);
INSERT INTO an_counts SELECT 'start', pg_temp.evals();
ANALYZE an_1;
INSERT INTO an_counts SELECT 'analyze', pg_temp.evals();
SELECT backfill_replace_partition('an_1', 'SELECT * FROM an_src WHERE day >= $1 AND day < $2');
INSERT INTO an_counts SELECT 'replace', pg_temp.evals();
SELECT idempotent FROM backfill_probe_idempotency(
	$$SELECT backfill_replace_partition('an_1', 'SELECT * FROM an_src WHERE day >= $1 AND day < $2')$$, 'an');
INSERT INTO an_counts SELECT 'probe', pg_temp.evals();
CREATE TEMP VIEW an_deltas AS
	SELECT step, evals - lag(evals) OVER (ORDER BY evals) - 1 AS delta FROM an_counts;
SELECT is((SELECT delta FROM an_deltas WHERE step = 'analyze'), 5::bigint,
          'statistics: ANALYZE of the partition evaluates the index expression once a row');
SELECT is((SELECT delta FROM an_deltas WHERE step = 'probe'),
          (SELECT 2 * (r.delta - a.delta) FROM an_deltas r, an_deltas a WHERE r.step = 'replace' AND a.step = 'analyze'),
          'statistics: the two replacements in the probe evaluate it as two replacements without their ANALYZE do');

SELECT * FROM finish();
ROLLBACK;
