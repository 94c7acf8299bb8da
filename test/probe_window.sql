-- test/probe_window.sql: a probe scoped to a window reads the window, not the table.
--
-- The probe knows from its own transaction's counters which relations each run of the
-- transform wrote: it reads only those, at each of its three points, and the scope's rows of
-- the others once.  So a partition no run wrote and the scope does not cover is never scanned
-- (its scan counter, pg_stat_get_xact_numscans, does not move), whatever the table's size;
-- yet every verdict the probe gives holds: a write outside the scope in another partition, or
-- in the part of a partition the scope leaves out, or in a plain table, is reported; a table
-- outside the target that the runs write is named; a transform that truncates or replaces a
-- partition outside the scope (new storage, a new relation) is probed by reading the whole
-- table, with the same verdicts; one whose scope's partition is truncated or replaced reads that partition by
-- its bound, and still no other.  The fingerprints it reports are those of the scope at each
-- point.
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(33);

CREATE FUNCTION pg_temp.hash(rel regclass, scope text DEFAULT NULL) RETURNS text LANGUAGE sql AS $$
	SELECT (backfill_fingerprint(rel, scope)).hash
$$;

CREATE TABLE pw_src (id bigint, day date, v numeric(12,2));
INSERT INTO pw_src SELECT g, date '2026-03-01' + g % 10, g % 97 FROM generate_series(1, 5000) g;
CREATE TABLE pw (id bigint, day date, v numeric(12,2)) PARTITION BY RANGE (day);
SELECT format('CREATE TABLE pw_%s PARTITION OF pw FOR VALUES FROM (%L) TO (%L)', to_char(d, 'MMDD'), d, d + 1)
FROM generate_series(date '2026-03-01', date '2026-03-10', interval '1 day') g(t), LATERAL (SELECT t::date AS d) x \gexec
INSERT INTO pw SELECT * FROM pw_src;
CREATE TABLE pw_audit (n bigint);
CREATE TABLE pw_flat AS SELECT * FROM pw_src;
ANALYZE pw, pw_flat;
-- the scans of every partition but those named, in this transaction so far
CREATE FUNCTION pg_temp.scans_except(VARIADIC parts regclass[]) RETURNS bigint LANGUAGE sql AS $$
	SELECT sum(pg_stat_get_xact_numscans(c.oid))::bigint FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
	WHERE i.inhparent = 'pw'::regclass AND c.oid <> ALL (parts)
$$;

-- ============================================================ one day repaired: only it is read
CREATE TEMP TABLE s0 AS SELECT pg_temp.scans_except('pw_0305') AS n;
CREATE TEMP TABLE w1 AS SELECT * FROM backfill_probe_idempotency(
	$$DELETE FROM pw WHERE day = '2026-03-05'; INSERT INTO pw SELECT * FROM pw_src WHERE day = '2026-03-05'$$,
	'pw', $$day = '2026-03-05'$$);
SELECT is(pg_temp.scans_except('pw_0305') - (SELECT n FROM s0), 0::bigint,
          'one day repaired: no other partition was scanned');
SELECT is((SELECT idempotent FROM w1), true, 'one day repaired: idempotent');
SELECT is((SELECT row(rows_before, rows_after_first, rows_after_second)::text FROM w1), '(500,500,500)',
          'one day repaired: 500 rows at each point');
SELECT is((SELECT fingerprint_before FROM w1), pg_temp.hash('pw', $$day = '2026-03-05'$$),
          'one day repaired: the fingerprint before is the scope''s');
SAVEPOINT once;
DELETE FROM pw WHERE day = '2026-03-05';
INSERT INTO pw SELECT id, day, v FROM pw_src WHERE day = '2026-03-05';
SELECT is((SELECT fingerprint_first FROM w1), pg_temp.hash('pw', $$day = '2026-03-05'$$),
          'one day repaired: the fingerprint after the first run is the scope''s after one run');
ROLLBACK TO once;

-- ============================================================ the verdicts still hold
CREATE TEMP TABLE s1 AS SELECT pg_temp.scans_except('pw_0305', 'pw_0307') AS n;
CREATE TEMP TABLE w2 AS SELECT * FROM backfill_probe_idempotency(
	$$UPDATE pw SET v = v WHERE day = '2026-03-05'; UPDATE pw SET v = 1 WHERE day = '2026-03-07' AND id % 20 = 6$$,
	'pw', $$day = '2026-03-05'$$);
SELECT is((SELECT idempotent FROM w2), false, 'a write into another day: not a repair');
SELECT matches((SELECT verdict FROM w2), '^not a repair of the window: it changed rows outside the scope',
               'a write into another day: reported as a change outside the scope, by the first run');
SELECT is(pg_temp.scans_except('pw_0305', 'pw_0307') - (SELECT n FROM s1), 0::bigint,
          'a write into another day: only the two days written were scanned');

