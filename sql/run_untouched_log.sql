-- sql/run_untouched_log.sql: a run's check of what lay outside its range credits a change only to a
-- record made after the plan, and never reads counters across a reset as unchanged.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS backfill;
RESET client_min_messages;
SET datestyle = 'ISO';
CREATE TABLE ru (id int NOT NULL, day date NOT NULL, v int) PARTITION BY RANGE (day);
CREATE TABLE ru_0301 PARTITION OF ru FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
CREATE TABLE ru_0302 PARTITION OF ru FOR VALUES FROM ('2026-03-02') TO ('2026-03-03');
INSERT INTO ru SELECT g, date '2026-03-01' + g % 2, g FROM generate_series(1, 200) g;

-- Last month: 2026-03-02 was replaced (every v 100 more), then undone.
SELECT log_id AS replaced FROM backfill_replace_partition('ru_0302',
	'SELECT id, day, v + 100 AS v FROM ru WHERE day >= $1 AND day < $2', keep_old => true) \gset
SELECT backfill_undo(:replaced) IS NOT NULL AS undone;

-- Today a run of 2026-03-01 compares fingerprints outside its range.  Meanwhile someone gives
-- 2026-03-02 by hand the very rows last month's replacement wrote: that record, older than
-- the plan, does not explain the change.
SELECT backfill_plan('ru', '2026-03-01', '2026-03-02', $$SELECT id, day, v FROM ru WHERE day >= $1 AND day < $2$$,
	options => '{"check_untouched": "full"}') AS full_run \gset
UPDATE ru SET v = v + 100 WHERE day = '2026-03-02';
SET client_min_messages = error;
CALL backfill_run(:full_run);
RESET client_min_messages;
SELECT e->>'partition' AS partition, e->'same' AS same, e->'logged_as' AS logged_as
FROM backfill_runs r, jsonb_array_elements(r.untouched_after) e WHERE r.id = :full_run;
SELECT untouched_changed FROM backfill_progress WHERE run_id = :full_run;

-- A run that compares the statistics' counters.  Someone resets 2026-03-02's counters, then
-- writes it as many times as the counters had counted before: the counters read the same,
-- but they were reset, so the partition cannot be said unchanged.
SELECT pg_stat_force_next_flush();
SELECT backfill_plan('ru', '2026-03-01', '2026-03-02', $$SELECT id, day, v FROM ru WHERE day >= $1 AND day < $2$$,
	options => '{"check_untouched": "counters"}') AS counters_run \gset
SELECT pg_stat_clear_snapshot();
SELECT n_tup_ins + n_tup_upd + n_tup_del AS planned_writes FROM pg_stat_all_tables WHERE relid = 'ru_0302'::regclass \gset
SELECT (e->>'writes')::bigint = :planned_writes AS plan_counted_them
FROM backfill_runs r, jsonb_array_elements(r.untouched) e WHERE r.id = :counters_run AND e->>'partition' = 'public.ru_0302';
SELECT pg_stat_reset_single_table_counters('ru_0302'::regclass);
SET regress.writes = :'planned_writes';
DO $$
DECLARE
	left_to_write bigint := current_setting('regress.writes')::bigint;
	n bigint;
BEGIN
	UPDATE ru SET v = v - 100 WHERE day = '2026-03-02';	-- the change
	GET DIAGNOSTICS n = ROW_COUNT;
	left_to_write := left_to_write - n;
	WHILE left_to_write > 0 LOOP
		UPDATE ru SET v = v WHERE day = '2026-03-02' AND id IN
			(SELECT id FROM ru WHERE day = '2026-03-02' ORDER BY id LIMIT left_to_write);
		GET DIAGNOSTICS n = ROW_COUNT;
		left_to_write := left_to_write - n;
	END LOOP;
END $$;
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
SELECT n_tup_ins + n_tup_upd + n_tup_del = :planned_writes AS counters_read_the_same
FROM pg_stat_all_tables WHERE relid = 'ru_0302'::regclass;
SET client_min_messages = error;
CALL backfill_run(:counters_run);
RESET client_min_messages;
SELECT e->>'partition' AS partition, e->'same' AS same
FROM backfill_runs r, jsonb_array_elements(r.untouched_after) e WHERE r.id = :counters_run;
DROP TABLE ru;
