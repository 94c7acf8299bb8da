-- Runs: a six-day range backfilled partition by partition, one commit per task
SET datestyle = 'ISO';
CREATE TABLE rn_orders (order_id bigint, order_date date, amount numeric(12,2), refunded boolean);
INSERT INTO rn_orders
SELECT g, date '2026-03-10' + (g % 8), (g % 500) + 0.25, g % 11 = 0
FROM generate_series(1, 8000) g;

-- The serving table, one partition per day, filled by a model that kept refunded orders.
CREATE TABLE rn_revenue (
	order_id bigint NOT NULL,
	order_date date NOT NULL,
	revenue numeric(12,2) NOT NULL,
	PRIMARY KEY (order_id, order_date)
) PARTITION BY RANGE (order_date);
SELECT format('CREATE TABLE %I PARTITION OF rn_revenue FOR VALUES FROM (%L) TO (%L)',
			  'rn_revenue_' || to_char(d, 'YYYYMMDD'), d::date, d::date + 1)
FROM generate_series(date '2026-03-10', date '2026-03-17', interval '1 day') d \gexec
INSERT INTO rn_revenue SELECT order_id, order_date, amount FROM rn_orders;
CREATE MATERIALIZED VIEW rn_mart AS
	SELECT order_date, sum(revenue) AS revenue FROM rn_revenue GROUP BY order_date;
CREATE UNIQUE INDEX ON rn_mart (order_date);

-- The fixed model is a view: the run pins its definition.
CREATE VIEW rn_model AS
	SELECT order_id, order_date, CASE WHEN refunded THEN 0 ELSE amount END AS revenue FROM rn_orders;

-- Plan 2026-03-11 .. 2026-03-16: one task per partition; the days around it stay as they are.
SELECT backfill_plan('rn_revenue', '2026-03-11', '2026-03-17',
	$$SELECT * FROM rn_model WHERE order_date >= $1 AND order_date < $2$$,
	options => '{"reconcile": ["count(*)", "sum(revenue)"], "max_workers": 1}') AS run \gset
SELECT task, partition, range_from, range_to, status FROM backfill_tasks WHERE run_id = :run ORDER BY task;
SELECT status, p->>'kind' AS pinned_kind, p->>'name' AS pinned_name, dependents
FROM backfill_runs, jsonb_array_elements(pinned) p WHERE id = :run;
SELECT u->>'partition' AS outside_the_range FROM backfill_runs, jsonb_array_elements(untouched) u
WHERE id = :run ORDER BY 1;

-- Dry run of the first task: computed, compared with the live partition, reconciled, rolled back.
CREATE TEMP TABLE before_dry AS SELECT * FROM backfill_fingerprint('rn_revenue_20260311');
SELECT task, partition, rows_before, rows_after, added, removed, changed IS NULL AS changed_needs_a_key,
	   fingerprint_before <> fingerprint_after AS would_change, reconciled,
	   jsonb_array_length(reconcile) AS measures
FROM backfill_dry_run(:run);
SELECT f = b AS dry_run_changed_nothing FROM backfill_fingerprint('rn_revenue_20260311') f, before_dry b;
SELECT count(*) AS log_records FROM backfill_log WHERE run_id = :run;

-- Two tasks now; each commits on its own.  (Each task prints a progress NOTICE with timings.)
SET client_min_messages = warning;
CALL backfill_run(:run, 2);
SELECT status, tasks_total, tasks_done, tasks_pending FROM backfill_progress WHERE run_id = :run;

-- Paused, a call does nothing and fails (55000: a script or a scheduler sees it); resumed, it
-- finishes the run and refreshes the mart.
SELECT backfill_pause(:run);
CALL backfill_run(:run);
SELECT tasks_done FROM backfill_progress WHERE run_id = :run;
SELECT backfill_resume(:run);
CALL backfill_run(:run);
RESET client_min_messages;
SELECT status, tasks_done, tasks_failed, rows_written, refreshed->0->>'name' AS refreshed,
	   untouched_changed
FROM backfill_progress WHERE run_id = :run;
SELECT task, status, attempts, rows_before = rows_after AS same_rows,
	   fingerprint_before <> fingerprint_after AS rewritten, reconcile->1->>'ok' AS sum_reconciled
FROM backfill_tasks WHERE run_id = :run ORDER BY task;
SELECT operation, partition, rows_after FROM backfill_log WHERE run_id = :run ORDER BY id;
-- each task's COMMIT is timed after it, and the time under lock covers the swap and the COMMIT
SELECT count(*) AS tasks,
	   count(*) FILTER (WHERE t.commit_ms > 0) AS commit_timed,
	   count(*) FILTER (WHERE t.locked_ms >= t.commit_ms + (l.details->>'swap_ms')::float8 - 0.001) AS locked_covers_swap_and_commit
