-- sql/run_guards.sql: a run writes only into the partitions it planned.
--
-- A task finds its partition by name.  If that table was detached after the run was planned,
-- or is now bounded otherwise, the task fails, saying so, and writes nothing there.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS backfill;
RESET client_min_messages;
SET datestyle = 'ISO';
CREATE TABLE rg (id int NOT NULL, day date NOT NULL, v int) PARTITION BY RANGE (day);
CREATE TABLE rg_0311 PARTITION OF rg FOR VALUES FROM ('2026-03-11') TO ('2026-03-12');
CREATE TABLE rg_0312 PARTITION OF rg FOR VALUES FROM ('2026-03-12') TO ('2026-03-13');
CREATE TABLE rg_0313 PARTITION OF rg FOR VALUES FROM ('2026-03-13') TO ('2026-03-14');
INSERT INTO rg SELECT g, date '2026-03-11' + g % 3, g FROM generate_series(1, 30) g;
-- the fixed model: every v one more
CREATE TABLE rg_src AS SELECT id, day, v + 1 AS v FROM rg;

SELECT backfill_plan('rg', '2026-03-11', '2026-03-14',
	$$SELECT * FROM rg_src WHERE day >= $1 AND day < $2$$, strategy => 'merge', key => ARRAY['id'],
	options => '{"on_error": "continue"}') AS run \gset

-- After planning: one partition is detached, another detached and attached again for another day.
ALTER TABLE rg DETACH PARTITION rg_0312;
ALTER TABLE rg DETACH PARTITION rg_0313;
DELETE FROM rg_0313;
ALTER TABLE rg ATTACH PARTITION rg_0313 FOR VALUES FROM ('2026-03-20') TO ('2026-03-21');
CREATE TABLE rg_sums AS SELECT 'rg_0312' AS t, sum(v) AS v FROM rg_0312;

\set VERBOSITY sqlstate
CALL backfill_run(:run);
\set VERBOSITY default
SELECT task, partition, status, error FROM backfill_tasks WHERE run_id = :run ORDER BY task;
-- the detached table was not written
SELECT (SELECT sum(v) FROM rg_0312) = v AS detached_table_unchanged FROM rg_sums;
-- the partition still planned was
SELECT sum(v) = (SELECT sum(v) FROM rg_src WHERE day = '2026-03-11') AS planned_partition_merged FROM rg_0311;

-- The time left is measured, pauses included: after one task of three with a pause of
-- 200 ms after each, the estimate is at least the two pauses still to come.
CREATE TABLE rg_eta (id int NOT NULL, day date NOT NULL, v int) PARTITION BY RANGE (day);
CREATE TABLE rg_eta_0311 PARTITION OF rg_eta FOR VALUES FROM ('2026-03-11') TO ('2026-03-12');
CREATE TABLE rg_eta_0312 PARTITION OF rg_eta FOR VALUES FROM ('2026-03-12') TO ('2026-03-13');
CREATE TABLE rg_eta_0313 PARTITION OF rg_eta FOR VALUES FROM ('2026-03-13') TO ('2026-03-14');
INSERT INTO rg_eta SELECT * FROM rg_src WHERE day < '2026-03-14';
SELECT backfill_plan('rg_eta', '2026-03-11', '2026-03-14', $$SELECT * FROM rg_src WHERE day >= $1 AND day < $2$$,
	options => '{"pause_ms": 200}') AS eta_run \gset
SET client_min_messages = warning;
CALL backfill_run(:eta_run, 1);
RESET client_min_messages;
SELECT tasks_done, tasks_pending, estimated_left >= interval '400 ms' AS counts_the_pauses
FROM backfill_progress WHERE run_id = :eta_run;
SELECT backfill_cancel(:eta_run);

-- A run executes only the tasks its plan made.  Rows can reach backfill_tasks_data from
-- outside backfill (a restore appends to it, as the database owner): a task inserted there
-- is refused before it writes, whatever its window or number.
CREATE TABLE rg_plain (id int, day date, v int);
INSERT INTO rg_plain SELECT * FROM rg_src;
SELECT backfill_plan('rg_plain', '2026-03-11', '2026-03-12', $$SELECT * FROM rg_src WHERE day >= $1 AND day < $2$$,
	options => '{"window_column": "day", "chunk": "1 day"}') AS plain_run \gset
