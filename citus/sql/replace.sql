-- backfill_replace_partition on a distributed partitioned table: the staging table is
-- distributed co-located with the parent before it is filled, filled shard to shard, swapped
-- in under locks taken on every node; nothing is left on the coordinator.
SET datestyle = 'ISO';
\getenv worker1 BACKFILL_WORKER1_PORT
\getenv worker2 BACKFILL_WORKER2_PORT
CREATE SCHEMA cr;
SET search_path = cr, public;
CREATE TABLE cr.orders (order_id bigint NOT NULL, order_date date NOT NULL, amount numeric(12,2) NOT NULL,
	refunded boolean NOT NULL DEFAULT false);
SELECT create_distributed_table('cr.orders', 'order_id', shard_count => 4);
INSERT INTO cr.orders SELECT g, date '2026-03-13' + (g % 4), (g % 500) + 0.25, g % 11 = 0 FROM generate_series(1, 4000) g;
CREATE TABLE cr.revenue (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2) NOT NULL DEFAULT 0,
	PRIMARY KEY (order_id, order_date)) PARTITION BY RANGE (order_date);
CREATE TABLE cr.revenue_20260314 PARTITION OF cr.revenue FOR VALUES FROM ('2026-03-14') TO ('2026-03-15');
CREATE TABLE cr.revenue_20260315 PARTITION OF cr.revenue FOR VALUES FROM ('2026-03-15') TO ('2026-03-16');
CREATE TABLE cr.revenue_default PARTITION OF cr.revenue DEFAULT;
CREATE INDEX ON cr.revenue (order_date);
SELECT create_distributed_table('cr.revenue', 'order_id', colocate_with => 'cr.orders');
INSERT INTO cr.revenue SELECT order_id, order_date, amount FROM cr.orders;
CREATE TEMP TABLE untouched AS SELECT * FROM backfill_fingerprint('cr.revenue_20260314');
SELECT order_date, count(*), sum(revenue) FROM cr.revenue GROUP BY 1 ORDER BY 1;

SELECT partition, rows_before, rows_after, fingerprint_before <> fingerprint_after AS rows_changed,
       archived_as, attempts
FROM backfill_replace_partition('cr.revenue_20260315', $$
	SELECT order_id, order_date, CASE WHEN refunded THEN 0 ELSE amount END AS revenue
	FROM cr.orders WHERE order_date >= $1 AND order_date < $2 $$);
SELECT order_date, count(*), sum(revenue) FROM cr.revenue GROUP BY 1 ORDER BY 1;
SELECT f = u AS day_before_untouched FROM backfill_fingerprint('cr.revenue_20260314') f, untouched u;
-- the new partition is distributed, co-located with its parent, in shards on the workers only:
-- no row of it, and no staging table, on the coordinator
SELECT p.colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'cr.revenue'::regclass)
       AS colocated, p.partmethod
FROM pg_dist_partition p WHERE p.logicalrelid = 'cr.revenue_20260315'::regclass;
SELECT count(DISTINCT s.shardid) AS shards, count(DISTINCT n.nodeport) AS nodes, bool_and(n.groupid > 0) AS on_workers_only
FROM pg_dist_shard s JOIN pg_dist_placement pl USING (shardid) JOIN pg_dist_node n ON n.groupid = pl.groupid
WHERE s.logicalrelid = 'cr.revenue_20260315'::regclass;
SELECT pg_relation_size('cr.revenue_20260315') AS coordinator_bytes;
SELECT count(*) AS staging_tables_left FROM pg_class WHERE relname LIKE 'backfill_stage%';
SELECT c.relname, (SELECT string_agg(i.relname, ', ' ORDER BY i.relname)
        FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid WHERE x.indrelid = c.oid) AS indexes
FROM pg_class c WHERE c.oid = 'cr.revenue_20260315'::regclass;
SELECT operation, target, partition, rows_before, rows_after FROM backfill_log WHERE target = 'cr.revenue' ORDER BY id;

