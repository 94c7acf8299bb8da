-- bench/citus_setup.sql: the data of the Citus comparisons (scripts/run_citus_bench.sh), in a
-- database that scripts/citus_nodes.sh made a Citus cluster of a coordinator and two workers.
SET client_min_messages = warning;
-- the workers hash rows under the coordinator's key, so fingerprints are computed per shard
SELECT backfill_share_key();
DROP TABLE IF EXISTS bench_dist, bench_local, bench_dist_new, bench_local_new;

-- 1M rows of a revenue fact table distributed on order_id in 32 shards, and the same rows
-- in a local table on the coordinator.
CREATE TABLE bench_dist (order_id bigint, order_date date, customer_id int, revenue numeric(12,2), status text);
SELECT create_distributed_table('bench_dist', 'order_id', shard_count => 32);
INSERT INTO bench_dist
SELECT g, date '2026-01-01' + (g % 180), g % 5000, (g % 10000) / 100.0,
       CASE WHEN g % 7 = 0 THEN 'refunded' ELSE 'paid' END
FROM generate_series(1, 1000000) g;
CREATE TABLE bench_local AS SELECT * FROM bench_dist;
VACUUM ANALYZE bench_dist;
VACUUM ANALYZE bench_local;

-- the same table recomputed, co-located, 20 rows different, and its local twin: the diffs
CREATE TABLE bench_dist_new (LIKE bench_dist);
SELECT create_distributed_table('bench_dist_new', 'order_id', colocate_with => 'bench_dist');
INSERT INTO bench_dist_new SELECT * FROM bench_dist;
UPDATE bench_dist_new SET revenue = revenue + 1 WHERE order_id % 50000 = 0;
CREATE TABLE bench_local_new AS SELECT * FROM bench_dist_new;
VACUUM ANALYZE bench_dist_new;
VACUUM ANALYZE bench_local_new;
