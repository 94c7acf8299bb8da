-- test/estimate_contracts.sql: what backfill_estimate promises, each stated so that it can fail.
--
-- It refuses (changing nothing) a NULL run (22004), an unknown run (22023), a finished or
-- cancelled run (55000), a run on a table the caller does not own (42501), a run whose pinned
-- code changed (55000).  An estimate leaves no trace: the table fingerprints as before, no
-- staging table is left, backfill_runs, backfill_tasks and backfill_log are as they were.  It
-- returns one row per task left and a total: a measured task's rows are the rows its source
-- gives, the total sums the tasks, the first task is measured and every other task is scaled
-- by its partition's rows as pg_class counts them; by the planner's rows when its partition
-- was never counted, is empty, or when no measured task's partition was counted.  An estimate
-- of a merge run holds no lock on the partitions it did not measure.  The tasks of a run half
-- done are those left.
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(24);

CREATE ROLE regress_est_other;
CREATE TABLE est_src (id bigint, day date, amount numeric(12,2));
INSERT INTO est_src SELECT g, date '2026-03-10' + g % 4, g % 97 FROM generate_series(1, 4000) g;
INSERT INTO est_src SELECT g, date '2026-03-10', g % 97 FROM generate_series(4001, 8000) g;
CREATE VIEW est_model AS SELECT id, day, amount * 2 AS amount FROM est_src;
CREATE TABLE est (id bigint NOT NULL, day date NOT NULL, amount numeric(12,2)) PARTITION BY RANGE (day);
SELECT format('CREATE TABLE %I PARTITION OF est FOR VALUES FROM (%L) TO (%L)', 'est_' || to_char(d, 'MMDD'), d::date, d::date + 1)
FROM generate_series(date '2026-03-10', date '2026-03-13', interval '1 day') d \gexec
CREATE INDEX ON est (id);
INSERT INTO est SELECT * FROM est_src;
ANALYZE est_src, est;

CREATE FUNCTION pg_temp.state() RETURNS text LANGUAGE sql AS $$
	SELECT concat_ws(' | ',
		(SELECT string_agg(format('%s=%s', c.relname, (backfill_fingerprint(c.oid)).hash), ',' ORDER BY c.relname)
		 FROM pg_class c WHERE c.relname LIKE 'est%' AND c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace),
		(SELECT count(*) FROM backfill_runs), (SELECT string_agg(id || status || coalesce(error, ''), ',' ORDER BY id) FROM backfill_runs),
		(SELECT count(*) FROM backfill_tasks),
		(SELECT string_agg(status || attempts || coalesce(rows_after::text, '-'), ',' ORDER BY run_id, task) FROM backfill_tasks),
		(SELECT count(*) FROM backfill_log))
$$;

\ir lib/refuses.psql

CREATE TEMP TABLE r AS SELECT backfill_plan('est', '2026-03-10', '2026-03-14',
	'SELECT * FROM est_model WHERE day >= $1 AND day < $2') AS id;