-- keep_old, then undo: the archive stays distributed and comes back
SELECT rows_before, rows_after, archived_as
FROM backfill_replace_partition('cr.revenue_20260315', $$
	SELECT order_id, order_date, -revenue AS revenue FROM cr.revenue_20260315 WHERE order_date >= $1 AND order_date < $2 $$,
	keep_old => true);
SELECT sum(revenue) FROM cr.revenue_20260315;
SELECT partmethod FROM pg_dist_partition WHERE logicalrelid = (SELECT max(archived_as) FROM (SELECT details->>'archived_as' AS archived_as FROM backfill_log WHERE target = 'cr.revenue') a)::regclass;
SELECT rows_before, rows_after, archived_as FROM backfill_undo((SELECT max(id) FROM backfill_log));
SELECT sum(revenue) FROM cr.revenue_20260315;

-- What is refused, before anything is written.
CREATE TEMP TABLE before AS SELECT * FROM backfill_fingerprint('cr.revenue');
SELECT * FROM backfill_replace_partition('cr.revenue_20260315',
	$$SELECT order_id, order_date, amount AS revenue FROM cr.orders$$);
SELECT * FROM backfill_replace_partition('cr.revenue_20260315',
	$$SELECT order_id, order_date, amount AS revenue FROM cr.orders WHERE false$$);
-- (which key a shard reports first varies: the message only)
\set VERBOSITY terse
SELECT * FROM backfill_replace_partition('cr.revenue_20260315',
	$$SELECT order_id, $1 AS order_date, 1 AS revenue FROM cr.orders WHERE order_date >= $1 AND order_date < $2
	  UNION ALL SELECT order_id, $1, 2 FROM cr.orders WHERE order_date >= $1 AND order_date < $2$$);
\set VERBOSITY default
-- ... also from a source Citus cannot push down, whose rows it copies into the shards
CREATE TEMP TABLE twice AS SELECT 5::bigint AS order_id, date '2026-03-15' AS order_date, g::numeric AS revenue
FROM generate_series(1, 2) g;
SELECT * FROM backfill_replace_partition('cr.revenue_20260315', 'SELECT * FROM twice');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT * FROM backfill_replace_partition('cr.revenue_20260315',
	$$SELECT order_id, order_date, NULL::numeric AS revenue FROM cr.orders WHERE order_date >= $1 AND order_date < $2$$);
ALTER TABLE cr.revenue ADD CONSTRAINT revenue_not_negative CHECK (revenue >= -1000000);
SELECT * FROM backfill_replace_partition('cr.revenue_20260315',
	$$SELECT order_id, order_date, -2000000 AS revenue FROM cr.orders WHERE order_date >= $1 AND order_date < $2$$);
SELECT f = b AS nothing_written FROM backfill_fingerprint('cr.revenue') f, before b;
SELECT count(*) AS staging_tables_left FROM pg_class WHERE relname LIKE 'backfill_stage%';

-- A long reader through a worker: the swap's lock_timeout reaches the workers, it gives up
-- after its attempts (55P03) instead of stalling the readers queued behind it.
SELECT dblink_connect('reader', format('host=127.0.0.1 port=%s dbname=%s', :'worker1', current_database())) AS connected;
SELECT dblink_exec('reader', 'BEGIN');
SELECT * FROM dblink('reader', 'SELECT count(*) FROM cr.revenue') AS t(n bigint);
\set VERBOSITY terse
SELECT * FROM backfill_replace_partition('cr.revenue_20260315',
	$$SELECT order_id, order_date, revenue FROM cr.revenue_20260315 WHERE order_date >= $1 AND order_date < $2$$,
	lock_timeout_ms => 100, max_attempts => 2);
-- ... also when neither the server log nor the client takes a WARNING (the worker's lock
-- timeout is seen all the same)
SET log_min_messages = error;
SET client_min_messages = error;
SELECT * FROM backfill_replace_partition('cr.revenue_20260315',
	$$SELECT order_id, order_date, revenue FROM cr.revenue_20260315 WHERE order_date >= $1 AND order_date < $2$$,
	lock_timeout_ms => 100, max_attempts => 2);
