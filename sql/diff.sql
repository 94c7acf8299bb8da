-- backfill_diff: what a recomputed period changes, row by row, matched on a key
CREATE TABLE fct_old (order_id bigint, order_date date, revenue numeric(12,2), status text);
INSERT INTO fct_old
SELECT g, date '2026-03-01' + (g % 31), g * 1.25, CASE WHEN g % 7 = 0 THEN 'refunded' ELSE 'paid' END
FROM generate_series(1, 1000) g;

-- The recomputed version: refunds now count negative, one order is gone, one is new.
CREATE TABLE fct_new AS
SELECT order_id, order_date,
       CASE WHEN status = 'refunded' AND order_id <= 21 THEN -revenue ELSE revenue END AS revenue,
       status
FROM fct_old WHERE order_id <> 500;
INSERT INTO fct_new VALUES (1001, '2026-03-31', 10.00, 'paid');

SELECT change, key, a_row ->> 'revenue' AS old_revenue, b_row ->> 'revenue' AS new_revenue
FROM backfill_diff('TABLE fct_old', 'TABLE fct_new', ARRAY['order_id'])
ORDER BY (key ->> 'order_id')::bigint;

-- Identical rows give nothing, whatever order the queries return them in.
SELECT count(*) AS differences
FROM backfill_diff('SELECT * FROM fct_old ORDER BY order_id DESC', 'TABLE fct_old', '{order_id}');

-- Columns are matched by name, not position.
SELECT count(*) AS differences
FROM backfill_diff('SELECT order_id, order_date, revenue, status FROM fct_old',
                   'SELECT status, revenue, order_date, order_id FROM fct_old', '{order_id}');

-- Keys of several columns; a_row and b_row show whole rows.
SELECT change, key, b_row
FROM backfill_diff($$SELECT order_date, status, count(*) AS orders FROM fct_old GROUP BY 1, 2$$,
                   $$SELECT order_date, status, count(*) AS orders FROM fct_new GROUP BY 1, 2$$,
                   ARRAY['order_date', 'status'])
ORDER BY key ->> 'order_date', key ->> 'status';

-- A key that is not unique would pair rows arbitrarily: an error names the side.
SELECT * FROM backfill_diff('TABLE fct_old', 'SELECT * FROM fct_old UNION ALL SELECT * FROM fct_old WHERE order_id = 7', '{order_id}');
SELECT * FROM backfill_diff('SELECT 1 AS id UNION ALL SELECT 1', 'SELECT 1 AS id', '{id}');

-- Both sides must return the same columns.
SELECT * FROM backfill_diff('SELECT order_id, revenue FROM fct_old', 'SELECT order_id FROM fct_old', '{order_id}');
SELECT * FROM backfill_diff('SELECT order_id, revenue FROM fct_old', 'SELECT order_id, revenue::float8 AS revenue FROM fct_old', '{order_id}');
SELECT * FROM backfill_diff('TABLE fct_old', 'TABLE fct_new', '{no_such_column}');
-- Queries only read.
SELECT * FROM backfill_diff('DELETE FROM fct_old RETURNING *', 'TABLE fct_new', '{order_id}');
SELECT * FROM backfill_diff('TABLE fct_old; DROP TABLE fct_new', 'TABLE fct_new', '{order_id}');
SELECT count(*) AS still_there FROM fct_new;