CREATE TEMP TABLE w3 AS SELECT * FROM backfill_probe_idempotency(
	$$UPDATE pw SET v = v + 1 WHERE day = '2026-03-05' AND id % 20 = 14$$,
	'pw', $$day = '2026-03-05' AND id % 20 = 4$$);
SELECT is((SELECT idempotent FROM w3), false, 'half a day in scope, the other half written: not a repair');
SELECT matches((SELECT verdict FROM w3), 'changed rows outside the scope',
               'half a day: the write to the half the scope leaves out is reported');

CREATE TEMP TABLE w4 AS SELECT * FROM backfill_probe_idempotency(
	$$UPDATE pw SET v = v + 1 WHERE day = '2026-03-05'$$, 'pw', $$day = '2026-03-05'$$);
SELECT is((SELECT idempotent FROM w4), false, 'v = v + 1 in the window: not idempotent');
SELECT matches((SELECT verdict FROM w4), '^not idempotent: the second run changed 500 of the 500 rows',
               'v = v + 1: the second run changed every row again');

CREATE TEMP TABLE w5 AS SELECT * FROM backfill_probe_idempotency(
	$$UPDATE pw SET v = 2 WHERE day = '2026-03-05' AND id < 100; UPDATE pw SET v = v WHERE day = '2026-03-06'$$,
	'pw', $$day = '2026-03-05'$$);
SELECT is((SELECT idempotent FROM w5), true, 'a partition written without changing it: still a repair');

CREATE TEMP TABLE w6 AS SELECT * FROM backfill_probe_idempotency(
	$$UPDATE pw SET v = 3 WHERE day = '2026-03-05'; INSERT INTO pw_audit SELECT count(*) FROM pw WHERE day = '2026-03-05'$$,
	'pw', $$day = '2026-03-05'$$);
SELECT is((SELECT idempotent FROM w6), true, 'a transform that also writes an audit table: idempotent on the target');
SELECT matches((SELECT verdict FROM w6), 'it also writes outside the target: public\.pw_audit',
               'and the audit table it writes is named');
SELECT is((SELECT count(*) FROM pw_audit), 0::bigint, 'and its writes are rolled back');

-- ============================================================ storage moved
CREATE TEMP TABLE s7 AS SELECT pg_temp.scans_except('pw_0305') AS n;
CREATE TEMP TABLE w7 AS SELECT * FROM backfill_probe_idempotency(
	$$TRUNCATE pw_0305; INSERT INTO pw SELECT * FROM pw_src WHERE day = '2026-03-05'$$, 'pw', $$day = '2026-03-05'$$);
SELECT is((SELECT idempotent FROM w7), true, 'a partition truncated and refilled: idempotent');
SELECT is(pg_temp.scans_except('pw_0305') - (SELECT n FROM s7), 0::bigint,
          'a partition truncated and refilled: it is the scope''s, read by its bound, and no other is read');
CREATE TEMP TABLE w8 AS SELECT * FROM backfill_probe_idempotency(
	$$TRUNCATE pw_0305; TRUNCATE pw_0306; INSERT INTO pw SELECT * FROM pw_src WHERE day = '2026-03-05'$$,
	'pw', $$day = '2026-03-05'$$);
SELECT matches((SELECT verdict FROM w8), '^not a repair of the window: it changed rows outside the scope',
               'a neighbour truncated too: reported');
CREATE TEMP TABLE s9 AS SELECT pg_temp.scans_except('pw_0305') AS n;
CREATE TEMP TABLE w9 AS SELECT * FROM backfill_probe_idempotency(
	$$SELECT backfill_replace_partition('pw_0305', 'SELECT * FROM pw_src WHERE day >= $1 AND day < $2')$$,
	'pw', $$day = '2026-03-05'$$);
SELECT is((SELECT row(idempotent, rows_after_first, rows_after_second)::text FROM w9), '(t,500,500)',
          'a partition replaced (a new relation): idempotent, 500 rows');
SELECT is(pg_temp.scans_except('pw_0305') - (SELECT n FROM s9), 0::bigint,
          'a partition replaced: the new one sits under the scope''s bound, and no other partition is read');
CREATE TEMP TABLE w12 AS SELECT * FROM backfill_probe_idempotency(
	$$SELECT backfill_replace_partition('pw_0306', 'SELECT * FROM pw_src WHERE day >= $1 AND day < $2 AND id % 20 <> 5')$$,
	'pw', $$day = '2026-03-05'$$);
SELECT matches((SELECT verdict FROM w12), '^not a repair of the window: it changed rows outside the scope',
               'another day replaced with fewer rows: reported');

