-- demo/tour_setup.sql: the tables of the README's five-minute tour.
--
-- The warehouse of the tour: orders, their refunds, and fct_revenue, one partition a day for
-- the first half of 2026, published by a model that forgot the refunds; then the fixed model,
-- revenue_model, a view that takes the refunds out.  Run it in an empty database, from the
-- checkout (psql -d DB -f demo/tour_setup.sql, or \i demo/tour_setup.sql in psql); the
-- README shows the same statements as the tour's first block, and demo/tour.sql includes this
-- file (scripts/check_tour.sh checks that the README's block is here, verbatim).
CREATE EXTENSION IF NOT EXISTS backfill;
CREATE TABLE orders (order_id bigint PRIMARY KEY, order_date date NOT NULL, amount numeric(12,2) NOT NULL);
INSERT INTO orders                                    -- 120 orders a day, 2026-01-01 to 2026-06-30
SELECT g, date '2026-01-01' + (g - 1) / 120, 10 + (g * 7919) % 9000 / 100.0
FROM generate_series(1, 181 * 120) g;
CREATE TABLE refunds (order_id bigint PRIMARY KEY REFERENCES orders, amount numeric(12,2) NOT NULL);
INSERT INTO refunds SELECT order_id, round(amount / 2, 2) FROM orders WHERE order_id % 12 = 0;   -- 10 a day
CREATE TABLE fct_revenue (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2) NOT NULL)
  PARTITION BY RANGE (order_date);
SELECT format('CREATE TABLE %I PARTITION OF fct_revenue FOR VALUES FROM (%L) TO (%L)',
              'fct_revenue_' || to_char(d, 'YYYYMMDD'), d::date, d::date + 1)
FROM generate_series(date '2026-01-01', date '2026-06-30', interval '1 day') d \gexec
INSERT INTO fct_revenue SELECT order_id, order_date, amount FROM orders;   -- the refunds forgotten
-- the fixed model: revenue net of refunds
CREATE VIEW revenue_model AS
  SELECT o.order_id, o.order_date, o.amount - coalesce(r.amount, 0) AS revenue
  FROM orders o LEFT JOIN refunds r USING (order_id);
