-- test/server_versions.sql: what PostgreSQL 15 to 18 do differently, checked on each.
--
-- From 18, NOT NULL constraints are rows of pg_constraint and may be NOT VALID while
-- pg_attribute.attnotnull is set, and a CHECK constraint may be NOT ENFORCED.  The features
-- are detected, not the version: where a server lacks one, the same property is checked in
-- the form it has there, or the test is skipped, saying why.
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(12);

CREATE TEMP TABLE feature_probe (a int NOT NULL);
SELECT EXISTS (SELECT FROM pg_constraint WHERE conrelid = 'feature_probe'::regclass AND contype = 'n')
	AS not_null_constraints,
	EXISTS (SELECT FROM pg_attribute WHERE attrelid = 'pg_constraint'::regclass AND attname = 'conenforced')
	AS not_enforced,
	EXISTS (SELECT FROM pg_get_keywords() WHERE word = 'virtual') AS virtual_generated \gset

-- ================================================ the merge's key proof
-- A unique index on a NOT NULL key proves the target's key without a scan; on 18 attnotnull
-- is also set by a NOT VALID constraint, which the rows already there need not obey.
CREATE TABLE vn (id bigint UNIQUE, v int);
INSERT INTO vn SELECT g, g FROM generate_series(1, 9) g;
INSERT INTO vn VALUES (NULL, 0);
\if :not_null_constraints
ALTER TABLE vn ADD CONSTRAINT vn_id_nn NOT NULL id NOT VALID;
\endif
SELECT is((SELECT attnotnull FROM pg_attribute WHERE attrelid = 'vn'::regclass AND attname = 'id'),
	:'not_null_constraints'::boolean,
	'premise: attnotnull is set by a NOT VALID constraint where the server has them');
SELECT throws_ok($$SELECT * FROM backfill_merge('vn', 'SELECT 1::bigint AS id, 1 AS v', ARRAY['id'])$$,
	'23505', 'key (id) of table public.vn contains NULL: (id)=(NULL)',
	'a NULL key in the target is found although attnotnull is set: the constraint is not valid');

DELETE FROM vn WHERE id IS NULL;
\if :not_null_constraints
ALTER TABLE vn VALIDATE CONSTRAINT vn_id_nn;
\else
ALTER TABLE vn ALTER id SET NOT NULL;
\endif
SELECT is((SELECT row(inserted, updated, deleted, unchanged)::text
		   FROM backfill_merge('vn', 'SELECT 1::bigint AS id, 2 AS v UNION ALL SELECT 10, 10', ARRAY['id'])),
	'(1,1,0,0)', 'with the constraint valid the key is proven and the merge goes ahead');

-- ================================================ constraints through a replacement
CREATE TABLE ne (id int, day date NOT NULL, v int) PARTITION BY RANGE (day);
CREATE TABLE ne_01 PARTITION OF ne FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
INSERT INTO ne VALUES (NULL, '2026-01-02', 100);
\if :not_enforced
ALTER TABLE ne_01 ADD CONSTRAINT ne_01_v_small CHECK (v < 10) NOT ENFORCED;
\endif
\if :not_null_constraints
ALTER TABLE ne_01 ADD CONSTRAINT ne_01_id_nn NOT NULL id NOT VALID;
\else
UPDATE ne SET id = 0;
ALTER TABLE ne_01 ALTER id SET NOT NULL;
\endif
CREATE TEMP TABLE before_attrs AS
	SELECT attname, attnotnull FROM pg_attribute WHERE attrelid = 'ne_01'::regclass AND attnum > 0;
CREATE TEMP TABLE before_nn AS
	SELECT conname, conkey FROM pg_constraint WHERE conrelid = 'ne_01'::regclass AND contype = 'n';

SELECT lives_ok($$SELECT * FROM backfill_replace_partition('ne_01', 'SELECT 1 AS id, $1 AS day, 100 AS v')$$,
	'a replacement whose rows break a NOT ENFORCED CHECK (where the server has them)');
SELECT set_eq('SELECT attname, attnotnull FROM pg_attribute WHERE attrelid = ''ne_01''::regclass AND attnum > 0',
	'TABLE before_attrs', 'every column is NOT NULL after the replacement exactly where it was before');
SELECT set_eq('SELECT conname, conkey FROM pg_constraint WHERE conrelid = ''ne_01''::regclass AND contype = ''n''',
	'TABLE before_nn', 'the NOT NULL constraints keep their names and columns (none to keep before 18)');
SELECT is((SELECT count(*)::int FROM pg_constraint
		   WHERE conrelid = 'ne_01'::regclass AND contype = 'n' AND NOT convalidated), 0,
	'every row was checked on the way in, so no NOT NULL constraint of the new partition is left NOT VALID');

\if :not_enforced
SELECT is((SELECT row(conenforced, convalidated, pg_get_constraintdef(oid))::text FROM pg_constraint
		   WHERE conrelid = 'ne_01'::regclass AND conname = 'ne_01_v_small'),
	'(f,f,"CHECK ((v < 10)) NOT ENFORCED")', 'the NOT ENFORCED CHECK is still there and still not enforced');
SELECT is((SELECT v FROM ne_01), 100, 'the row it does not enforce was written');
\else
SELECT skip('this server has no NOT ENFORCED constraints', 2);
\endif

-- ================================================ the fingerprint of a table read directly
-- From 18 a generated column may be VIRTUAL: stored as NULL, computed when a query reads it.
-- A table read by a scan of its own would hash the NULLs, so such a table is read by a
-- query, serial or parallel, and fingerprints as the same rows stored.
\if :virtual_generated
CREATE TABLE vg (a int, b int GENERATED ALWAYS AS (a * 2) VIRTUAL);
INSERT INTO vg (a) SELECT g FROM generate_series(1, 3000) g;
CREATE TABLE vg_stored (a int, b int);
INSERT INTO vg_stored SELECT g, g * 2 FROM generate_series(1, 3000) g;
SELECT is((SELECT count(*) FROM vg WHERE b = a * 2), 3000::bigint, 'premise: a query reads the computed values');
SELECT is((backfill_fingerprint('vg')).hash, (backfill_fingerprint('vg_stored')).hash,
	'a virtual generated column is fingerprinted by the values a query computes');
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
SELECT is((backfill_fingerprint('vg')).hash, (backfill_fingerprint('vg_stored')).hash,
	'... with parallel query allowed too');
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
\else
SELECT skip('this server has no virtual generated columns', 3);
\endif

SELECT * FROM finish();
ROLLBACK;
