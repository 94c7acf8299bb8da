/* backfill--1.0.sql: types, tables and functions of the backfill extension */

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

CREATE FUNCTION @extschema@.backfill_fingerprint(rel pg_catalog.regclass, scope pg_catalog.text DEFAULT NULL)
	RETURNS @extschema@.backfill_fingerprint
	AS 'MODULE_PATHNAME', 'backfill_fingerprint'
	LANGUAGE C STABLE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_fingerprint(pg_catalog.regclass, pg_catalog.text) IS
	'Order-independent fingerprint of the rows of rel (all columns) for which scope holds';

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
	lock_timeout_ms pg_catalog.int4 DEFAULT 1000, max_attempts pg_catalog.int4 DEFAULT 5)
	RETURNS @extschema@.backfill_swap
	AS 'MODULE_PATHNAME', 'backfill_replace_partition'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_replace_partition(pg_catalog.regclass, pg_catalog.text, pg_catalog.bool, pg_catalog.bool, pg_catalog.int4, pg_catalog.int4) IS
	'Recompute leaf partition part from source ($1, $2: its bounds) and swap the new rows in atomically';

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
	scope pg_catalog.text DEFAULT NULL, delete_missing pg_catalog.bool DEFAULT false)
	RETURNS @extschema@.backfill_merge_result
	AS 'MODULE_PATHNAME', 'backfill_merge'
	LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.backfill_merge(pg_catalog.regclass, pg_catalog.text, pg_catalog.text[], pg_catalog.text, pg_catalog.bool) IS
	'Merge the rows of source into target on key, within scope, after proving the key unique on both sides';

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

CREATE TABLE @extschema@.backfill_log (
	id bigserial PRIMARY KEY,
	logged_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	logged_by name NOT NULL,
	xact_id xid8 NOT NULL DEFAULT pg_catalog.pg_current_xact_id(),
	operation text NOT NULL,
	target text NOT NULL,
	partition text,
	run_id bigint,
	rows_before bigint,
	rows_after bigint,
	fingerprint_before text,
	fingerprint_after text,
	details jsonb NOT NULL DEFAULT '{}'
);
COMMENT ON TABLE @extschema@.backfill_log IS
	'Append-only record of every write made by backfill, with rows and fingerprints before and after';

CREATE FUNCTION @extschema@.backfill_log_guard()
	RETURNS trigger
	AS 'MODULE_PATHNAME', 'backfill_log_guard'
	LANGUAGE C;
COMMENT ON FUNCTION @extschema@.backfill_log_guard() IS
	'Trigger function keeping backfill_log append-only';

CREATE TRIGGER backfill_log_append_only
	BEFORE UPDATE OR DELETE ON @extschema@.backfill_log
	FOR EACH ROW EXECUTE FUNCTION @extschema@.backfill_log_guard();
CREATE TRIGGER backfill_log_no_truncate
	BEFORE TRUNCATE ON @extschema@.backfill_log
	FOR EACH STATEMENT EXECUTE FUNCTION @extschema@.backfill_log_guard();

SELECT pg_catalog.pg_extension_config_dump('@extschema@.backfill_log', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.backfill_log_id_seq', '');

-- Readable by everyone; written only by the extension's own functions, which
-- insert as the owner of the log after checking the caller's rights.
REVOKE ALL ON @extschema@.backfill_log FROM PUBLIC;
GRANT SELECT ON @extschema@.backfill_log TO PUBLIC;
REVOKE ALL ON SEQUENCE @extschema@.backfill_log_id_seq FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.backfill_log_guard() FROM PUBLIC;
