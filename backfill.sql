/* backfill.sql: types, tables and functions of the backfill extension, at the version backfill.control names (installed as backfill--VERSION.sql) */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION backfill" to load this file. \quit

--
-- Validation: read-only checks that a job or a dbt post-hook can fail on.
--

CREATE TYPE @extschema@.backfill_fingerprint AS (
	rows bigint,
	hash text
);
COMMENT ON TYPE @extschema@.backfill_fingerprint IS
	'Row count and order-independent hash of a multiset of rows';

-- The secret key of the row hash and of the seal a fingerprint shows (src/rowhash.c): 32 bytes
-- from the server's strong random source (two version 4 UUIDs), made here, once per database.
-- Without it nobody can compute a row's hash, so nobody can make two different tables
-- fingerprint alike.  The key is the row made first: a restore brings back the key of the
-- database dumped, older than the one CREATE EXTENSION made, so fingerprints recorded before
-- the dump compare equal after the restore.  Databases that must compare fingerprints with
-- each other (a logical replica) share it by copying this row.  No role but its owner and the
-- database owner (who dumps and restores) reads it; the functions read it whoever calls.
CREATE TABLE @extschema@.backfill_key_data (
	key bytea NOT NULL DEFAULT pg_catalog.decode(pg_catalog.translate(pg_catalog.concat(
		pg_catalog.gen_random_uuid(), pg_catalog.gen_random_uuid()), '-', ''), 'hex')
		CHECK (pg_catalog.length(key) OPERATOR(pg_catalog.=) 32),
	created timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp()
);
COMMENT ON TABLE @extschema@.backfill_key_data IS
	'The secret key of backfill''s row hash and fingerprints: the row made first (keep it secret; copy it to compare fingerprints between databases)';
INSERT INTO @extschema@.backfill_key_data DEFAULT VALUES;
SELECT pg_catalog.pg_extension_config_dump('@extschema@.backfill_key_data', '');
REVOKE ALL ON @extschema@.backfill_key_data FROM PUBLIC;
GRANT SELECT, INSERT ON @extschema@.backfill_key_data TO pg_database_owner;

CREATE FUNCTION @extschema@.backfill_fingerprint(rel pg_catalog.regclass, scope pg_catalog.text DEFAULT NULL)
	RETURNS @extschema@.backfill_fingerprint
	AS 'MODULE_PATHNAME', 'backfill_fingerprint'
	LANGUAGE C STABLE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_fingerprint(pg_catalog.regclass, pg_catalog.text) IS
	'Order-independent fingerprint of the rows of rel (all columns) for which scope holds';

-- The same fingerprint as an aggregate, so that parallel query can compute it: each worker
-- sums its share of the rows, the leader adds the sums.  backfill_fingerprint runs it when
-- parallel query is allowed; its arguments are rel and every column of rel, in order.
CREATE FUNCTION @extschema@.backfill_fingerprint_transfn(state pg_catalog.internal, rel pg_catalog.regclass,
		VARIADIC columns "any")
	RETURNS pg_catalog.internal
	AS 'MODULE_PATHNAME', 'backfill_fingerprint_transfn'
	LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.backfill_fingerprint_transfn(pg_catalog.internal, pg_catalog.regclass, "any") IS
	'Transition function of backfill_fingerprint_agg: adds one row of rel to the sums';
CREATE FUNCTION @extschema@.backfill_fingerprint_combinefn(a pg_catalog.internal, b pg_catalog.internal)
	RETURNS pg_catalog.internal
	AS 'MODULE_PATHNAME', 'backfill_fingerprint_combinefn'
	LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.backfill_fingerprint_combinefn(pg_catalog.internal, pg_catalog.internal) IS
	'Combine function of backfill_fingerprint_agg: adds two partial sums';
CREATE FUNCTION @extschema@.backfill_fingerprint_serialfn(state pg_catalog.internal)
	RETURNS pg_catalog.bytea
	AS 'MODULE_PATHNAME', 'backfill_fingerprint_serialfn'
	LANGUAGE C STRICT PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.backfill_fingerprint_serialfn(pg_catalog.internal) IS
	'Serial function of backfill_fingerprint_agg: the row count and the two sums as 24 bytes';
