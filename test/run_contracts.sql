-- test/run_contracts.sql: backfill_plan and the functions around a run, given what they
-- must refuse and what they must keep.
--
-- A refused call raises the right SQLSTATE with a message that names the problem and
-- changes nothing: the rows of every table involved (fingerprinted), the rows of
-- backfill_runs, backfill_tasks and backfill_log, and no staging table is left.  A plan
-- tiles its range exactly with its tasks, pins the views and functions its source uses,
-- lists the materialized views above the target and fingerprints what lies outside.  A dry
-- run computes exactly what the task would write and leaves no trace.  (CALL backfill_run
-- commits, so it cannot run inside pgTAP's transaction: sql/run.sql and t/ run it.)
BEGIN;
SET LOCAL client_min_messages = warning;
SET LOCAL datestyle = 'ISO, YMD';
SELECT plan(212);

CREATE ROLE regress_rc_owner;
CREATE ROLE regress_rc_member IN ROLE regress_rc_owner;
CREATE ROLE regress_rc_other;
CREATE ROLE regress_rc_blind;
GRANT USAGE ON SCHEMA public TO regress_rc_owner, regress_rc_other, regress_rc_blind;

CREATE TABLE rc_orders (order_id bigint, day date, amount numeric(12,2), refunded boolean);
INSERT INTO rc_orders SELECT g, date '2026-03-09' + (g % 10), g % 97, g % 7 = 0
FROM generate_series(1, 3000) g;
CREATE FUNCTION rc_net(amount numeric, refunded boolean) RETURNS numeric
	LANGUAGE sql IMMUTABLE AS 'SELECT CASE WHEN refunded THEN 0 ELSE amount END';
CREATE VIEW rc_model AS SELECT order_id, day, rc_net(amount, refunded) AS revenue FROM rc_orders;
GRANT SELECT ON rc_orders, rc_model TO regress_rc_owner, regress_rc_other;

-- rc: one partition per day from 03-10 to 03-15, a DEFAULT partition for the rest
CREATE TABLE rc (order_id bigint NOT NULL, day date NOT NULL, revenue numeric(12,2)) PARTITION BY RANGE (day);
SELECT format('CREATE TABLE %I PARTITION OF rc FOR VALUES FROM (%L) TO (%L)', 'rc_' || to_char(d, 'MMDD'), d::date, d::date + 1)
FROM generate_series(date '2026-03-10', date '2026-03-15', interval '1 day') d \gexec
CREATE TABLE rc_default PARTITION OF rc DEFAULT;
INSERT INTO rc SELECT order_id, day, amount FROM rc_orders;
GRANT SELECT ON rc TO regress_rc_other;
CREATE VIEW rc_daily AS SELECT day, sum(revenue) AS revenue FROM rc GROUP BY day;
CREATE MATERIALIZED VIEW rc_mart AS SELECT * FROM rc_daily;
CREATE MATERIALIZED VIEW rc_mart2 AS SELECT sum(revenue) AS revenue FROM rc_mart;
CREATE UNIQUE INDEX ON rc_mart (day);
-- weekly partitions, a gap, LIST, HASH, sub-partitions, a plain table
CREATE TABLE rc_week (day date, revenue numeric) PARTITION BY RANGE (day);
CREATE TABLE rc_week_1 PARTITION OF rc_week FOR VALUES FROM ('2026-03-09') TO ('2026-03-16');
CREATE TABLE rc_week_2 PARTITION OF rc_week FOR VALUES FROM ('2026-03-16') TO ('2026-03-23');
CREATE TABLE rc_gap (day date, revenue numeric) PARTITION BY RANGE (day);
CREATE TABLE rc_gap_10 PARTITION OF rc_gap FOR VALUES FROM ('2026-03-10') TO ('2026-03-11');
CREATE TABLE rc_gap_12 PARTITION OF rc_gap FOR VALUES FROM ('2026-03-12') TO ('2026-03-13');
-- rc_open: open ends (MINVALUE, MAXVALUE), a gap, partitions attached out of their order
CREATE TABLE rc_open (order_id bigint NOT NULL, day date NOT NULL, revenue numeric(12,2)) PARTITION BY RANGE (day);
CREATE TABLE rc_open_new PARTITION OF rc_open FOR VALUES FROM ('2026-04-01') TO (MAXVALUE);
CREATE TABLE rc_open_0312 PARTITION OF rc_open FOR VALUES FROM ('2026-03-12') TO ('2026-03-13');
CREATE TABLE rc_open_0320 PARTITION OF rc_open FOR VALUES FROM ('2026-03-20') TO ('2026-03-21');
CREATE TABLE rc_open_old PARTITION OF rc_open FOR VALUES FROM (MINVALUE) TO ('2026-03-01');
CREATE TABLE rc_open_0315 PARTITION OF rc_open FOR VALUES FROM ('2026-03-15') TO ('2026-03-16');
CREATE TABLE rc_open_0311 PARTITION OF rc_open FOR VALUES FROM ('2026-03-11') TO ('2026-03-12');
CREATE TABLE rc_list (day date, revenue numeric) PARTITION BY LIST (day);
CREATE TABLE rc_list_1 PARTITION OF rc_list FOR VALUES IN ('2026-03-10');
CREATE TABLE rc_hash (day date, revenue numeric) PARTITION BY HASH (day);
CREATE TABLE rc_hash_0 PARTITION OF rc_hash FOR VALUES WITH (MODULUS 1, REMAINDER 0);
CREATE TABLE rc_sub (day date, revenue numeric) PARTITION BY RANGE (day);
CREATE TABLE rc_sub_1 PARTITION OF rc_sub FOR VALUES FROM ('2026-03-10') TO ('2026-03-12') PARTITION BY RANGE (day);
CREATE TABLE rc_two (day date, n int, revenue numeric) PARTITION BY RANGE (day, n);
CREATE TABLE rc_two_1 PARTITION OF rc_two FOR VALUES FROM ('2026-03-10', 0) TO ('2026-03-11', 0);
CREATE TABLE rc_flat (order_id bigint, day date, label text, revenue numeric(12,2));
INSERT INTO rc_flat SELECT order_id, day, 'x', amount FROM rc_orders;
CREATE TABLE rc_ts (at timestamptz NOT NULL, revenue numeric) PARTITION BY RANGE (at);
CREATE TABLE rc_ts_1 PARTITION OF rc_ts FOR VALUES FROM ('2026-03-10 00:00+00') TO ('2026-03-11 00:00+00');
CREATE TABLE rc_ts_2 PARTITION OF rc_ts FOR VALUES FROM ('2026-03-11 00:00+00') TO ('2026-03-12 00:00+00');
CREATE TABLE "rc odd ""name""" (day date NOT NULL, revenue numeric) PARTITION BY RANGE (day);
CREATE TABLE "rc part; DROP TABLE rc; --" PARTITION OF "rc odd ""name""" FOR VALUES FROM ('2026-03-10') TO ('2026-03-11');
CREATE TABLE "rc_ünïcødé_and_a_name_that_is_exactly_sixty_three_characters_xx" PARTITION OF "rc odd ""name"""
	FOR VALUES FROM ('2026-03-11') TO ('2026-03-12');
CREATE TABLE rc_owned (day date NOT NULL, revenue numeric) PARTITION BY RANGE (day);
CREATE TABLE rc_owned_10 PARTITION OF rc_owned FOR VALUES FROM ('2026-03-10') TO ('2026-03-11');
ALTER TABLE rc_owned OWNER TO regress_rc_owner;
ALTER TABLE rc_owned_10 OWNER TO regress_rc_owner;
-- foreign servers for options.source_server: none of them a standby of this server
CREATE EXTENSION postgres_fdw;
CREATE SERVER rc_nowhere FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '/nonexistent-backfill-socket-dir', dbname 'postgres');
CREATE USER MAPPING FOR CURRENT_USER SERVER rc_nowhere;
CREATE SERVER rc_unmapped FOREIGN DATA WRAPPER postgres_fdw OPTIONS (dbname 'postgres');
CREATE FOREIGN DATA WRAPPER rc_fdw;
CREATE SERVER rc_plain FOREIGN DATA WRAPPER rc_fdw;
CREATE SEQUENCE rc_seq;
CREATE FOREIGN DATA WRAPPER regress_rc_fdw;
CREATE SERVER regress_rc_server FOREIGN DATA WRAPPER regress_rc_fdw;
CREATE FOREIGN TABLE rc_foreign (day date) SERVER regress_rc_server;
CREATE TABLE rc_gone (day date);
CREATE TEMP TABLE gone AS SELECT 'rc_gone'::regclass::oid AS oid;
DROP TABLE rc_gone;

