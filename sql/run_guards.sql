-- sql/run_guards.sql: a run writes only into the partitions it planned.
--
-- A task finds its partition by name.  If that table was detached after the run was planned,
-- or is now bounded otherwise, the task fails, saying so, and writes nothing there.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS backfill;
RESET client_min_messages;
SET datestyle = 'ISO';
CREATE TABLE rg (id int NOT NULL, day date NOT NULL, v int) PARTITION BY RANGE (day);
CREATE TABLE rg_0311 PARTITION OF rg FOR VALUES FROM ('2026-03-11') TO ('2026-03-12');
CREATE TABLE rg_0312 PARTITION OF rg FOR VALUES FROM ('2026-03-12') TO ('2026-03-13');
CREATE TABLE rg_0313 PARTITION OF rg FOR VALUES FROM ('2026-03-13') TO ('2026-03-14');
INSERT INTO rg SELECT g, date '2026-03-11' + g % 3, g FROM generate_series(1, 30) g;
-- the fixed model: every v one more
CREATE TABLE rg_src AS SELECT id, day, v + 1 AS v FROM rg;

SELECT backfill_plan('rg', '2026-03-11', '2026-03-14',
	$$SELECT * FROM rg_src WHERE day >= $1 AND day < $2$$, strategy => 'merge', key => ARRAY['id'],
	options => '{"on_error": "continue"}') AS run \gset

-- After planning: one partition is detached, another detached and attached again for another day.
ALTER TABLE rg DETACH PARTITION rg_0312;
ALTER TABLE rg DETACH PARTITION rg_0313;
DELETE FROM rg_0313;
ALTER TABLE rg ATTACH PARTITION rg_0313 FOR VALUES FROM ('2026-03-20') TO ('2026-03-21');
CREATE TABLE rg_sums AS SELECT 'rg_0312' AS t, sum(v) AS v FROM rg_0312;

\set VERBOSITY sqlstate
CALL backfill_run(:run);
\set VERBOSITY default
SELECT task, partition, status, error FROM backfill_tasks WHERE run_id = :run ORDER BY task;
-- the detached table was not written
SELECT (SELECT sum(v) FROM rg_0312) = v AS detached_table_unchanged FROM rg_sums;
-- the partition still planned was
SELECT sum(v) = (SELECT sum(v) FROM rg_src WHERE day = '2026-03-11') AS planned_partition_merged FROM rg_0311;

-- The time left is measured, pauses included: after one task of three with a pause of
-- 200 ms after each, the estimate is at least the two pauses still to come.
CREATE TABLE rg_eta (id int NOT NULL, day date NOT NULL, v int) PARTITION BY RANGE (day);
CREATE TABLE rg_eta_0311 PARTITION OF rg_eta FOR VALUES FROM ('2026-03-11') TO ('2026-03-12');
CREATE TABLE rg_eta_0312 PARTITION OF rg_eta FOR VALUES FROM ('2026-03-12') TO ('2026-03-13');
CREATE TABLE rg_eta_0313 PARTITION OF rg_eta FOR VALUES FROM ('2026-03-13') TO ('2026-03-14');
INSERT INTO rg_eta SELECT * FROM rg_src WHERE day < '2026-03-14';
SELECT backfill_plan('rg_eta', '2026-03-11', '2026-03-14', $$SELECT * FROM rg_src WHERE day >= $1 AND day < $2$$,
	options => '{"pause_ms": 200}') AS eta_run \gset
SET client_min_messages = warning;
CALL backfill_run(:eta_run, 1);
RESET client_min_messages;
SELECT tasks_done, tasks_pending, estimated_left >= interval '400 ms' AS counts_the_pauses
FROM backfill_progress WHERE run_id = :eta_run;
SELECT backfill_cancel(:eta_run);

-- A run executes only the tasks its plan made.  Rows can reach backfill_tasks_data from
-- outside backfill (a restore appends to it, as the database owner): a task inserted there
-- is refused before it writes, whether its window lies outside the run's range, it takes a
-- number no plan gives, or its window overlaps a planned task's.
CREATE TABLE rg_plain (id int, day date, v int);
INSERT INTO rg_plain SELECT * FROM rg_src;
SELECT backfill_plan('rg_plain', '2026-03-11', '2026-03-12', $$SELECT * FROM rg_src WHERE day >= $1 AND day < $2$$,
	options => '{"window_column": "day", "chunk": "1 day"}') AS plain_run \gset
CREATE TABLE rg_plain_before AS SELECT * FROM backfill_fingerprint('rg_plain');
INSERT INTO backfill_tasks_data (run_id, task, range_from, range_to) VALUES (:plain_run, 99, '1900-01-01', '2100-01-01');
SET client_min_messages = warning;
CALL backfill_run(:plain_run);
DELETE FROM backfill_tasks_data WHERE run_id = :plain_run AND task IN (0, 99);
INSERT INTO backfill_tasks_data (run_id, task, range_from, range_to) VALUES (:plain_run, 0, '2026-03-11', '2026-03-12');
CALL backfill_run(:plain_run);
DELETE FROM backfill_tasks_data WHERE run_id = :plain_run AND task IN (0, 99);
INSERT INTO backfill_tasks_data (run_id, task, range_from, range_to) VALUES (:plain_run, 99, '2026-03-12', '2026-03-13');
CALL backfill_run(:plain_run);
RESET client_min_messages;
SELECT f = b AS plain_table_unchanged FROM backfill_fingerprint('rg_plain') f, rg_plain_before b;
SELECT count(*) AS records_of_the_planned_task FROM backfill_log WHERE run_id = :plain_run;
DELETE FROM backfill_tasks_data WHERE run_id = :plain_run AND task IN (0, 99);
SELECT backfill_cancel(:plain_run);