CREATE FUNCTION @extschema@.backfill_fingerprint_finalfn(state pg_catalog.internal, rel pg_catalog.regclass,
		VARIADIC columns "any")
	RETURNS @extschema@.backfill_fingerprint
	AS 'MODULE_PATHNAME', 'backfill_fingerprint_finalfn'
	LANGUAGE C PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.backfill_fingerprint_finalfn(pg_catalog.internal, pg_catalog.regclass, "any") IS
	'Final function of backfill_fingerprint_agg: the fingerprint as backfill_fingerprint returns it';
CREATE FUNCTION @extschema@.backfill_fingerprint_deserialfn(state pg_catalog.bytea, unused pg_catalog.internal)
	RETURNS pg_catalog.internal
	AS 'MODULE_PATHNAME', 'backfill_fingerprint_deserialfn'
	LANGUAGE C STRICT PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.backfill_fingerprint_deserialfn(pg_catalog.bytea, pg_catalog.internal) IS
	'Deserial function of backfill_fingerprint_agg';
CREATE AGGREGATE @extschema@.backfill_fingerprint_agg(rel pg_catalog.regclass, VARIADIC columns "any") (
	SFUNC = @extschema@.backfill_fingerprint_transfn,
	STYPE = pg_catalog.internal,
	FINALFUNC = @extschema@.backfill_fingerprint_finalfn,
	FINALFUNC_EXTRA,
	COMBINEFUNC = @extschema@.backfill_fingerprint_combinefn,
	SERIALFUNC = @extschema@.backfill_fingerprint_serialfn,
	DESERIALFUNC = @extschema@.backfill_fingerprint_deserialfn,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE @extschema@.backfill_fingerprint_agg(pg_catalog.regclass, "any") IS
	'backfill_fingerprint of the rows aggregated (rel, then every column of rel in order), computed in parallel where the planner chooses';

CREATE FUNCTION @extschema@.backfill_fingerprint_row(rel pg_catalog.text, VARIADIC columns "any")
	RETURNS bigint
	AS 'MODULE_PATHNAME', 'backfill_fingerprint_row'
	LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.backfill_fingerprint_row(pg_catalog.text, "any") IS
	'The hash of one row of rel (its qualified name; every column, in order), as backfill_fingerprint sums it; how a Citus distributed table is fingerprinted shard by shard';
CREATE FUNCTION @extschema@.backfill_fingerprint_lane2(h bigint)
	RETURNS bigint
	AS 'MODULE_PATHNAME', 'backfill_fingerprint_lane2'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.backfill_fingerprint_lane2(bigint) IS
	'A row hash''s term of backfill_fingerprint''s second sum';
-- A row's hash, which backfill_fingerprint_row returns, is what the key and the seal keep
-- from being read: with enough of them, two sets of rows with equal sums can be searched for.
-- Only its owner and the roles granted it (on every node) have Citus tables fingerprinted
-- shard by shard; for others the rows are fingerprinted on the coordinator.
REVOKE ALL ON FUNCTION @extschema@.backfill_fingerprint_row(pg_catalog.text, "any") FROM PUBLIC;

CREATE FUNCTION @extschema@.backfill_diff_hash(seed bigint, VARIADIC columns "any")
	RETURNS bigint
	AS 'MODULE_PATHNAME', 'backfill_diff_hash'
	LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.backfill_diff_hash(bigint, "any") IS
	'The hash of the values given, under seed, as backfill_diff matches rows and keys: how it compares Citus distributed tables shard by shard';
-- A hash of chosen values is a row hash too: not for PUBLIC, as backfill_fingerprint_row.
REVOKE ALL ON FUNCTION @extschema@.backfill_diff_hash(bigint, "any") FROM PUBLIC;

CREATE FUNCTION @extschema@.backfill_key_check()
	RETURNS pg_catalog.text
	AS 'MODULE_PATHNAME', 'backfill_key_check'
	LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.backfill_key_check() IS
	'A check value of this database''s hashing key: equal in two databases that fingerprint rows alike, telling nothing of the key';
CREATE FUNCTION @extschema@.backfill_share_key()
	RETURNS pg_catalog.int4
	AS 'MODULE_PATHNAME', 'backfill_share_key'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_share_key() IS
	'On a Citus coordinator: give every worker this database''s hashing key, so that distributed tables are fingerprinted shard by shard (superuser)';
REVOKE ALL ON FUNCTION @extschema@.backfill_share_key() FROM PUBLIC;

CREATE FUNCTION @extschema@.backfill_diff(a pg_catalog.text, b pg_catalog.text, key pg_catalog.text[])
	RETURNS TABLE(change pg_catalog.text, key pg_catalog.jsonb, a_row pg_catalog.jsonb, b_row pg_catalog.jsonb)
	AS 'MODULE_PATHNAME', 'backfill_diff'
	LANGUAGE C STABLE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_diff(pg_catalog.text, pg_catalog.text, pg_catalog.text[]) IS
	'Rows that queries a and b disagree on, matched on key: added (only in b), removed (only in a), changed';

CREATE FUNCTION @extschema@.backfill_assert_unique(rel pg_catalog.regclass, key pg_catalog.text[], scope pg_catalog.text DEFAULT NULL)
	RETURNS pg_catalog.int8
	AS 'MODULE_PATHNAME', 'backfill_assert_unique'
	LANGUAGE C STABLE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_assert_unique(pg_catalog.regclass, pg_catalog.text[], pg_catalog.text) IS
	'Rows checked; raises 23505 when a key value of rel (within scope) appears twice or contains NULL';

CREATE FUNCTION @extschema@.backfill_reconcile(target pg_catalog.text, source pg_catalog.text, measures pg_catalog.text[],
											   tolerance pg_catalog.numeric DEFAULT 0, raise pg_catalog.bool DEFAULT true)
	RETURNS TABLE(measure pg_catalog.text, target_value pg_catalog.numeric, source_value pg_catalog.numeric,
				  difference pg_catalog.numeric, ok pg_catalog.bool)
	AS 'MODULE_PATHNAME', 'backfill_reconcile'
	LANGUAGE C STABLE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_reconcile(pg_catalog.text, pg_catalog.text, pg_catalog.text[], pg_catalog.numeric, pg_catalog.bool) IS
	'Aggregate measures of target and source side by side; raises 23514 when one differs by more than tolerance';

--
-- Write strategies: the partition swap.
--

CREATE TYPE @extschema@.backfill_swap AS (
	partition pg_catalog.regclass,
	rows_before bigint,
	rows_after bigint,
	fingerprint_before text,
	fingerprint_after text,
	archived_as pg_catalog.regclass,
	attempts integer,
	swap_ms double precision,
	log_id bigint
);
COMMENT ON TYPE @extschema@.backfill_swap IS
	'What a partition swap did: rows and fingerprints before and after, the archive kept, lock attempts, time under lock, log record';

CREATE FUNCTION @extschema@.backfill_replace_partition(part pg_catalog.regclass, source pg_catalog.text,
	keep_old pg_catalog.bool DEFAULT false, allow_empty pg_catalog.bool DEFAULT false,
	lock_timeout_ms pg_catalog.int4 DEFAULT 1000, max_attempts pg_catalog.int4 DEFAULT 5,
	source_server pg_catalog.text DEFAULT NULL)
	RETURNS @extschema@.backfill_swap
	AS 'MODULE_PATHNAME', 'backfill_replace_partition'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_replace_partition(pg_catalog.regclass, pg_catalog.text, pg_catalog.bool, pg_catalog.bool, pg_catalog.int4, pg_catalog.int4, pg_catalog.text) IS
	'Recompute leaf partition part from source ($1, $2: its bounds), on standby source_server if given, and swap the new rows in atomically';

-- On Citus, what the coordinator calls on each new shard of a replacement's staging table, in
-- the workers' part of its transaction: the local fill writes its rows frozen, this gives the
-- shards' rows the same visibility.  Refused for a table not created in that subtransaction.
CREATE FUNCTION @extschema@.backfill_freeze_new_rows(rel pg_catalog.regclass)
	RETURNS bigint
	AS 'MODULE_PATHNAME', 'backfill_freeze_new_rows'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_freeze_new_rows(pg_catalog.regclass) IS
	'Freeze the rows this subtransaction inserted into rel, a heap table it created (as COPY FREEZE writes them); the number frozen';

CREATE FUNCTION @extschema@.backfill_undo(log_id bigint,
	lock_timeout_ms pg_catalog.int4 DEFAULT 1000, max_attempts pg_catalog.int4 DEFAULT 5)
	RETURNS @extschema@.backfill_swap
	AS 'MODULE_PATHNAME', 'backfill_undo'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_undo(bigint, pg_catalog.int4, pg_catalog.int4) IS
	'Swap back in the archive that the replacement recorded as log_id kept, if the partition is unchanged since';

--
-- Write strategies: the merge on a proven key.
--

CREATE TYPE @extschema@.backfill_merge_result AS (
	inserted bigint,
	updated bigint,
	deleted bigint,
	unchanged bigint,
	log_id bigint
);
COMMENT ON TYPE @extschema@.backfill_merge_result IS
	'What a merge did: rows inserted, updated, deleted and left unchanged, and its log record';

CREATE FUNCTION @extschema@.backfill_merge(target pg_catalog.regclass, source pg_catalog.text, key pg_catalog.text[],
	scope pg_catalog.text DEFAULT NULL, delete_missing pg_catalog.bool DEFAULT false,
	allow_empty pg_catalog.bool DEFAULT false, source_server pg_catalog.text DEFAULT NULL)
	RETURNS @extschema@.backfill_merge_result
	AS 'MODULE_PATHNAME', 'backfill_merge'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_merge(pg_catalog.regclass, pg_catalog.text, pg_catalog.text[], pg_catalog.text, pg_catalog.bool, pg_catalog.bool, pg_catalog.text) IS
	'Merge the rows of source (computed on standby source_server if given) into target on key, within scope, after proving the key unique on both sides';

CREATE FUNCTION @extschema@.backfill_would_change(stored "any", given "any")
	RETURNS pg_catalog.bool
	AS 'MODULE_PATHNAME', 'backfill_would_change'
	LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.backfill_would_change("any", "any") IS
	'Whether storing given in a column of stored''s type, as UPDATE would, changes the stored bytes (NULL-safe); how backfill_merge finds the rows to write';

CREATE FUNCTION @extschema@.backfill_bytes_differ(stored anyelement, given anyelement)
	RETURNS pg_catalog.bool
	AS 'MODULE_PATHNAME', 'backfill_bytes_differ'
	LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.backfill_bytes_differ(anyelement, anyelement) IS
	'Whether two values of one type are stored with other bytes (NULL-safe); how backfill_merge finds the rows to write in a Citus distributed table';

--
-- Probe: is a transform a repair?
--

CREATE TYPE @extschema@.backfill_probe AS (
	idempotent boolean,
	rows_before bigint,
	rows_after_first bigint,
	rows_after_second bigint,
	fingerprint_before text,
	fingerprint_first text,
	fingerprint_second text,
	rows_only_after_first bigint,
	rows_only_after_second bigint,
	sample jsonb,
	verdict text
);
COMMENT ON TYPE @extschema@.backfill_probe IS
	'Whether running a transform twice leaves the window as running it once, with counts, samples and a verdict';

CREATE FUNCTION @extschema@.backfill_probe_idempotency(transform pg_catalog.text, target pg_catalog.regclass,
	scope pg_catalog.text DEFAULT NULL, sample_rows pg_catalog.int4 DEFAULT 5)
	RETURNS @extschema@.backfill_probe
	AS 'MODULE_PATHNAME', 'backfill_probe_idempotency'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_probe_idempotency(pg_catalog.text, pg_catalog.regclass, pg_catalog.text, pg_catalog.int4) IS
	'Run transform twice in a subtransaction, compare the scope of target after each run, and roll both back';

--
-- Record: every write of the write layers, committed with the data it describes.
--
-- The records, runs and tasks are stored in backfill_log_data, backfill_runs_data and
-- backfill_tasks_data, which only their owner reads; everyone reads them through the views
-- backfill_log, backfill_runs and backfill_tasks below.  A record or a run is tied to its
-- table by OID (target_oid; target keeps the name for display).  Every row says where it
-- comes from (origin, set by a trigger whatever the row was given): 'backfill' when
-- backfill's own functions wrote it, 'outside' for a restore or an INSERT by hand.  A run or
-- task from outside is never run, and a record from outside never vouches for a change.
--

CREATE SEQUENCE @extschema@.backfill_log_id_seq;
CREATE TABLE @extschema@.backfill_log_data (
	id bigint PRIMARY KEY DEFAULT pg_catalog.nextval('@extschema@.backfill_log_id_seq'::pg_catalog.regclass),
	logged_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	logged_by name NOT NULL,
	xact_id xid8 NOT NULL DEFAULT pg_catalog.pg_current_xact_id(),
	operation text NOT NULL,
	target text NOT NULL,
	target_oid pg_catalog.oid,
	partition text,
	run_id bigint,
	rows_before bigint,
	rows_after bigint,
	fingerprint_before text,
	fingerprint_after text,
	details jsonb NOT NULL DEFAULT '{}',
	origin text NOT NULL DEFAULT 'outside' CHECK (origin IN ('backfill', 'outside'))
);
ALTER SEQUENCE @extschema@.backfill_log_id_seq OWNED BY @extschema@.backfill_log_data.id;
COMMENT ON TABLE @extschema@.backfill_log_data IS
	'Append-only record of every write made by backfill (read it through the view backfill_log)';

CREATE FUNCTION @extschema@.backfill_log_guard()
	RETURNS trigger
	AS 'MODULE_PATHNAME', 'backfill_log_guard'
	LANGUAGE C;
COMMENT ON FUNCTION @extschema@.backfill_log_guard() IS
	'Trigger function keeping backfill_log append-only';

CREATE TRIGGER backfill_log_append_only
	BEFORE UPDATE OR DELETE ON @extschema@.backfill_log_data
	FOR EACH ROW EXECUTE FUNCTION @extschema@.backfill_log_guard();
CREATE TRIGGER backfill_log_no_truncate
	BEFORE TRUNCATE ON @extschema@.backfill_log_data
	FOR EACH STATEMENT EXECUTE FUNCTION @extschema@.backfill_log_guard();

CREATE FUNCTION @extschema@.backfill_tie_target()
	RETURNS trigger
	AS 'MODULE_PATHNAME', 'backfill_tie_target'
	LANGUAGE C;
COMMENT ON FUNCTION @extschema@.backfill_tie_target() IS
	'Trigger function stamping a record''s or a run''s origin and tying one inserted from outside backfill (a restore, a manual INSERT) to its table''s OID';

CREATE TRIGGER backfill_log_tie_target
	BEFORE INSERT ON @extschema@.backfill_log_data
	FOR EACH ROW EXECUTE FUNCTION @extschema@.backfill_tie_target();

SELECT pg_catalog.pg_extension_config_dump('@extschema@.backfill_log_data', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.backfill_log_id_seq', '');

-- Written only by the extension's own functions, which insert as the owner of the log after
-- checking the caller's rights; read by everyone through the view backfill_log.
REVOKE ALL ON @extschema@.backfill_log_data FROM PUBLIC;
REVOKE ALL ON SEQUENCE @extschema@.backfill_log_id_seq FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.backfill_log_guard() FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.backfill_tie_target() FROM PUBLIC;

--
-- Runs: a range backfilled task by task, one committed transaction per task.
--

CREATE SEQUENCE @extschema@.backfill_runs_id_seq;
CREATE TABLE @extschema@.backfill_runs_data (
	id bigint PRIMARY KEY DEFAULT pg_catalog.nextval('@extschema@.backfill_runs_id_seq'::pg_catalog.regclass),
	planned_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	planned_by name NOT NULL,
	target text NOT NULL,
	target_oid pg_catalog.oid,
	strategy text NOT NULL,
	source text NOT NULL,
	key text[],
	window_column text NOT NULL,
	window_type text NOT NULL,
	range_from text NOT NULL,
	range_to text NOT NULL,
	options jsonb NOT NULL,
	pinned jsonb NOT NULL,
	dependents jsonb NOT NULL,
	untouched jsonb NOT NULL,
	status text NOT NULL,
	started_at timestamptz,
	finished_at timestamptz,
	refreshed jsonb,
	untouched_after jsonb,
	cron_job bigint,
	error text,
	origin text NOT NULL DEFAULT 'outside' CHECK (origin IN ('backfill', 'outside')),
	throttled interval NOT NULL DEFAULT '0 s',
	throttle_reason text,
	worker_pid integer,
	heartbeat timestamptz
);
ALTER SEQUENCE @extschema@.backfill_runs_id_seq OWNED BY @extschema@.backfill_runs_data.id;
COMMENT ON TABLE @extschema@.backfill_runs_data IS
	'One row per planned run (read it through the view backfill_runs)';

CREATE TRIGGER backfill_runs_tie_target
	BEFORE INSERT ON @extschema@.backfill_runs_data
	FOR EACH ROW EXECUTE FUNCTION @extschema@.backfill_tie_target();

CREATE TABLE @extschema@.backfill_tasks_data (
	run_id bigint NOT NULL REFERENCES @extschema@.backfill_runs_data (id),
	task integer NOT NULL,
	partition text,
	range_from text NOT NULL,
	range_to text NOT NULL,
	status text NOT NULL DEFAULT 'pending',
	attempts integer NOT NULL DEFAULT 0,
	gave_way integer NOT NULL DEFAULT 0,
	rows_before bigint,
	rows_after bigint,
	fingerprint_before text,
	fingerprint_after text,
	reconcile jsonb,
	log_id bigint,
	started_at timestamptz,
	finished_at timestamptz,
	seconds double precision,
	commit_ms double precision,
	locked_ms double precision,
	error text,
	origin text NOT NULL DEFAULT 'outside' CHECK (origin IN ('backfill', 'outside')),
	wal_bytes bigint,
	bytes_after bigint,
	PRIMARY KEY (run_id, task)
);
COMMENT ON TABLE @extschema@.backfill_tasks_data IS
	'One row per task of a run, written in the transaction of its data (read it through the view backfill_tasks)';

CREATE FUNCTION @extschema@.backfill_stamp_origin()
	RETURNS trigger
	AS 'MODULE_PATHNAME', 'backfill_stamp_origin'
	LANGUAGE C;
COMMENT ON FUNCTION @extschema@.backfill_stamp_origin() IS
	'Trigger function stamping a task''s origin: backfill when backfill_plan wrote it, outside otherwise';

CREATE TRIGGER backfill_tasks_stamp_origin
	BEFORE INSERT ON @extschema@.backfill_tasks_data
	FOR EACH ROW EXECUTE FUNCTION @extschema@.backfill_stamp_origin();
REVOKE ALL ON FUNCTION @extschema@.backfill_stamp_origin() FROM PUBLIC;

SELECT pg_catalog.pg_extension_config_dump('@extschema@.backfill_runs_data', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.backfill_runs_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.backfill_tasks_data', '');

REVOKE ALL ON @extschema@.backfill_runs_data, @extschema@.backfill_tasks_data FROM PUBLIC;
REVOKE ALL ON SEQUENCE @extschema@.backfill_runs_id_seq FROM PUBLIC;

--
-- Who sees what.  A role sees the records, runs and tasks of the tables it may read
-- (backfill_visible, by OID); the values computed from their rows (counts, fingerprints,
-- samples, measures, errors) only if no row-level security hides rows of the table from it
-- (backfill_may_see_rows, decided when read); else they read as NULL.
--

CREATE FUNCTION @extschema@.backfill_visible(target pg_catalog.oid)
	RETURNS pg_catalog.bool
	AS 'MODULE_PATHNAME', 'backfill_visible'
	LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.backfill_visible(pg_catalog.oid) IS
	'Whether the current role may see the records and runs of the table with OID target: it may read it or is a member of its owner (a table gone, or unknown: only a superuser and the log''s owner)';

CREATE FUNCTION @extschema@.backfill_visible(target pg_catalog.text)
	RETURNS pg_catalog.bool
	AS 'MODULE_PATHNAME', 'backfill_visible_name'
	LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.backfill_visible(pg_catalog.text) IS
	'backfill_visible of the table that has the schema-qualified name target now';

CREATE FUNCTION @extschema@.backfill_may_see_rows(target pg_catalog.oid)
	RETURNS pg_catalog.bool
	AS 'MODULE_PATHNAME', 'backfill_may_see_rows'
	LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.backfill_may_see_rows(pg_catalog.oid) IS
	'Whether the current role sees every row of the table with OID target (it has no row-level security, or the role bypasses it): then counts, fingerprints and samples over its rows are shown to it';

-- The tables under the views have no row-level security of their own: the views filter and
-- redact (they run as the owner of the tables, whom row security would not apply to), and
-- pg_dump refuses a table with row security unless the role dumping bypasses it.

--
-- Backups.  pg_dump reads the rows of the tables under the views and the values of their
-- sequences as the role that dumps, and a restore writes them as the role that restores.
-- The database owner, who makes and restores the backups of a database without being
-- superuser, may read them whole and append to them (a restore appends), not update, delete
-- or truncate them (backfill_log_guard keeps the log append-only for every role); every
-- other role reads the views.
--
GRANT SELECT, INSERT ON @extschema@.backfill_log_data, @extschema@.backfill_runs_data,
	@extschema@.backfill_tasks_data TO pg_database_owner;
GRANT SELECT, UPDATE ON SEQUENCE @extschema@.backfill_log_id_seq, @extschema@.backfill_runs_id_seq
	TO pg_database_owner;

CREATE VIEW @extschema@.backfill_log WITH (security_barrier) AS
	SELECT l.id, l.logged_at, l.logged_by, l.xact_id, l.operation, l.target, l.target_oid, l.partition, l.run_id,
		CASE WHEN @extschema@.backfill_may_see_rows(l.target_oid) THEN l.rows_before END AS rows_before,
		CASE WHEN @extschema@.backfill_may_see_rows(l.target_oid) THEN l.rows_after END AS rows_after,
		CASE WHEN @extschema@.backfill_may_see_rows(l.target_oid) THEN l.fingerprint_before END AS fingerprint_before,
		CASE WHEN @extschema@.backfill_may_see_rows(l.target_oid) THEN l.fingerprint_after END AS fingerprint_after,
		CASE WHEN @extschema@.backfill_may_see_rows(l.target_oid) THEN l.details END AS details,
		l.origin
	FROM @extschema@.backfill_log_data l
	WHERE @extschema@.backfill_visible(l.target_oid);
COMMENT ON VIEW @extschema@.backfill_log IS
	'Every write made by backfill, with rows and fingerprints before and after, as the current role may see it';
GRANT SELECT ON @extschema@.backfill_log TO PUBLIC;

CREATE VIEW @extschema@.backfill_runs WITH (security_barrier) AS
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
COMMENT ON VIEW @extschema@.backfill_runs IS
	'One row per planned run: the range, the pinned source and code, the options, the status, as the current role may see it';
GRANT SELECT ON @extschema@.backfill_runs TO PUBLIC;

CREATE VIEW @extschema@.backfill_tasks WITH (security_barrier) AS
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
COMMENT ON VIEW @extschema@.backfill_tasks IS
	'One row per task of a run (a partition, or a chunk of a plain table), as the current role may see it';
GRANT SELECT ON @extschema@.backfill_tasks TO PUBLIC;

CREATE FUNCTION @extschema@.backfill_plan(target pg_catalog.regclass, range_from pg_catalog.text, range_to pg_catalog.text,
	source pg_catalog.text, strategy pg_catalog.text DEFAULT 'replace', key pg_catalog.text[] DEFAULT NULL,
	options pg_catalog.jsonb DEFAULT '{}')
	RETURNS bigint
	AS 'MODULE_PATHNAME', 'backfill_plan'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_plan(pg_catalog.regclass, pg_catalog.text, pg_catalog.text, pg_catalog.text, pg_catalog.text, pg_catalog.text[], pg_catalog.jsonb) IS
	'Plan a run over [range_from, range_to) of target: one task per partition (or chunk), the source and the code it uses pinned';

CREATE PROCEDURE @extschema@.backfill_run(run_id bigint, max_tasks pg_catalog.int4 DEFAULT NULL)
	AS 'MODULE_PATHNAME', 'backfill_run'
	LANGUAGE C;
COMMENT ON PROCEDURE @extschema@.backfill_run(bigint, pg_catalog.int4) IS
	'Run the pending tasks of a run, committing after each; call it again to resume';

CREATE FUNCTION @extschema@.backfill_dry_run(run_id bigint, task pg_catalog.int4 DEFAULT NULL)
	RETURNS TABLE(task pg_catalog.int4, partition pg_catalog.text, range_from pg_catalog.text, range_to pg_catalog.text,
				  rows_before bigint, rows_after bigint, fingerprint_before pg_catalog.text, fingerprint_after pg_catalog.text,
				  added bigint, removed bigint, changed bigint, sample pg_catalog.jsonb, reconcile pg_catalog.jsonb,
				  reconciled pg_catalog.bool, seconds double precision)
	AS 'MODULE_PATHNAME', 'backfill_dry_run'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_dry_run(bigint, pg_catalog.int4) IS
	'Compute one task of a run (the first pending by default), compare it with the live rows, reconcile it, and roll it all back';

CREATE FUNCTION @extschema@.backfill_estimate(run_id bigint)
	RETURNS TABLE(task pg_catalog.int4, partition pg_catalog.text, how pg_catalog.text, rows bigint,
				  heap_bytes bigint, toast_bytes bigint, index_bytes bigint, wal_bytes bigint,
				  seconds double precision, locked_seconds double precision, extra_disk_bytes bigint)
	AS 'MODULE_PATHNAME', 'backfill_estimate'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_estimate(bigint) IS
	'What the tasks left of a run will cost: rows, bytes built, WAL, time, time under lock and disk, a few tasks measured in a subtransaction rolled back, the others scaled by their partitions'' rows or the planner''s row estimates; then the total';

CREATE FUNCTION @extschema@.backfill_pause(run_id bigint)
	RETURNS pg_catalog.text
	AS 'MODULE_PATHNAME', 'backfill_pause'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_pause(bigint) IS
	'Pause a run after the task in progress; returns its new status';

CREATE FUNCTION @extschema@.backfill_resume(run_id bigint)
	RETURNS pg_catalog.text
	AS 'MODULE_PATHNAME', 'backfill_resume'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_resume(bigint) IS
	'Let a paused run (or a blocked one whose pinned code is back as planned) be run again; returns its new status';

CREATE FUNCTION @extschema@.backfill_cancel(run_id bigint)
	RETURNS pg_catalog.text
	AS 'MODULE_PATHNAME', 'backfill_cancel'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_cancel(bigint) IS
	'Cancel a run after the task in progress; finished tasks stay as they are';

CREATE FUNCTION @extschema@.backfill_retry(run_id bigint, task pg_catalog.int4)
	RETURNS pg_catalog.text
	AS 'MODULE_PATHNAME', 'backfill_retry'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_retry(bigint, pg_catalog.int4) IS
	'Make a finished, failed or skipped task of a run pending again, with its attempts reset';

CREATE FUNCTION @extschema@.backfill_skip(run_id bigint, task pg_catalog.int4, reason pg_catalog.text)
	RETURNS pg_catalog.text
	AS 'MODULE_PATHNAME', 'backfill_skip'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_skip(bigint, pg_catalog.int4, pg_catalog.text) IS
	'Leave a pending or failed task of a run undone for good, saying why: the run goes on without it, and can end done';

CREATE FUNCTION @extschema@.backfill_schedule(run_id bigint, schedule pg_catalog.text DEFAULT '* * * * *',
	tasks_per_tick pg_catalog.int4 DEFAULT 10)
	RETURNS bigint
	AS 'MODULE_PATHNAME', 'backfill_schedule'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_schedule(bigint, pg_catalog.text, pg_catalog.int4) IS
	'Schedule CALL backfill_run with pg_cron; the job removes itself when the run finishes, pauses or fails';

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