-- state(): everything a refused call could have changed
CREATE FUNCTION pg_temp.state() RETURNS text LANGUAGE sql AS $$
	SELECT concat_ws(' | ',
		(SELECT string_agg(format('%s=%s', c.relname, (backfill_fingerprint(c.oid)).hash), ',' ORDER BY c.relname)
		 FROM pg_class c WHERE c.relname LIKE 'rc%' AND c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace),
		(SELECT count(*) FROM backfill_runs), (SELECT string_agg(status || cron_job::text, ',' ORDER BY id) FROM backfill_runs),
		(SELECT count(*) FROM backfill_tasks), (SELECT string_agg(status || attempts, ',' ORDER BY run_id, task) FROM backfill_tasks),
		(SELECT count(*) FROM backfill_log))
$$;

\ir lib/refuses.psql

-- plans(target, from, to [, strategy, key, options, source]): a run id for that plan
CREATE FUNCTION pg_temp.plans(target regclass, lo text, hi text, strategy text DEFAULT 'replace', key text[] DEFAULT NULL,
	options jsonb DEFAULT '{}', source text DEFAULT 'SELECT * FROM rc_model WHERE day >= $1 AND day < $2')
RETURNS bigint LANGUAGE sql AS $$ SELECT backfill_plan(target, lo, hi, source, strategy, key, options) $$;

