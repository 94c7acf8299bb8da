-- demo/lab.sql: the backfill lab.  A revenue model has excluded refunds incorrectly for six
-- months; the published history is repaired inside PostgreSQL, and every number printed is
-- measured here.  Each claim is checked by pg_temp.expect(): a failed check stops the demo
-- with an error, so `make demo` fails.
\set ON_ERROR_STOP 1
\pset footer off
\pset null '-'
SET client_min_messages = warning;
SET datestyle = 'ISO';
CREATE EXTENSION IF NOT EXISTS backfill;

CREATE FUNCTION pg_temp.expect(ok boolean, claim text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	IF ok IS NOT TRUE THEN
		RAISE EXCEPTION 'demo check failed: %', claim;
	END IF;
	RETURN 'checked: ' || claim;
END $$;
-- outcome(sql): 'PASS', or 'FAIL' and the error the extension raised
CREATE FUNCTION pg_temp.outcome(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	m text; d text;
BEGIN
	EXECUTE sql;
	RETURN 'PASS';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL;
	RETURN 'FAIL  ' || m || coalesce(E'\n' || d, '');
END $$;
CREATE FUNCTION pg_temp.money(numeric) RETURNS text LANGUAGE sql AS $$ SELECT to_char($1, 'FM999,999,999,990.00') $$;

SELECT date_trunc('month', current_date)::date AS cur_month,
	   (date_trunc('month', current_date) - interval '6 months')::date AS bug_from,
	   (date_trunc('month', current_date) + interval '1 month')::date AS data_to,
	   (date_trunc('month', current_date) - interval '6 months' + interval '45 days')::date AS clean_day,
	   (date_trunc('month', current_date) - interval '6 months' + interval '100 days')::date AS lab_day,
	   clock_timestamp() AS demo_start
\gset

\echo
\echo '=================================================================================='
\echo ' 1. A small warehouse'
\echo '=================================================================================='
CREATE TABLE orders (order_id bigint PRIMARY KEY, order_date date NOT NULL, amount numeric(12,2) NOT NULL);
INSERT INTO orders
SELECT g, d.day, round((15 + (g * 7919) % 40000 / 100.0)::numeric, 2)
FROM generate_series(:'bug_from'::date, :'data_to'::date - 1, interval '1 day') WITH ORDINALITY AS d0(ts, n),
	 LATERAL (SELECT ts::date AS day) d,
	 LATERAL generate_series((n - 1) * 120 + 1, n * 120) g;
-- about one order in eleven is refunded, in part or in full; on one day none was
CREATE TABLE refunds (order_id bigint NOT NULL REFERENCES orders, refunded_on date NOT NULL, amount numeric(12,2) NOT NULL);
INSERT INTO refunds
SELECT order_id, order_date + 3, CASE WHEN order_id % 3 = 0 THEN amount ELSE round(amount / 4, 2) END
FROM orders WHERE order_id % 11 = 0 AND order_date <> :'clean_day';

-- The model, version 1: refunds are not taken out.  It published six months.
CREATE VIEW revenue_model AS
	SELECT o.order_id, o.order_date, o.amount AS revenue FROM orders o;
CREATE TABLE fct_revenue (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2) NOT NULL)
	PARTITION BY RANGE (order_date);
SELECT format('CREATE TABLE %I PARTITION OF fct_revenue FOR VALUES FROM (%L) TO (%L)',
			  'fct_revenue_' || to_char(d, 'YYYYMMDD'), d::date, d::date + 1)
FROM generate_series(:'bug_from'::date, :'data_to'::date - 1, interval '1 day') d \gexec
CREATE INDEX ON fct_revenue (order_date);
INSERT INTO fct_revenue SELECT * FROM revenue_model WHERE order_date < :'cur_month';
-- The fix, version 2, deployed at the start of this month: it published this month.
CREATE OR REPLACE VIEW revenue_model AS
	SELECT o.order_id, o.order_date, (o.amount - coalesce(r.refunded, 0))::numeric(12,2) AS revenue
	FROM orders o LEFT JOIN (SELECT order_id, sum(amount) AS refunded FROM refunds GROUP BY order_id) r USING (order_id);
INSERT INTO fct_revenue SELECT * FROM revenue_model WHERE order_date >= :'cur_month';
CREATE MATERIALIZED VIEW mart_revenue_monthly AS
	SELECT date_trunc('month', order_date)::date AS month, count(*) AS orders, sum(revenue) AS revenue
	FROM fct_revenue GROUP BY 1;
CREATE UNIQUE INDEX ON mart_revenue_monthly (month);
-- what was published, day by day, for the chart
CREATE TABLE published_daily AS SELECT order_date AS day, sum(revenue) AS revenue FROM fct_revenue GROUP BY 1;

SELECT (SELECT count(*) FROM orders) AS orders, (SELECT count(*) FROM refunds) AS refunds,
	   (SELECT count(*) FROM pg_inherits WHERE inhparent = 'fct_revenue'::regclass) AS daily_partitions,
	   :'bug_from' || ' .. ' || (:'cur_month'::date - 1) AS wrong_history,
	   :'cur_month' || ' .. ' || (:'data_to'::date - 1) AS already_fixed;
SELECT to_char(month, 'YYYY-MM') AS month, orders, pg_temp.money(revenue) AS published_revenue,
	   pg_temp.money((SELECT sum(revenue) FROM revenue_model m WHERE date_trunc('month', m.order_date) = month)) AS true_revenue
FROM mart_revenue_monthly ORDER BY 1;

\echo
\echo '=================================================================================='
\echo ' 2. The trap: a period is re-run with an append strategy'
\echo '=================================================================================='
\echo 'This month was already right.  A retried job appends it once more:'
BEGIN;
INSERT INTO fct_revenue SELECT * FROM revenue_model WHERE order_date >= :'cur_month';
SELECT (SELECT max(c) FROM (SELECT count(*) AS c FROM fct_revenue WHERE order_date >= :'cur_month' GROUP BY order_id) x) AS copies_of_the_period,
	   (SELECT count(*) FROM fct_revenue) AS rows_in_serving_table,
	   pg_temp.money((SELECT sum(revenue) FROM fct_revenue WHERE order_date >= :'cur_month')) AS reported_total,
	   pg_temp.money((SELECT sum(revenue) FROM revenue_model WHERE order_date >= :'cur_month')) AS true_total \gset trap_
SELECT :trap_copies_of_the_period AS copies_of_the_period, :trap_rows_in_serving_table AS rows_in_serving_table,
	   :'trap_reported_total' AS reported_total, :'trap_true_total' AS true_total;
SELECT pg_temp.expect((SELECT sum(revenue) FROM fct_revenue WHERE order_date >= :'cur_month')
					  = 2 * (SELECT sum(revenue) FROM revenue_model WHERE order_date >= :'cur_month'),
					  'the reported total of the period is exactly twice the true total') AS check;
\echo 'No job failed, no alert fired, and the number went up.  The checks a dbt post-hook can run:'
SELECT 'uniqueness' AS check, pg_temp.outcome(format(
		   $$SELECT backfill_assert_unique('fct_revenue', ARRAY['order_id'], %L)$$, format('order_date >= %L', :'cur_month'))) AS outcome
UNION ALL
SELECT 'reconciliation', pg_temp.outcome(format(
		   $$SELECT * FROM backfill_reconcile(%L, %L, ARRAY['count(*)', 'sum(revenue)'])$$,
		   format('SELECT * FROM fct_revenue WHERE order_date >= %L', :'cur_month'),
		   format('SELECT * FROM revenue_model WHERE order_date >= %L', :'cur_month')));
SELECT pg_temp.expect(pg_temp.outcome(format($$SELECT backfill_assert_unique('fct_revenue', ARRAY['order_id'], %L)$$,
					  format('order_date >= %L', :'cur_month'))) LIKE 'FAIL%appear more than once%',
					  'backfill_assert_unique fails the doubled period') AS check;
SELECT json_agg(json_build_object('day', order_date, 'revenue', revenue))::text AS append_series
FROM (SELECT order_date, sum(revenue) AS revenue FROM fct_revenue WHERE order_date >= :'cur_month' GROUP BY 1) s \gset
ROLLBACK;
\echo '(rolled back: the serving table is as published)'
CREATE TABLE append_daily AS
SELECT p.day, coalesce((a.e->>'revenue')::numeric, p.revenue) AS revenue
FROM published_daily p LEFT JOIN json_array_elements(:'append_series'::json) a(e) ON (a.e->>'day')::date = p.day;

\echo
\echo '=================================================================================='
\echo ' 3. Three write strategies on the same day, each probed and each run twice'
\echo '=================================================================================='
-- three copies of one wrong day, one per strategy
CREATE TABLE lab_append (order_id bigint NOT NULL, order_date date NOT NULL, revenue numeric(12,2) NOT NULL) PARTITION BY RANGE (order_date);
CREATE TABLE lab_append_day PARTITION OF lab_append FOR VALUES FROM (:'lab_day') TO (:'lab_day'::date + 1);
CREATE TABLE lab_merge (LIKE lab_append) PARTITION BY RANGE (order_date);
CREATE TABLE lab_merge_day PARTITION OF lab_merge FOR VALUES FROM (:'lab_day') TO (:'lab_day'::date + 1);
CREATE TABLE lab_replace (LIKE lab_append) PARTITION BY RANGE (order_date);
CREATE TABLE lab_replace_day PARTITION OF lab_replace FOR VALUES FROM (:'lab_day') TO (:'lab_day'::date + 1);
INSERT INTO lab_append SELECT * FROM fct_revenue WHERE order_date = :'lab_day';
INSERT INTO lab_merge SELECT * FROM fct_revenue WHERE order_date = :'lab_day';
INSERT INTO lab_replace SELECT * FROM fct_revenue WHERE order_date = :'lab_day';
SELECT format('INSERT INTO lab_append SELECT * FROM revenue_model WHERE order_date = %L', :'lab_day') AS append_sql,
	   format('SELECT backfill_merge(%L, %L, %L)', 'lab_merge',
			  format('SELECT * FROM revenue_model WHERE order_date = %L', :'lab_day'), '{order_id}') AS merge_sql,
	   format('SELECT backfill_replace_partition(%L, %L)', 'lab_replace_day',
			  'SELECT * FROM revenue_model WHERE order_date >= $1 AND order_date < $2') AS replace_sql \gset
CREATE TABLE lab (strategy text, idempotent boolean, verdict text, rows_1 bigint, rows_2 bigint, total_2 numeric,
				  written_1 bigint, written_2 bigint, ms_1 numeric, swap_ms numeric);
-- probe each: run twice inside a subtransaction, compare, roll back
INSERT INTO lab (strategy, idempotent, verdict)
SELECT 'append', idempotent, verdict FROM backfill_probe_idempotency(:'append_sql', 'lab_append')
UNION ALL SELECT 'merge on key', idempotent, verdict FROM backfill_probe_idempotency(:'merge_sql', 'lab_merge')
UNION ALL SELECT 'replace partition', idempotent, verdict FROM backfill_probe_idempotency(:'replace_sql', 'lab_replace');
-- then run each twice for real
SELECT clock_timestamp() AS t0 \gset
:append_sql;
SELECT clock_timestamp() AS t1 \gset
UPDATE lab SET rows_1 = (SELECT count(*) FROM lab_append), written_1 = (SELECT count(*) FROM revenue_model WHERE order_date = :'lab_day'),
	ms_1 = extract(epoch FROM :'t1'::timestamptz - :'t0'::timestamptz) * 1000 WHERE strategy = 'append';
:append_sql;
UPDATE lab SET rows_2 = (SELECT count(*) FROM lab_append), total_2 = (SELECT sum(revenue) FROM lab_append),
	written_2 = (SELECT count(*) FROM revenue_model WHERE order_date = :'lab_day') WHERE strategy = 'append';
SELECT clock_timestamp() AS t0 \gset
SELECT (m).inserted + (m).updated + (m).deleted AS merge_written_1 FROM (SELECT backfill_merge('lab_merge',
	format('SELECT * FROM revenue_model WHERE order_date = %L', :'lab_day'), '{order_id}') AS m) x \gset
SELECT clock_timestamp() AS t1 \gset
UPDATE lab SET rows_1 = (SELECT count(*) FROM lab_merge), written_1 = :merge_written_1,
	ms_1 = extract(epoch FROM :'t1'::timestamptz - :'t0'::timestamptz) * 1000 WHERE strategy = 'merge on key';
SELECT (m).inserted + (m).updated + (m).deleted AS merge_written_2 FROM (SELECT backfill_merge('lab_merge',
	format('SELECT * FROM revenue_model WHERE order_date = %L', :'lab_day'), '{order_id}') AS m) x \gset
UPDATE lab SET rows_2 = (SELECT count(*) FROM lab_merge), total_2 = (SELECT sum(revenue) FROM lab_merge),
	written_2 = :merge_written_2 WHERE strategy = 'merge on key';
SELECT clock_timestamp() AS t0 \gset
SELECT rows_after AS replace_written_1, swap_ms AS replace_swap_ms FROM backfill_replace_partition('lab_replace_day',
	'SELECT * FROM revenue_model WHERE order_date >= $1 AND order_date < $2') \gset
SELECT clock_timestamp() AS t1 \gset
UPDATE lab SET rows_1 = (SELECT count(*) FROM lab_replace), written_1 = :replace_written_1, swap_ms = :replace_swap_ms,
	ms_1 = extract(epoch FROM :'t1'::timestamptz - :'t0'::timestamptz) * 1000 WHERE strategy = 'replace partition';
SELECT rows_after AS replace_written_2 FROM backfill_replace_partition('lab_replace_day',
	'SELECT * FROM revenue_model WHERE order_date >= $1 AND order_date < $2') \gset
UPDATE lab SET rows_2 = (SELECT count(*) FROM lab_replace), total_2 = (SELECT sum(revenue) FROM lab_replace),
	written_2 = :replace_written_2 WHERE strategy = 'replace partition';

SELECT count(*) AS rows_of_the_day, pg_temp.money(sum(revenue)) AS true_total FROM revenue_model WHERE order_date = :'lab_day';
WITH t AS (SELECT sum(revenue) AS truth FROM revenue_model WHERE order_date = :'lab_day'),
a AS (SELECT * FROM lab WHERE strategy = 'append'), m AS (SELECT * FROM lab WHERE strategy = 'merge on key'),
r AS (SELECT * FROM lab WHERE strategy = 'replace partition')
SELECT p.property, p.append, p.merge_on_key, p.replace_partition FROM a, m, r, t, LATERAL (VALUES
	(1, 'idempotent (probe)', CASE WHEN a.idempotent THEN 'yes' ELSE 'no' END, CASE WHEN m.idempotent THEN 'yes' ELSE 'no' END, CASE WHEN r.idempotent THEN 'yes' ELSE 'no' END),
	(2, 'rows after run 1 / run 2', a.rows_1 || ' / ' || a.rows_2, m.rows_1 || ' / ' || m.rows_2, r.rows_1 || ' / ' || r.rows_2),
	(3, 'total after run 2 / true total', round(a.total_2 / truth, 2) || 'x', round(m.total_2 / truth, 2) || 'x', round(r.total_2 / truth, 2) || 'x'),
	(4, 'needs a unique key', 'no', 'yes: proven first, or refused', 'no: the partition must match the range'),
	(5, 'readers during the run', 'a growing, double-counted day', 'old rows until the commit', 'old partition until a ' || round(r.swap_ms, 1) || ' ms swap'),
	(6, 'rows written, run 1 / run 2', a.written_1 || ' / ' || a.written_2, m.written_1 || ' / ' || m.written_2, r.written_1 || ' / ' || r.written_2),
	(7, 'time of run 1', round(a.ms_1, 1) || ' ms', round(m.ms_1, 1) || ' ms', round(r.ms_1, 1) || ' ms')
) AS p(n, property, append, merge_on_key, replace_partition) ORDER BY p.n;
SELECT strategy, verdict FROM lab ORDER BY strategy;
SELECT pg_temp.expect((SELECT NOT idempotent FROM lab WHERE strategy = 'append')
					  AND (SELECT bool_and(idempotent) FROM lab WHERE strategy <> 'append'),
					  'the probe calls the append not idempotent, the merge and the replacement idempotent') AS check
UNION ALL
SELECT pg_temp.expect((SELECT rows_1 = 2 * d.n AND rows_2 = 3 * d.n FROM lab, (SELECT count(*) AS n FROM revenue_model
						   WHERE order_date = :'lab_day') d WHERE strategy = 'append')
					  AND (SELECT bool_and(rows_2 = rows_1) FROM lab WHERE strategy <> 'append'),
					  'each append adds another copy of the day; a second merge or replacement leaves it as the first did')
UNION ALL
SELECT pg_temp.expect((SELECT written_2 = 0 FROM lab WHERE strategy = 'merge on key'),
					  'a second merge writes nothing');

\echo
\echo '=================================================================================='
\echo ' 4. The safe sequence, in order'
\echo '=================================================================================='
CREATE TABLE already_right AS
SELECT hash AS fingerprint_before FROM backfill_fingerprint(format('fct_revenue_%s', to_char(:'clean_day'::date, 'YYYYMMDD'))::regclass);
CREATE TABLE totals_before AS
SELECT sum(revenue) AS published FROM fct_revenue WHERE order_date >= :'bug_from' AND order_date < :'cur_month';

\echo
\echo '-- 4.1 Fix the code.  Why first: it stops the bug writing new wrong history, and this'
\echo '--     month, computed by the new logic, is what the repair is validated against.'
SELECT 'revenue_model' AS model, CASE WHEN pg_get_viewdef('revenue_model') LIKE '%refunds%' THEN 'version 2: refunds taken out' END AS deployed,
	   (SELECT bool_and(ok) FROM backfill_reconcile(format('SELECT * FROM fct_revenue WHERE order_date >= %L', :'cur_month'),
			format('SELECT * FROM revenue_model WHERE order_date >= %L', :'cur_month'), ARRAY['count(*)', 'sum(revenue)'], raise => false)) AS this_month_reconciles;

\echo
\echo '-- 4.2 Probe idempotency.  Why before anything is written: a re-run that is not'
\echo '--     idempotent is not a repair, and nothing else will say so.'
SELECT idempotent, verdict FROM backfill_probe_idempotency(
	format($$SELECT backfill_replace_partition(%L, 'SELECT * FROM revenue_model WHERE order_date >= $1 AND order_date < $2')$$,
		   'fct_revenue_' || to_char(:'lab_day'::date, 'YYYYMMDD')),
	'fct_revenue', format('order_date = %L', :'lab_day'));

\echo
\echo '-- 4.3 Plan the exact range.  Why now: the range is the six wrong months, to the day;'
\echo '--     this month (already right) stays outside it, and the code is pinned for the run.'
SELECT backfill_plan('fct_revenue', :'bug_from', :'cur_month',
	'SELECT * FROM revenue_model WHERE order_date >= $1 AND order_date < $2',
	key => '{order_id}',
	options => '{"reconcile": ["count(*)", "sum(revenue)"]}') AS run \gset
SELECT :run AS run, count(*) AS tasks, min(partition) AS first_partition, max(partition) AS last_partition,
	   (SELECT jsonb_array_length(untouched) FROM backfill_runs WHERE id = :run) AS partitions_outside,
	   (SELECT string_agg(p->>'kind' || ' ' || (p->>'name'), ', ') FROM backfill_runs, jsonb_array_elements(pinned) p WHERE id = :run) AS pinned,
	   (SELECT string_agg(d->>'name', ', ') FROM backfill_runs, jsonb_array_elements(dependents) d WHERE id = :run) AS refreshed_after
FROM backfill_tasks WHERE run_id = :run;

\echo
\echo '-- 4.4 Dry-run one partition and reconcile it.  Why before the run: one partition,'
\echo '--     computed and compared with what is published, then rolled back, costs nothing.'
SELECT partition, rows_before, rows_after, added, removed, changed, reconciled,
	   (SELECT string_agg(format('%s: %s = %s', r->>'measure', r->>'target_value', r->>'source_value'), '; ')
		FROM jsonb_array_elements(reconcile) r) AS measures
FROM backfill_dry_run(:run);

\echo
\echo '-- 4.5 Run partition by partition.  Why this way: one committed transaction per day;'
\echo '--     it can be paused, killed and resumed, and readers see each day old or new.'
SET client_min_messages = notice;
CALL backfill_run(:run, 5);
SET client_min_messages = warning;
\echo '   ... (the other tasks, quietly)'
SELECT clock_timestamp() AS run_t0 \gset
CALL backfill_run(:run);
SELECT clock_timestamp() AS run_t1 \gset
SELECT status, tasks_total, tasks_done, tasks_failed, rows_written, elapsed FROM backfill_progress WHERE run_id = :run;
SELECT pg_temp.expect((SELECT status = 'done' AND tasks_done = tasks_total FROM backfill_progress WHERE run_id = :run),
					  'the run is done, every task once') AS check;

\echo
\echo '-- 4.6 Reconcile the whole range against the source.  Why after the run: each task'
\echo '--     reconciled its day; this proves the six months together.'
SELECT measure, target_value AS serving, source_value AS source, ok
FROM backfill_reconcile(format('SELECT * FROM fct_revenue WHERE order_date >= %L AND order_date < %L', :'bug_from', :'cur_month'),
						format('SELECT * FROM revenue_model WHERE order_date >= %L AND order_date < %L', :'bug_from', :'cur_month'),
						ARRAY['count(*)', 'sum(revenue)']);

\echo
\echo '-- 4.7 Refresh what depends on it.  Why after the reconcile: the mart is rebuilt once,'
\echo '--     from verified data (the run did it when its last task was done).'
SELECT r->>'name' AS refreshed, r->>'concurrently' AS concurrently, r->>'error' AS error
FROM backfill_runs, jsonb_array_elements(refreshed) r WHERE id = :run;
SELECT measure, ok FROM backfill_reconcile('TABLE mart_revenue_monthly',
	'SELECT date_trunc(''month'', order_date)::date AS month, count(*) AS orders, sum(revenue) AS revenue FROM revenue_model GROUP BY 1',
	ARRAY['sum(orders)', 'sum(revenue)']);

\echo
\echo '-- 4.8 Check what happened to what was already right.  Why last: a repair that changes'
\echo '--     a correct partition is a new bug.  This day had no refunds; this month was outside.'
SELECT :'clean_day' AS day_without_refunds, a.fingerprint_before, f.hash AS fingerprint_after, a.fingerprint_before = f.hash AS identical
FROM already_right a, backfill_fingerprint(format('fct_revenue_%s', to_char(:'clean_day'::date, 'YYYYMMDD'))::regclass) f;
SELECT count(*) AS partitions_outside_the_range, count(*) FILTER (WHERE (u->>'same')::boolean) AS unchanged
FROM backfill_runs, jsonb_array_elements(untouched_after) u WHERE id = :run;
SELECT pg_temp.expect((SELECT a.fingerprint_before = f.hash FROM already_right a,
						backfill_fingerprint(format('fct_revenue_%s', to_char(:'clean_day'::date, 'YYYYMMDD'))::regclass) f),
					  'the partition that was already right is bit for bit the same') AS check
UNION ALL
SELECT pg_temp.expect((SELECT bool_and((u->>'same')::boolean) FROM backfill_runs, jsonb_array_elements(untouched_after) u WHERE id = :run),
					  'every partition outside the range is unchanged')
UNION ALL
SELECT pg_temp.expect((SELECT bool_and(ok) FROM backfill_reconcile('TABLE fct_revenue', 'TABLE revenue_model', ARRAY['count(*)', 'sum(revenue)'], raise => false)),
					  'the serving table now agrees with the source, row count and revenue');

\echo
\echo '=================================================================================='
\echo ' 5. Summary'
\echo '=================================================================================='
SELECT count(*) AS partitions_in_the_range,
	   count(*) FILTER (WHERE fingerprint_before <> fingerprint_after) AS partitions_rewritten_with_changes,
	   count(*) FILTER (WHERE fingerprint_before = fingerprint_after) AS partitions_already_right,
	   sum(rows_after) AS rows_written,
	   round(extract(epoch FROM :'run_t1'::timestamptz - :'run_t0'::timestamptz)::numeric
			 + (SELECT sum(seconds) FROM backfill_tasks t WHERE t.run_id = :run AND t.task <= 5)::numeric, 2) || ' s' AS run_time
FROM backfill_tasks WHERE run_id = :run;
SELECT pg_temp.money(b.published) AS six_months_published, pg_temp.money(a.after) AS six_months_after_backfill,
	   pg_temp.money(t.truth) AS six_months_true, a.after = t.truth AS after_equals_truth
FROM totals_before b,
	 (SELECT sum(revenue) AS after FROM fct_revenue WHERE order_date >= :'bug_from' AND order_date < :'cur_month') a,
	 (SELECT sum(revenue) AS truth FROM revenue_model WHERE order_date >= :'bug_from' AND order_date < :'cur_month') t;
SELECT count(*) AS log_records_of_the_run, count(DISTINCT partition) AS partitions,
	   min(logged_at)::timestamp(0) AS first, max(logged_at)::timestamp(0) AS last
FROM backfill_log WHERE run_id = :run;
SELECT id, operation, partition, rows_before, rows_after, fingerprint_before = fingerprint_after AS unchanged
FROM backfill_log WHERE run_id = :run ORDER BY id LIMIT 3;
SELECT round(extract(epoch FROM clock_timestamp() - :'demo_start'::timestamptz)::numeric, 1) || ' s' AS demo_time;

-- the series of the chart, day by day
CREATE TABLE chart AS
SELECT p.day, p.revenue AS published, a.revenue AS after_append, f.revenue AS after_backfill, t.revenue AS truth
FROM published_daily p
JOIN append_daily a USING (day)
JOIN (SELECT order_date AS day, sum(revenue) AS revenue FROM fct_revenue GROUP BY 1) f USING (day)
JOIN (SELECT order_date AS day, sum(revenue) AS revenue FROM revenue_model GROUP BY 1) t USING (day);