-- bad input
SELECT pg_temp.refuses($$SELECT * FROM backfill_estimate(NULL)$$, '22004', '^run_id must not be NULL$', 'estimate: NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_estimate(987654)$$, '22023', '^run_id 987654 is not a run of backfill_runs$', 'estimate: no such run');
GRANT USAGE ON SCHEMA public TO regress_est_other;
GRANT SELECT ON est TO regress_est_other;	-- it sees the run, and may not act on it
SELECT pg_temp.refuses(format($$SELECT * FROM backfill_estimate(%s)$$, (SELECT id FROM r)), '42501',
	'^must be owner of table public\.est to estimate run [0-9]+$', 'estimate: a run of another role''s table', 'regress_est_other');

-- an estimate leaves no trace
CREATE TEMP TABLE state_before AS SELECT pg_temp.state() AS s;
CREATE TEMP TABLE e AS SELECT * FROM backfill_estimate((SELECT id FROM r));
SELECT is(pg_temp.state(), (SELECT s FROM state_before), 'an estimate changes no row of the table, the runs, the tasks or the log');
SELECT is((SELECT count(*) FROM pg_class WHERE relname LIKE 'backfill\_stage\_%'), 0::bigint, 'and leaves no staging table');

-- what it returns
SELECT is((SELECT count(*) FROM e WHERE task IS NOT NULL), 4::bigint, 'one row per task');
SELECT is((SELECT count(*) FROM e WHERE task IS NULL AND how LIKE 'total: 4 tasks, % measured'), 1::bigint, 'and a total');
SELECT is((SELECT how FROM e WHERE task = 1), 'measured', 'the first task is measured');
SELECT is((SELECT rows FROM e WHERE task = 1), (SELECT count(*) FROM est_model WHERE day = '2026-03-10'),
	'a measured task''s rows are the rows its source gives');
SELECT is((SELECT count(*) FILTER (WHERE e.how = format('scaled by its partition''s %s rows', c.reltuples)) || ' of ' || count(*)
		   FROM e JOIN pg_class c ON c.oid = e.partition::regclass WHERE e.task IS NOT NULL AND e.how <> 'measured'),
	'2 of 2', 'every other task is scaled by its partition''s rows, as pg_class counts them');
SELECT is((SELECT rows FROM e WHERE task IS NULL), (SELECT sum(rows)::bigint FROM e WHERE task IS NOT NULL), 'the total sums the tasks');
SELECT ok((SELECT bool_and(heap_bytes > 0 AND index_bytes > 0 AND wal_bytes > 0 AND seconds > 0 AND extra_disk_bytes > 0)
		   FROM e WHERE how = 'measured'), 'a measured replacement built a heap and an index, wrote WAL, took time and disk');
SELECT ok((SELECT locked_seconds FROM e WHERE task = 1) > 0, 'and its swap held its locks for a while');

-- partitions never counted, or empty: the planner's rows
CREATE TABLE est_new (LIKE est) PARTITION BY RANGE (day);
SELECT format('CREATE TABLE %I PARTITION OF est_new FOR VALUES FROM (%L) TO (%L)', 'est_new_' || to_char(d, 'MMDD'), d::date, d::date + 1)
FROM generate_series(date '2026-03-10', date '2026-03-13', interval '1 day') d \gexec
CREATE TABLE est_flat AS SELECT * FROM est_src WHERE id <= 4000;	-- 1,000 rows a day
ANALYZE est_flat;
CREATE TEMP TABLE r3 AS SELECT backfill_plan('est_new', '2026-03-10', '2026-03-14',
	'SELECT * FROM est_flat WHERE day >= $1 AND day < $2') AS id;
SELECT ok((SELECT bool_and(how ~ '^scaled by the planner''s [0-9]+ rows$') FROM backfill_estimate((SELECT id FROM r3))
		   WHERE task IS NOT NULL AND how <> 'measured'), 'partitions never counted: scaled by the planner''s rows');
ANALYZE est_new;
SELECT ok((SELECT bool_and(how ~ '^scaled by the planner''s [0-9]+ rows$') FROM backfill_estimate((SELECT id FROM r3))
		   WHERE task IS NOT NULL AND how <> 'measured'), 'partitions counted empty: scaled by the planner''s rows');
INSERT INTO est_new SELECT * FROM est_flat WHERE day > '2026-03-10';
ANALYZE est_new;
SELECT ok((SELECT bool_and(how ~ '^scaled by the planner''s [0-9]+ rows$') FROM backfill_estimate((SELECT id FROM r3))
		   WHERE task IS NOT NULL AND how <> 'measured'),
	'the measured partition empty, the others counted alike: scaled by the planner''s rows, as the measured task was');

-- a merge run: the estimate locks no partition it does not measure
CREATE TEMP TABLE r4 AS SELECT backfill_plan('est', '2026-03-10', '2026-03-14',
	'SELECT * FROM est_model WHERE day >= $1 AND day < $2', 'merge', '{id}') AS id;
CREATE TEMP TABLE locks_before AS SELECT l.relation, l.mode FROM pg_locks l WHERE l.pid = pg_backend_pid() AND l.locktype = 'relation';
SELECT is((SELECT count(*) FROM backfill_estimate((SELECT id FROM r4)) WHERE task IS NOT NULL), 4::bigint, 'a merge run estimated');
SELECT is((SELECT string_agg(c.relname || ' ' || l.mode, ',') FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
		   WHERE l.pid = pg_backend_pid() AND c.relname LIKE 'est\_03%' AND l.mode <> 'AccessShareLock'
		   AND (l.relation, l.mode) NOT IN (SELECT relation, mode FROM locks_before)), NULL,
	'and holds no lock it did not hold before on a partition, but ACCESS SHARE');

-- a run half done: what is left; a finished run: nothing
UPDATE backfill_tasks_data SET status = 'done' WHERE run_id = (SELECT id FROM r) AND task <= 2;
SELECT is((SELECT string_agg(task::text, ',' ORDER BY task) FROM backfill_estimate((SELECT id FROM r)) WHERE task IS NOT NULL),
	'3,4', 'a run half done: the tasks left');
UPDATE backfill_runs_data SET status = 'done' WHERE id = (SELECT id FROM r);
SELECT pg_temp.refuses(format($$SELECT * FROM backfill_estimate(%s)$$, (SELECT id FROM r)), '55000',
	'^run [0-9]+ is done: there is nothing left to estimate$', 'estimate: a finished run');

-- max_disk_bytes: a plan whose replacements would need more disk at their peak is refused
SELECT pg_temp.refuses($$SELECT backfill_plan('est', '2026-03-10', '2026-03-14', 'SELECT * FROM est_model WHERE day >= $1 AND day < $2', options => '{"max_disk_bytes": 8192}')$$,
	'53100', '^the run would need about [0-9]+ bytes of disk at its peak, above options\.max_disk_bytes \(8192\)$', 'plan: a peak above max_disk_bytes');
SELECT pg_temp.refuses($$SELECT backfill_plan('est', '2026-03-10', '2026-03-14', 'SELECT * FROM est_model WHERE day >= $1 AND day < $2', options => '{"max_disk_bytes": 0}')$$,
	'22023', 'max_disk_bytes', 'plan: max_disk_bytes 0');
SELECT ok((SELECT backfill_plan('est', '2026-03-10', '2026-03-14', 'SELECT * FROM est_model WHERE day >= $1 AND day < $2',
	options => jsonb_build_object('max_disk_bytes', (SELECT pg_total_relation_size('est_0310'))::bigint))) IS NOT NULL,
	'plan: a peak of exactly the largest partition fits max_disk_bytes set to its size');

-- pinned code changed: refused
CREATE TEMP TABLE r2 AS SELECT backfill_plan('est', '2026-03-10', '2026-03-12',
	'SELECT * FROM est_model WHERE day >= $1 AND day < $2') AS id;
CREATE OR REPLACE VIEW est_model AS SELECT id, day, amount * 3 AS amount FROM est_src;
SELECT pg_temp.refuses(format($$SELECT * FROM backfill_estimate(%s)$$, (SELECT id FROM r2)), '55000',
	'est_model', 'estimate: the pinned code changed');

SELECT * FROM finish();
ROLLBACK;