-- ---------------------------------------------------------------------------------------
-- backfill_plan: every argument, given what it must refuse
-- ---------------------------------------------------------------------------------------
SELECT pg_temp.refuses($$SELECT backfill_plan(NULL, '2026-03-11', '2026-03-13', 'TABLE rc_model')$$, '22004', '^target must not be NULL$', 'plan: target NULL');
SELECT pg_temp.refuses($$SELECT backfill_plan('rc', NULL, '2026-03-13', 'TABLE rc_model')$$, '22004', '^range_from must not be NULL$', 'plan: range_from NULL');
SELECT pg_temp.refuses($$SELECT backfill_plan('rc', '2026-03-11', NULL, 'TABLE rc_model')$$, '22004', '^range_to must not be NULL$', 'plan: range_to NULL');
SELECT pg_temp.refuses($$SELECT backfill_plan('rc', '2026-03-11', '2026-03-13', NULL)$$, '22004', '^source must not be NULL$', 'plan: source NULL');
SELECT pg_temp.refuses($$SELECT backfill_plan('rc', '2026-03-11', '2026-03-13', 'TABLE rc_model', NULL)$$, '22004', '^strategy must not be NULL$', 'plan: strategy NULL');
SELECT pg_temp.refuses($$SELECT backfill_plan('rc', '2026-03-11', '2026-03-13', 'TABLE rc_model', options => NULL)$$, '22004', '^options must not be NULL$', 'plan: options NULL');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', 'append')$$, '0A000', '^strategy "append" is not a backfill strategy$', 'plan: append is refused with the reason');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', 'upsert')$$, '22023', '^strategy must be .replace., .merge. or .auto., not "upsert"$', 'plan: unknown strategy');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', 'merge')$$, '22004', '^key must not be NULL$', 'plan: merge without a key');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', 'merge', '{nope}')$$, '42703', 'nope', 'plan: a key column that does not exist');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', 'merge', '{}')$$, '22023', 'key', 'plan: an empty key');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_model', '2026-03-11', '2026-03-13')$$, '42809', '^cannot use "rc_model" as target$', 'plan: a view');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_mart', '2026-03-11', '2026-03-13')$$, '42809', '^cannot use "rc_mart" as target$', 'plan: a materialized view');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_seq', '2026-03-11', '2026-03-13')$$, '42809', '^cannot use "rc_seq" as target$', 'plan: a sequence');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_foreign', '2026-03-11', '2026-03-13')$$, '42809', '^cannot use "rc_foreign" as target$', 'plan: a foreign table');
SELECT pg_temp.refuses(format($$SELECT pg_temp.plans(%s, '2026-03-11', '2026-03-13')$$, (SELECT oid FROM gone)), '42P01', 'does not exist', 'plan: a dropped table');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13')$$, '42501', '^must be owner of table public.rc to plan a run on it$', 'plan: a role that does not own the target', 'regress_rc_other');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_list', '2026-03-10', '2026-03-11')$$, '0A000', 'not partitioned by RANGE on one column', 'plan: a LIST-partitioned table');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_hash', '2026-03-10', '2026-03-11')$$, '0A000', 'not partitioned by RANGE on one column', 'plan: a HASH-partitioned table');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_two', '2026-03-10', '2026-03-11')$$, '0A000', 'not partitioned by RANGE on one column', 'plan: a two-column key');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_sub', '2026-03-10', '2026-03-12')$$, '0A000', 'its partition public.rc_sub_1 is itself partitioned', 'plan: sub-partitions');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-13', '2026-03-11')$$, '22023', '^range_from \(2026-03-13\) must be less than range_to \(2026-03-11\)$', 'plan: a reversed range');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-12', '2026-03-12')$$, '22023', 'must be less than range_to', 'plan: an empty range');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', 'soon', '2026-03-12')$$, '22007', 'invalid input syntax for type date: "soon"', 'plan: range_from not of the key type');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '42')$$, '22008|22007', 'date', 'plan: range_to not of the key type');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_week', '2026-03-10', '2026-03-16', source => 'SELECT day, revenue FROM rc_model WHERE day >= $1 AND day < $2')$$, '22023', '^range \[2026-03-10, 2026-03-16\) cuts through partition public.rc_week_1 \(FOR VALUES FROM \(.2026-03-09.\) TO \(.2026-03-16.\)\)$', 'plan: a range cutting through a partition names it and its bounds');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_week', '2026-03-09', '2026-03-20', source => 'SELECT day, revenue FROM rc_model WHERE day >= $1 AND day < $2')$$, '22023', 'cuts through partition public.rc_week_2', 'plan: a range ending inside a partition');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-20')$$, '22023', '^range \[2026-03-11, 2026-03-20\) reaches past the last partition in it, which ends at 2026-03-16$', 'plan: a range reaching past the last partition');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-01', '2026-03-12')$$, '22023', '^no partition of public.rc covers \[2026-03-01, 2026-03-10\)$', 'plan: a range starting before the first partition');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_gap', '2026-03-10', '2026-03-13', source => 'SELECT day, revenue FROM rc_model WHERE day >= $1 AND day < $2')$$, '22023', '^no partition of public.rc_gap covers \[2026-03-11, 2026-03-12\)$', 'plan: a gap between partitions');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2027-01-01', '2027-02-01')$$, '22023', '^no partition of public.rc lies in \[2027-01-01, 2027-02-01\)$', 'plan: a range with no partition (the DEFAULT partition is not a task)');
SELECT pg_temp.refuses($$SELECT backfill_plan('rc', '2026-03-11', '2026-03-13', '')$$, '22023', '^source must not be empty$', 'plan: an empty source');
SELECT pg_temp.refuses($$SELECT backfill_plan('rc', '2026-03-11', '2026-03-13', 'SELECT 1; SELECT 2')$$, '42601|0A000|22023|42809', 'source', 'plan: two statements as source');
SELECT pg_temp.refuses($$SELECT backfill_plan('rc', '2026-03-11', '2026-03-13', 'SELEC * FROM rc_model')$$, '42601', 'source', 'plan: a source with a syntax error');
SELECT pg_temp.refuses($$SELECT backfill_plan('rc', '2026-03-11', '2026-03-13', 'DELETE FROM rc_orders RETURNING *')$$, '42809', 'source', 'plan: a DELETE as source');
SELECT pg_temp.refuses($$SELECT backfill_plan('rc', '2026-03-11', '2026-03-13', 'WITH d AS (DELETE FROM rc_orders RETURNING *) SELECT order_id, day, amount AS revenue FROM d')$$, '42809', 'source', 'plan: a source that deletes in a WITH');
SELECT pg_temp.refuses($$SELECT backfill_plan('rc', '2026-03-11', '2026-03-13', 'SELECT * FROM rc_model WHERE day = $3')$$, '42P02', '^source refers to \$3, but only \$1 and \$2 are given$', 'plan: a source with $3');
SELECT pg_temp.refuses($$SELECT backfill_plan('rc', '2026-03-11', '2026-03-13', 'SELECT order_id, day, amount, revenue FROM rc_model JOIN rc_orders USING (order_id, day)')$$, '42703', '^source column "amount" is not a column of public.rc$', 'plan: a source column the target lacks');
SELECT pg_temp.refuses($$SELECT backfill_plan('rc', '2026-03-11', '2026-03-13', 'SELECT * FROM rc_nothing')$$, '42P01', 'rc_nothing', 'plan: a source reading a table that does not exist');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', 'merge', '{order_id}', source => 'SELECT day, revenue FROM rc_model WHERE day >= $1 AND day < $2')$$, '42703', '^source lacks key column "order_id"$', 'plan: merge, the source lacks the key');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', 'merge', '{order_id}', source => 'SELECT order_id, revenue FROM rc_model WHERE day >= $1 AND day < $2')$$, '42703', '^source lacks the window column "day"$', 'plan: merge, the source lacks the window column');
-- options
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '[]')$$, '22023', '^options must be a JSON object, not \[\]$', 'options: an array');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '"fast"')$$, '22023', '^options must be a JSON object', 'options: a string');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"max_worker": 2}')$$, '22023', '^options: unknown key "max_worker"$', 'options: an unknown key');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"max_workers": "2"}')$$, '22023', '^options.max_workers must be an integer between 1 and 64, not "2"$', 'options: max_workers a string');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"max_workers": 0}')$$, '22023', '^options.max_workers must be an integer between 1 and 64, not 0$', 'options: max_workers 0');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"max_workers": 1.5}')$$, '22023', '^options.max_workers must be an integer', 'options: max_workers 1.5');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"max_workers": 99999999999999999999}')$$, '22023', '^options.max_workers must be an integer', 'options: max_workers huge');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"pause_ms": -1}')$$, '22023', '^options.pause_ms must be an integer between 0 and 3600000, not -1$', 'options: pause_ms negative');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"max_attempts": 0}')$$, '22023', '^options.max_attempts must be', 'options: max_attempts 0');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"on_error": "maybe"}')$$, '22023', '^options.on_error must be "stop" or "continue", not "maybe"$', 'options: on_error unknown');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"refresh_dependents": "yes"}')$$, '22023', '^options.refresh_dependents must be true or false, not "yes"$', 'options: refresh_dependents a string');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"check_untouched": "some"}')$$, '22023', '^options.check_untouched must be "auto", "full", "counters", true \("full"\) or false, not "some"$', 'options: check_untouched another string');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"work_mem": "lots"}')$$, '22023', 'work_mem', 'options: work_mem the server does not accept');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"statement_timeout": true}')$$, '22023', '^options.statement_timeout must be a string or a number, not true$', 'options: statement_timeout a boolean');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"lock_timeout": "0"}')$$, '22023', '^options.lock_timeout must be between 1 ms and 10 min', 'options: lock_timeout 0');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"max_parallel_workers_per_gather": -3}')$$, '22023', 'max_parallel_workers_per_gather', 'options: max_parallel_workers_per_gather out of range');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"reconcile": "sum(revenue)"}')$$, '22023', '^options.reconcile must be an array of measures', 'options: reconcile not an array');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"reconcile": [1]}')$$, '22023', '^options.reconcile must hold strings, not 1$', 'options: reconcile holding a number');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"reconcile": ["sum(revenue))"]}')$$, '42601', 'options.reconcile', 'options: a reconcile measure closing a parenthesis');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"reconcile_tolerance": -1}')$$, '22023', '^options.reconcile_tolerance must be a number of at least 0, not -1$', 'options: negative tolerance');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"chunk": "1 day"}')$$, '22023', '^options.chunk is for plain tables$', 'options: chunk on a partitioned table');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"window_column": "order_id"}')$$, '22023', '^options.window_column must be the partition key "day" of public.rc, not "order_id"$', 'options: window_column other than the partition key');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"search_path": false}')$$, '22023', '^options.search_path must be a string or a number, not false$', 'options: search_path a boolean');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"max_replica_lag_ms": 0}')$$, '22023', '^options.max_replica_lag_ms must be an integer between 1 and 86400000, not 0$', 'options: max_replica_lag_ms 0');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"replicas": ["standby1"]}')$$, '22023', '^options.replicas needs options.max_replica_lag_ms$', 'options: replicas without max_replica_lag_ms');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"max_replica_lag_ms": 500, "replicas": "standby1"}')$$, '22023', '^options.replicas must be an array of standbys. application_name, not "standby1"$', 'options: replicas a string');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"max_replica_lag_ms": 500, "replicas": []}')$$, '22023', '^options.replicas must name at least one standby$', 'options: replicas empty');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"max_replica_lag_ms": 500, "replicas": [1]}')$$, '22023', '^options.replicas must hold strings, not 1$', 'options: replicas holding a number');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"max_replica_lag_ms": 500, "replicas": [""]}')$$, '22023', '^options.replicas must hold names of 1 to 63 bytes, not ""$', 'options: replicas holding an empty name');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"max_slot_lag_bytes": "64MB"}')$$, '22023', '^options.max_slot_lag_bytes must be an integer between 1 and 1125899906842624, not "64MB"$', 'options: max_slot_lag_bytes a string');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"throttle_query": ""}')$$, '22023', '^options.throttle_query must not be empty$', 'options: throttle_query empty');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"throttle_query": "SELECT 1"}')$$, '42804', '^options.throttle_query must return one boolean column$', 'options: throttle_query not a boolean');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"throttle_query": "SELECT true, false"}')$$, '42804', '^options.throttle_query must return one boolean column$', 'options: throttle_query of two columns');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"throttle_query": "SELEC true"}')$$, '42601', '^invalid options.throttle_query: syntax error at or near "SELEC"$', 'options: throttle_query a syntax error');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"throttle_query": "SELECT true; SELECT false"}')$$, '42601', '^options.throttle_query must be a single query, not 2 statements$', 'options: throttle_query two statements');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"throttle_query": "SELECT true FROM rc_nosuch"}')$$, '42P01', '^invalid options.throttle_query: relation "rc_nosuch" does not exist$', 'options: throttle_query reading a table that does not exist');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"critical_query": "DELETE FROM rc_orders RETURNING true"}')$$, '42809', '^options.critical_query must be a SELECT, VALUES or TABLE query$', 'options: critical_query a DELETE');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"critical_query": "WITH d AS (DELETE FROM rc_orders RETURNING 1) SELECT true FROM d"}')$$, '42809', '^options.critical_query must only read$', 'options: critical_query with a data-modifying WITH');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"critical_query": false}')$$, '22023', '^options.critical_query must be a string, not false$', 'options: critical_query a boolean');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"cost_limit": 0}')$$, '22023', '^options.cost_limit must be an integer between 1 and 10000, not 0$', 'options: cost_limit 0');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"cost_delay_ms": 5000}')$$, '22023', '^options.cost_delay_ms must be an integer between 1 and 1000, not 5000$', 'options: cost_delay_ms too long');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"throttle_timeout_ms": 10}')$$, '22023', '^options.throttle_timeout_ms must be an integer between 1000 and 604800000, not 10$', 'options: throttle_timeout_ms too short');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"source_server": 5}')$$, '22023', '^options.source_server must be a string, not 5$', 'options: source_server a number');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"source_server": "rc_none"}')$$, '42704', '^options.source_server: foreign server "rc_none" does not exist$', 'options: source_server unknown');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"source_server": "rc_plain"}')$$, '42809', '^options.source_server: foreign server "rc_plain" is of the foreign-data wrapper "rc_fdw", not postgres_fdw$', 'options: source_server of another wrapper');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"source_server": "rc_unmapped"}')$$, '42704', '^user mapping not found for', 'options: source_server without a user mapping');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"source_server": "rc_nowhere"}')$$, '08001', '^options.source_server: could not connect to server "rc_nowhere"$', 'options: source_server unreachable');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_owned', '2026-03-10', '2026-03-11', source => 'SELECT day, revenue FROM rc_model WHERE day >= $1 AND day < $2', options => '{"source_server": "rc_nowhere"}')$$, '42501', '^options.source_server: permission denied for foreign server rc_nowhere$', 'options: source_server without USAGE', 'regress_rc_owner');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"throttle_interval_ms": 0}')$$, '22023', '^options.throttle_interval_ms must be an integer between 10 and 60000, not 0$', 'options: throttle_interval_ms 0');
SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"cost_delay_ms": 10}') AS throttled_run \gset
SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13') AS plain_run \gset
SELECT is((SELECT options->>'cost_limit' || '/' || (options->>'cost_delay_ms') || '/' || (options->>'throttle_timeout_ms') || '/' || (options->>'throttle_interval_ms')
	FROM backfill_runs WHERE id = :throttled_run),
	'200/10/1800000/250', 'options: cost_delay_ms alone sets a budget of cost_limit 200, as VACUUM; the throttle waits up to 30 min, looking every 250 ms');
