-- demo/validate.sql: the trap of an appended re-run, and the checks that catch it
\set ON_ERROR_STOP 1
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS backfill;
DROP TABLE IF EXISTS orders, fct_revenue CASCADE;

\echo
\echo '== A small warehouse: 4,000 orders in March, and the serving table built from them =='
CREATE TABLE orders (order_id bigint PRIMARY KEY, order_date date NOT NULL, amount numeric(12,2) NOT NULL, refunded boolean NOT NULL);
INSERT INTO orders
SELECT g, date '2026-03-01' + (g % 31), round((20 + (g * 7919) % 45000 / 100.0)::numeric, 2), g % 11 = 0
FROM generate_series(1, 4000) g;
CREATE TABLE fct_revenue (order_id bigint, order_date date, revenue numeric(12,2));
INSERT INTO fct_revenue SELECT order_id, order_date, CASE WHEN refunded THEN 0 ELSE amount END FROM orders;
SELECT count(*) AS rows, sum(revenue) AS total FROM fct_revenue;

\echo
\echo '== Its fingerprint: row count and an order-independent hash of every value =='
CREATE TEMP TABLE fp_before AS SELECT * FROM backfill_fingerprint('fct_revenue');
TABLE fp_before;

\echo
\echo '== The trap: the period is re-run with an append strategy =='
INSERT INTO fct_revenue SELECT order_id, order_date, CASE WHEN refunded THEN 0 ELSE amount END FROM orders;
SELECT count(*) AS rows_in_serving_table,
       sum(revenue) AS reported_total,
       (SELECT sum(CASE WHEN refunded THEN 0 ELSE amount END) FROM orders) AS true_total
FROM fct_revenue;
\echo 'No job failed, no alert fired, and the number went up.'

\echo
\echo '== The fingerprint sees it =='
SELECT f.rows, f.hash, f.hash = b.hash AS same_as_before
FROM backfill_fingerprint('fct_revenue') f, fp_before b;

\echo
\echo '== backfill_assert_unique, as a dbt post-hook would call it, fails the job =='
\set ON_ERROR_STOP 0
SELECT backfill_assert_unique('fct_revenue', ARRAY['order_id']);

\echo
\echo '== backfill_reconcile against the source fails it too =='
SELECT * FROM backfill_reconcile(
	'TABLE fct_revenue',
	'SELECT order_id, CASE WHEN refunded THEN 0 ELSE amount END AS revenue FROM orders',
	ARRAY['count(*)', 'sum(revenue)']);
\set ON_ERROR_STOP 1

\echo
\echo '== Repaired: the duplicates removed, the checks pass and the fingerprint is back =='
DELETE FROM fct_revenue f USING (
	SELECT ctid, row_number() OVER (PARTITION BY order_id) AS n FROM fct_revenue) d
WHERE f.ctid = d.ctid AND d.n > 1;
SELECT backfill_assert_unique('fct_revenue', ARRAY['order_id']) AS rows_checked;
SELECT * FROM backfill_reconcile(
	'TABLE fct_revenue',
	'SELECT order_id, CASE WHEN refunded THEN 0 ELSE amount END AS revenue FROM orders',
	ARRAY['count(*)', 'sum(revenue)']);
SELECT f.hash = b.hash AS fingerprint_as_before FROM backfill_fingerprint('fct_revenue') f, fp_before b;

\echo
\echo '== The bug fix, checked before it is published: what a recomputation would change =='
SELECT change, count(*) AS rows, sum((b_row->>'revenue')::numeric - (a_row->>'revenue')::numeric) AS revenue_change
FROM backfill_diff(
	'TABLE fct_revenue',
	'SELECT order_id, order_date, CASE WHEN refunded THEN -amount ELSE amount END::numeric(12,2) AS revenue FROM orders',
	ARRAY['order_id'])
GROUP BY change;

\echo
\echo '== The safe write: recompute one day of a partitioned serving table and swap it in =='
DROP TABLE IF EXISTS fct_daily CASCADE;
CREATE TABLE fct_daily (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2),
	PRIMARY KEY (order_id, order_date)) PARTITION BY RANGE (order_date);
SELECT format('CREATE TABLE fct_daily_%s PARTITION OF fct_daily FOR VALUES FROM (%L) TO (%L)',
              to_char(d, 'YYYYMMDD'), d, d + 1)
FROM (SELECT date '2026-03-01' + i AS d FROM generate_series(0, 30) i) g \gexec
INSERT INTO fct_daily SELECT order_id, order_date, CASE WHEN refunded THEN 0 ELSE amount END FROM orders;
CREATE TEMP TABLE fp_0314 AS SELECT * FROM backfill_fingerprint('fct_daily_20260314');

SELECT partition, rows_before, rows_after, attempts, round(swap_ms::numeric, 1) < 100 AS swap_under_100ms
FROM backfill_replace_partition('fct_daily_20260315',
	'SELECT order_id, order_date, CASE WHEN refunded THEN -amount ELSE amount END AS revenue
	 FROM orders WHERE order_date >= $1 AND order_date < $2');

\echo 'The recomputed day reconciles with the fixed model; the day before is bit for bit as it was:'
SELECT * FROM backfill_reconcile(
	$$SELECT * FROM fct_daily WHERE order_date = '2026-03-15'$$,
	$$SELECT CASE WHEN refunded THEN -amount ELSE amount END AS revenue FROM orders WHERE order_date = '2026-03-15'$$,
	ARRAY['count(*)', 'sum(revenue)']);
SELECT f = b AS day_before_untouched FROM backfill_fingerprint('fct_daily_20260314') f, fp_0314 b;
SELECT operation, partition, rows_before, rows_after, logged_by FROM backfill_log ORDER BY id DESC LIMIT 1;
