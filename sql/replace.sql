-- backfill_replace_partition: recompute one partition and swap it in atomically
SET datestyle = 'ISO';
CREATE TABLE rp_orders (order_id bigint, order_date date, amount numeric(12,2), refunded boolean);
INSERT INTO rp_orders
SELECT g, date '2026-03-13' + (g % 4), (g % 500) + 0.25, g % 11 = 0
FROM generate_series(1, 4000) g;

-- The serving table, filled by a model that counted refunds as revenue.
CREATE TABLE rp_revenue (
	order_id bigint NOT NULL,
	order_date date NOT NULL,
	revenue numeric(12,2) NOT NULL DEFAULT 0,
	PRIMARY KEY (order_id, order_date)
) PARTITION BY RANGE (order_date);
CREATE TABLE rp_revenue_20260314 PARTITION OF rp_revenue FOR VALUES FROM ('2026-03-14') TO ('2026-03-15');
CREATE TABLE rp_revenue_20260315 PARTITION OF rp_revenue FOR VALUES FROM ('2026-03-15') TO ('2026-03-16');
CREATE TABLE rp_revenue_default PARTITION OF rp_revenue DEFAULT;
CREATE INDEX ON rp_revenue (order_date);
INSERT INTO rp_revenue SELECT order_id, order_date, amount FROM rp_orders;

CREATE TEMP TABLE untouched AS SELECT * FROM backfill_fingerprint('rp_revenue_20260314');
SELECT order_date, count(*), sum(revenue) FROM rp_revenue GROUP BY 1 ORDER BY 1;

-- The fixed model, for one day: $1 and $2 are the partition's bounds.
SELECT partition, rows_before, rows_after, fingerprint_before <> fingerprint_after AS rows_changed,
       archived_as, attempts
FROM backfill_replace_partition('rp_revenue_20260315', $$
	SELECT order_id, order_date, CASE WHEN refunded THEN 0 ELSE amount END AS revenue
	FROM rp_orders WHERE order_date >= $1 AND order_date < $2 $$);

-- Only that day changed; the day before is bit for bit what it was.
SELECT order_date, count(*), sum(revenue) FROM rp_revenue GROUP BY 1 ORDER BY 1;
SELECT f = u AS day_before_untouched FROM backfill_fingerprint('rp_revenue_20260314') f, untouched u;

-- The new partition has the old one's name, bound, indexes and constraints.
SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) AS bound,
       (SELECT string_agg(i.relname, ', ' ORDER BY i.relname)
        FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid WHERE x.indrelid = c.oid) AS indexes
FROM pg_class c WHERE c.relname LIKE 'rp_revenue_2026%' ORDER BY 1;
SELECT count(*) AS staging_tables_left FROM pg_class WHERE relname LIKE 'backfill_stage%';

-- The write is recorded with rows and fingerprints before and after.
SELECT operation, target, partition, rows_before, rows_after,
       fingerprint_before <> fingerprint_after AS changed, details->>'attempts' AS attempts
FROM backfill_log WHERE target = 'public.rp_revenue' ORDER BY id;

-- Keep the old rows and undo.
SELECT rows_before, rows_after, archived_as
FROM backfill_replace_partition('rp_revenue_20260315', $$
	SELECT order_id, order_date, CASE WHEN refunded THEN -amount ELSE amount END AS revenue
	FROM rp_orders WHERE order_date >= $1 AND order_date < $2 $$, keep_old => true);
SELECT sum(revenue) FROM rp_revenue_20260315;
SELECT rows_before, rows_after, archived_as FROM backfill_undo((SELECT max(id) FROM backfill_log));
SELECT sum(revenue) FROM rp_revenue_20260315;

-- A LIST partition: $1 is the array of its values.
CREATE TABLE rp_sales (region text NOT NULL, amount numeric) PARTITION BY LIST (region);
CREATE TABLE rp_sales_eu PARTITION OF rp_sales FOR VALUES IN ('de', 'fr');
CREATE TABLE rp_sales_us PARTITION OF rp_sales FOR VALUES IN ('us');
INSERT INTO rp_sales VALUES ('de', 1), ('fr', 2), ('us', 3);
SELECT rows_before, rows_after FROM backfill_replace_partition('rp_sales_eu',
	$$SELECT r AS region, 10 AS amount FROM unnest($1::text[]) r$$);
SELECT * FROM rp_sales ORDER BY region;

-- What is refused, before anything is written.
SELECT * FROM backfill_replace_partition('rp_revenue', 'SELECT 1');
SELECT * FROM backfill_replace_partition('rp_revenue_default', 'SELECT 1');
SELECT * FROM backfill_replace_partition('rp_revenue_20260315',
	$$SELECT order_id, order_date, amount AS revenue FROM rp_orders$$);
SELECT * FROM backfill_replace_partition('rp_revenue_20260315',
	$$SELECT order_id, order_date, amount AS revenue FROM rp_orders WHERE false$$);
SELECT * FROM backfill_replace_partition('rp_revenue_20260315',
	$$SELECT order_id, order_date, amount AS revenue, 'x' AS note FROM rp_orders WHERE order_date >= $1 AND order_date < $2$$);
SELECT * FROM backfill_replace_partition('rp_revenue_20260315',
	$$SELECT 1::bigint AS order_id, $1 AS order_date UNION ALL SELECT 1, $1$$);
SELECT * FROM backfill_undo((SELECT min(id) FROM backfill_log WHERE target = 'public.rp_revenue'));
-- The caller's transaction must be READ COMMITTED (its readers may be anything).
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT * FROM backfill_replace_partition('rp_revenue_20260315', 'SELECT 1');
ROLLBACK;
SELECT count(*) AS staging_tables_left FROM pg_class WHERE relname LIKE 'backfill_stage%';
DROP TABLE rp_revenue, rp_sales, rp_orders;