SELECT is((SELECT jsonb_build_array(options->'max_replica_lag_ms', options->'replicas', options->'max_slot_lag_bytes', options->'throttle_query', options->'critical_query', options->'cost_limit')
	FROM backfill_runs WHERE id = :plain_run),
	'[null, null, null, null, null, null]'::jsonb, 'options: without throttle options, a run is not throttled');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"unwatched": ["rc_0311"]}')$$, '22023', '^options.unwatched names rc_0311, not a partition of public.rc outside the range$', 'options: unwatched naming a partition of the range');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"unwatched": ["rc_orders"]}')$$, '22023', '^options.unwatched names rc_orders, not a partition of public.rc outside the range$', 'options: unwatched naming another table');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"unwatched": ["rc_nosuch"]}')$$, '42P01', '^options.unwatched: relation "rc_nosuch" does not exist$', 'options: unwatched naming no table');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"unwatched": ["\"rc_0310"]}')$$, '42602', '^options.unwatched: invalid name syntax$', 'options: unwatched naming no name');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"unwatched": "older"}')$$, '22023', '^options.unwatched must be "newer" or an array of partitions, not "older"$', 'options: unwatched another string');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_flat', '2026-03-11', '2026-03-13', options => '{"unwatched": "newer", "window_column": "day", "chunk": "1 day"}')$$, '22023', '^options.unwatched is for partitioned tables$', 'options: unwatched on a plain table');
SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"unwatched": ["rc_0314"]}') AS unwatched_run \gset
SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-13', options => '{"unwatched": "newer"}') AS newer_run \gset
SELECT is((SELECT string_agg(u->>'partition', ',' ORDER BY u->>'partition') FROM backfill_runs, jsonb_array_elements(untouched) u WHERE id = :unwatched_run),
	'public.rc_0310,public.rc_0313,public.rc_0315,public.rc_default', 'options: a partition named unwatched is not watched, every other one outside the range is');
SELECT is((SELECT string_agg(u->>'partition', ',' ORDER BY u->>'partition') FROM backfill_runs, jsonb_array_elements(untouched) u WHERE id = :newer_run),
	'public.rc_0310,public.rc_0313,public.rc_default', 'options: unwatched "newer" leaves out the partitions above the range''s upper neighbour, not the neighbour nor DEFAULT');
-- each partition's range, open ends and gaps included
SELECT pg_temp.plans('rc_open', '2026-03-11', '2026-03-13') AS open_run \gset
SELECT pg_temp.plans('rc_open', '2026-03-11', '2026-03-13', options => '{"unwatched": "newer"}') AS open_newer \gset
SELECT is((SELECT string_agg(partition || ' ' || range_from || ' ' || range_to, ',' ORDER BY task) FROM backfill_tasks WHERE run_id = :open_run)
		  || ' | ' || (SELECT string_agg(u->>'partition', ',' ORDER BY u->>'partition') FROM backfill_runs, jsonb_array_elements(untouched) u WHERE id = :open_run),
	'public.rc_open_0311 2026-03-11 2026-03-12,public.rc_open_0312 2026-03-12 2026-03-13 | public.rc_open_0315,public.rc_open_0320,public.rc_open_new,public.rc_open_old',
	'open ends: the tasks are the partitions inside the range; below it the MINVALUE partition, above it the others and the MAXVALUE one are outside');
SELECT is((SELECT string_agg(u->>'partition', ',' ORDER BY u->>'partition') FROM backfill_runs, jsonb_array_elements(untouched) u WHERE id = :open_newer),
	'public.rc_open_0315,public.rc_open_old', 'open ends: unwatched "newer" leaves out all above the upper neighbour across the gap, the MAXVALUE partition too');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_open', '2026-04-01', '2027-01-01')$$, '22023',
	'^range \[2026-04-01, 2027-01-01\) cuts through partition public.rc_open_new \(FOR VALUES FROM \(''2026-04-01''\) TO \(MAXVALUE\)\)$',
	'open ends: a range inside the MAXVALUE partition cuts through it');
-- plain tables
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_flat', '2026-03-11', '2026-03-13')$$, '22023', '^a run on a table that is not partitioned needs options.window_column and options.chunk$', 'plain: no window_column');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_flat', '2026-03-11', '2026-03-13', options => '{"window_column": "day"}')$$, '22023', 'needs options.window_column and options.chunk', 'plain: no chunk');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_flat', '2026-03-11', '2026-03-13', options => '{"window_column": "when", "chunk": "1 day"}')$$, '42703', '^options.window_column "when" is not a column of public.rc_flat$', 'plain: a window_column that does not exist');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_flat', '2026-03-11', '2026-03-13', options => '{"window_column": "day", "chunk": "a while"}')$$, '22007', 'interval', 'plain: a chunk that is not an interval');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_flat', '2026-03-11', '2026-03-13', options => '{"window_column": "day", "chunk": "-1 day"}')$$, '22023', '^options.chunk must be positive, not "-1 day"$', 'plain: a negative chunk');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_flat', '2026-03-11', '2026-03-13', options => '{"window_column": "day", "chunk": "0"}')$$, '22023', '^options.chunk must be positive', 'plain: a zero chunk');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_flat', 'a', 'b', options => '{"window_column": "label", "chunk": "1"}')$$, '0A000', '^options.window_column is of type text, which cannot be cut into chunks$', 'plain: a text window column');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_flat', '2026-03-11', '2026-03-13', options => '{"window_column": "day", "chunk": "1 hour"}')$$, '22023', '^options.chunk must be positive, not "1 hour"$', 'plain: a chunk too small to advance a date');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_flat', '2000-01-01', '2300-01-01', options => '{"window_column": "day", "chunk": "1 day"}')$$, '54000', '^range \[2000-01-01, 2300-01-01\) in chunks of 1 day makes more than 100000 tasks$', 'plain: too many chunks');
SELECT pg_temp.refuses($$SELECT pg_temp.plans('rc_flat', '2026-03-11', '2026-03-13', options => '{"window_column": "day", "chunk": "1 day"}', source => 'SELECT order_id, revenue FROM rc_model WHERE day >= $1 AND day < $2')$$, '42703', '^source lacks the window column "day"$', 'plain: the source lacks the window column');

