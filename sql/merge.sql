-- backfill_merge: merge a recomputed window into a table on a key proven unique
SET datestyle = 'ISO';
CREATE TABLE mg_orders (order_id bigint, order_date date, amount numeric(12,2), refunded boolean);
INSERT INTO mg_orders SELECT g, date '2026-03-01' + (g % 31), (g % 500) + 0.25, g % 11 = 0
FROM generate_series(1, 3100) g;
CREATE TABLE mg_revenue (order_id bigint PRIMARY KEY, order_date date NOT NULL, revenue numeric(12,2), note text DEFAULT 'ok');
INSERT INTO mg_revenue SELECT order_id, order_date, amount FROM mg_orders;

-- The fixed model for March 10-19; one order of the window no longer exists.
DELETE FROM mg_orders WHERE order_id = 10;
CREATE TEMP TABLE outside_before AS
SELECT * FROM backfill_fingerprint('mg_revenue', $$NOT (order_date >= '2026-03-10' AND order_date < '2026-03-20')$$);

SELECT inserted, updated, deleted, unchanged
FROM backfill_merge('mg_revenue',
	$$SELECT order_id, order_date, CASE WHEN refunded THEN -amount ELSE amount END AS revenue
	  FROM mg_orders WHERE order_date >= '2026-03-10' AND order_date < '2026-03-20'$$,
	ARRAY['order_id'],
	scope => $$order_date >= '2026-03-10' AND order_date < '2026-03-20'$$,
	delete_missing => true);

-- Run twice: nothing is written the second time.
SELECT inserted, updated, deleted, unchanged
FROM backfill_merge('mg_revenue',
	$$SELECT order_id, order_date, CASE WHEN refunded THEN -amount ELSE amount END AS revenue
	  FROM mg_orders WHERE order_date >= '2026-03-10' AND order_date < '2026-03-20'$$,
	ARRAY['order_id'],
	scope => $$order_date >= '2026-03-10' AND order_date < '2026-03-20'$$,
	delete_missing => true);

-- Outside the scope, nothing changed; columns the source lacks were left alone.
SELECT f = b AS outside_untouched
FROM backfill_fingerprint('mg_revenue', $$NOT (order_date >= '2026-03-10' AND order_date < '2026-03-20')$$) f,
     outside_before b;
SELECT count(*) FILTER (WHERE note = 'ok') AS notes_kept, count(*) AS rows FROM mg_revenue;
SELECT operation, target, details->>'inserted' AS inserted, details->>'updated' AS updated,
       details->>'deleted' AS deleted
FROM backfill_log WHERE operation = 'merge' ORDER BY id;

-- The guards, before any write.
SELECT * FROM backfill_merge('mg_revenue', $$SELECT order_id, order_date FROM mg_orders
	UNION ALL SELECT 11, date '2026-03-12'$$, ARRAY['order_id']);
SELECT * FROM backfill_merge('mg_revenue', $$SELECT NULL::bigint AS order_id, date '2026-03-12' AS order_date$$,
	ARRAY['order_id']);
SELECT * FROM backfill_merge('mg_revenue', $$SELECT order_id, order_date FROM mg_orders$$, ARRAY['order_id'],
	scope => $$order_date >= '2026-03-10' AND order_date < '2026-03-20'$$);
SELECT * FROM backfill_merge('mg_revenue', $$SELECT 1::bigint AS order_id, date '2026-03-12' AS order_date$$,
	ARRAY['order_id'], scope => $$order_date >= '2026-03-10' AND order_date < '2026-03-20'$$);
SELECT * FROM backfill_merge('mg_revenue', $$SELECT order_id::int AS order_id FROM mg_orders$$, ARRAY['order_id']);

-- A key that is only nearly unique is refused: it would merge rows that were different.
CREATE TABLE mg_lines (order_id bigint, line int, amount numeric);
INSERT INTO mg_lines SELECT g, 1, g FROM generate_series(1, 1000) g;
INSERT INTO mg_lines VALUES (500, 2, 1);
SELECT * FROM backfill_merge('mg_lines', $$SELECT 1::bigint AS order_id, 7::numeric AS amount$$, ARRAY['order_id']);
SELECT count(*) AS still_1001 FROM mg_lines;
-- Under REPEATABLE READ the snapshot predates the lock: what was committed in between would
-- be invisible to the guards, the deletes and the record, so the merge is refused, with or
-- without a unique index on the key.
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT * FROM backfill_merge('mg_lines', $$SELECT 2000::bigint AS order_id, 1 AS line$$, ARRAY['order_id']);
ROLLBACK;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT inserted, updated FROM backfill_merge('mg_revenue',
	$$SELECT order_id, order_date, 0::numeric AS revenue FROM mg_orders WHERE order_id = 11$$, ARRAY['order_id']);
ROLLBACK;
DROP TABLE mg_orders, mg_revenue, mg_lines;