FROM backfill_tasks t JOIN backfill_log l ON l.id = t.log_id WHERE t.run_id = :run;
-- The range now agrees with the model; the mart with the table.
SELECT measure, ok FROM backfill_reconcile(
	$$SELECT * FROM rn_revenue WHERE order_date >= '2026-03-11' AND order_date < '2026-03-17'$$,
	$$SELECT * FROM rn_model WHERE order_date >= '2026-03-11' AND order_date < '2026-03-17'$$,
	ARRAY['count(*)', 'sum(revenue)']);
SELECT measure, ok FROM backfill_reconcile('TABLE rn_mart',
	'SELECT order_date, sum(revenue) AS revenue FROM rn_revenue GROUP BY 1', ARRAY['sum(revenue)']);
SELECT count(*) AS staging_tables_left FROM pg_class WHERE relname LIKE 'backfill_stage%';

-- A run is done once.
CALL backfill_run(:run);

-- The model changes after planning: the run stops, blocked, before computing with it.
SELECT backfill_plan('rn_revenue', '2026-03-11', '2026-03-13',
	$$SELECT * FROM rn_model WHERE order_date >= $1 AND order_date < $2$$) AS run2 \gset
CREATE OR REPLACE VIEW rn_model AS
	SELECT order_id, order_date, amount + 0 AS revenue FROM rn_orders;
CALL backfill_run(:run2);
SELECT status, error FROM backfill_runs WHERE id = :run2;
SELECT backfill_resume(:run2);
-- Back to the definition it was planned with, it may go on.
CREATE OR REPLACE VIEW rn_model AS
	SELECT order_id, order_date, CASE WHEN refunded THEN 0 ELSE amount END AS revenue FROM rn_orders;
SELECT backfill_resume(:run2);
SET client_min_messages = warning;
CALL backfill_run(:run2);
RESET client_min_messages;
SELECT status FROM backfill_runs WHERE id = :run2;

-- A failing task: with on_error stop the run stops there, the task's data rolled back.
SELECT backfill_plan('rn_revenue', '2026-03-11', '2026-03-13',
	$$SELECT order_id, order_date, revenue / (order_date - date '2026-03-12') AS revenue
	  FROM rn_model WHERE order_date >= $1 AND order_date < $2$$,
	options => '{"max_attempts": 2}') AS run3 \gset
SET client_min_messages = warning;
CALL backfill_run(:run3);
RESET client_min_messages;
SELECT task, status, attempts, error FROM backfill_tasks WHERE run_id = :run3 ORDER BY task;
SELECT status FROM backfill_runs WHERE id = :run3;
-- Called again, the failed task is tried again, up to max_attempts; finished tasks are not redone.
CALL backfill_run(:run3);
CALL backfill_run(:run3);
SELECT task, status, attempts FROM backfill_tasks WHERE run_id = :run3 ORDER BY task;
SELECT count(*) AS log_records FROM backfill_log WHERE run_id = :run3;
SELECT backfill_cancel(:run3);
CALL backfill_run(:run3);

-- on_error continue: a task over its statement_timeout fails, the others go on, the run reports it.
SELECT backfill_plan('rn_revenue', '2026-03-11', '2026-03-14',
	$$SELECT m.* FROM rn_model m
	  CROSS JOIN LATERAL (SELECT CASE WHEN $1 = date '2026-03-12' THEN pg_sleep(5) END) AS slow
	  WHERE m.order_date >= $1 AND m.order_date < $2$$,
	options => '{"on_error": "continue", "statement_timeout": "200ms", "max_attempts": 1}') AS run5 \gset
SET client_min_messages = warning;
CALL backfill_run(:run5);
RESET client_min_messages;
SELECT task, status, attempts, error FROM backfill_tasks WHERE run_id = :run5 ORDER BY task;
SELECT status, tasks_done, tasks_failed FROM backfill_progress WHERE run_id = :run5;

-- The target is dropped between two calls: the run fails, saying why; it can be cancelled.
CREATE TABLE rn_gone (order_date date NOT NULL, revenue numeric) PARTITION BY RANGE (order_date);
CREATE TABLE rn_gone_1 PARTITION OF rn_gone FOR VALUES FROM ('2026-03-11') TO ('2026-03-12');
SELECT backfill_plan('rn_gone', '2026-03-11', '2026-03-12',
	$$SELECT order_date, revenue FROM rn_model WHERE order_date >= $1 AND order_date < $2$$) AS run6 \gset