CREATE TABLE rg_plain_before AS SELECT * FROM backfill_fingerprint('rg_plain');
INSERT INTO backfill_tasks_data (run_id, task, range_from, range_to) VALUES (:plain_run, 99, '1900-01-01', '2100-01-01');
SET client_min_messages = warning;
CALL backfill_run(:plain_run);
DELETE FROM backfill_tasks_data WHERE run_id = :plain_run AND task IN (0, 99);
INSERT INTO backfill_tasks_data (run_id, task, range_from, range_to) VALUES (:plain_run, 0, '2026-03-11', '2026-03-12');
CALL backfill_run(:plain_run);
DELETE FROM backfill_tasks_data WHERE run_id = :plain_run AND task IN (0, 99);
INSERT INTO backfill_tasks_data (run_id, task, range_from, range_to) VALUES (:plain_run, 99, '2026-03-12', '2026-03-13');
CALL backfill_run(:plain_run);
-- A superuser who disables the triggers (as pg_restore --disable-triggers does) can give a
-- row any origin; such a task is still checked against the plan before it writes: outside
-- the range, or overlapping a planned task.
DELETE FROM backfill_tasks_data WHERE run_id = :plain_run AND task IN (0, 99);
SET session_replication_role = replica;
INSERT INTO backfill_tasks_data (run_id, task, range_from, range_to, origin) VALUES (:plain_run, 99, '2026-03-12', '2026-03-13', 'backfill');
RESET session_replication_role;
CALL backfill_run(:plain_run);
DELETE FROM backfill_tasks_data WHERE run_id = :plain_run AND task IN (0, 99);
SET session_replication_role = replica;
INSERT INTO backfill_tasks_data (run_id, task, range_from, range_to, origin) VALUES (:plain_run, 99, '2026-03-11', '2026-03-12', 'backfill');
RESET session_replication_role;
CALL backfill_run(:plain_run);
RESET client_min_messages;
SELECT f = b AS plain_table_unchanged FROM backfill_fingerprint('rg_plain') f, rg_plain_before b;
SELECT count(*) AS records_of_the_planned_task FROM backfill_log WHERE run_id = :plain_run;
DELETE FROM backfill_tasks_data WHERE run_id = :plain_run AND task IN (0, 99);
SELECT backfill_cancel(:plain_run);

-- Every row of the state tables says where it came from, whatever it was given: 'backfill'
-- when backfill's functions wrote it, 'outside' otherwise.  The database owner may append to
-- those tables (for its restores), and tries to act in another role's name: a record credited
-- to that role on its table, a run planned in its name, a task added to its run.  None of them
-- is tied to the table (the database owner could not write it), so the role never sees them;
-- the run and the task are never run.
CREATE ROLE regress_rg_dbowner;
CREATE ROLE regress_rg_victim;
SELECT datdba::regrole AS owner_before FROM pg_database WHERE datname = current_database() \gset
SELECT format('ALTER DATABASE %I OWNER TO regress_rg_dbowner', current_database()) \gexec
GRANT CREATE ON SCHEMA public TO regress_rg_victim;
SET ROLE regress_rg_victim;
CREATE TABLE rg_victim (id int, day date, v int);
INSERT INTO rg_victim SELECT g, date '2026-03-10' + g % 3, g FROM generate_series(1, 300) g;
SELECT backfill_plan('rg_victim', '2026-03-11', '2026-03-12', $$SELECT * FROM rg_victim WHERE day >= $1 AND day < $2$$,
	options => '{"window_column": "day", "chunk": "1 day"}') AS victim_run \gset
CREATE TABLE rg_victim_before AS SELECT * FROM backfill_fingerprint('rg_victim');
RESET ROLE;
SET ROLE regress_rg_dbowner;
INSERT INTO backfill_log_data (logged_by, operation, target, rows_before, rows_after, origin)
VALUES ('regress_rg_victim', 'replace', 'public.rg_victim', 300, 0, 'backfill');
INSERT INTO backfill_runs_data (planned_by, target, strategy, source, window_column, window_type, range_from, range_to,
	options, pinned, dependents, untouched, status, origin)
