-- On Citus, backfill writes and records on the coordinator only; a worker refuses.
SET datestyle = 'ISO';
\getenv coordinator BACKFILL_COORDINATOR_PORT
\getenv worker1 BACKFILL_WORKER1_PORT
-- The cluster: a coordinator and two workers that hold shards.
SELECT count(*) FILTER (WHERE groupid = 0) AS coordinators,
       count(*) FILTER (WHERE groupid > 0 AND shouldhaveshards) AS workers_with_shards
FROM pg_dist_node;
SELECT nodename FROM pg_dist_node GROUP BY nodename;

CREATE SCHEMA co;
SET search_path = co, public;
CREATE TABLE co.orders (order_id bigint NOT NULL, order_date date NOT NULL, amount numeric NOT NULL,
	PRIMARY KEY (order_id, order_date)) PARTITION BY RANGE (order_date);
CREATE TABLE co.orders_20260314 PARTITION OF co.orders FOR VALUES FROM ('2026-03-14') TO ('2026-03-15');
CREATE TABLE co.orders_20260315 PARTITION OF co.orders FOR VALUES FROM ('2026-03-15') TO ('2026-03-16');
SELECT create_distributed_table('co.orders', 'order_id', shard_count => 4);
INSERT INTO co.orders SELECT g, date '2026-03-14' + (g % 2), g FROM generate_series(1, 100) g;
SELECT count(*) AS log_records FROM backfill_log;

-- backfill is created on every node (CREATE EXTENSION propagates)
\c - - 127.0.0.1 :worker1
SET search_path = co, public;
SELECT extname FROM pg_extension WHERE extname = 'backfill';
-- but every function that writes, or writes a record, refuses on a worker
SELECT * FROM backfill_replace_partition('co.orders_20260315', 'SELECT order_id, order_date, amount FROM co.orders_20260315');
SELECT * FROM backfill_undo(1);
SELECT * FROM backfill_merge('co.orders', 'SELECT * FROM co.orders', ARRAY['order_id', 'order_date']);
SELECT * FROM backfill_probe_idempotency('UPDATE co.orders SET amount = 1', 'co.orders');
SELECT * FROM backfill_plan('co.orders', '2026-03-14', '2026-03-16', 'SELECT order_id, order_date, amount FROM co.orders WHERE order_date >= $1 AND order_date < $2');
CALL backfill_run(1);
SELECT * FROM backfill_dry_run(1);
SELECT backfill_pause(1);
SELECT backfill_resume(1);
SELECT backfill_cancel(1);
SELECT backfill_retry(1, 1);
SELECT backfill_skip(1, 1, 'gone');
SELECT backfill_schedule(1);
-- and nothing was written into the worker's own log
SELECT count(*) AS worker_log_records FROM backfill_log;
-- reading works on a worker: it sees every shard through the coordinator's metadata
SELECT rows FROM backfill_fingerprint('co.orders');

\c - - - :coordinator
SET client_min_messages = warning;
DROP SCHEMA co CASCADE;
