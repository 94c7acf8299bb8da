-- backfill_fingerprint: an order-independent hash of a table's rows
CREATE EXTENSION backfill;

CREATE TABLE fct_revenue (
	order_id bigint,
	order_date date,
	revenue numeric(12,2),
	status text
);
INSERT INTO fct_revenue
SELECT g, date '2026-03-01' + (g % 31), g * 1.25, CASE WHEN g % 7 = 0 THEN 'refunded' ELSE 'paid' END
FROM generate_series(1, 1000) g;

-- The row count and a hash of all columns of all rows.
SELECT rows, length(hash) AS hash_digits FROM backfill_fingerprint('fct_revenue');

-- Restricted to a scope: a boolean expression over the table's columns.
SELECT rows FROM backfill_fingerprint('fct_revenue', $$order_date = '2026-03-15'$$);

-- The same rows in another physical order give the same fingerprint.
CREATE TABLE fct_copy AS SELECT * FROM fct_revenue ORDER BY random();
SELECT (SELECT hash FROM backfill_fingerprint('fct_revenue'))
     = (SELECT hash FROM backfill_fingerprint('fct_copy')) AS same_rows_same_hash;

-- Deleting rows and inserting them again, then VACUUM FULL, move every row;
-- the rows, and so the fingerprint, stay.
CREATE TEMP TABLE before AS SELECT * FROM backfill_fingerprint('fct_revenue');
CREATE TEMP TABLE first_hundred AS SELECT * FROM fct_revenue WHERE order_id <= 100;
DELETE FROM fct_revenue WHERE order_id <= 100;
INSERT INTO fct_revenue SELECT * FROM first_hundred ORDER BY order_id DESC;
VACUUM FULL fct_revenue;
SELECT f = b AS unchanged_by_vacuum_full
FROM backfill_fingerprint('fct_revenue') f, before b;

-- One changed value changes it ...
UPDATE fct_copy SET revenue = revenue + 0.01 WHERE order_id = 500;
SELECT (SELECT hash FROM backfill_fingerprint('fct_revenue'))
     = (SELECT hash FROM backfill_fingerprint('fct_copy')) AS one_cent_is_seen;
UPDATE fct_copy SET revenue = revenue - 0.01 WHERE order_id = 500;

-- ... and so does a duplicated row, which appending a re-run period creates.
INSERT INTO fct_copy SELECT * FROM fct_copy WHERE order_id = 1;
SELECT f.rows, f.hash = b.hash AS same_hash
FROM backfill_fingerprint('fct_copy') f, before b;

-- Values swapped between two rows are seen, though each column keeps the same values.
CREATE TABLE pairs (k int, v text);
INSERT INTO pairs VALUES (1, 'a'), (2, 'b');
CREATE TEMP TABLE pairs_before AS SELECT * FROM backfill_fingerprint('pairs');
UPDATE pairs SET v = CASE v WHEN 'a' THEN 'b' ELSE 'a' END;
SELECT f = b AS swap_unseen FROM backfill_fingerprint('pairs') f, pairs_before b;

-- NULL and the empty string are different values.
CREATE TABLE n1 (v text);
CREATE TABLE n2 (v text);
INSERT INTO n1 VALUES (NULL);
INSERT INTO n2 VALUES ('');
SELECT (SELECT hash FROM backfill_fingerprint('n1'))
     = (SELECT hash FROM backfill_fingerprint('n2')) AS null_equals_empty;

-- Types without a hash operator class work too.
CREATE TYPE mood AS ENUM ('sad', 'happy');
CREATE TABLE odd_types (j json, p point, x xml, a int[], m mood, r int4range);
INSERT INTO odd_types VALUES ('{"a": 1}', '(1,2)', '<a/>', '{1,2}', 'happy', '[1,5)');
SELECT rows FROM backfill_fingerprint('odd_types');

-- Errors name the argument.
SELECT backfill_fingerprint(NULL);
SELECT backfill_fingerprint('fct_revenue', 'no_such_column > 1');
SELECT backfill_fingerprint('fct_revenue', 'true) UNION ALL SELECT 1, 1 --');
CREATE VIEW v_revenue AS SELECT * FROM fct_revenue;
SELECT backfill_fingerprint('v_revenue');