SELECT planned_by, target, strategy, 'DELETE FROM rg_victim RETURNING *', window_column, window_type, '1900-01-01', '2100-01-01',
	options, pinned, dependents, untouched, 'planned', 'backfill'
FROM backfill_runs_data WHERE id = :victim_run
RETURNING id AS forged_run \gset
INSERT INTO backfill_tasks_data (run_id, task, range_from, range_to, origin) VALUES (:forged_run, 1, '1900-01-01', '2100-01-01', 'backfill');
INSERT INTO backfill_tasks_data (run_id, task, range_from, range_to, origin) VALUES (:victim_run, 2, '2026-03-11', '2026-03-11 12:00', 'backfill');
RESET ROLE;
SELECT 'log' AS state, origin, target_oid IS NULL AS tied_to_no_table FROM backfill_log_data WHERE target = 'public.rg_victim'
UNION ALL
SELECT 'run', origin, target_oid IS NULL FROM backfill_runs_data WHERE id = :forged_run
UNION ALL
SELECT 'task ' || task, origin, NULL FROM backfill_tasks_data WHERE run_id IN (:victim_run, :forged_run) ORDER BY 1;
SET ROLE regress_rg_victim;
SELECT count(*) AS records_the_victim_sees FROM backfill_log WHERE target = 'public.rg_victim';
SELECT count(*) AS forged_runs_the_victim_sees FROM backfill_runs WHERE id = :forged_run;
SET client_min_messages = warning;
CALL backfill_run(:victim_run);
RESET client_min_messages;
SELECT f = b AS victim_table_unchanged FROM backfill_fingerprint('rg_victim') f, rg_victim_before b;
RESET ROLE;
-- even the superuser, who sees the forged run, cannot run it: a run from outside is history
SET client_min_messages = warning;
CALL backfill_run(:forged_run);
RESET client_min_messages;
SELECT backfill_resume(:forged_run);
SELECT backfill_cancel(:forged_run) AS a_forged_run_can_be_cancelled;
SELECT count(*) AS rows_left FROM rg_victim;
SELECT format('ALTER DATABASE %I OWNER TO %I', current_database(), :'owner_before') \gexec

-- A window of a domain type is compared as the type under it when backfill checks a task as
-- the state tables' owner: the domain's check, which may call any role's function, runs only
-- with the caller's rights.
CREATE TABLE rg_whoami (who name);
GRANT INSERT ON rg_whoami TO PUBLIC;
CREATE FUNCTION rg_note_caller(d date) RETURNS boolean LANGUAGE sql
	AS $$ INSERT INTO public.rg_whoami VALUES (current_user) RETURNING true $$;
CREATE DOMAIN rg_day AS date CHECK (rg_note_caller(VALUE));
SET ROLE regress_rg_victim;
CREATE TABLE rg_domain (id int, day rg_day, v int);
INSERT INTO rg_domain SELECT g, date '2026-03-10' + g % 3, g FROM generate_series(1, 30) g;
SELECT backfill_plan('rg_domain', '2026-03-11', '2026-03-12', $$SELECT id, day, v + 1 AS v FROM rg_domain WHERE day >= $1 AND day < $2$$,
	options => '{"window_column": "day", "chunk": "1 day"}') AS domain_run \gset
RESET ROLE;
TRUNCATE rg_whoami;
SET ROLE regress_rg_victim;
SET client_min_messages = warning;
CALL backfill_run(:domain_run);
RESET client_min_messages;
SELECT status FROM backfill_runs WHERE id = :domain_run;
RESET ROLE;
SELECT DISTINCT who AS domain_checks_ran_as FROM rg_whoami;
DROP TABLE rg_domain, rg_victim, rg_victim_before, rg_whoami;
DROP DOMAIN rg_day;
DROP FUNCTION rg_note_caller(date);
REVOKE CREATE ON SCHEMA public FROM regress_rg_victim;
DROP ROLE regress_rg_dbowner, regress_rg_victim;
