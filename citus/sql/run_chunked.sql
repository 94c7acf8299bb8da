-- Chunked runs of a plain distributed table (window_column and chunk): each chunk is replaced
-- by a DELETE and an INSERT in one statement, which Citus runs on the shards, or merged on the
-- key; the table is locked on every node while a chunk is written.  Both end equal to the
-- source, chunk by chunk, one log record each.
SET datestyle = 'ISO';
CREATE SCHEMA ck;
SET search_path = ck, public;
CREATE TABLE ck.orders (order_id bigint NOT NULL, day date NOT NULL, amount numeric(12,2));
SELECT create_distributed_table('ck.orders', 'order_id', shard_count => 4);
INSERT INTO ck.orders SELECT g, date '2026-03-10' + g % 4, g % 100 FROM generate_series(1, 2000) g;
CREATE TABLE ck.fct (order_id bigint NOT NULL, day date NOT NULL, revenue numeric(12,2));
SELECT create_distributed_table('ck.fct', 'order_id', colocate_with => 'ck.orders');
INSERT INTO ck.fct SELECT order_id, day, amount FROM ck.orders;
-- a row outside the run's range stays as it is
INSERT INTO ck.fct VALUES (9001, '2026-03-20', 7);

SELECT backfill_plan('ck.fct', '2026-03-10', '2026-03-14',
	$$SELECT order_id, day, amount * 2 AS revenue FROM ck.orders WHERE day >= $1 AND day < $2$$,
	options => '{"window_column": "day", "chunk": "1 day"}') AS run \gset
SET client_min_messages = warning;
CALL backfill_run(:run);
RESET client_min_messages;
SELECT t.status, count(*) AS tasks, count(DISTINCT l.id) AS log_records, sum(l.rows_after) AS rows_written
FROM backfill_tasks t JOIN backfill_log l ON l.id = t.log_id WHERE t.run_id = :run GROUP BY 1;
SELECT (SELECT count(*) FROM (SELECT order_id, day, revenue FROM ck.fct WHERE day < '2026-03-14'
		EXCEPT ALL SELECT order_id, day, amount * 2 FROM ck.orders) x) AS not_in_source,
       (SELECT revenue FROM ck.fct WHERE order_id = 9001) AS outside_row;

SELECT backfill_plan('ck.fct', '2026-03-10', '2026-03-14',
	$$SELECT order_id, day, amount * 3 AS revenue FROM ck.orders WHERE day >= $1 AND day < $2$$,
	strategy => 'merge', key => '{order_id, day}', options => '{"window_column": "day", "chunk": "1 day"}') AS run2 \gset
SET client_min_messages = warning;
CALL backfill_run(:run2);
RESET client_min_messages;
SELECT t.status, count(*) AS tasks, l.operation
FROM backfill_tasks t JOIN backfill_log l ON l.id = t.log_id WHERE t.run_id = :run2 GROUP BY 1, 3;
SELECT (SELECT count(*) FROM (SELECT order_id, day, revenue FROM ck.fct WHERE day < '2026-03-14'
		EXCEPT ALL SELECT order_id, day, amount * 3 FROM ck.orders) x) AS not_in_source,
       (SELECT revenue FROM ck.fct WHERE order_id = 9001) AS outside_row;

-- A source that reads the table itself (a correction of the stored rows) reads each chunk as
-- it was before the chunk's delete, on a distributed table and on a reference table.
CREATE TEMP TABLE fct_before AS SELECT order_id, day, revenue FROM ck.fct;
SELECT backfill_plan('ck.fct', '2026-03-10', '2026-03-14',
	$$SELECT order_id, day, revenue + 1 AS revenue FROM ck.fct WHERE day >= $1 AND day < $2$$,
	options => '{"window_column": "day", "chunk": "1 day"}') AS run3 \gset
SET client_min_messages = warning;
CALL backfill_run(:run3);
RESET client_min_messages;
SELECT status, tasks_done, tasks_failed FROM backfill_progress WHERE run_id = :run3;
SELECT (SELECT count(*) FROM ck.fct) AS rows_now, (SELECT count(*) FROM fct_before) AS rows_before,
       (SELECT count(*) FROM (SELECT order_id, day, revenue FROM ck.fct
		EXCEPT ALL SELECT order_id, day, CASE WHEN day < '2026-03-14' THEN revenue + 1 ELSE revenue END
		FROM fct_before) x) AS not_corrected_once;

CREATE TABLE ck.rates (day date NOT NULL, rate numeric(12,2));
SELECT create_reference_table('ck.rates');
INSERT INTO ck.rates SELECT date '2026-03-10' + g, g FROM generate_series(0, 5) g;
SELECT backfill_plan('ck.rates', '2026-03-10', '2026-03-14',
	$$SELECT day, rate * 10 AS rate FROM ck.rates WHERE day >= $1 AND day < $2$$,
	options => '{"window_column": "day", "chunk": "1 day"}') AS run4 \gset
SET client_min_messages = warning;
CALL backfill_run(:run4);
RESET client_min_messages;
SELECT status, tasks_done, tasks_failed FROM backfill_progress WHERE run_id = :run4;
SELECT day, rate FROM ck.rates ORDER BY day;

SET client_min_messages = warning;
DROP SCHEMA ck CASCADE;