-- ---------------------------------------------------------------------------------------
-- What a plan records
-- ---------------------------------------------------------------------------------------
CREATE TEMP TABLE r1 AS SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-14',
	options => '{"reconcile": ["count(*)", "sum(revenue)"]}') AS id;
SELECT is((SELECT status FROM backfill_runs WHERE id = (SELECT id FROM r1)), 'planned', 'plan: the run is planned');
SELECT is((SELECT array_agg(partition || ' ' || range_from || ' ' || range_to || ' ' || status ORDER BY task)
		   FROM backfill_tasks WHERE run_id = (SELECT id FROM r1)),
		  ARRAY['public.rc_0311 2026-03-11 2026-03-12 pending', 'public.rc_0312 2026-03-12 2026-03-13 pending',
				'public.rc_0313 2026-03-13 2026-03-14 pending'],
		  'plan: one pending task per partition of the range, in key order, tiling it');
SELECT is((SELECT array_agg(p->>'kind' || ' ' || (p->>'name') ORDER BY p->>'kind') FROM backfill_runs, jsonb_array_elements(pinned) p
		   WHERE id = (SELECT id FROM r1)),
		  ARRAY['function public.rc_net(numeric,boolean)', 'view public.rc_model'],
		  'plan: pins the view the source reads and the function that view calls');
SELECT ok((SELECT bool_and(p->>'definition' LIKE '%refunded%') FROM backfill_runs, jsonb_array_elements(pinned) p
		   WHERE id = (SELECT id FROM r1)), 'plan: the pinned definitions are the code');
SELECT is((SELECT dependents FROM backfill_runs WHERE id = (SELECT id FROM r1)),
		  '[{"name": "public.rc_mart", "concurrently": true}, {"name": "public.rc_mart2", "concurrently": false}]'::jsonb,
		  'plan: the materialized views above the target, through a view, in refresh order; concurrently where a unique index allows');
SELECT is((SELECT array_agg(u->>'partition' ORDER BY u->>'partition') FROM backfill_runs, jsonb_array_elements(untouched) u
		   WHERE id = (SELECT id FROM r1)),
		  ARRAY['public.rc_0310', 'public.rc_0314', 'public.rc_0315', 'public.rc_default'],
		  'plan: fingerprints every partition outside the range, DEFAULT included');
SELECT ok((SELECT bool_and(u->>'fingerprint' = (backfill_fingerprint((u->>'partition')::regclass)).hash)
		   FROM backfill_runs, jsonb_array_elements(untouched) u WHERE id = (SELECT id FROM r1)),
		  'plan: ... with their fingerprints as they are');
SELECT is((SELECT options->'reconcile' FROM backfill_runs WHERE id = (SELECT id FROM r1)), '["count(*)", "sum(revenue)"]'::jsonb,
		  'plan: keeps the options');
SELECT is((SELECT options->>'max_workers' || ' ' || (options->>'on_error') || ' ' || (options->>'max_attempts') || ' ' ||
				  (options->>'search_path') FROM backfill_runs WHERE id = (SELECT id FROM r1)),
		  '1 stop 3 "$user", public', 'plan: fills in the defaults, the search_path among them');
SELECT is((SELECT count(*) FROM backfill_log), 0::bigint, 'plan: writes no log record');

-- values read as the key's type, whatever the session's datestyle; timestamptz keys
SET LOCAL datestyle = 'SQL, MDY';
CREATE TEMP TABLE r2 AS SELECT pg_temp.plans('rc', '03/11/2026', '03/12/2026') AS id;
RESET datestyle;
SET LOCAL datestyle = 'ISO, YMD';
SELECT is((SELECT range_from || ' ' || range_to FROM backfill_runs WHERE id = (SELECT id FROM r2)), '2026-03-11 2026-03-12',
		  'plan: bounds in the session''s datestyle are stored in ISO');
SET LOCAL timezone = 'UTC';
CREATE TEMP TABLE r3 AS SELECT pg_temp.plans('rc_ts', '2026-03-10 00:00+00', '2026-03-12 00:00+00',
	source => 'SELECT day::timestamptz AS at, revenue FROM rc_model WHERE day >= $1 AND day < $2') AS id;
SELECT is((SELECT array_agg(range_from ORDER BY task) FROM backfill_tasks WHERE run_id = (SELECT id FROM r3)),
		  ARRAY['2026-03-10 00:00:00+00', '2026-03-11 00:00:00+00'], 'plan: timestamptz partitions');
-- identifiers with quotes, spaces, semicolons, unicode, 63 characters
CREATE TEMP TABLE r4 AS SELECT pg_temp.plans('"rc odd ""name"""', '2026-03-10', '2026-03-12',
	source => 'SELECT day, revenue FROM rc_model WHERE day >= $1 AND day < $2') AS id;
SELECT is((SELECT array_agg(partition ORDER BY task) FROM backfill_tasks WHERE run_id = (SELECT id FROM r4)),
		  (SELECT array_agg(format('public.%I', c.relname) ORDER BY pg_get_expr(c.relpartbound, c.oid))
		   FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '"rc odd ""name"""'::regclass),
		  'plan: partition names with quotes, spaces, semicolons, unicode and 63 characters, quoted');
SELECT ok((SELECT bool_and(to_regclass(partition) IS NOT NULL) FROM backfill_tasks WHERE run_id = (SELECT id FROM r4)),
		  'plan: ... and they name the partitions');
-- chunks of a plain table
CREATE TEMP TABLE r5 AS SELECT pg_temp.plans('rc_flat', '2026-03-11', '2026-03-16', 'merge', '{order_id}',
	'{"window_column": "day", "chunk": "2 days"}', 'SELECT order_id, day, revenue FROM rc_model WHERE day >= $1 AND day < $2') AS id;
SELECT is((SELECT array_agg(coalesce(partition, '-') || ' ' || range_from || ' ' || range_to ORDER BY task)
		   FROM backfill_tasks WHERE run_id = (SELECT id FROM r5)),
		  ARRAY['- 2026-03-11 2026-03-13', '- 2026-03-13 2026-03-15', '- 2026-03-15 2026-03-16'],
		  'plan: a plain table in chunks, the last one cut at range_to');
SELECT is((SELECT jsonb_array_length(untouched) || ' ' || (untouched->0->>'rows') FROM backfill_runs WHERE id = (SELECT id FROM r5)),
		  '1 ' || (SELECT count(*) FROM rc_flat WHERE NOT (day >= '2026-03-11' AND day < '2026-03-16')),
		  'plan: a plain table''s rows outside the range are fingerprinted');
-- a member of the owner's role may plan
SELECT ok(pg_temp.plans('rc_owned', '2026-03-10', '2026-03-11', source => 'SELECT day, revenue FROM rc_model WHERE day >= $1 AND day < $2') > 0,
		  'plan: the owner may plan') FROM (SELECT set_config('role', 'regress_rc_owner', true)) s;
RESET ROLE;
SELECT ok(pg_temp.plans('rc_owned', '2026-03-10', '2026-03-11', source => 'SELECT day, revenue FROM rc_model WHERE day >= $1 AND day < $2') > 0,
		  'plan: a member of the owner''s role may plan') FROM (SELECT set_config('role', 'regress_rc_member', true)) s;
RESET ROLE;
CREATE TEMP TABLE r6 AS SELECT max(id) AS id FROM backfill_runs WHERE target = 'public.rc_owned';

