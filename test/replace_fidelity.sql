-- test/replace_fidelity.sql: what a replacement must not change, add or cut
BEGIN;
SELECT plan(12);

CREATE TABLE rf (id int NOT NULL, day date NOT NULL, code varchar(3), PRIMARY KEY (id, day))
	PARTITION BY RANGE (day);
CREATE TABLE rf_01 PARTITION OF rf FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
CREATE TABLE rf_02 PARTITION OF rf FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');
INSERT INTO rf SELECT g, date '2026-01-01' + g % 59, 'ab' FROM generate_series(1, 100) g;
CREATE TEMP TABLE fp AS SELECT * FROM backfill_fingerprint('rf_01');

-- an over-long value is an error, as in an INSERT, not silently cut as a CAST would
SELECT throws_ok($$SELECT * FROM backfill_replace_partition('rf_01',
	'SELECT 1 AS id, $1 AS day, ''abcdef''::text AS code')$$,
	'22001', NULL, 'a value too long for varchar(3) is refused, not truncated');
SELECT is((SELECT f.hash FROM backfill_fingerprint('rf_01') f), (SELECT hash FROM fp),
	'the refused call changed nothing');

-- numeric precision is applied as an INSERT applies it
CREATE TABLE rn (id int NOT NULL, day date NOT NULL, amount numeric(6,2)) PARTITION BY RANGE (day);
CREATE TABLE rn_01 PARTITION OF rn FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
SELECT lives_ok($$SELECT * FROM backfill_replace_partition('rn_01',
	'SELECT 1 AS id, $1 AS day, 1.005::numeric AS amount', allow_empty => true)$$, 'numeric(6,2) takes a longer scale');
SELECT is((SELECT amount::text FROM rn), '1.01', 'and rounds it as an INSERT would');
SELECT throws_ok($$SELECT * FROM backfill_replace_partition('rn_01',
	'SELECT 1 AS id, $1 AS day, 123456.0 AS amount')$$, '22003', NULL, 'a numeric overflow is an error');

-- session defaults do not move or widen the new partition
CREATE ROLE regress_rf_peer;
ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO regress_rf_peer;
SET LOCAL default_tablespace = 'pg_global';
SELECT lives_ok($$SELECT * FROM backfill_replace_partition('rf_01',
	'SELECT id, day, code FROM rf_01 WHERE day >= $1 AND day < $2')$$,
	'a replacement under default privileges and a default_tablespace');
RESET default_tablespace;
SELECT is((SELECT relacl FROM pg_class WHERE relname = 'rf_01'), NULL,
	'default privileges of the caller did not widen the partition''s grants');
SELECT is((SELECT reltablespace FROM pg_class WHERE relname = 'rf_01'), 0::oid,
	'the partition stays in the database''s default tablespace');
ALTER DEFAULT PRIVILEGES REVOKE SELECT ON TABLES FROM regress_rf_peer;

-- the planner has statistics for the new partition at once
SELECT ok((SELECT count(*) FROM pg_stats WHERE tablename = 'rf_01') > 0,
	'the new partition has column statistics');

-- what a swap cannot carry over is refused before any work
CREATE TABLE rs (id serial, day date NOT NULL) PARTITION BY RANGE (day);
CREATE TABLE rs_01 (id int NOT NULL, day date NOT NULL);
CREATE SEQUENCE rs_01_seq OWNED BY rs_01.id;
ALTER TABLE rs ATTACH PARTITION rs_01 FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
SELECT throws_like($$SELECT * FROM backfill_replace_partition('rs_01', 'SELECT 1 AS id, $1 AS day')$$,
	'%it owns a sequence%', 'a partition owning a sequence is refused');

CREATE PUBLICATION regress_rf_pub FOR TABLE rf;
SELECT throws_ok($$SELECT * FROM backfill_replace_partition('rf_02', 'SELECT 1 AS id, $1 AS day')$$,
	'0A000', 'cannot replace partition public.rf_02: publication "regress_rf_pub" replicates it',
	'a partition whose parent is published is refused');
SELECT is((SELECT count(*)::int FROM pg_class WHERE relname LIKE 'backfill_stage%'), 0,
	'no staging table is left by the refusals');

SELECT * FROM finish();
ROLLBACK;
