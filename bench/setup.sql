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
