/* updates/backfill--1.0--1.1.sql: backfill 1.0 to 1.1 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION backfill UPDATE TO '1.1'" to load this file. \quit

-- 1.1's library refuses to run under another version's declarations (BackfillCheckVersion):
-- no object changes for that.

-- The session working a run: its pid and its last sign of life (src/run/worker.c).
ALTER TABLE @extschema@.backfill_runs_data ADD COLUMN worker_pid integer, ADD COLUMN heartbeat timestamptz;

CREATE OR REPLACE VIEW @extschema@.backfill_runs WITH (security_barrier) AS
	SELECT r.id, r.planned_at, r.planned_by, r.target, r.target_oid, r.strategy, r.source, r.key,
		r.window_column, r.window_type, r.range_from, r.range_to, r.options, r.pinned, r.dependents,
		CASE WHEN @extschema@.backfill_may_see_rows(r.target_oid) THEN r.untouched END AS untouched,
		r.status, r.started_at, r.finished_at,
		CASE WHEN @extschema@.backfill_may_see_rows(r.target_oid) THEN r.refreshed END AS refreshed,
		CASE WHEN @extschema@.backfill_may_see_rows(r.target_oid) THEN r.untouched_after END AS untouched_after,
		r.cron_job,
		CASE WHEN @extschema@.backfill_may_see_rows(r.target_oid) THEN r.error END AS error,
		r.origin, r.throttled, r.throttle_reason, r.worker_pid, r.heartbeat
	FROM @extschema@.backfill_runs_data r
	WHERE @extschema@.backfill_visible(r.target_oid);

-- backfill_progress: the sessions working a run, its heartbeat, whether its worker is gone,
-- what the worker does; counted from the state tables at the cost of what it shows.
DROP VIEW @extschema@.backfill_progress;
DROP FUNCTION @extschema@.backfill_run_progress();
CREATE FUNCTION @extschema@.backfill_run_progress()
	RETURNS TABLE(run_id bigint, target pg_catalog.text, strategy pg_catalog.text, status pg_catalog.text,
				  tasks_total bigint, tasks_done bigint, tasks_failed bigint, tasks_pending bigint,
				  rows_written bigint, started_at pg_catalog.timestamptz, elapsed pg_catalog.interval,
				  estimated_left pg_catalog.interval, refreshed pg_catalog.jsonb, untouched_changed bigint,
				  error pg_catalog.text, cron_status pg_catalog.text, cron_message pg_catalog.text,
				  throttled pg_catalog.interval, throttle_reason pg_catalog.text, tasks_skipped bigint,
				  untouched_checks pg_catalog.jsonb, workers pg_catalog.int4[], heartbeat pg_catalog.timestamptz,
				  orphaned pg_catalog.bool, activity pg_catalog.text, wal_left_bytes bigint)
	AS 'MODULE_PATHNAME', 'backfill_run_progress'
	LANGUAGE C STABLE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_run_progress() IS
	'The progress of every run: tasks by status, rows written, time elapsed and left, views refreshed, the last run of its pg_cron job, the time spent throttled and why, the partitions outside the range by how they are checked and what was found, the sessions working it, its last heartbeat, whether its worker is gone, what the worker does, and the WAL its pending tasks will write at the rate of those done';

CREATE VIEW @extschema@.backfill_progress AS
	SELECT * FROM @extschema@.backfill_run_progress();
COMMENT ON VIEW @extschema@.backfill_progress IS
	'The progress of every run';
GRANT SELECT ON @extschema@.backfill_progress TO PUBLIC;

-- What each task wrote: the WAL of its backend and the bytes of its relation after it
-- (run/task.c), beside what backfill_estimate says a task will write.
ALTER TABLE @extschema@.backfill_tasks_data ADD COLUMN wal_bytes bigint, ADD COLUMN bytes_after bigint;

CREATE OR REPLACE VIEW @extschema@.backfill_tasks WITH (security_barrier) AS
	SELECT t.run_id, t.task, t.partition, t.range_from, t.range_to, t.status, t.attempts, t.gave_way,
		CASE WHEN @extschema@.backfill_may_see_rows((SELECT r.target_oid FROM @extschema@.backfill_runs_data r WHERE r.id OPERATOR(pg_catalog.=) t.run_id))
			THEN t.rows_before END AS rows_before,
		CASE WHEN @extschema@.backfill_may_see_rows((SELECT r.target_oid FROM @extschema@.backfill_runs_data r WHERE r.id OPERATOR(pg_catalog.=) t.run_id))
			THEN t.rows_after END AS rows_after,
		CASE WHEN @extschema@.backfill_may_see_rows((SELECT r.target_oid FROM @extschema@.backfill_runs_data r WHERE r.id OPERATOR(pg_catalog.=) t.run_id))
			THEN t.fingerprint_before END AS fingerprint_before,
		CASE WHEN @extschema@.backfill_may_see_rows((SELECT r.target_oid FROM @extschema@.backfill_runs_data r WHERE r.id OPERATOR(pg_catalog.=) t.run_id))
			THEN t.fingerprint_after END AS fingerprint_after,
		CASE WHEN @extschema@.backfill_may_see_rows((SELECT r.target_oid FROM @extschema@.backfill_runs_data r WHERE r.id OPERATOR(pg_catalog.=) t.run_id))
			THEN t.reconcile END AS reconcile,
		t.log_id, t.started_at, t.finished_at, t.seconds, t.commit_ms, t.locked_ms,
		CASE WHEN @extschema@.backfill_may_see_rows((SELECT r.target_oid FROM @extschema@.backfill_runs_data r WHERE r.id OPERATOR(pg_catalog.=) t.run_id))
			THEN t.error END AS error,
		t.origin, t.wal_bytes, t.bytes_after
	FROM @extschema@.backfill_tasks_data t
	WHERE EXISTS (SELECT FROM @extschema@.backfill_runs_data r
				  WHERE r.id OPERATOR(pg_catalog.=) t.run_id AND @extschema@.backfill_visible(r.target_oid));

-- backfill_estimate: what the tasks left of a run will cost (src/run/estimate.c).
CREATE FUNCTION @extschema@.backfill_estimate(run_id bigint)
	RETURNS TABLE(task pg_catalog.int4, partition pg_catalog.text, how pg_catalog.text, rows bigint,
				  heap_bytes bigint, toast_bytes bigint, index_bytes bigint, wal_bytes bigint,
				  seconds double precision, locked_seconds double precision, extra_disk_bytes bigint)
	AS 'MODULE_PATHNAME', 'backfill_estimate'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_estimate(bigint) IS
	'What the tasks left of a run will cost: rows, bytes built, WAL, time, time under lock and disk, a few tasks measured in a subtransaction rolled back, the others scaled by their partitions'' rows or the planner''s row estimates; then the total';

-- source_server: the source of a direct replacement or merge computed on a standby
DROP FUNCTION @extschema@.backfill_replace_partition(pg_catalog.regclass, pg_catalog.text, pg_catalog.bool, pg_catalog.bool, pg_catalog.int4, pg_catalog.int4);
CREATE FUNCTION @extschema@.backfill_replace_partition(part pg_catalog.regclass, source pg_catalog.text,
	keep_old pg_catalog.bool DEFAULT false, allow_empty pg_catalog.bool DEFAULT false,
	lock_timeout_ms pg_catalog.int4 DEFAULT 1000, max_attempts pg_catalog.int4 DEFAULT 5,
	source_server pg_catalog.text DEFAULT NULL)
	RETURNS @extschema@.backfill_swap
	AS 'MODULE_PATHNAME', 'backfill_replace_partition'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_replace_partition(pg_catalog.regclass, pg_catalog.text, pg_catalog.bool, pg_catalog.bool, pg_catalog.int4, pg_catalog.int4, pg_catalog.text) IS
	'Recompute leaf partition part from source ($1, $2: its bounds), on standby source_server if given, and swap the new rows in atomically';
DROP FUNCTION @extschema@.backfill_merge(pg_catalog.regclass, pg_catalog.text, pg_catalog.text[], pg_catalog.text, pg_catalog.bool, pg_catalog.bool);
CREATE FUNCTION @extschema@.backfill_merge(target pg_catalog.regclass, source pg_catalog.text, key pg_catalog.text[],
	scope pg_catalog.text DEFAULT NULL, delete_missing pg_catalog.bool DEFAULT false,
	allow_empty pg_catalog.bool DEFAULT false, source_server pg_catalog.text DEFAULT NULL)
	RETURNS @extschema@.backfill_merge_result
	AS 'MODULE_PATHNAME', 'backfill_merge'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_merge(pg_catalog.regclass, pg_catalog.text, pg_catalog.text[], pg_catalog.text, pg_catalog.bool, pg_catalog.bool, pg_catalog.text) IS
	'Merge the rows of source (computed on standby source_server if given) into target on key, within scope, after proving the key unique on both sides';
