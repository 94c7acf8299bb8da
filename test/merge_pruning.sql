-- test/merge_pruning.sql: a merge scoped to one day of a daily table plans and locks that
-- day's partition only.
--
-- The target's side of each join on the key is held to the source's least and greatest day,
-- read once and planned as values: the planner prunes every other partition, so none is
-- opened or locked (a lock on a partition of history would hold off its DETACH or DROP by a
-- retention job), and the statements are costed by what they read, not by the whole table
-- (which is what JIT compilation is decided on). Checked in a transaction of its own, so that
-- the locks held at its end are the merge's; under plan_cache_mode = force_generic_plan too.
-- A $1 in the scope or the source is refused, not taken for one of those values.
SET client_min_messages = warning;
CREATE TABLE mp (id bigint NOT NULL, day date NOT NULL, v int, PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
SELECT format('CREATE TABLE mp_%s PARTITION OF mp FOR VALUES FROM (%L) TO (%L)', to_char(d, 'MMDD'), d, d + 1)
FROM (SELECT date '2026-03-01' + g AS d FROM generate_series(0, 29) g) x \gexec
INSERT INTO mp SELECT g, date '2026-03-01' + g % 30, g FROM generate_series(1, 3000) g;
CREATE TABLE mp_src AS SELECT id, day, v + 1 AS v FROM mp WHERE day = '2026-03-05';
ANALYZE mp, mp_src;
-- the partitions of mp this transaction holds a lock on
CREATE FUNCTION pg_temp.mp_locked() RETURNS text LANGUAGE sql AS $$
	SELECT coalesce(string_agg(DISTINCT c.relname, ',' ORDER BY c.relname), '')
	FROM pg_locks l JOIN pg_inherits i ON i.inhrelid = l.relation JOIN pg_class c ON c.oid = l.relation
	WHERE i.inhparent = 'mp'::regclass AND l.pid = pg_backend_pid() AND l.locktype = 'relation'
$$;
CREATE FUNCTION pg_temp.mp_sum() RETURNS bigint LANGUAGE sql AS $$ SELECT sum(v) FROM mp $$;
CREATE TEMP TABLE mp_before AS SELECT pg_temp.mp_sum() AS total;

SELECT plan(7);

BEGIN;
SELECT is((SELECT updated FROM backfill_merge('mp', 'TABLE mp_src', '{id,day}', $$day = '2026-03-05'$$)), 100::bigint,
          'one day of thirty: its 100 rows updated');
SELECT is(pg_temp.mp_locked(), 'mp_0305', 'one day of thirty: the merge locked that day''s partition and no other');
ROLLBACK;

BEGIN;
SET LOCAL plan_cache_mode = force_generic_plan;
SELECT is((SELECT updated FROM backfill_merge('mp', 'TABLE mp_src', '{id,day}', $$day = '2026-03-05'$$)), 100::bigint,
          'force_generic_plan: its 100 rows updated');
SELECT is(pg_temp.mp_locked(), 'mp_0305', 'force_generic_plan: still that day''s partition only');
ROLLBACK;

-- delete_missing: the DELETE reads the source again, after the MERGE's writes, so it is not
-- held to the bounds read before them. This source holds key 2 (another day) only once key 1
-- is merged: the DELETE must keep row 2.
CREATE TABLE mp2 (id bigint NOT NULL, day date NOT NULL, v int, PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
CREATE TABLE mp2_01 PARTITION OF mp2 FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
CREATE TABLE mp2_02 PARTITION OF mp2 FOR VALUES FROM ('2026-03-02') TO ('2026-03-03');
INSERT INTO mp2 VALUES (1, '2026-03-01', 0), (2, '2026-03-02', 0);
BEGIN;
SELECT is((SELECT row(updated, deleted)::text FROM backfill_merge('mp2',
	$$SELECT id, day, 10 AS v FROM mp2 WHERE id = 1 OR (id = 2 AND EXISTS (SELECT 1 FROM mp2 WHERE id = 1 AND v = 10))$$,
	'{id,day}', $$day >= '2026-03-01' AND day < '2026-03-03'$$, delete_missing => true)), '(1,0)',
	'delete_missing: a key the source holds when the DELETE reads it is kept, outside the bounds read before the MERGE too');
ROLLBACK;

SELECT throws_ok($$SELECT * FROM backfill_merge('mp', 'TABLE mp_src', '{id,day}', 'day = $1')$$,
	'42P02', NULL, 'a $1 in the scope is refused, not bound to the source''s bounds');
SELECT is(pg_temp.mp_sum(), (SELECT total FROM mp_before), 'afterwards the table is as it was');

SELECT * FROM finish();
DROP TABLE mp, mp_src, mp2;
