-- test/replace_fidelity.sql: what a replacement must not change, add or cut
BEGIN;
SELECT plan(19);

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

-- a trigger of the partition's own is copied from the catalog, not by rewriting its text: an
-- argument and a WHEN literal that hold the partition's name stay as they were, and the WHEN
-- clause and UPDATE OF column follow the columns by name past a dropped one
CREATE TABLE rt (id int NOT NULL, day date NOT NULL, note text) PARTITION BY RANGE (day);
CREATE TABLE rt_01 (gone int, id int NOT NULL, day date NOT NULL, note text);
ALTER TABLE rt_01 DROP COLUMN gone;
ALTER TABLE rt ATTACH PARTITION rt_01 FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
CREATE FUNCTION rt_tag() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.note := TG_ARGV[0] || '/' || TG_ARGV[1]; RETURN NEW; END $$;
CREATE TRIGGER rt_tag BEFORE INSERT OR UPDATE OF note ON rt_01 FOR EACH ROW
	WHEN (NEW.note <> ' ON public.rt_01 ') EXECUTE FUNCTION rt_tag(' ON public.rt_01 ', 'rt_01');
CREATE TEMP TABLE rt_def AS SELECT pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE tgname = 'rt_tag';
SELECT lives_ok($$SELECT * FROM backfill_replace_partition('rt_01',
	'SELECT 1 AS id, $1 AS day, ''x'' AS note')$$, 'a partition with a trigger naming it in its argument and WHEN clause');
SELECT is((SELECT pg_get_triggerdef(t.oid) FROM pg_trigger t WHERE t.tgrelid = 'rt_01'::regclass AND t.tgname = 'rt_tag'),
	(SELECT def FROM rt_def), 'the new partition''s trigger has the definition the old one had, word for word');
INSERT INTO rt VALUES (2, '2026-01-02', 'y');
UPDATE rt SET note = 'z' WHERE id = 1;
SELECT is((SELECT array_agg(note ORDER BY id) FROM rt), ARRAY[' ON public.rt_01 /rt_01', ' ON public.rt_01 /rt_01'],
	'the copied trigger fires, on INSERT and UPDATE OF its column, with its arguments intact');

-- a source that returns the partition's very columns has its stored rows copied as they are:
-- a value kept out of line lives in the source's TOAST table, and the copy must not point back
-- into it; a row stored before an ADD COLUMN ... DEFAULT lacks that column in its tuple (its
-- value lives in the source's catalog), and must not lose it
CREATE TABLE rcopy (id int NOT NULL, day date NOT NULL, note text, extra int) PARTITION BY RANGE (day);
CREATE TABLE rcopy_01 PARTITION OF rcopy FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
CREATE TABLE rcopy_src (id int NOT NULL, day date NOT NULL, note text, extra int);
ALTER TABLE rcopy_src ALTER COLUMN note SET STORAGE EXTERNAL;
INSERT INTO rcopy_src SELECT g, date '2026-01-01' + g % 31, 'n' || g, 7 FROM generate_series(1, 50) g;
INSERT INTO rcopy_src SELECT g, date '2026-01-05', (SELECT string_agg(md5(i::text || g), '') FROM generate_series(1, 300) i), 8
FROM generate_series(51, 53) g;
CREATE TEMP TABLE rcopy_fp AS SELECT * FROM backfill_fingerprint('rcopy_src');
CREATE TEMP TABLE rcopy_swap AS SELECT * FROM backfill_replace_partition('rcopy_01', 'SELECT * FROM rcopy_src WHERE day >= $1 AND day < $2', allow_empty => true);
SELECT is((SELECT fingerprint_after FROM rcopy_swap), (SELECT hash FROM rcopy_fp),
	'rows copied as the source stores them: the fingerprint after is the source''s');
CREATE TEMP TABLE rcopy_notes AS SELECT id, md5(note) AS m FROM rcopy_src WHERE id > 50;
DROP TABLE rcopy_src;
SELECT is((SELECT array_agg(md5(note) ORDER BY id) FROM rcopy WHERE id > 50), (SELECT array_agg(m ORDER BY id) FROM rcopy_notes),
	'values kept out of line are read back whole once the source is dropped');
CREATE TABLE rcopy_add (id int NOT NULL, day date NOT NULL, note text);
INSERT INTO rcopy_add SELECT g, date '2026-01-01' + g % 31, 'n' || g FROM generate_series(1, 50) g;
ALTER TABLE rcopy_add ADD COLUMN extra int DEFAULT 7;
INSERT INTO rcopy_add VALUES (51, '2026-01-05', 'new', 8);
SELECT lives_ok($$SELECT * FROM backfill_replace_partition('rcopy_01', 'SELECT * FROM rcopy_add WHERE day >= $1 AND day < $2')$$,
	'a source with a column added with a default after rows were stored');
SELECT is((SELECT array_agg(extra ORDER BY id) FROM rcopy), array_fill(7, ARRAY[50]) || 8,
	'the rows stored before it have its default in the new partition');

SELECT * FROM finish();
ROLLBACK;
