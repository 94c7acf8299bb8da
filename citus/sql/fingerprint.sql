-- Validation on a distributed table: the fingerprint is computed shard by shard on the workers
-- and added on the coordinator, and equals the fingerprint of the same rows in a local table;
-- assert_unique, reconcile and diff give what they give locally.
SET datestyle = 'ISO';
CREATE SCHEMA cf;
SET search_path = cf, public;
CREATE TABLE cf.sales (order_id bigint NOT NULL, day date NOT NULL, amount numeric(12,2), note text,
	tags text[], PRIMARY KEY (order_id, day)) PARTITION BY RANGE (day);
CREATE TABLE cf.sales_20260314 PARTITION OF cf.sales FOR VALUES FROM ('2026-03-14') TO ('2026-03-15');
CREATE TABLE cf.sales_20260315 PARTITION OF cf.sales FOR VALUES FROM ('2026-03-15') TO ('2026-03-16');
SELECT create_distributed_table('cf.sales', 'order_id', shard_count => 8);
INSERT INTO cf.sales SELECT g, date '2026-03-14' + (g % 2), CASE WHEN g % 17 = 0 THEN NULL ELSE g % 1000 + 0.5 END,
	CASE WHEN g % 5 = 0 THEN NULL ELSE 'note ' || g END, ARRAY['a', g::text]
FROM generate_series(1, 5000) g;
-- the same rows in a local table
CREATE TABLE cf.local_sales AS SELECT * FROM cf.sales;

