-- demo/tour.sql: the README's five-minute tour, runnable as written in an empty database.
--
--   psql -X -d postgres -f demo/tour.sql
--
-- Every SQL block of the README's tour appears here verbatim (scripts/check_tour.sh checks
-- that, then runs this file in the empty postgres database of make test's cluster).  After
-- each step a line `tour: held: ...` states what the step proved; a claim that does not hold
-- stops the file with an error.  backfill_schedule needs pg_cron in this database: the
-- cluster must preload it and name this database in cron.database_name (see the README).
\set ON_ERROR_STOP 1
\set QUIET 1
\pset footer off
SET client_min_messages = warning;
SET datestyle = 'ISO';

CREATE FUNCTION pg_temp.expect(ok boolean, claim text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	IF ok IS NOT TRUE THEN
		RAISE EXCEPTION 'tour: FAIL: %', claim;
	END IF;
	RETURN 'tour: held: ' || claim;
END $$;

-- The warehouse of the tour (orders, refunds, fct_revenue, the fixed revenue_model): the
-- README's first block of the tour, kept in tour_setup.sql beside this file.
\ir tour_setup.sql

CREATE TEMP TABLE published AS SELECT sum(revenue) AS total FROM fct_revenue;

-- 1. Replace one day, atomically, in one line.
SELECT * FROM backfill_replace_partition('fct_revenue_20260315',
  'SELECT * FROM revenue_model WHERE order_date >= $1 AND order_date < $2');

SELECT pg_temp.expect(NOT EXISTS (SELECT FROM backfill_diff('TABLE fct_revenue_20260315',
		$$SELECT * FROM revenue_model WHERE order_date = '2026-03-15'$$, ARRAY['order_id'])),
	'2026-03-15 holds exactly the fixed model''s rows');
SELECT pg_temp.expect(
	(SELECT rows_after FROM backfill_log WHERE operation = 'replace' AND partition = 'public.fct_revenue_20260315') = 120,
	'the replacement is recorded in backfill_log, with its 120 rows');

-- 2. Before any backfill, ask whether running it twice leaves the table the same.
SELECT idempotent, verdict FROM backfill_probe_idempotency(
  $$INSERT INTO fct_revenue SELECT * FROM revenue_model WHERE order_date = '2026-03-16'$$,
  'fct_revenue', $$order_date = '2026-03-16'$$);
-- f | not idempotent: the second run added 120 rows (copies of rows the first run wrote); additive measures grow with every run

SELECT pg_temp.expect(NOT idempotent AND verdict LIKE 'not idempotent: the second run added 120 rows%',
	'appending a recomputed day is not idempotent: the second run adds its 120 rows again')
FROM backfill_probe_idempotency(
  $$INSERT INTO fct_revenue SELECT * FROM revenue_model WHERE order_date = '2026-03-16'$$,
  'fct_revenue', $$order_date = '2026-03-16'$$);
SELECT pg_temp.expect((SELECT count(*) FROM fct_revenue_20260316) = 120,
	'the probe rolled back both runs: 2026-03-16 still has its 120 rows');

-- 3. Merge on a key proven unique, writing only the rows that changed.
SELECT * FROM backfill_merge('fct_revenue', $$SELECT * FROM revenue_model WHERE order_date = '2026-03-16'$$,
  ARRAY['order_id'], scope => $$order_date = '2026-03-16'$$);
-- inserted 0 | updated 10 | deleted 0 | unchanged 110 | log_id 2

SELECT pg_temp.expect(
	(SELECT n_tup_upd FROM pg_stat_xact_user_tables WHERE relname = 'fct_revenue_20260316') = 10,
	'the merge updated the 10 refunded orders of 2026-03-16 and nothing else');

-- 4. What a dbt post-hook runs: it raises, and so fails the model, when the key is not
--    unique or the totals drift from the source.
SELECT backfill_assert_unique('fct_revenue', ARRAY['order_id']);
SELECT * FROM backfill_reconcile('TABLE fct_revenue_20260315', $$SELECT * FROM revenue_model WHERE order_date = '2026-03-15'$$,
  ARRAY['count(*)', 'sum(revenue)']);

SELECT pg_temp.expect(ok, 'fct_revenue_20260315 reconciles with the fixed model: ' || measure)
FROM backfill_reconcile('TABLE fct_revenue_20260315', $$SELECT * FROM revenue_model WHERE order_date = '2026-03-15'$$,
  ARRAY['count(*)', 'sum(revenue)']);

-- 5. Six months, one committed partition at a time, its code pinned.
SELECT backfill_plan('fct_revenue', '2026-01-01', '2026-07-01',
  'SELECT * FROM revenue_model WHERE order_date >= $1 AND order_date < $2',
  key => ARRAY['order_id'],
  options => '{"reconcile": ["count(*)", "sum(revenue)"], "pause_ms": 10}') AS run_id \gset
SELECT partition, rows_before, rows_after, added, removed, changed, reconciled FROM backfill_dry_run(:run_id);
-- public.fct_revenue_20260101 | 120 | 120 | 0 | 0 | 10 | t

SELECT pg_temp.expect(added = 0 AND removed = 0 AND changed = 10 AND reconciled,
	'the dry run of the first day shows its 10 refunded orders changed, and reconciles')
FROM backfill_dry_run(:run_id);

-- pg_cron calls the run every minute, 10 tasks a time, until it is done ...
CREATE EXTENSION IF NOT EXISTS pg_cron;
SELECT backfill_schedule(:run_id, '* * * * *', 10);
-- ... or run it now, in this session: it commits after every partition
CALL backfill_run(:run_id);
SELECT status, tasks_total, tasks_done, rows_written FROM backfill_progress WHERE run_id = :run_id;
-- done | 181 | 181 | 21720

-- (pg_cron may have started the run meanwhile, taking its one worker slot: this session's
-- CALL then stops, and pg_cron would do 10 tasks a minute.  Call it again until it is done,
-- for up to a minute: each call goes on as soon as pg_cron's call has let the slot go.)
DO $$
DECLARE
	run bigint := (SELECT id FROM backfill_runs ORDER BY id DESC LIMIT 1);
BEGIN
	FOR i IN 1 .. 600 LOOP
		EXIT WHEN (SELECT status FROM backfill_runs WHERE id = run) = 'done';
		CALL backfill_run(run);
		PERFORM pg_sleep(0.1);
	END LOOP;
END $$;
SELECT pg_temp.expect(status = 'done' AND tasks_done = 181, 'the run is done: 181 of 181 days')
FROM backfill_progress WHERE run_id = :run_id;
SELECT pg_temp.expect(NOT EXISTS (SELECT FROM backfill_diff('TABLE fct_revenue', 'TABLE revenue_model', ARRAY['order_id'])),
	'six months of fct_revenue now hold exactly the fixed model''s rows');
SELECT pg_temp.expect(
	(SELECT sum(revenue) FROM fct_revenue) = (SELECT sum(revenue) FROM revenue_model)
	AND (SELECT sum(revenue) FROM fct_revenue) < (SELECT total FROM published),
	'the published total came down to the true one: ' || (SELECT total FROM published) || ' -> ' ||
	(SELECT sum(revenue) FROM fct_revenue));
SELECT pg_temp.expect((SELECT count(*) FROM cron.job WHERE schedule <> '0 0 31 2 *') = 0,
	'the pg_cron job stopped itself when the run ended (parked on 31 February, a day that never comes)');
