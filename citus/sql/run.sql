-- Runs on a distributed partitioned table: planned on the coordinator, one committed task per
-- partition (a replacement distributed like the partition), the days outside checked untouched.
SET datestyle = 'ISO';
CREATE SCHEMA cn;
SET search_path = cn, public;
CREATE TABLE cn.orders (order_id bigint, order_date date, amount numeric(12,2), refunded boolean);
SELECT create_distributed_table('cn.orders', 'order_id', shard_count => 4);
INSERT INTO cn.orders SELECT g, date '2026-03-10' + (g % 8), (g % 500) + 0.25, g % 11 = 0
FROM generate_series(1, 8000) g;
CREATE TABLE cn.revenue (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2) NOT NULL,
	PRIMARY KEY (order_id, order_date)) PARTITION BY RANGE (order_date);
SELECT format('CREATE TABLE %I.%I PARTITION OF cn.revenue FOR VALUES FROM (%L) TO (%L)',
			  'cn', 'revenue_' || to_char(d, 'YYYYMMDD'), d::date, d::date + 1)
FROM generate_series(date '2026-03-10', date '2026-03-17', interval '1 day') d \gexec
SELECT create_distributed_table('cn.revenue', 'order_id', colocate_with => 'cn.orders');
INSERT INTO cn.revenue SELECT order_id, order_date, amount FROM cn.orders;
-- the fixed model, and what the range must hold after the run
CREATE VIEW cn.model AS
	SELECT order_id, order_date, CASE WHEN refunded THEN 0 ELSE amount END AS revenue FROM cn.orders;
CREATE TABLE cn.expected AS SELECT order_id, order_date, revenue::numeric(12,2) AS revenue
FROM cn.model WHERE order_date >= '2026-03-11' AND order_date < '2026-03-17';

SELECT backfill_plan('cn.revenue', '2026-03-11', '2026-03-17',
	$$SELECT * FROM cn.model WHERE order_date >= $1 AND order_date < $2$$,
	options => '{"reconcile": ["count(*)", "sum(revenue)"]}') AS run \gset
SELECT task, partition, status FROM backfill_tasks WHERE run_id = :run ORDER BY task;
SELECT count(*) AS untouched_recorded FROM backfill_runs, jsonb_array_elements(untouched) u WHERE id = :run;

SET client_min_messages = warning;
CALL backfill_run(:run, 2);
SELECT status, tasks_done, tasks_pending FROM backfill_progress WHERE run_id = :run;
CALL backfill_run(:run);
RESET client_min_messages;
SELECT status, tasks_done, tasks_failed, untouched_changed FROM backfill_progress WHERE run_id = :run;
-- each task's two-phase COMMIT is timed after it, and the time under lock covers the swap and it
SELECT count(*) AS tasks,
	   count(*) FILTER (WHERE t.commit_ms > 0) AS commit_timed,
	   count(*) FILTER (WHERE t.locked_ms >= t.commit_ms + (l.details->>'swap_ms')::float8 - 0.001) AS locked_covers_swap_and_commit
FROM backfill_tasks t JOIN backfill_log l ON l.id = t.log_id WHERE t.run_id = :run;

-- the range is the model's rows, the days around it as they were, every partition distributed
-- and co-located, nothing left on the coordinator, one log record per task
SELECT (SELECT f FROM backfill_fingerprint('cn.revenue', $$order_date >= '2026-03-11' AND order_date < '2026-03-17'$$) f) =
       (SELECT f FROM backfill_fingerprint('cn.expected') f) AS range_is_the_model;
SELECT order_date, count(*), sum(revenue) FROM cn.revenue WHERE order_date IN ('2026-03-10', '2026-03-17') GROUP BY 1 ORDER BY 1;
SELECT count(*) AS partitions, bool_and(p.colocationid = r.colocationid) AS all_colocated,
       sum(pg_relation_size(c.oid)) AS coordinator_bytes
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
JOIN pg_dist_partition p ON p.logicalrelid = c.oid
JOIN pg_dist_partition r ON r.logicalrelid = 'cn.revenue'::regclass
WHERE i.inhparent = 'cn.revenue'::regclass;
SELECT count(*) AS log_records, count(DISTINCT partition) AS partitions FROM backfill_log WHERE run_id = :run;

