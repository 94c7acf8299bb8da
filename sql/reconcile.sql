-- backfill_reconcile: the serving table against its source, measure by measure
CREATE TABLE src_orders (order_id bigint, order_date date, revenue numeric(12,2));
INSERT INTO src_orders SELECT g, date '2026-03-01' + (g % 31), g * 1.10 FROM generate_series(1, 2000) g;
CREATE TABLE serving AS SELECT * FROM src_orders;

SELECT * FROM backfill_reconcile('TABLE serving', 'TABLE src_orders',
                                 ARRAY['count(*)', 'sum(revenue)', 'count(DISTINCT order_id)']);

-- The trap: a period appended a second time.
INSERT INTO serving SELECT * FROM src_orders WHERE order_date = '2026-03-15';
SELECT * FROM backfill_reconcile('TABLE serving', 'TABLE src_orders',
                                 ARRAY['count(*)', 'sum(revenue)', 'count(DISTINCT order_id)']);

-- With raise => false it only reports; without, a post-hook fails here.
SELECT measure, ok FROM backfill_reconcile('TABLE serving', 'TABLE src_orders',
                                           ARRAY['count(*)', 'sum(revenue)'], raise => false);

-- Scoped to one period, on either side, with any query.
SELECT * FROM backfill_reconcile($$SELECT * FROM serving WHERE order_date <> '2026-03-15'$$,
                                 $$SELECT * FROM src_orders WHERE order_date <> '2026-03-15'$$,
                                 ARRAY['count(*)', 'sum(revenue)']);

-- An absolute tolerance, for measures that may drift by rounding.
UPDATE serving SET revenue = revenue + 0.01 WHERE order_id = 1;
DELETE FROM serving WHERE order_date = '2026-03-15' AND ctid IN (
	SELECT min(ctid) FROM serving WHERE order_date = '2026-03-15' GROUP BY order_id);
SELECT * FROM backfill_reconcile('TABLE serving', 'TABLE src_orders', ARRAY['sum(revenue)'], tolerance => 0.01);
SELECT * FROM backfill_reconcile('TABLE serving', 'TABLE src_orders', ARRAY['sum(revenue)'], tolerance => 0.009);

-- Measures must be aggregates returning numbers.
SELECT * FROM backfill_reconcile('TABLE serving', 'TABLE src_orders', ARRAY['revenue']);
-- a misspelt column: the hint names the column as the caller may write it
SELECT * FROM backfill_reconcile('TABLE serving', 'TABLE src_orders', ARRAY['sum(revenu)']);
SELECT * FROM backfill_reconcile('TABLE serving', 'TABLE src_orders', ARRAY['42']);
SELECT * FROM backfill_reconcile('TABLE serving', 'TABLE src_orders', ARRAY['max(order_date)']);
SELECT * FROM backfill_reconcile('TABLE serving', 'TABLE src_orders', ARRAY['sum(no_such_column)']);
SELECT * FROM backfill_reconcile('TABLE serving', 'TABLE src_orders', ARRAY['count(*)'], tolerance => -1);
SELECT * FROM backfill_reconcile('TABLE no_such_table', 'TABLE src_orders', ARRAY['count(*)']);
SELECT * FROM backfill_reconcile('TABLE serving', 'SELEC 1', ARRAY['count(*)']);
