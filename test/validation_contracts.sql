-- test/validation_contracts.sql: what backfill_assert_unique and backfill_reconcile promise.
--
-- assert_unique returns the number of rows it checked (within the scope) when the key is
-- unique and not NULL, whether or not an index proves it, and otherwise raises 23505 with the
-- duplicates or NULLs counted and shown in errdetail. reconcile returns one row per measure
-- and raises 23514 naming every measure that differs by more than the tolerance.
BEGIN;
SELECT plan(51);

-- fails(sql, sqlstate, message regex, description [, detail regex]): sql raises exactly that.
CREATE FUNCTION pg_temp.fails(sql text, state text, msg_re text, descr text, detail_re text DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	s text; m text; d text;
BEGIN
	BEGIN
		EXECUTE sql;
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL;
		IF s = state AND m ~ msg_re AND (detail_re IS NULL OR coalesce(d, '') ~ detail_re) THEN
			RETURN ok(true, descr);
		END IF;
		RETURN ok(false, descr) || E'\n' || diag(format(E'raised %s: %s\ndetail: %s\nwanted %s: %s\ndetail like: %s',
		                                                s, m, d, state, msg_re, detail_re));
	END;
	RETURN ok(false, descr) || E'\n' || diag('no error was raised');
END $$;

-- error_detail(sql): the errdetail of the error sql raises.
CREATE FUNCTION pg_temp.error_detail(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	d text;
BEGIN
	EXECUTE sql;
	RETURN '(no error)';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
	RETURN d;
END $$;

CREATE TABLE orders (id int, line int, day date, amount numeric(12,2), note text);
INSERT INTO orders SELECT g, 1, date '2026-03-01' + g % 31, g * 1.5, 'n' || g FROM generate_series(1, 3000) g;

-- value_of(sql): the single value sql returns, as text, or the error it raises.
CREATE FUNCTION pg_temp.value_of(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	v text;
BEGIN
	EXECUTE sql INTO v;
	RETURN v;
EXCEPTION WHEN OTHERS THEN
	RETURN 'ERROR ' || SQLSTATE || ': ' || SQLERRM;
END $$;

-- ============================================================ assert_unique: unique keys
SELECT is(backfill_assert_unique('orders', ARRAY['id']), 3000::bigint,
          'unique key, no index: returns the number of rows checked');
SELECT is(backfill_assert_unique('orders', ARRAY['id', 'line']), 3000::bigint,
          'unique two-column key, no index: row count');
SELECT is(backfill_assert_unique('orders', ARRAY['id'], $$day < '2026-03-11'$$),
          (SELECT count(*) FROM orders WHERE day < '2026-03-11'),
          'with a scope: returns the rows inside the scope');
SELECT is(backfill_assert_unique('orders', ARRAY['id'], 'false'), 0::bigint,
          'a scope that holds for no row: 0 rows checked');

CREATE TABLE orders_idx AS SELECT * FROM orders;
CREATE UNIQUE INDEX orders_idx_id ON orders_idx (id);
SELECT is(backfill_assert_unique('orders_idx', ARRAY['id']), 3000::bigint,
          'unique key proven by a unique index: same row count');
SELECT is(backfill_assert_unique('orders_idx', ARRAY['id'], $$day < '2026-03-11'$$),
          (SELECT count(*) FROM orders WHERE day < '2026-03-11'),
          'unique index and a scope: the rows inside the scope');
ALTER TABLE orders_idx ADD PRIMARY KEY (id, line);
SELECT is(backfill_assert_unique('orders_idx', ARRAY['line', 'id']), 3000::bigint,
          'key proven by a primary key on the same columns in another order');

SELECT is(backfill_assert_unique('orders', ARRAY['id'], 'NULL'), 0::bigint,
          'a scope that is NULL for every row checks no row');

-- ============================================================ assert_unique: duplicates
CREATE TABLE dups AS SELECT * FROM orders;
INSERT INTO dups SELECT * FROM orders WHERE id IN (5, 9);
INSERT INTO dups SELECT * FROM orders WHERE id = 9;
SELECT pg_temp.fails($$SELECT backfill_assert_unique('dups', ARRAY['id'])$$,
                     '23505', '^key \(id\) of (table )?public\.dups is not unique: \(id\)=\(9\) appears 3 times$',
                     'duplicated keys: 23505 naming the key, the table and the most repeated key value in the message');
SELECT pg_temp.fails($$SELECT backfill_assert_unique('dups', ARRAY['id', 'line'])$$,
                     '23505', '^key \(id, line\) of table public\.dups is not unique: \(id, line\)=\(9, 1\) appears 3 times$',
                     'a two-column key: both columns of the first duplicate in the message');
SELECT is(pg_temp.error_detail($$SELECT backfill_assert_unique('dups', ARRAY['id'])$$),
          '2 key values appear more than once, for example (id)=(9) 3 times, (id)=(5) 2 times.',
          'errdetail counts the duplicated values and shows them, most repeated first');
SELECT is(pg_temp.error_detail($$SELECT backfill_assert_unique('dups', ARRAY['id', 'line'])$$),
          '2 key values appear more than once, for example (id, line)=(9, 1) 3 times, (id, line)=(5, 1) 2 times.',
          'errdetail for a two-column key shows both columns');
INSERT INTO dups SELECT * FROM orders WHERE id BETWEEN 100 AND 109;
SELECT is(pg_temp.error_detail($$SELECT backfill_assert_unique('dups', ARRAY['id'])$$),
          '12 key values appear more than once, for example (id)=(9) 3 times, (id)=(5) 2 times, (id)=(100) 2 times, (id)=(101) 2 times, (id)=(102) 2 times.',
          'errdetail counts all 12 duplicated values and shows at most 5');
SELECT is(backfill_assert_unique('dups', ARRAY['id'], 'id > 200'),
          (SELECT count(*) FROM orders WHERE id > 200),
          'duplicates outside the scope do not count');
SELECT pg_temp.fails($$SELECT backfill_assert_unique('dups', ARRAY['id'], 'id BETWEEN 6 AND 20')$$,
                     '23505', 'is not unique within the scope: \(id\)=\(9\) appears 3 times$',
                     'duplicates inside the scope: 23505 "within the scope", the duplicate in the message',
                     '^1 key value appears more than once, for example \(id\)=\(9\) 3 times\.$');

-- A unique index that does not prove the key does not hide duplicates.
CREATE TABLE dup_partial AS SELECT * FROM orders;
INSERT INTO dup_partial SELECT * FROM orders WHERE id = 5;
CREATE UNIQUE INDEX ON dup_partial (id) WHERE id > 100;
SELECT pg_temp.fails($$SELECT backfill_assert_unique('dup_partial', ARRAY['id'])$$,
                     '23505', 'is not unique', 'a partial unique index does not prove the key');
CREATE TABLE dup_wider AS SELECT * FROM orders;
CREATE UNIQUE INDEX ON dup_wider (id, note);
INSERT INTO dup_wider VALUES (7, 1, '2026-03-01', 1, 'other note');
SELECT pg_temp.fails($$SELECT backfill_assert_unique('dup_wider', ARRAY['id'])$$,
                     '23505', 'is not unique', 'a unique index on more columns than the key does not prove it');
CREATE TABLE dup_deferred (id int UNIQUE DEFERRABLE INITIALLY DEFERRED, v text);
INSERT INTO dup_deferred VALUES (1, 'a'), (1, 'b'), (2, 'c');
SELECT pg_temp.fails($$SELECT backfill_assert_unique('dup_deferred', ARRAY['id'])$$,
                     '23505', 'is not unique',
                     'a deferred unique constraint does not prove the key before it is checked');
CREATE TABLE dup_expr (v text);
INSERT INTO dup_expr VALUES ('a'), ('b'), ('b ');
CREATE UNIQUE INDEX ON dup_expr ((v || 'x'));
INSERT INTO dup_expr VALUES ('c');
SELECT is(backfill_assert_unique('dup_expr', ARRAY['v']), 4::bigint,
          'an expression index is not taken as proof, and the key is still found unique');

-- Key equality is the column's: the same answer with or without an index under another collation.
CREATE COLLATION regress_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE ci_keys (code text COLLATE regress_ci);
INSERT INTO ci_keys VALUES ('ABC'), ('abc'), ('xyz');
SELECT pg_temp.fails($$SELECT backfill_assert_unique('ci_keys', ARRAY['code'])$$,
                     '23505', 'is not unique',
                     'case-insensitive key column: ABC and abc are one key value');
CREATE UNIQUE INDEX ON ci_keys (code COLLATE "C");
SELECT pg_temp.fails($$SELECT backfill_assert_unique('ci_keys', ARRAY['code'])$$,
                     '23505', 'is not unique',
                     'a unique index under another collation does not prove the case-insensitive key');

-- ============================================================ assert_unique: NULLs
CREATE TABLE nulls AS SELECT * FROM orders;
UPDATE nulls SET id = NULL WHERE id IN (10, 20);
UPDATE nulls SET line = NULL WHERE id = 30;
SELECT pg_temp.fails($$SELECT backfill_assert_unique('nulls', ARRAY['id'])$$,
                     '23505', '^key \(id\) of (table )?public\.nulls contains NULL: \(id\)=\(NULL\)$',
                     'NULL in the key: 23505 "contains NULL", a row''s key in the message',
                     '^2 rows have a NULL in the key, for example \(id\)=\(NULL\), \(id\)=\(NULL\)\.$');
SELECT pg_temp.fails($$SELECT backfill_assert_unique('nulls', ARRAY['id', 'line'])$$,
                     '23505', 'contains NULL: \(id, line\)=\((NULL, [0-9]+|[0-9]+, NULL)\)$',
                     'NULL in either column of a two-column key: 3 rows',
                     '^3 rows have a NULL in the key, for example ');
SELECT alike(pg_temp.error_detail($$SELECT backfill_assert_unique('nulls', ARRAY['line', 'id'])$$),
            '%(line, id)=(NULL, 30)%',
            'a NULL in the second key column is shown in key order');
SELECT is(backfill_assert_unique('nulls', ARRAY['id'], 'id IS NOT NULL'), 2998::bigint,
          'NULLs outside the scope do not count');
SELECT pg_temp.fails($$SELECT backfill_assert_unique('nulls', ARRAY['id'], 'amount BETWEEN 15 AND 15')$$,
                     '23505', 'contains NULL within the scope: \(id\)=\(NULL\)$',
                     'NULL inside the scope: "within the scope"',
                     '^1 row has a NULL in the key, for example \(id\)=\(NULL\)\.$');
CREATE TABLE nulls_idx AS SELECT * FROM nulls;
CREATE UNIQUE INDEX ON nulls_idx (id);
SELECT pg_temp.fails($$SELECT backfill_assert_unique('nulls_idx', ARRAY['id'])$$,
                     '23505', 'contains NULL: \(id\)=\(NULL\)$',
                     'a unique index allows NULLs: they are still reported',
                     '^2 rows have a NULL in the key');
INSERT INTO nulls SELECT * FROM orders WHERE id = 40;
SELECT is(pg_temp.error_detail($$SELECT backfill_assert_unique('nulls', ARRAY['id'])$$),
          '1 key value appears more than once, for example (id)=(40) 2 times. 2 rows have a NULL in the key, for example (id)=(NULL), (id)=(NULL).',
          'duplicates and NULLs together: both reported');
SELECT pg_temp.fails($$SELECT backfill_assert_unique('nulls', ARRAY['id'])$$,
                     '23505', 'is not unique: \(id\)=\(40\) appears 2 times$', 'duplicates and NULLs together: reported as not unique, the duplicate in the message');

-- A partitioned table has no unique index across partitions unless it holds the partition key.
CREATE TABLE parted_orders (id int, day date) PARTITION BY RANGE (day);
CREATE TABLE parted_orders_1 PARTITION OF parted_orders FOR VALUES FROM ('2026-03-01') TO ('2026-03-16');
CREATE TABLE parted_orders_2 PARTITION OF parted_orders FOR VALUES FROM ('2026-03-16') TO ('2026-04-01');
CREATE UNIQUE INDEX ON parted_orders (id, day);
INSERT INTO parted_orders SELECT g, date '2026-03-01' + g % 31 FROM generate_series(1, 600) g;
SELECT is(backfill_assert_unique('parted_orders', ARRAY['id']), 600::bigint,
          'partitioned table: unique key across partitions, row count');
INSERT INTO parted_orders VALUES (31, '2026-03-20');
SELECT pg_temp.fails($$SELECT backfill_assert_unique('parted_orders', ARRAY['id'])$$,
                     '23505', 'is not unique', 'partitioned table: one key in two partitions is a duplicate',
                     '^1 key value appears more than once, for example \(id\)=\(31\) 2 times\.$');

-- ============================================================ assert_unique: scope
SELECT is(pg_temp.value_of($q$SELECT backfill_assert_unique('orders', ARRAY['id'], $$orders.day < '2026-03-11'$$)$q$),
          (SELECT count(*) FROM orders WHERE day < '2026-03-11')::text,
          'a scope may qualify columns with the table name, as backfill_fingerprint accepts');

-- ============================================================ reconcile
CREATE TABLE rc_source (id int, day date, revenue numeric(12,2), qty int);
INSERT INTO rc_source SELECT g, date '2026-03-01' + g % 31, g * 1.10, g % 5 FROM generate_series(1, 2000) g;
CREATE TABLE rc_target AS SELECT * FROM rc_source;

SELECT results_eq(
	$$SELECT measure, target_value, source_value, difference, ok
	  FROM backfill_reconcile('TABLE rc_target', 'TABLE rc_source', ARRAY['count(*)', 'sum(revenue)', 'max(qty)'])$$,
	$$VALUES ('count(*)', 2000::numeric, 2000::numeric, 0::numeric, true),
	         ('sum(revenue)', 2201100.00, 2201100.00, 0.00, true),
	         ('max(qty)', 4::numeric, 4::numeric, 0::numeric, true)$$,
	'equal sides: one row per measure, in order, all ok');

-- Make sum(revenue) differ by exactly 0.01.
UPDATE rc_target SET revenue = revenue + 0.01 WHERE id = 1;
SELECT results_eq(
	$$SELECT measure, difference, ok FROM backfill_reconcile('TABLE rc_target', 'TABLE rc_source',
	                                                         ARRAY['count(*)', 'sum(revenue)'], 0.01)$$,
	$$VALUES ('count(*)', 0::numeric, true), ('sum(revenue)', 0.01, true)$$,
	'a difference equal to the tolerance is ok');
SELECT results_eq(
	$$SELECT measure, difference, ok FROM backfill_reconcile('TABLE rc_source', 'TABLE rc_target',
	                                                         ARRAY['sum(revenue)'], 0.01)$$,
	$$VALUES ('sum(revenue)', -0.01, true)$$,
	'a negative difference equal to the tolerance is ok (absolute tolerance)');
SELECT results_eq(
	$$SELECT measure, difference, ok FROM backfill_reconcile('TABLE rc_target', 'TABLE rc_source',
	                                                         ARRAY['count(*)', 'sum(revenue)'], 0.009, false)$$,
	$$VALUES ('count(*)', 0::numeric, true), ('sum(revenue)', 0.01, false)$$,
	'a difference above the tolerance is not ok (raise => false: rows returned)');
SELECT pg_temp.fails(
	$$SELECT * FROM backfill_reconcile('TABLE rc_target', 'TABLE rc_source', ARRAY['count(*)', 'sum(revenue)'], 0.009)$$,
	'23514', '^reconciliation failed: sum\(revenue\) is 2201100\.01 in target, 2201100\.00 in source \(1 of 2 measures differ\)$',
	'a difference above the tolerance raises 23514, the measure and its two values in the message',
	'^sum\(revenue\): target 2201100\.01, source 2201100\.00, difference 0\.01$');
SELECT pg_temp.fails(
	$$SELECT * FROM backfill_reconcile('TABLE rc_target', 'TABLE rc_source', ARRAY['sum(revenue)'])$$,
	'23514', '^reconciliation failed: sum\(revenue\) is [0-9.]+ in target, [0-9.]+ in source \(1 of 1 measure differs\)$',
	'default tolerance is 0: a difference of 0.01 raises');
SELECT lives_ok(
	$$SELECT * FROM backfill_reconcile('TABLE rc_target', 'TABLE rc_source', ARRAY['sum(revenue)'], 0.01)$$,
	'a difference within the tolerance does not raise');

-- A period appended twice: several measures fail, each named with its values.
INSERT INTO rc_target SELECT * FROM rc_source WHERE day = '2026-03-15';
SELECT results_eq(
	$$SELECT measure, target_value, source_value, difference, ok
	  FROM backfill_reconcile('TABLE rc_target', 'TABLE rc_source',
	                          ARRAY['count(*)', 'sum(revenue)', 'count(DISTINCT id)', 'max(qty)'], raise => false)$$,
	$$SELECT * FROM (VALUES
	    ('count(*)', 2065::numeric, 2000::numeric, 65::numeric, false),
	    ('sum(revenue)', (SELECT sum(revenue) FROM rc_target), 2201100.00, (SELECT sum(revenue) FROM rc_target) - 2201100.00, false),
	    ('count(DISTINCT id)', 2000::numeric, 2000::numeric, 0::numeric, true),
	    ('max(qty)', 4::numeric, 4::numeric, 0::numeric, true)) v$$,
	'raise => false: rows with target, source, difference and ok, no error');
SELECT pg_temp.fails(
	$$SELECT * FROM backfill_reconcile('TABLE rc_target', 'TABLE rc_source',
	                                   ARRAY['count(*)', 'sum(revenue)', 'count(DISTINCT id)'])$$,
	'23514', '^reconciliation failed: count\(\*\) is 2065 in target, 2000 in source \(2 of 3 measures differ\)$',
	'raise => true (default): 23514 naming the first measure that differs and counting them');
SELECT is(
	pg_temp.error_detail($$SELECT * FROM backfill_reconcile('TABLE rc_target', 'TABLE rc_source',
	                                                        ARRAY['count(*)', 'sum(revenue)', 'count(DISTINCT id)'])$$),
	format(E'count(*): target 2065, source 2000, difference 65\nsum(revenue): target %s, source 2201100.00, difference %s',
	       (SELECT sum(revenue) FROM rc_target), (SELECT sum(revenue) FROM rc_target) - 2201100.00),
	'errdetail: one line per failing measure with target, source and difference; passing measures left out');
SELECT is(
	(SELECT count(*) FROM backfill_reconcile('TABLE rc_target', 'TABLE rc_source', ARRAY['count(*)'], 65)),
	1::bigint, 'a tolerance as large as the difference lets it pass');
SELECT is(
	(SELECT ok FROM backfill_reconcile($$SELECT * FROM rc_target WHERE day <> '2026-03-15'$$,
	                                   $$SELECT * FROM rc_source WHERE day <> '2026-03-15'$$,
	                                   ARRAY['count(*)'])),
	true, 'queries may scope either side');

-- NULL measures: equal when both NULL, not ok when one is.
SELECT results_eq(
	$$SELECT target_value, source_value, difference, ok
	  FROM backfill_reconcile('SELECT * FROM rc_target WHERE false', 'SELECT * FROM rc_source WHERE false', ARRAY['sum(revenue)'])$$,
	$$VALUES (NULL::numeric, NULL::numeric, NULL::numeric, true)$$,
	'sum over two empty sides: both NULL, ok');
SELECT results_eq(
	$$SELECT target_value, source_value, difference, ok
	  FROM backfill_reconcile('SELECT * FROM rc_target WHERE false', 'TABLE rc_source', ARRAY['sum(revenue)'], 1000000000, false)$$,
	$$VALUES (NULL::numeric, 2201100.00, NULL::numeric, false)$$,
	'NULL against a value is not ok, whatever the tolerance');
SELECT pg_temp.fails(
	$$SELECT * FROM backfill_reconcile('SELECT * FROM rc_target WHERE false', 'TABLE rc_source', ARRAY['sum(revenue)'])$$,
	'23514', '^reconciliation failed',
	'NULL against a value raises',
	'^sum\(revenue\): target NULL, source 2201100\.00, difference NULL$');

-- Non-finite values: equal is equal.
SELECT results_eq(
	$$SELECT measure, ok FROM backfill_reconcile($q$SELECT 'Infinity'::float8 AS x$q$, $q$SELECT 'Infinity'::float8 AS x$q$,
	                                             ARRAY['max(x)', 'sum(x)'], 0, false)$$,
	$$VALUES ('max(x)', true), ('sum(x)', true)$$,
	'Infinity on both sides is ok');
SELECT results_eq(
	$$SELECT measure, ok FROM backfill_reconcile($q$SELECT 'NaN'::float8 AS x$q$, $q$SELECT 'NaN'::float8 AS x$q$,
	                                             ARRAY['max(x)'], 0, false)$$,
	$$VALUES ('max(x)', true)$$,
	'NaN on both sides is ok (NaN = NaN for numeric)');
SELECT results_eq(
	$$SELECT measure, ok FROM backfill_reconcile($q$SELECT 'NaN'::float8 AS x$q$, $q$SELECT 1::float8 AS x$q$,
	                                             ARRAY['max(x)'], 1000, false)$$,
	$$VALUES ('max(x)', false)$$,
	'NaN against a number is not ok, whatever the tolerance');

-- Measures of any numeric type, and an aggregate with a filter.
SELECT results_eq(
	$$SELECT measure, difference, ok FROM backfill_reconcile(
		'SELECT 1.5::float8 AS x, 2::smallint AS y UNION ALL SELECT 2.5, 3',
		'SELECT 4.0::float8 AS x, 5::smallint AS y',
		ARRAY['sum(x)', 'sum(y)', 'count(*) FILTER (WHERE y > 2)', 'avg(y)'], 0, false)$$,
	$$VALUES ('sum(x)', 0::numeric, true), ('sum(y)', 0::numeric, true),
	         ('count(*) FILTER (WHERE y > 2)', 0::numeric, true), ('avg(y)', -2.5, false)$$,
	'float, smallint, filtered and avg measures are compared as numeric');

SELECT * FROM finish();
ROLLBACK;
