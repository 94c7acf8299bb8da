-- sql/run_auto.sql: strategy 'auto' swaps large partitions and rewrites small ones in place.
--
-- A partition of at most small_partition_rows rows is written in place in the task's
-- transaction, only its rows that differ from the source deleted and inserted (no DDL,
-- readers see the old rows until the commit; sql/run_in_place.sql); a larger one is swapped.  The log record of each task
-- says which, and why.  Either way the partition ends equal to the source.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS backfill;
RESET client_min_messages;
SET datestyle = 'ISO';
CREATE TABLE ra (id int NOT NULL, day date NOT NULL, v int, PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
CREATE TABLE ra_0311 PARTITION OF ra FOR VALUES FROM ('2026-03-11') TO ('2026-03-12');
CREATE TABLE ra_0312 PARTITION OF ra FOR VALUES FROM ('2026-03-12') TO ('2026-03-13');
CREATE TABLE ra_0313 PARTITION OF ra FOR VALUES FROM ('2026-03-13') TO ('2026-03-14');
-- 50 rows on the 11th, 500 on the 12th, none on the 13th
INSERT INTO ra SELECT g, '2026-03-11', g FROM generate_series(1, 50) g;
INSERT INTO ra SELECT g, '2026-03-12', g FROM generate_series(1, 500) g;
CREATE TABLE ra_src AS SELECT id, day, v * 10 AS v FROM ra
	UNION ALL SELECT g, '2026-03-13', g FROM generate_series(1, 5) g;

SELECT backfill_plan('ra', '2026-03-11', '2026-03-14', $$SELECT * FROM ra_src WHERE day >= $1 AND day < $2$$,
	strategy => 'auto', options => '{"small_partition_rows": 100}') AS run \gset
SELECT options->'small_partition_rows' AS small_partition_rows FROM backfill_runs WHERE id = :run;

-- the dry run of the first task computes it as the task will: in place, rolled back
SELECT partition, rows_before, rows_after, added, removed, reconciled FROM backfill_dry_run(:run);
SELECT sum(v) FROM ra_0311;

SET client_min_messages = warning;
CALL backfill_run(:run);
RESET client_min_messages;
SELECT t.task, t.partition, l.operation, l.rows_before, l.rows_after, l.details->>'why' AS why
FROM backfill_tasks t JOIN backfill_log l ON l.id = t.log_id WHERE t.run_id = :run ORDER BY t.task;
-- every task's COMMIT is timed; only a swap has a time under its locks
SELECT t.task, l.operation, t.commit_ms > 0 AS commit_timed, t.locked_ms IS NOT NULL AS locked_timed
FROM backfill_tasks t JOIN backfill_log l ON l.id = t.log_id WHERE t.run_id = :run ORDER BY t.task;
-- every day equals the source
SELECT NOT EXISTS (SELECT FROM backfill_diff('TABLE ra', 'TABLE ra_src', ARRAY['id', 'day'])) AS equals_source;

-- a source that reads the partition itself reads it as it was before the delete
CREATE TABLE ra_before AS SELECT count(*) AS n, sum(v) AS s FROM ra_0311;
SELECT backfill_plan('ra', '2026-03-11', '2026-03-12', $$SELECT id, day, v + 1 AS v FROM ra WHERE day >= $1 AND day < $2$$,
	strategy => 'auto', options => '{"small_partition_rows": 100}') AS run_self \gset
SET client_min_messages = warning;
CALL backfill_run(:run_self);
RESET client_min_messages;
SELECT count(*) = n AS same_rows, sum(v) = s + n AS each_one_more FROM ra_0311, ra_before GROUP BY n, s;

-- an empty source for a small partition is refused, as a swap refuses it
DELETE FROM ra_src WHERE day = '2026-03-11';
SELECT backfill_plan('ra', '2026-03-11', '2026-03-12', $$SELECT * FROM ra_src WHERE day >= $1 AND day < $2$$,
	strategy => 'auto', options => '{"small_partition_rows": 100}') AS run2 \gset
\set VERBOSITY terse
SELECT partition, rows_after FROM backfill_dry_run(:run2);
\set VERBOSITY default
SELECT count(*) AS rows_kept FROM ra_0311;
SELECT backfill_cancel(:run2);