DROP TABLE rn_gone;
CALL backfill_run(:run6);
SELECT status, error FROM backfill_runs WHERE id = :run6;
SELECT backfill_cancel(:run6);

-- A plain table, in chunks of two days, replaced by delete and insert per chunk.
CREATE TABLE rn_flat (order_id bigint, order_date date, revenue numeric(12,2));
INSERT INTO rn_flat SELECT order_id, order_date, amount FROM rn_orders;
SELECT backfill_plan('rn_flat', '2026-03-11', '2026-03-16',
	$$SELECT * FROM rn_model WHERE order_date >= $1 AND order_date < $2$$,
	options => '{"window_column": "order_date", "chunk": "2 days"}') AS run4 \gset
SELECT task, partition, range_from, range_to FROM backfill_tasks WHERE run_id = :run4 ORDER BY task;
SET client_min_messages = warning;
CALL backfill_run(:run4);
RESET client_min_messages;
SELECT DISTINCT operation FROM backfill_log WHERE run_id = :run4;
SELECT measure, ok FROM backfill_reconcile(
	$$SELECT * FROM rn_flat WHERE order_date >= '2026-03-11' AND order_date < '2026-03-16'$$,
	$$SELECT * FROM rn_model WHERE order_date >= '2026-03-11' AND order_date < '2026-03-16'$$,
	ARRAY['count(*)', 'sum(revenue)']);

-- Plans that are refused, and why.
SELECT backfill_plan('rn_revenue', '2026-03-11', '2026-03-13', 'SELECT * FROM rn_model', 'append');
SELECT backfill_plan('rn_revenue', '2026-03-11', '2026-03-20', 'SELECT * FROM rn_model');
SELECT backfill_plan('rn_revenue', '2026-03-13', '2026-03-11', 'SELECT * FROM rn_model');
SELECT backfill_plan('rn_revenue', 'soon', '2026-03-13', 'SELECT * FROM rn_model');
SELECT backfill_plan('rn_revenue', '2026-03-11', '2026-03-13', 'SELECT * FROM rn_model WHERE order_date = $3');
SELECT backfill_plan('rn_revenue', '2026-03-11', '2026-03-13', 'SELECT * FROM rn_model', options => '{"workers": 2}');
SELECT backfill_plan('rn_revenue', '2026-03-11', '2026-03-13', 'SELECT * FROM rn_model', options => '{"max_workers": 0}');
SELECT backfill_plan('rn_flat', '2026-03-11', '2026-03-13', 'SELECT * FROM rn_model');
BEGIN;
CALL backfill_run(:run);
ROLLBACK;

-- A failed task's own error comes back: its SQLSTATE, its message said once, and the
-- measures it took when they did not reconcile.
SELECT backfill_plan('rn_revenue', '2026-03-12', '2026-03-13',
	$$SELECT order_id, order_date, revenue / (order_date - date '2026-03-12') AS revenue
	  FROM rn_model WHERE order_date >= $1 AND order_date < $2$$) AS run7 \gset
SET client_min_messages = warning;
CALL backfill_run(:run7);
\echo :LAST_ERROR_SQLSTATE
-- a source that draws from a sequence reads differently the second time: reconcile sees it
CREATE SEQUENCE rn_drift;
SELECT backfill_plan('rn_revenue', '2026-03-13', '2026-03-14',
	$$SELECT order_id, order_date, revenue + nextval('rn_drift') AS revenue
	  FROM rn_model WHERE order_date >= $1 AND order_date < $2$$,
	options => '{"reconcile": ["count(*)", "sum(revenue)"]}') AS run8 \gset
CALL backfill_run(:run8);
\echo :LAST_ERROR_SQLSTATE
RESET client_min_messages;
SELECT task, status, split_part(error, ' (Measures', 1) AS error, r->>'measure' AS measure, r->>'ok' AS ok
FROM backfill_tasks, jsonb_array_elements(reconcile) r WHERE run_id = :run8 ORDER BY task, 4;

-- A chunked run holds the source's rows to their window as the column stores them: in a
-- timestamp(0) column 23:59:59.7 is the next day, whose task would delete it.
CREATE TABLE rn_ts (id int, at timestamp(0), v int);
INSERT INTO rn_ts VALUES (1, '2026-03-01 10:00', 1), (2, '2026-03-02 00:00:00', 2);
SELECT backfill_plan('rn_ts', '2026-03-01', '2026-03-03',
	$$SELECT * FROM (VALUES (1, timestamp '2026-03-01 10:00', 10), (2, timestamp '2026-03-01 23:59:59.7', 20)) s(id, at, v)
	  WHERE at >= $1 AND at < $2$$,
	options => '{"window_column": "at", "chunk": "1 day"}') AS run9 \gset