SHOW log_min_messages;
RESET log_min_messages;
RESET client_min_messages;
-- ... and the error names the session on the worker that held the lock
SELECT * FROM dblink('reader', 'SELECT pg_backend_pid()') AS t(reader_pid int) \gset
SET client_min_messages = error;
CREATE FUNCTION pg_temp.swap_detail() RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
	d text;
BEGIN
	PERFORM backfill_replace_partition('cr.revenue_20260315',
		$q$SELECT order_id, order_date, revenue FROM cr.revenue_20260315 WHERE order_date >= $1 AND order_date < $2$q$,
		lock_timeout_ms => 100, max_attempts => 1);
	RETURN 'swapped';
EXCEPTION WHEN lock_not_available THEN
	GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
	RETURN d;
END $f$;
SELECT pg_temp.swap_detail() ~ format('process %s on worker 127\.0\.0\.1:%s \(AccessShareLock, query started .+: SELECT pg_backend_pid\(\)\) held a lock on cr\.revenue',
	:'reader_pid', :'worker1') AS names_the_workers_session;
RESET client_min_messages;
\set VERBOSITY default
SELECT dblink_exec('reader', 'COMMIT');
SELECT f = b AS nothing_written FROM backfill_fingerprint('cr.revenue') f, before b;
-- once the reader is gone the same call succeeds at once
SELECT rows_before, rows_after, attempts FROM backfill_replace_partition('cr.revenue_20260315',
	$$SELECT order_id, order_date, revenue FROM cr.revenue_20260315 WHERE order_date >= $1 AND order_date < $2$$,
	lock_timeout_ms => 100, max_attempts => 2);

-- A write through a worker while the replacement runs waits for it, and is not lost.
SELECT dblink_connect('writer', format('host=127.0.0.1 port=%s dbname=%s', :'worker1', current_database())) AS connected;
BEGIN;
SELECT rows_after FROM backfill_replace_partition('cr.revenue_20260315',
	$$SELECT order_id, order_date, revenue FROM cr.revenue_20260315 WHERE order_date >= $1 AND order_date < $2$$);
SELECT dblink_send_query('writer', $$INSERT INTO cr.revenue VALUES (90001, '2026-03-15', 5)$$) AS sent;
SELECT backfill_test_lock_wait(:'worker1', :'worker2') AS writer_waits_for_a_lock;
SELECT dblink_is_busy('writer') AS writer_busy;
COMMIT;
SELECT * FROM dblink_get_result('writer') AS t(status text);
SELECT count(*) AS writer_row_kept FROM cr.revenue WHERE order_id = 90001;
SELECT dblink_disconnect('writer');
SELECT dblink_disconnect('reader');

-- A REPEATABLE READ reader whose snapshot on the workers predates the swap sees the replaced day
-- whole, as on one server: the new shards' rows are frozen in the transaction that filled them.
\getenv coordinator BACKFILL_COORDINATOR_PORT
SELECT dblink_connect('rr', format('host=127.0.0.1 port=%s dbname=%s', :'coordinator', current_database())) AS connected;
SELECT dblink_exec('rr', 'BEGIN ISOLATION LEVEL REPEATABLE READ');
SELECT * FROM dblink('rr', 'SELECT count(*) FROM cr.orders') AS t(n bigint);
SELECT rows_after FROM backfill_replace_partition('cr.revenue_20260315',
	$$SELECT order_id, order_date, revenue FROM cr.revenue_20260315 WHERE order_date >= $1 AND order_date < $2$$);
SELECT * FROM dblink('rr', $$SELECT count(*) FROM cr.revenue WHERE order_date = '2026-03-15'$$) AS t(rr_reader_sees bigint);
SELECT dblink_exec('rr', 'COMMIT');
SELECT * FROM dblink('rr', $$SELECT count(*) FROM cr.revenue WHERE order_date = '2026-03-15'$$) AS t(after_commit bigint);
SELECT dblink_disconnect('rr');

SET client_min_messages = warning;
DROP SCHEMA cr CASCADE;