-- ============================================================ the scope read from the partition or by a query: one answer
-- The scope's partitions are read straight from their storage, the scope run on each row, when
-- it is a plain expression, and by a query on the parent when it is not (a subquery here): the
-- sums must be the same either way, and across the way, as when a day with a dropped column,
-- its columns in another order, is replaced by a new table at the second point.
CREATE TABLE pw_0311 (v numeric(12,2), junk int, day date, id bigint);
ALTER TABLE pw_0311 DROP COLUMN junk;
ALTER TABLE pw ATTACH PARTITION pw_0311 FOR VALUES FROM ('2026-03-11') TO ('2026-03-12');
INSERT INTO pw_src SELECT g, date '2026-03-11', CASE WHEN g % 9 = 0 THEN NULL ELSE g % 31 END
FROM generate_series(6001, 6400) g;
INSERT INTO pw SELECT * FROM pw_src WHERE day = '2026-03-11';
CREATE TEMP TABLE w13 AS SELECT s.scope, p.* FROM (VALUES
	($$pw.day = '2026-03-11' AND v > 10$$),
	($$public.pw.day = '2026-03-11' AND v > 10$$),
	($$day = (SELECT date '2026-03-11') AND v > 10$$)) s(scope),
	LATERAL backfill_probe_idempotency(
		$$SELECT backfill_replace_partition('pw_0311', 'SELECT * FROM pw_src WHERE day >= $1 AND day < $2')$$,
		'pw', s.scope) p;
SELECT is((SELECT count(*) FROM w13 WHERE idempotent), 3::bigint,
          'a replaced day with a dropped column: idempotent, the scope read directly, through the schema, or by a query');
SELECT is((SELECT count(DISTINCT row(fingerprint_before, fingerprint_first, fingerprint_second)) FROM w13), 1::bigint,
          'the three ways of writing the scope: the same fingerprints at every point');
SELECT is((SELECT fingerprint_before FROM w13 LIMIT 1), pg_temp.hash('pw', $$day = '2026-03-11' AND v > 10$$),
          'read from the partition: the scope''s fingerprint, as a query on the parent takes it');
SELECT is((SELECT rows_before FROM w13 LIMIT 1), (SELECT count(*) FROM pw_src WHERE day = '2026-03-11' AND v > 10),
          'read from the partition: the scope''s rows, a NULL scope counting as outside');
CREATE TEMP TABLE w14 AS SELECT s.scope, p.* FROM (VALUES
	($$day = '2026-03-11' AND v > 10$$), ($$day = (SELECT date '2026-03-11') AND v > 10$$)) s(scope),
	LATERAL backfill_probe_idempotency(
		$$UPDATE pw SET id = id + 100000 WHERE day = '2026-03-11' AND v IS NULL$$, 'pw', s.scope) p;
SELECT is((SELECT count(*) FROM w14 WHERE verdict ~ '^not a repair of the window: each run changed rows outside the scope'),
          2::bigint, 'rows whose scope is NULL written: outside the scope, read directly or by a query');
CREATE TEMP TABLE w15 AS SELECT s.scope, p.* FROM (VALUES
	($$day = '2026-03-11' AND v > 10$$), ($$day = (SELECT date '2026-03-11') AND v > 10$$)) s(scope),
	LATERAL backfill_probe_idempotency(
		$$UPDATE pw SET v = v + 1 WHERE day = '2026-03-11' AND v > 20$$, 'pw', s.scope) p;
SELECT is((SELECT count(*) FROM w15 WHERE verdict ~ '^not idempotent: the second run changed'), 2::bigint,
          'v = v + 1 inside the scope: not idempotent, read directly or by a query');
SELECT throws_ok($$SELECT * FROM backfill_probe_idempotency('UPDATE pw SET v = v WHERE day = ''2026-03-11''',
                   'pw', $s$day = '2026-03-11' AND 1 / (id - id) > 0$s$)$$, '22012', NULL,
                 'a scope that fails on a row fails the probe, as its query would');
SELECT is(pg_temp.hash('pw_0311'), pg_temp.hash('pw_src', $$day = '2026-03-11'$$), 'after the probes, the day holds its rows');

-- ============================================================ a plain table
CREATE TEMP TABLE w10 AS SELECT * FROM backfill_probe_idempotency(
	$$UPDATE pw_flat SET v = v WHERE day = '2026-03-05'; DELETE FROM pw_flat WHERE day = '2026-03-09' AND id % 7 = 0$$,
	'pw_flat', $$day = '2026-03-05'$$);
SELECT matches((SELECT verdict FROM w10), '^not a repair of the window: it changed rows outside the scope',
               'a plain table, rows deleted outside the scope: reported');
CREATE TEMP TABLE w11 AS SELECT * FROM backfill_probe_idempotency(
	$$DELETE FROM pw_flat WHERE day = '2026-03-05'; INSERT INTO pw_flat SELECT * FROM pw_src WHERE day = '2026-03-05'$$,
	'pw_flat', $$day = '2026-03-05'$$);
SELECT is((SELECT row(idempotent, fingerprint_before = pg_temp.hash('pw_flat', $$day = '2026-03-05'$$))::text FROM w11), '(t,t)',
          'a plain table, the window rewritten: idempotent, the scope''s fingerprint');
SELECT is(pg_temp.hash('pw'), pg_temp.hash('pw_src'), 'after every probe, rolled back, pw holds its rows');

SELECT * FROM finish();
ROLLBACK;