-- ---------------------------------------------------------------------------------------
-- Dry run: exactly what the task would write, and no trace
-- ---------------------------------------------------------------------------------------
CREATE TEMP TABLE before_dry AS SELECT pg_temp.state() AS s;
CREATE TEMP TABLE dry AS SELECT * FROM backfill_dry_run((SELECT id FROM r1));
SELECT is(pg_temp.state(), (SELECT s FROM before_dry), 'dry run: nothing changed, no log record, no task touched');
SELECT is((SELECT count(*) FROM pg_class WHERE relname LIKE 'backfill\_stage\_%'), 0::bigint, 'dry run: no staging table left');
SELECT is((SELECT task || ' ' || partition FROM dry), '1 public.rc_0311', 'dry run: the first pending task by default');
SELECT is((SELECT fingerprint_before FROM dry), (backfill_fingerprint('rc_0311')).hash, 'dry run: fingerprint_before is the live partition''s');
SELECT is((SELECT fingerprint_after FROM dry),
		  (SELECT fingerprint_after FROM backfill_replace_partition('rc_0311',
			'SELECT * FROM rc_model WHERE day >= $1 AND day < $2'), (SELECT 1) x),
		  'dry run: fingerprint_after is what the replacement writes');
SELECT is((SELECT added || ' ' || removed || ' ' || (changed IS NULL)::text FROM dry),
		  (SELECT count(*) FILTER (WHERE refunded) || ' ' || count(*) FILTER (WHERE refunded) || ' true'
		   FROM rc_orders WHERE day = '2026-03-11' AND amount <> 0),
		  'dry run: without a key, added and removed rows count the refunded orders; changed needs a key');
SELECT is((SELECT reconciled FROM dry), true, 'dry run: the task reconciles');
SELECT is((SELECT jsonb_agg(r->>'measure' ORDER BY r->>'measure') FROM dry, jsonb_array_elements(reconcile) r),
		  '["count(*)", "sum(revenue)"]'::jsonb, 'dry run: with the run''s measures');
SELECT is((SELECT task FROM backfill_dry_run((SELECT id FROM r1), 3)), 3, 'dry run: a task by number');
CREATE TEMP TABLE dry5 AS SELECT * FROM backfill_dry_run((SELECT id FROM r5));
SELECT is((SELECT added || ' ' || removed || ' ' || changed FROM dry5),
		  (SELECT '0 0 ' || count(*) FROM rc_orders WHERE day >= '2026-03-11' AND day < '2026-03-13' AND refunded AND amount <> 0),
		  'dry run of a merge: with the key, the refunded orders are changed rows');
CREATE TEMP TABLE diff5 AS SELECT d.*, to_jsonb(d) AS j FROM backfill_diff(
	$$SELECT order_id, day, revenue FROM ONLY rc_flat WHERE day >= '2026-03-11' AND day < '2026-03-13'$$,
	$$SELECT order_id, day, revenue FROM rc_model WHERE day >= '2026-03-11' AND day < '2026-03-13'$$, '{order_id}') d;
SELECT is((SELECT added || ' ' || removed || ' ' || changed FROM dry5),
		  (SELECT count(*) FILTER (WHERE change = 'added') || ' ' || count(*) FILTER (WHERE change = 'removed') || ' '
				  || count(*) FILTER (WHERE change = 'changed') FROM diff5),
		  'dry run of a merge: its counts are backfill_diff''s over the chunk and the bound source');
SELECT is((SELECT jsonb_array_length(sample) FROM dry5), (SELECT least(count(*), 5)::int FROM diff5),
		  'dry run of a merge: its sample holds the first five rows of the diff');
SELECT is((SELECT count(*) FROM dry5, jsonb_array_elements(sample) e WHERE e NOT IN (SELECT j FROM diff5)), 0::bigint,
		  'dry run of a merge: each row of its sample is a row backfill_diff returns');
SELECT ok((SELECT updated > 0 FROM backfill_merge('rc_flat', $$SELECT order_id, day, revenue FROM rc_model WHERE day >= '2026-03-11' AND day < '2026-03-13'$$,
							   '{order_id}', $$day >= '2026-03-11' AND day < '2026-03-13'$$)), 'premise: the merge of the first chunk updates rows');
SELECT is((SELECT fingerprint_after FROM dry5),
		  (backfill_fingerprint('rc_flat', $$day >= '2026-03-11' AND day < '2026-03-13'$$)).hash,
		  'dry run of a merge: fingerprint_after is what the merge writes');
SELECT is(pg_temp.state() <> (SELECT s FROM before_dry), true, 'premise: the replacement and the merge above did write');