-- Each node made its own hashing key when the extension was created: the workers do not
-- hash rows as the coordinator does, so the shards are not read there, and the fingerprint is
-- computed on the coordinator, still equal to the local table's.
SELECT count(*) FILTER (WHERE result <> backfill_key_check()) AS workers_with_another_key
FROM run_command_on_workers('SELECT backfill_key_check()');
SELECT d = l AS equal_before_the_key_is_shared FROM backfill_fingerprint('cf.sales') d, backfill_fingerprint('cf.local_sales') l;
-- a superuser gives the workers the coordinator's key; from then on the shards are read there
SELECT backfill_share_key() AS workers_given_the_key;
SELECT count(*) FILTER (WHERE result <> backfill_key_check()) AS workers_with_another_key
FROM run_command_on_workers('SELECT backfill_key_check()');
-- only a superuser may send it
CREATE ROLE regress_cf_other LOGIN;
GRANT USAGE ON SCHEMA cf TO regress_cf_other;
GRANT SELECT ON cf.sales, cf.sales_20260315, cf.local_sales TO regress_cf_other;
SET ROLE regress_cf_other;
SELECT backfill_share_key();
-- a row's hash is not for everyone to read (with enough of them, equal sums can be searched
-- for): a role not granted backfill_fingerprint_row gets the fingerprint through the
-- coordinator, the same one
SELECT backfill_fingerprint_row('cf.sales', 1::bigint, date '2026-03-14', 1.5::numeric(12,2), 'x', ARRAY['a']);
SELECT d = l AS equal_for_a_role_without_row_hashes FROM backfill_fingerprint('cf.sales') d, backfill_fingerprint('cf.local_sales') l;
-- ... also where a local table that large would be read by parallel workers (the coordinator
-- reads the rows itself: an aggregate naming the table by its OID would be pushed down to
-- the shards, where that OID is another table's or none)
SET min_parallel_table_scan_size = 0;
SELECT d = l AS equal_where_parallel_would_be_chosen FROM backfill_fingerprint('cf.sales') d,
	backfill_fingerprint('cf.local_sales') l;
SELECT d = l AS partition_equal_where_parallel_would_be_chosen FROM backfill_fingerprint('cf.sales_20260315') d,
	backfill_fingerprint('cf.local_sales', $$day = '2026-03-15'$$) l;
RESET min_parallel_table_scan_size;
RESET ROLE;

-- the per-shard query: each of the 8 shards is read on its worker by a partial aggregate (count
-- and sums), and the coordinator adds the 8 results
SELECT jsonb_path_exists(p, '$.** ? (@."Task Count" == 8)') AS one_task_per_shard,
       jsonb_path_exists(p, '$.**."Remote Plan".** ? (@."Node Type" == "Aggregate")') AS aggregated_on_the_worker
FROM backfill_test_plan($$SELECT count(*), sum(h), sum(backfill_fingerprint_lane2(h))
	FROM (SELECT backfill_fingerprint_row('cf.sales', order_id, day, amount, note, tags) AS h FROM cf.sales) s$$) p;

SELECT d = l AS whole_table_equal, d.rows FROM backfill_fingerprint('cf.sales') d, backfill_fingerprint('cf.local_sales') l;
SELECT d = l AS scoped_equal, d.rows FROM backfill_fingerprint('cf.sales', $$amount > 500$$) d,
	backfill_fingerprint('cf.local_sales', $$amount > 500$$) l;
SELECT d = l AS partition_equal, d.rows FROM backfill_fingerprint('cf.sales_20260315') d,
	backfill_fingerprint('cf.local_sales', $$day = '2026-03-15'$$) l;
SELECT d = l AS empty_equal, d.rows FROM backfill_fingerprint('cf.sales', 'false') d,
	backfill_fingerprint('cf.local_sales', 'false') l;
-- one value changed on one shard changes it
UPDATE cf.sales SET note = 'changed' WHERE order_id = 4242;
SELECT d <> l AS change_seen FROM backfill_fingerprint('cf.sales') d, backfill_fingerprint('cf.local_sales') l;
UPDATE cf.sales SET note = 'note 4242' WHERE order_id = 4242;
SELECT d = l AS change_undone FROM backfill_fingerprint('cf.sales') d, backfill_fingerprint('cf.local_sales') l;

-- assert_unique on a key with the distribution column: per shard (GROUP BY pushed down)
SELECT backfill_assert_unique('cf.sales', ARRAY['order_id', 'day']) AS rows_checked;
INSERT INTO cf.sales VALUES (4242, '2026-03-15', 1, 'twin', NULL);
SELECT backfill_assert_unique('cf.sales', ARRAY['order_id']);
SELECT backfill_assert_unique('cf.local_sales', ARRAY['order_id']) AS local_rows_checked;
DELETE FROM cf.sales WHERE note = 'twin';

-- reconcile and diff read the distributed table as they read a local one
SELECT measure, target_value, source_value FROM backfill_reconcile('SELECT * FROM cf.sales', 'SELECT * FROM cf.local_sales',
	ARRAY['count(*)', 'sum(amount)', 'count(note)']) ORDER BY measure COLLATE "C";
-- the queries reconcile (its measures over the rows of the query given) and assert_unique (the
-- rows of each key value, on a key with the distribution column) run are aggregated per shard
SELECT jsonb_path_exists(p, '$.** ? (@."Task Count" == 8)') AS reconcile_one_task_per_shard,
       jsonb_path_exists(p, '$.**."Remote Plan".** ? (@."Node Type" == "Aggregate")') AS reconcile_aggregated_on_the_worker
FROM backfill_test_plan($$SELECT ((pg_catalog.count(*))), ((sum(amount))), ((count(note))) FROM (
SELECT * FROM cf.sales
) AS backfill_rows$$) p;
SELECT jsonb_path_exists(p, '$.** ? (@."Task Count" == 8)') AS assert_unique_one_task_per_shard,
       jsonb_path_exists(p, '$.**."Remote Plan".** ? (@."Node Type" == "Aggregate")') AS assert_unique_grouped_on_the_worker
FROM backfill_test_plan($$SELECT COALESCE(pg_catalog.sum(g.n), 0)::pg_catalog.int8,
	COALESCE(pg_catalog.sum(g.n) FILTER (WHERE g.hasnull), 0)::pg_catalog.int8,
	pg_catalog.count(*) FILTER (WHERE g.n OPERATOR(pg_catalog.>) 1 AND NOT g.hasnull)
	FROM (SELECT pg_catalog.count(*) AS n, (sales.order_id IS NULL) AS hasnull, sales.order_id AS k1
	FROM cf.sales WHERE ((
true
)) GROUP BY order_id) g$$) p;
SELECT change, key FROM backfill_diff('SELECT * FROM cf.local_sales',
	$$SELECT order_id, day, CASE WHEN order_id = 7 THEN 0 ELSE amount END AS amount, note, tags FROM cf.sales WHERE order_id <> 9$$,
	ARRAY['order_id', 'day']) ORDER BY key::text COLLATE "C";

SET client_min_messages = warning;
DROP SCHEMA cf CASCADE;
