-- backfill_probe_idempotency on a distributed table: the write runs twice in savepoints on
-- the coordinator, which Citus carries to the workers' transactions, and everything is
-- rolled back on every node; the verdict is the one a local table gets.
SET datestyle = 'ISO';
CREATE SCHEMA cp;
SET search_path = cp, public;
CREATE TABLE cp.orders (order_id bigint NOT NULL, order_date date NOT NULL, amount numeric(12,2));
SELECT create_distributed_table('cp.orders', 'order_id', shard_count => 4);
INSERT INTO cp.orders SELECT g, date '2026-03-14' + g % 3, g % 500 FROM generate_series(1, 3000) g;
CREATE TABLE cp.revenue (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2),
	PRIMARY KEY (order_id, order_date)) PARTITION BY RANGE (order_date);
CREATE TABLE cp.revenue_0314 PARTITION OF cp.revenue FOR VALUES FROM ('2026-03-14') TO ('2026-03-15');
CREATE TABLE cp.revenue_0315 PARTITION OF cp.revenue FOR VALUES FROM ('2026-03-15') TO ('2026-03-16');
CREATE TABLE cp.revenue_0316 PARTITION OF cp.revenue FOR VALUES FROM ('2026-03-16') TO ('2026-03-17');
SELECT create_distributed_table('cp.revenue', 'order_id', colocate_with => 'cp.orders');
INSERT INTO cp.revenue SELECT order_id, order_date, amount FROM cp.orders;
CREATE TABLE cp.serving (order_id bigint, order_date date, revenue numeric(12,2));
SELECT create_distributed_table('cp.serving', 'order_id', colocate_with => 'cp.orders');
CREATE TEMP TABLE before AS SELECT * FROM backfill_fingerprint('cp.revenue');

-- appending a re-run period to a serving table without a key: not a repair, and nothing stays
SELECT idempotent, rows_before, rows_after_first, rows_after_second, verdict
FROM backfill_probe_idempotency(
	$$INSERT INTO cp.serving SELECT order_id, order_date, amount FROM cp.orders WHERE order_date = '2026-03-15'$$,
	'cp.serving', $$order_date = '2026-03-15'$$);
SELECT count(*) AS still_empty FROM cp.serving;

-- merging on the key: a repair
SELECT idempotent, rows_before, rows_after_first, rows_after_second, verdict
FROM backfill_probe_idempotency(
	$$SELECT backfill_merge('cp.revenue',
	    'SELECT order_id, order_date, -amount AS revenue FROM cp.orders WHERE order_date = ''2026-03-15''',
	    ARRAY['order_id', 'order_date'], scope => 'order_date = ''2026-03-15''')$$,
	'cp.revenue', $$order_date = '2026-03-15'$$);

-- adding to a value: not a repair
SELECT idempotent, verdict
FROM backfill_probe_idempotency($$UPDATE cp.revenue SET revenue = revenue + 1 WHERE order_date = '2026-03-15'$$,
	'cp.revenue', $$order_date = '2026-03-15'$$);

-- every probe was rolled back on every node
SELECT b = a AS table_unchanged FROM before b, backfill_fingerprint('cp.revenue') a;
SELECT count(*) AS shards_of_serving_with_rows
FROM run_command_on_shards('cp.serving', 'SELECT count(*) FROM %s') WHERE result <> '0';

SET client_min_messages = warning;
DROP SCHEMA cp CASCADE;
