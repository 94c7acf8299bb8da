-- bench/setup.sql: the data the benchmark runs on
CREATE EXTENSION IF NOT EXISTS backfill;
SET client_min_messages = warning;
DROP TABLE IF EXISTS bench_fct, bench_fct_new;

-- One day-partition-sized slice of a revenue fact table, 1M rows.
CREATE TABLE bench_fct (
	order_id bigint,
	order_date date,
	customer_id int,
	revenue numeric(12,2),
	status text
);
INSERT INTO bench_fct
SELECT g, date '2026-01-01' + (g % 180), g % 5000, (g % 10000) / 100.0,
       CASE WHEN g % 7 = 0 THEN 'refunded' ELSE 'paid' END
FROM generate_series(1, 1000000) g;

-- Its recomputed version: 10 changed rows, 5 removed, 5 added.
CREATE TABLE bench_fct_new AS SELECT * FROM bench_fct;
UPDATE bench_fct_new SET revenue = -revenue WHERE order_id % 100000 = 0;
DELETE FROM bench_fct_new WHERE order_id IN (11, 22, 33, 44, 55);
INSERT INTO bench_fct_new VALUES (1000001, '2026-06-30', 1, 1.00, 'paid'), (1000002, '2026-06-30', 1, 1.00, 'paid'),
	(1000003, '2026-06-30', 1, 1.00, 'paid'), (1000004, '2026-06-30', 1, 1.00, 'paid'), (1000005, '2026-06-30', 1, 1.00, 'paid');
VACUUM ANALYZE bench_fct;
VACUUM ANALYZE bench_fct_new;
CHECKPOINT;

-- Partition replacement: one day of 1M orders, recomputed into a daily partition of three
-- identical tables (one for each way of writing it, so none inherits another's dead rows).
DROP TABLE IF EXISTS bench_orders, bench_fct_a, bench_fct_b, bench_fct_c;
CREATE TABLE bench_orders (order_id bigint, order_date date, amount numeric(12,2), refunded boolean);
INSERT INTO bench_orders
SELECT g, date '2026-03-15', (g % 10000) / 100.0 + 1, g % 11 = 0 FROM generate_series(1, 1000000) g;
VACUUM ANALYZE bench_orders;
DO $$
DECLARE t text;
BEGIN
	FOREACH t IN ARRAY ARRAY['bench_fct_a', 'bench_fct_b', 'bench_fct_c'] LOOP
		EXECUTE format('CREATE TABLE %I (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2),'
		               ' PRIMARY KEY (order_id, order_date)) PARTITION BY RANGE (order_date)', t);
		EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', t || '_0314', t, '2026-03-14', '2026-03-15');
		EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', t || '_0315', t, '2026-03-15', '2026-03-16');
		EXECUTE format('INSERT INTO %I SELECT order_id, order_date, CASE WHEN refunded THEN 0 ELSE amount END FROM bench_orders', t);
	END LOOP;
END $$;
VACUUM ANALYZE bench_fct_a, bench_fct_b, bench_fct_c;
CHECKPOINT;

-- Merge: 1M source rows into a 1M-row target on its primary key, two identical targets.
DROP TABLE IF EXISTS bench_merge_src, bench_merge_a, bench_merge_b;
CREATE TABLE bench_merge_src AS
SELECT g::bigint AS order_id, date '2026-01-01' + (g % 180) AS order_date, (g % 10000) / 100.0 AS revenue
FROM generate_series(1, 1000000) g;
CREATE TABLE bench_merge_a (order_id bigint PRIMARY KEY, order_date date NOT NULL, revenue numeric(12,2));
INSERT INTO bench_merge_a SELECT * FROM bench_merge_src;
CREATE TABLE bench_merge_b (LIKE bench_merge_a INCLUDING ALL);
INSERT INTO bench_merge_b SELECT * FROM bench_merge_src;
VACUUM ANALYZE bench_merge_src, bench_merge_a, bench_merge_b;
CHECKPOINT;