-- ---------------------------------------------------------------------------------------
-- Status changes, rights, and the other functions
-- ---------------------------------------------------------------------------------------
SELECT pg_temp.refuses($$SELECT backfill_pause(NULL)$$, '22004', '^run_id must not be NULL$', 'pause: NULL');
SELECT pg_temp.refuses($$SELECT backfill_resume(NULL)$$, '22004', '^run_id must not be NULL$', 'resume: NULL');
SELECT pg_temp.refuses($$SELECT backfill_cancel(NULL)$$, '22004', '^run_id must not be NULL$', 'cancel: NULL');
SELECT pg_temp.refuses($$SELECT backfill_retry(NULL, 1)$$, '22004', '^run_id must not be NULL$', 'retry: run NULL');
SELECT pg_temp.refuses(format($$SELECT backfill_retry(%s, NULL)$$, (SELECT id FROM r1)), '22004', '^task must not be NULL$', 'retry: task NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_dry_run(NULL)$$, '22004', '^run_id must not be NULL$', 'dry run: NULL');
SELECT pg_temp.refuses($$SELECT backfill_schedule(NULL)$$, '22004', '^run_id must not be NULL$', 'schedule: NULL');
SELECT pg_temp.refuses($$SELECT backfill_pause(987654)$$, '22023', '^run_id 987654 is not a run of backfill_runs$', 'pause: no such run');
SELECT pg_temp.refuses($$SELECT * FROM backfill_dry_run(987654)$$, '22023', '^run_id 987654 is not a run', 'dry run: no such run');
SELECT pg_temp.refuses(format($$SELECT * FROM backfill_dry_run(%s, 99)$$, (SELECT id FROM r1)), '22023', '^run [0-9]+ has no task 99$', 'dry run: no such task');
SELECT pg_temp.refuses(format($$SELECT backfill_retry(%s, 1)$$, (SELECT id FROM r1)), '22023', '^run [0-9]+ has no finished, failed or skipped task 1$', 'retry: a pending task');
SELECT pg_temp.refuses($$SELECT backfill_skip(NULL, 1, 'gone')$$, '22004', '^run_id must not be NULL$', 'skip: run NULL');
SELECT pg_temp.refuses(format($$SELECT backfill_skip(%s, NULL, 'gone')$$, (SELECT id FROM r1)), '22004', '^task must not be NULL$', 'skip: task NULL');
SELECT pg_temp.refuses(format($$SELECT backfill_skip(%s, 1, NULL)$$, (SELECT id FROM r1)), '22004', '^reason must not be NULL$', 'skip: reason NULL');
SELECT pg_temp.refuses(format($$SELECT backfill_skip(%s, 1, ' ')$$, (SELECT id FROM r1)), '22023', '^reason must not be empty$', 'skip: an empty reason');
SELECT pg_temp.refuses(format($$SELECT backfill_skip(%s, 99, 'gone')$$, (SELECT id FROM r1)), '22023', '^run [0-9]+ has no pending or failed task 99$', 'skip: no such task');
SELECT pg_temp.refuses(format($$SELECT backfill_schedule(%s)$$, (SELECT id FROM r1)), '42704', '^pg_cron runs in database "postgres", not in this one$', 'schedule: in a database other than pg_cron''s');
SELECT pg_temp.refuses(format($$SELECT backfill_schedule(%s, '* * * * *', 0)$$, (SELECT id FROM r1)), '22023', '^tasks_per_tick must be at least 1$', 'schedule: tasks_per_tick 0');
SELECT pg_temp.refuses(format($$CALL backfill_run(%s)$$, (SELECT id FROM r1)), '2D000', '^backfill_run must be called with CALL, outside a transaction block$', 'run: inside a transaction block');
SELECT pg_temp.refuses(format($$CALL backfill_run(%s, 0)$$, (SELECT id FROM r1)), '22023', '^max_tasks must be at least 1, or NULL for all$', 'run: max_tasks 0');
SELECT pg_temp.refuses($$CALL backfill_run(NULL)$$, '22004', '^run_id must not be NULL$', 'run: NULL');
SELECT pg_temp.refuses(format($$SELECT backfill_pause(%s)$$, (SELECT id FROM r1)), '42501', '^must be owner of table public.rc to pause run [0-9]+$', 'pause: not the owner', 'regress_rc_other');
SELECT pg_temp.refuses(format($$SELECT backfill_resume(%s)$$, (SELECT id FROM r1)), '42501', '^must be owner of table public.rc to resume run', 'resume: not the owner', 'regress_rc_other');
SELECT pg_temp.refuses(format($$SELECT backfill_cancel(%s)$$, (SELECT id FROM r1)), '42501', '^must be owner of table public.rc to cancel run', 'cancel: not the owner', 'regress_rc_other');
SELECT pg_temp.refuses(format($$SELECT backfill_retry(%s, 1)$$, (SELECT id FROM r1)), '42501', '^must be owner of table public.rc to retry run', 'retry: not the owner', 'regress_rc_other');
SELECT pg_temp.refuses(format($$SELECT backfill_skip(%s, 1, 'gone')$$, (SELECT id FROM r1)), '42501', '^must be owner of table public.rc to skip run', 'skip: not the owner', 'regress_rc_other');
SELECT pg_temp.refuses(format($$SELECT * FROM backfill_dry_run(%s)$$, (SELECT id FROM r1)), '42501', '^must be owner of table public.rc to dry-run run', 'dry run: not the owner', 'regress_rc_other');
SELECT pg_temp.refuses(format($$SELECT backfill_schedule(%s)$$, (SELECT id FROM r1)), '42501', '^must be owner of table public.rc to schedule run', 'schedule: not the owner', 'regress_rc_other');
SELECT pg_temp.refuses(format($$CALL backfill_run(%s)$$, (SELECT id FROM r1)), '42501|2D000', '', 'run: not the owner', 'regress_rc_other');
SELECT pg_temp.refuses($$UPDATE backfill_runs SET status = 'done'$$, '42501', 'permission denied', 'state: a role cannot change a run', 'regress_rc_other');
SELECT pg_temp.refuses($$INSERT INTO backfill_tasks (run_id, task, range_from, range_to) SELECT id, 99, 'a', 'b' FROM backfill_runs LIMIT 1$$, '42501', 'permission denied', 'state: a role cannot add a task', 'regress_rc_other');
SELECT pg_temp.refuses($$DELETE FROM backfill_tasks$$, '42501', 'permission denied', 'state: a role cannot delete tasks', 'regress_rc_other');

SELECT is(backfill_pause((SELECT id FROM r1)), 'paused', 'pause: a planned run pauses');
SELECT pg_temp.refuses(format($$SELECT backfill_pause(%s)$$, (SELECT id FROM r1)), '55000', '^run [0-9]+ is paused: it cannot be paused$', 'pause: twice');
SELECT is(backfill_resume((SELECT id FROM r1)), 'running', 'resume: a paused run runs');
SELECT pg_temp.refuses(format($$SELECT backfill_resume(%s)$$, (SELECT id FROM r1)), '55000', '^run [0-9]+ is running: it cannot be resumed$', 'resume: a running run');
SELECT is(backfill_cancel((SELECT id FROM r1)), 'cancelled', 'cancel: a running run');
SELECT pg_temp.refuses(format($$SELECT backfill_cancel(%s)$$, (SELECT id FROM r1)), '55000', '^run [0-9]+ is cancelled: it cannot be cancelled$', 'cancel: twice');
SELECT pg_temp.refuses(format($$SELECT backfill_resume(%s)$$, (SELECT id FROM r1)), '55000', 'cancelled: it cannot be resumed', 'resume: a cancelled run');
SELECT pg_temp.refuses(format($$SELECT backfill_retry(%s, 1)$$, (SELECT id FROM r1)), '55000', 'cancelled: it cannot be retried', 'retry: a cancelled run');
SELECT pg_temp.refuses(format($$SELECT backfill_skip(%s, 1, 'gone')$$, (SELECT id FROM r1)), '55000', 'cancelled: it cannot be skipped', 'skip: a cancelled run');
SELECT pg_temp.refuses(format($$SELECT backfill_schedule(%s)$$, (SELECT id FROM r1)), '55000|42704', '', 'schedule: a cancelled run');
SELECT is((SELECT count(*) FROM backfill_tasks WHERE run_id = (SELECT id FROM r1) AND status = 'pending'), 3::bigint,
		  'cancel: the tasks stay as they were');
SELECT is(backfill_pause((SELECT id FROM r6)), 'paused', 'pause: a member of the owner''s role may') FROM (SELECT set_config('role', 'regress_rc_member', true)) s;
RESET ROLE;

-- the pinned code: a changed function or a dropped view stops a dry run (and a run) by name
CREATE OR REPLACE FUNCTION rc_net(amount numeric, refunded boolean) RETURNS numeric
	LANGUAGE sql IMMUTABLE AS 'SELECT amount';
SELECT pg_temp.refuses(format($$SELECT * FROM backfill_dry_run(%s)$$, (SELECT id FROM r2)), '55000',
	'^function public.rc_net\(numeric,boolean\) changed since run [0-9]+ was planned$', 'pinned: a changed function is named');
CREATE OR REPLACE FUNCTION rc_net(amount numeric, refunded boolean) RETURNS numeric
	LANGUAGE sql IMMUTABLE AS 'SELECT CASE WHEN refunded THEN 0 ELSE amount END';
SELECT ok((SELECT count(*) FROM backfill_dry_run((SELECT id FROM r2))) = 1, 'pinned: back as planned, the dry run works');
ALTER VIEW rc_model RENAME TO rc_model_v2;
SELECT pg_temp.refuses(format($$SELECT * FROM backfill_dry_run(%s)$$, (SELECT id FROM r2)), '55000',
	'^view public.rc_model was renamed to public.rc_model_v2 since run [0-9]+ was planned$', 'pinned: a view renamed away from the name the source uses is named');
ALTER VIEW rc_model_v2 RENAME TO rc_model;

-- the pinned code is what the run executes, not only what the source names: a function a
-- function calls (through a BEGIN ATOMIC body and a PL/pgSQL body), an aggregate's transition
-- function, an operator's function, a domain's check, and a name that finds another function
-- once a "$user" schema exists; each change blocks the run, named, and undoing it unblocks it
CREATE FUNCTION rc_rate() RETURNS numeric LANGUAGE sql IMMUTABLE AS 'SELECT 1.0';
CREATE FUNCTION rc_scaled(v numeric) RETURNS numeric LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN RETURN v * rc_rate(); END $$;
CREATE FUNCTION rc_atomic(v numeric) RETURNS numeric LANGUAGE sql IMMUTABLE BEGIN ATOMIC SELECT rc_scaled(v); END;
CREATE FUNCTION rc_step(s numeric, v numeric) RETURNS numeric LANGUAGE sql IMMUTABLE AS 'SELECT coalesce(s, 0) + v';
CREATE AGGREGATE rc_total(numeric) (SFUNC = rc_step, STYPE = numeric);
CREATE FUNCTION rc_plus(a numeric, b numeric) RETURNS numeric LANGUAGE sql IMMUTABLE AS 'SELECT a + b';
CREATE OPERATOR #+# (LEFTARG = numeric, RIGHTARG = numeric, FUNCTION = rc_plus);
CREATE DOMAIN rc_amount AS numeric CONSTRAINT rc_amount_check CHECK (VALUE >= 0);
CREATE TEMP TABLE r7 AS SELECT pg_temp.plans('rc', '2026-03-11', '2026-03-12', source =>
	'SELECT order_id, day, CAST(rc_atomic(rc_total(amount) #+# 0) AS rc_amount) AS revenue
	 FROM rc_orders WHERE day >= $1 AND day < $2 GROUP BY order_id, day') AS id;
SELECT is((SELECT array_agg(p->>'kind' || ' ' || (p->>'name') ORDER BY p->>'kind' COLLATE "C", p->>'name' COLLATE "C")
		   FROM backfill_runs, jsonb_array_elements(pinned) p WHERE id = (SELECT id FROM r7)),
		  ARRAY['domain public.rc_amount', 'function public.rc_atomic(numeric)', 'function public.rc_plus(numeric,numeric)',
				'function public.rc_rate()', 'function public.rc_scaled(numeric)', 'function public.rc_step(numeric,numeric)',
				'function public.rc_total(numeric)', 'name "rc_rate" called by public.rc_scaled(numeric)',
				'operator public.#+#(numeric,numeric)'],
		  'pinned: the code the source reaches through bodies, the aggregate, the operator and the domain');
SELECT ok((SELECT count(*) FROM backfill_dry_run((SELECT id FROM r7))) > 0, 'pinned: as planned, the dry run works');
CREATE OR REPLACE FUNCTION rc_rate() RETURNS numeric LANGUAGE sql IMMUTABLE AS 'SELECT 2.0';
SELECT pg_temp.refuses(format($$SELECT * FROM backfill_dry_run(%s)$$, (SELECT id FROM r7)), '55000',
	'^function public.rc_rate\(\) changed since run [0-9]+ was planned$', 'pinned: a function called by a PL function called by a BEGIN ATOMIC function');
CREATE OR REPLACE FUNCTION rc_rate() RETURNS numeric LANGUAGE sql IMMUTABLE AS 'SELECT 1.0';
CREATE OR REPLACE FUNCTION rc_step(s numeric, v numeric) RETURNS numeric LANGUAGE sql IMMUTABLE AS 'SELECT coalesce(s, 0) + 2 * v';
SELECT pg_temp.refuses(format($$SELECT * FROM backfill_dry_run(%s)$$, (SELECT id FROM r7)), '55000',
	'^function public.rc_step\(numeric,numeric\) changed since run [0-9]+ was planned$', 'pinned: an aggregate''s transition function');
CREATE OR REPLACE FUNCTION rc_step(s numeric, v numeric) RETURNS numeric LANGUAGE sql IMMUTABLE AS 'SELECT coalesce(s, 0) + v';
CREATE OR REPLACE FUNCTION rc_plus(a numeric, b numeric) RETURNS numeric LANGUAGE sql IMMUTABLE AS 'SELECT a + b + 1';
SELECT pg_temp.refuses(format($$SELECT * FROM backfill_dry_run(%s)$$, (SELECT id FROM r7)), '55000',
	'^function public.rc_plus\(numeric,numeric\) changed since run [0-9]+ was planned$', 'pinned: an operator''s function');
CREATE OR REPLACE FUNCTION rc_plus(a numeric, b numeric) RETURNS numeric LANGUAGE sql IMMUTABLE AS 'SELECT a + b';
ALTER DOMAIN rc_amount DROP CONSTRAINT rc_amount_check;
ALTER DOMAIN rc_amount ADD CONSTRAINT rc_amount_check CHECK (VALUE > -100);
SELECT pg_temp.refuses(format($$SELECT * FROM backfill_dry_run(%s)$$, (SELECT id FROM r7)), '55000',
	'^domain public.rc_amount changed since run [0-9]+ was planned$', 'pinned: a domain''s check');
ALTER DOMAIN rc_amount DROP CONSTRAINT rc_amount_check;
ALTER DOMAIN rc_amount ADD CONSTRAINT rc_amount_check CHECK (VALUE >= 0);
SELECT ok((SELECT count(*) FROM backfill_dry_run((SELECT id FROM r7))) > 0, 'pinned: each change undone, the dry run works again');
SELECT format('CREATE SCHEMA %I', current_user) \gexec
SELECT format('CREATE FUNCTION %I.rc_rate() RETURNS numeric LANGUAGE sql IMMUTABLE AS ''SELECT 3.0''', current_user) \gexec
SELECT pg_temp.refuses(format($$SELECT * FROM backfill_dry_run(%s)$$, (SELECT id FROM r7)), '55000',
	format('^name "rc_rate" called by public.rc_scaled\(numeric\) resolves differently under search_path "\$user", public since run [0-9]+ was planned: it finds %s.rc_rate\(\)$', current_user),
	'pinned: a "$user" schema created mid-run shadows a name a PL function calls');
SELECT format('DROP FUNCTION %I.rc_rate()', current_user) \gexec
SELECT format('CREATE FUNCTION %I.rc_atomic(v numeric) RETURNS numeric LANGUAGE sql IMMUTABLE AS ''SELECT v''', current_user) \gexec
SELECT pg_temp.refuses(format($$SELECT * FROM backfill_dry_run(%s)$$, (SELECT id FROM r7)), '55000',
	format('^names resolve differently under search_path "\$user", public since run [0-9]+ was planned: the source now reaches function %s.rc_atomic\(numeric\)$', current_user),
	'pinned: a "$user" schema created mid-run shadows a function the source names');
SELECT format('DROP SCHEMA %I CASCADE', current_user) \gexec
SELECT ok((SELECT count(*) FROM backfill_dry_run((SELECT id FROM r7))) > 0, 'pinned: the schema gone, the dry run works again');

-- who sees what: a role that may read the target sees its runs, tasks and log records; one that
-- may not sees none of them, and cannot tell a run of it from no run at all
GRANT SELECT ON r1 TO regress_rc_other;
SET ROLE regress_rc_other;
SELECT ok((SELECT count(*) FROM backfill_runs WHERE target = 'public.rc') > 0
		  AND (SELECT count(*) FROM backfill_tasks WHERE run_id = (SELECT id FROM r1)) = 3
		  AND (SELECT count(*) FROM backfill_progress WHERE target = 'public.rc') > 0,
		  'visibility: a role that may read the target sees its runs, tasks and progress');
SELECT is((SELECT count(*) FROM backfill_runs WHERE target <> 'public.rc'), 0::bigint,
		  'visibility: ... and no run of a table it may not read');
RESET ROLE;
SET ROLE regress_rc_blind;
SELECT is(concat_ws(' ', (SELECT count(*) FROM backfill_runs), (SELECT count(*) FROM backfill_tasks), (SELECT count(*) FROM backfill_log),
		  (SELECT count(*) FROM backfill_progress)), '0 0 0 0',
		  'visibility: a role that may read no target sees no run, task, log record or progress row');
RESET ROLE;
SELECT pg_temp.refuses(format($$SELECT backfill_pause(%s)$$, (SELECT id FROM r2)), '22023', '^run_id [0-9]+ is not a run of backfill_runs$',
	'visibility: a run the role may not see is no run to it', 'regress_rc_blind');
SELECT pg_temp.refuses(format($$SELECT * FROM backfill_dry_run(%s)$$, (SELECT id FROM r2)), '22023', 'is not a run',
	'visibility: nor to a dry run', 'regress_rc_blind');
SELECT ok(backfill_visible('public.rc') AND NOT backfill_visible('public.rc_nothing_here'),
		  'visibility: backfill_visible, for the owner; a table that is gone is visible to no one but the log''s owner');

-- progress
SELECT is((SELECT status || ' ' || tasks_total || ' ' || tasks_pending || ' ' || tasks_done FROM backfill_progress
		   WHERE run_id = (SELECT id FROM r1)), 'cancelled 3 3 0', 'progress: a cancelled run and its tasks');
SELECT is((SELECT count(*) FROM backfill_progress), (SELECT count(*) FROM backfill_runs), 'progress: one row per run');

SELECT * FROM finish();
ROLLBACK;
