-- backfill_probe_idempotency: if I run it twice, is the table the same?
SET datestyle = 'ISO';
CREATE TABLE pr_orders (order_id bigint, order_date date, amount numeric(12,2));
INSERT INTO pr_orders SELECT g, date '2026-03-14' + g % 3, g % 500 FROM generate_series(1, 3000) g;
CREATE TABLE pr_revenue (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2),
	PRIMARY KEY (order_id, order_date)) PARTITION BY RANGE (order_date);
CREATE TABLE pr_revenue_0314 PARTITION OF pr_revenue FOR VALUES FROM ('2026-03-14') TO ('2026-03-15');
CREATE TABLE pr_revenue_0315 PARTITION OF pr_revenue FOR VALUES FROM ('2026-03-15') TO ('2026-03-16');
CREATE TABLE pr_revenue_0316 PARTITION OF pr_revenue FOR VALUES FROM ('2026-03-16') TO ('2026-03-17');
INSERT INTO pr_revenue SELECT order_id, order_date, amount FROM pr_orders;
CREATE TEMP TABLE before AS SELECT * FROM backfill_fingerprint('pr_revenue');
CREATE TEMP TABLE log_before AS SELECT count(*) AS n FROM backfill_log;

-- Appending a re-run period to a serving table without a key: not a repair.
CREATE TABLE pr_serving (order_id bigint, order_date date, revenue numeric(12,2));
SELECT idempotent, rows_before, rows_after_first, rows_after_second, verdict
FROM backfill_probe_idempotency(
	$$INSERT INTO pr_serving SELECT order_id, order_date, amount FROM pr_orders
	  WHERE order_date = '2026-03-15'$$,
	'pr_serving', $$order_date = '2026-03-15'$$);
SELECT count(*) AS still_empty FROM pr_serving;

-- Replacing the partition: a repair.
SELECT idempotent, rows_before, rows_after_first, rows_after_second, verdict
FROM backfill_probe_idempotency(
	$$SELECT backfill_replace_partition('pr_revenue_0315',
	    'SELECT order_id, order_date, -amount AS revenue FROM pr_orders WHERE order_date >= $1 AND order_date < $2')$$,
	'pr_revenue', $$order_date = '2026-03-15'$$);

-- Merging on the key: a repair too.
SELECT idempotent, verdict
FROM backfill_probe_idempotency(
	$$SELECT backfill_merge('pr_revenue',
	    'SELECT order_id, order_date, -amount AS revenue FROM pr_orders WHERE order_date = ''2026-03-15''',
	    ARRAY['order_id', 'order_date'], scope => 'order_date = ''2026-03-15''')$$,
	'pr_revenue', $$order_date = '2026-03-15'$$);

-- Adding to a value: the probe sees its own writes, and shows a row of each run.
SELECT idempotent, rows_only_after_first, rows_only_after_second, verdict,
       sample->'only_after_first'->0->>'revenue' AS first_run, sample->'only_after_second'->0->>'revenue' AS second_run
FROM backfill_probe_idempotency(
	$$UPDATE pr_revenue SET revenue = revenue + 1 WHERE order_date = '2026-03-15' AND order_id = 1$$,
	'pr_revenue', $$order_date = '2026-03-15'$$, sample_rows => 1);

-- Writing outside the window is reported.
SELECT idempotent, verdict
FROM backfill_probe_idempotency($$DELETE FROM pr_revenue WHERE order_date = '2026-03-16' AND order_id = 2$$,
	'pr_revenue', $$order_date = '2026-03-15'$$);

-- Under every isolation level each point reads the window as it was at that point: under
-- REPEATABLE READ and SERIALIZABLE the transaction's snapshot is one object whose command id
-- moves on, so each point keeps its own copy.  Adding to a value, appending, and writing
-- another day are never idempotent, whether the level is asked for by BEGIN or by
-- default_transaction_isolation.
CREATE TEMP TABLE levels (level text, by_default boolean, transform text, idempotent boolean);
CREATE FUNCTION pg_temp.probe_at_level() RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
	t text;
BEGIN
	FOREACH t IN ARRAY ARRAY[
		$$UPDATE pr_revenue SET revenue = revenue + 1 WHERE order_date = '2026-03-15'$$,
		$$INSERT INTO pr_revenue SELECT max(order_id) + 1, '2026-03-15', 0 FROM pr_revenue$$,
		$$DELETE FROM pr_revenue WHERE order_date = '2026-03-16' AND order_id = (SELECT min(order_id) FROM pr_revenue WHERE order_date = '2026-03-16')$$]
	LOOP
		INSERT INTO levels SELECT current_setting('transaction_isolation'),
			current_setting('default_transaction_isolation') <> 'read committed', split_part(t, ' ', 1), p.idempotent
		FROM backfill_probe_idempotency(t, 'pr_revenue', $$order_date = '2026-03-15'$$) p;
	END LOOP;
END $f$;
BEGIN ISOLATION LEVEL READ COMMITTED;
SELECT pg_temp.probe_at_level();
COMMIT;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT pg_temp.probe_at_level();
COMMIT;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT pg_temp.probe_at_level();
COMMIT;
SET default_transaction_isolation = 'repeatable read';
SELECT pg_temp.probe_at_level();
RESET default_transaction_isolation;
SELECT level, by_default, transform, idempotent FROM levels
ORDER BY level COLLATE "C", by_default, transform COLLATE "C";

-- Everything was rolled back: the table and the log are as before.
SELECT f = b AS table_unchanged FROM backfill_fingerprint('pr_revenue') f, before b;
SELECT (SELECT count(*) FROM backfill_log) = n AS log_unchanged FROM log_before;
SELECT count(*) AS staging_tables_left FROM pg_class WHERE relname LIKE 'backfill_stage%';

-- An append on a key: the second run collides with what the first wrote, or the first with
-- rows already there (it was run before).  Not idempotent: a verdict, not an error.
SELECT idempotent, rows_before, verdict
FROM backfill_probe_idempotency($$INSERT INTO pr_revenue VALUES (1, '2026-03-14', 0)$$, 'pr_revenue');
SELECT idempotent, verdict
FROM backfill_probe_idempotency($$INSERT INTO pr_revenue VALUES (3, '2026-03-14', 0)$$, 'pr_revenue');
-- Other errors say which run failed; a transform may not end the transaction.
SELECT * FROM backfill_probe_idempotency('SELECT 1/0', 'pr_revenue');
SELECT * FROM backfill_probe_idempotency('COMMIT', 'pr_revenue');
SELECT * FROM backfill_probe_idempotency('SELEC 1', 'pr_revenue');
DROP TABLE pr_revenue, pr_orders, pr_serving;