SET client_min_messages = warning;
CALL backfill_run(:run9);
\echo :LAST_ERROR_SQLSTATE
RESET client_min_messages;
SELECT id, at, v FROM rn_ts ORDER BY id;

-- Each task runs at READ COMMITTED whatever default_transaction_isolation says, so that it
-- sees the rows as they are once it holds its locks: the source records the level it ran at.
CREATE TABLE rn_iso (id int, day date, iso text) PARTITION BY RANGE (day);
CREATE TABLE rn_iso_0301 PARTITION OF rn_iso FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
CREATE TABLE rn_iso_0302 PARTITION OF rn_iso FOR VALUES FROM ('2026-03-02') TO ('2026-03-03');
INSERT INTO rn_iso VALUES (1, '2026-03-01', 'old'), (2, '2026-03-02', 'old');
SELECT backfill_plan('rn_iso', '2026-03-01', '2026-03-03',
	$$SELECT id, day, current_setting('transaction_isolation') AS iso FROM rn_iso
	  WHERE day >= $1 AND day < $2$$, strategy => 'auto') AS run10 \gset
SET default_transaction_isolation = 'repeatable read';
SET client_min_messages = warning;
CALL backfill_run(:run10);
RESET client_min_messages;
RESET default_transaction_isolation;
SELECT id, day, iso FROM rn_iso ORDER BY id;

-- A 57014 that is not the CALL's own cancel (a foreign server's or a Citus worker's statement
-- timeout, passed on; here a RAISE) fails its task like any error: the others go on.
CREATE FUNCTION rn_remote_extract(d date) RETURNS boolean LANGUAGE plpgsql AS $f$
BEGIN
	IF d = date '2026-03-12' THEN
		RAISE EXCEPTION 'upstream extract canceled: statement timeout on its server' USING ERRCODE = 'query_canceled';
	END IF;
	RETURN true;
END $f$;
SELECT backfill_plan('rn_revenue', '2026-03-11', '2026-03-14',
	$$SELECT * FROM rn_model WHERE order_date >= $1 AND order_date < $2 AND rn_remote_extract($1)$$,
	options => '{"on_error": "continue", "max_attempts": 1}') AS run_raise \gset
SET client_min_messages = warning;
CALL backfill_run(:run_raise);
RESET client_min_messages;
SELECT task, status, attempts, error FROM backfill_tasks WHERE run_id = :run_raise ORDER BY task;
SELECT status, tasks_done, tasks_failed FROM backfill_progress WHERE run_id = :run_raise;

-- A partition dropped after planning (by retention, say) fails its task every time.  Skipped,
-- with the reason kept, the run goes on without it and ends done.
CREATE TABLE rn_ret (id int, day date, v int) PARTITION BY RANGE (day);
SELECT format('CREATE TABLE %I PARTITION OF rn_ret FOR VALUES FROM (%L) TO (%L)',
			  'rn_ret_' || to_char(d, 'MMDD'), d::date, d::date + 1)
FROM generate_series(date '2026-03-01', date '2026-03-03', interval '1 day') d \gexec
INSERT INTO rn_ret SELECT g, date '2026-03-01' + g % 3, g FROM generate_series(1, 30) g;
CREATE TABLE rn_ret_src AS SELECT id, day, v * 2 AS v FROM rn_ret;
SELECT backfill_plan('rn_ret', '2026-03-01', '2026-03-04',
	$$SELECT * FROM rn_ret_src WHERE day >= $1 AND day < $2$$) AS run_ret \gset
DROP TABLE rn_ret_0301;
SET client_min_messages = warning;
CALL backfill_run(:run_ret);
RESET client_min_messages;
SELECT task, partition, status, attempts FROM backfill_tasks WHERE run_id = :run_ret ORDER BY task;
SELECT backfill_skip(:run_ret, 1, 'dropped by retention');
SELECT task, status, error = format('skipped by %s: dropped by retention', current_user) AS reason_kept
FROM backfill_tasks WHERE run_id = :run_ret ORDER BY task;
SET client_min_messages = warning;
CALL backfill_run(:run_ret);
RESET client_min_messages;
SELECT status, tasks_done, tasks_skipped, tasks_failed, tasks_pending FROM backfill_progress WHERE run_id = :run_ret;
SELECT day, sum(v) = (SELECT sum(s.v) FROM rn_ret_src s WHERE s.day = r.day) AS rewritten
FROM rn_ret r GROUP BY day ORDER BY day;