-- a merge run: the key holds the distribution column
UPDATE cn.orders SET amount = amount + 1 WHERE order_id % 100 = 0;
SELECT backfill_plan('cn.revenue', '2026-03-11', '2026-03-13',
	$$SELECT * FROM cn.model WHERE order_date >= $1 AND order_date < $2$$,
	strategy => 'merge', key => ARRAY['order_id', 'order_date']) AS mrun \gset
SET client_min_messages = warning;
CALL backfill_run(:mrun);
RESET client_min_messages;
SELECT status, tasks_done, tasks_failed FROM backfill_progress WHERE run_id = :mrun;
SELECT count(*) AS rows_differing FROM cn.revenue r JOIN cn.model m USING (order_id, order_date)
WHERE r.order_date >= '2026-03-11' AND r.order_date < '2026-03-13' AND r.revenue <> m.revenue;

-- strategy 'auto' swaps on Citus, whatever the partition's size: written in place, its rows
-- would be locked on the coordinator only
SELECT backfill_plan('cn.revenue', '2026-03-13', '2026-03-14',
	$$SELECT * FROM cn.model WHERE order_date >= $1 AND order_date < $2$$,
	strategy => 'auto', options => '{"small_partition_rows": 100000}') AS arun \gset
SET client_min_messages = warning;
CALL backfill_run(:arun);
RESET client_min_messages;
SELECT status, tasks_done FROM backfill_progress WHERE run_id = :arun;
SELECT operation, details->>'why' AS why FROM backfill_log WHERE run_id = :arun;

-- a throttled run: the conditions are looked at on the coordinator before each task (a
-- distributed fill is one INSERT ... SELECT); critical_query pauses the run before it writes
-- anything, and once resumed a throttle_query makes it wait, then go on; a throttle_query may
-- ask the workers through run_command_on_workers
CREATE TABLE cn.flags (critical boolean);
INSERT INTO cn.flags VALUES (true);
CREATE SEQUENCE cn.busy;
CREATE TABLE cn.expected_now AS SELECT order_id, order_date, revenue::numeric(12,2) AS revenue
FROM cn.model WHERE order_date >= '2026-03-11' AND order_date < '2026-03-17';
SELECT backfill_plan('cn.revenue', '2026-03-11', '2026-03-17',
	$$SELECT * FROM cn.model WHERE order_date >= $1 AND order_date < $2$$,
	options => jsonb_build_object(
		'critical_query', 'SELECT critical FROM cn.flags',
		'throttle_query', $q$SELECT nextval('cn.busy') <= 2 OR (SELECT bool_or(result::boolean) FROM run_command_on_workers('SELECT pg_is_in_recovery()'))$q$,
		'throttle_interval_ms', 50)) AS trun \gset
\set VERBOSITY terse
CALL backfill_run(:trun);
\set VERBOSITY default
SELECT status, error, tasks_done, tasks_pending FROM backfill_progress WHERE run_id = :trun;
SELECT count(*) FILTER (WHERE attempts = 0) AS never_attempted FROM backfill_tasks WHERE run_id = :trun;
UPDATE cn.flags SET critical = false;
SELECT backfill_resume(:trun);
SET client_min_messages = warning;
CALL backfill_run(:trun);
RESET client_min_messages;
SELECT status, tasks_done, throttled > '0 s' AS waited, throttle_reason FROM backfill_progress WHERE run_id = :trun;
SELECT (SELECT f FROM backfill_fingerprint('cn.revenue', $$order_date >= '2026-03-11' AND order_date < '2026-03-17'$$) f) =
       (SELECT f FROM backfill_fingerprint('cn.expected_now') f) AS range_is_the_model;

-- a source computed on a standby (options.source_server) is refused for a distributed table
SELECT backfill_plan('cn.revenue', '2026-03-11', '2026-03-12',
	$$SELECT * FROM cn.model WHERE order_date >= $1 AND order_date < $2$$,
	options => '{"source_server": "cn_standby"}');

SET client_min_messages = warning;
DROP SCHEMA cn CASCADE;
