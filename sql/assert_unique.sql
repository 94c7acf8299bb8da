-- backfill_assert_unique: prove a merge key before merging on it
CREATE TABLE orders (order_id bigint, line int, order_date date, amount numeric(12,2));
INSERT INTO orders SELECT g, 1, date '2026-03-01' + (g % 31), g FROM generate_series(1, 500) g;

-- Returns the rows it checked.
SELECT backfill_assert_unique('orders', ARRAY['order_id']);
SELECT backfill_assert_unique('orders', ARRAY['order_id'], $$order_date < '2026-03-11'$$);

-- A re-run appended once: every key of the period now appears twice.
INSERT INTO orders SELECT * FROM orders WHERE order_date = '2026-03-05';
SELECT backfill_assert_unique('orders', ARRAY['order_id']);
-- Outside the re-run period the key still holds.
SELECT backfill_assert_unique('orders', ARRAY['order_id'], $$order_date <> '2026-03-05'$$);

-- A key that is only nearly unique: a second line for one order.
DELETE FROM orders WHERE ctid IN (SELECT ctid FROM (SELECT ctid, row_number() OVER (PARTITION BY order_id) AS n FROM orders) d WHERE n > 1);
INSERT INTO orders VALUES (42, 2, '2026-03-12', 1.00);
SELECT backfill_assert_unique('orders', ARRAY['order_id']);
SELECT backfill_assert_unique('orders', ARRAY['order_id', 'line']);

-- NULL in a key column is reported too.
INSERT INTO orders VALUES (NULL, 1, '2026-03-12', 1.00);
SELECT backfill_assert_unique('orders', ARRAY['order_id', 'line']);

-- Key columns need an equality operator; names are checked.
CREATE TABLE events (payload json, at timestamptz);
SELECT backfill_assert_unique('events', ARRAY['payload']);
SELECT backfill_assert_unique('orders', ARRAY['order id']);
SELECT backfill_assert_unique('orders', ARRAY[]::text[]);
SELECT backfill_assert_unique('orders', ARRAY['order_id', 'order_id']);

-- Names that need quoting are taken as they are.
CREATE TABLE "Odd ""Table""; x" ("Order Id" int, "line;--" int);
INSERT INTO "Odd ""Table""; x" VALUES (1, 1), (1, 2);
SELECT backfill_assert_unique('"Odd ""Table""; x"', ARRAY['Order Id', 'line;--']);
SELECT backfill_assert_unique('"Odd ""Table""; x"', ARRAY['Order Id']);
