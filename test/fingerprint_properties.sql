-- test/fingerprint_properties.sql: what backfill_fingerprint sees and what it does not.
--
-- The fingerprint of a table is a function of the multiset of its rows' values: the physical
-- order and storage of the rows (heap order, VACUUM FULL, CLUSTER, TOAST, compression, missing
-- attributes, dropped columns, partitions) must not change it, and any change to the multiset
-- (one value, one duplicated or removed row, a value moved between rows) must.
BEGIN;
SELECT plan(77);

-- fp(rel): the fingerprint as text, for readable failures.
CREATE FUNCTION pg_temp.fp(rel regclass, scope text DEFAULT NULL) RETURNS text
LANGUAGE sql AS $$ SELECT (backfill_fingerprint(rel, scope))::text $$;
CREATE FUNCTION pg_temp.fph(rel regclass) RETURNS text
LANGUAGE sql AS $$ SELECT (backfill_fingerprint(rel)).hash $$;

CREATE TABLE base (id int, day date, amount numeric(12,2), label text, flag boolean, ratio float8);
INSERT INTO base
SELECT g, date '2026-03-01' + g % 31, g * 1.25, 'item ' || g, g % 3 = 0, g / 7.0
FROM generate_series(1, 2000) g;
INSERT INTO base VALUES (2001, NULL, NULL, NULL, NULL, NULL);
CREATE TEMP TABLE base_before AS SELECT * FROM backfill_fingerprint('base');

-- ============================================================ invariance
SELECT is((SELECT rows FROM base_before), 2001::bigint, 'fingerprint counts every row');
SELECT is(length((SELECT hash FROM base_before)), 32, 'hash is 32 hex digits');

CREATE TABLE base_shuffled AS SELECT * FROM base ORDER BY random();
SELECT is(pg_temp.fp('base_shuffled'), pg_temp.fp('base'),
          'same rows inserted in random order: same fingerprint');

CREATE TABLE base_reversed AS SELECT * FROM base ORDER BY id DESC;
SELECT is(pg_temp.fp('base_reversed'), pg_temp.fp('base'),
          'same rows inserted in reverse order: same fingerprint');

-- Rows move to other pages: delete a third and insert them again at the end.
CREATE TEMP TABLE moved AS SELECT * FROM base WHERE id % 3 = 0;
DELETE FROM base WHERE id % 3 = 0;
SELECT isnt(pg_temp.fp('base'), (SELECT b::text FROM base_before b),
            'with a third of the rows deleted the fingerprint differs');
INSERT INTO base SELECT * FROM moved ORDER BY id DESC;
SELECT is(pg_temp.fp('base'), (SELECT b::text FROM base_before b),
          'rows deleted and inserted again: same fingerprint');

UPDATE base SET label = label WHERE id % 5 = 0;
SELECT is(pg_temp.fp('base'), (SELECT b::text FROM base_before b),
          'no-op UPDATE (new tuple versions) leaves the fingerprint');

-- VACUUM FULL cannot run in a transaction block; the table rewrites that can are tested
-- instead: ALTER TABLE's (a forced rewrite, as SET UNLOGGED makes) and CLUSTER's (VACUUM
-- FULL's own code path, with an order).
CREATE TEMP TABLE filenode AS SELECT pg_relation_filenode('base') AS before;
ALTER TABLE base SET UNLOGGED;
SELECT isnt(pg_relation_filenode('base'), (SELECT before FROM filenode), 'premise: SET UNLOGGED rewrote the table');
SELECT is(pg_temp.fp('base'), (SELECT b::text FROM base_before b),
          'table rewritten by ALTER TABLE: same fingerprint');

CREATE INDEX base_label_idx ON base (label);
UPDATE filenode SET before = pg_relation_filenode('base');
CLUSTER base USING base_label_idx;
SELECT isnt(pg_relation_filenode('base'), (SELECT before FROM filenode), 'premise: CLUSTER rewrote the table');
SELECT is(pg_temp.fp('base'), (SELECT b::text FROM base_before b),
          'CLUSTER on another column leaves the fingerprint');

CREATE MATERIALIZED VIEW base_mv AS SELECT * FROM base ORDER BY amount DESC;
SELECT is(pg_temp.fp('base_mv'), pg_temp.fp('base'),
          'a materialized view of the same rows has the same fingerprint');

-- ============================================================ sensitivity
CREATE TABLE probe AS SELECT * FROM base;
SELECT is(pg_temp.fp('probe'), pg_temp.fp('base'), 'copy starts equal');

UPDATE probe SET amount = amount + 0.01 WHERE id = 1000;
SELECT is((backfill_fingerprint('probe')).rows, 2001::bigint, 'one changed value: same row count');
SELECT isnt(pg_temp.fph('probe'), pg_temp.fph('base'), 'one changed value (one cent) changes the hash');
UPDATE probe SET amount = amount - 0.01 WHERE id = 1000;
SELECT is(pg_temp.fp('probe'), pg_temp.fp('base'), 'value changed back: fingerprint back');

UPDATE probe SET flag = NOT flag WHERE id = 7;
SELECT isnt(pg_temp.fph('probe'), pg_temp.fph('base'), 'one flipped boolean changes the hash');
UPDATE probe SET flag = NOT flag WHERE id = 7;

INSERT INTO probe SELECT * FROM probe WHERE id = 42;
SELECT isnt(pg_temp.fph('probe'), pg_temp.fph('base'), 'one duplicated row changes the hash');
DELETE FROM probe WHERE id = 43;
SELECT is((backfill_fingerprint('probe')).rows, 2001::bigint,
          'one row duplicated and another removed: same row count ...');
SELECT isnt(pg_temp.fph('probe'), pg_temp.fph('base'), '... but a different hash');
DELETE FROM probe WHERE id = 42;
INSERT INTO probe SELECT * FROM base WHERE id IN (42, 43);
SELECT is(pg_temp.fp('probe'), pg_temp.fp('base'), 'rows restored: fingerprint back');

DELETE FROM probe WHERE id = 1999;
SELECT isnt(pg_temp.fph('probe'), pg_temp.fph('base'), 'one removed row changes the hash');

-- Pairs of duplicates must not cancel out (as they would with XOR).
CREATE TABLE dup_y (v int);
CREATE TABLE dup_z (v int);
INSERT INTO dup_y VALUES (1), (2), (2);
INSERT INTO dup_z VALUES (1), (3), (3);
SELECT isnt(pg_temp.fph('dup_y'), pg_temp.fph('dup_z'),
            '{1,2,2} and {1,3,3}: duplicated pairs do not cancel out');

-- Values swapped between two rows: every column keeps the same multiset of values.
CREATE TABLE swap_a (k int, v text);
CREATE TABLE swap_b (k int, v text);
INSERT INTO swap_a VALUES (1, 'a'), (2, 'b');
INSERT INTO swap_b VALUES (1, 'b'), (2, 'a');
SELECT isnt(pg_temp.fph('swap_a'), pg_temp.fph('swap_b'),
            'values of one column swapped between two rows change the hash');

CREATE TABLE swap_many AS SELECT id, label FROM base;
CREATE TABLE swap_many2 AS
SELECT s.id, l.label
FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM base) s
JOIN (SELECT label, row_number() OVER (ORDER BY label) AS n FROM base) l USING (n);
SELECT isnt(pg_temp.fph('swap_many'), pg_temp.fph('swap_many2'),
            'a column permuted among 2001 rows changes the hash');

-- Values swapped between two columns of one row.
CREATE TABLE cols_a (x text, y text);
CREATE TABLE cols_b (x text, y text);
INSERT INTO cols_a VALUES ('p', 'q');
INSERT INTO cols_b VALUES ('q', 'p');
SELECT isnt(pg_temp.fph('cols_a'), pg_temp.fph('cols_b'),
            'values swapped between two columns of a row change the hash');

CREATE TABLE null_v (v text);
CREATE TABLE empty_v (v text);
INSERT INTO null_v VALUES (NULL);
INSERT INTO empty_v VALUES ('');
SELECT isnt(pg_temp.fph('null_v'), pg_temp.fph('empty_v'), 'NULL and empty string differ');

CREATE TABLE null_pos_a (x text, y text);
CREATE TABLE null_pos_b (x text, y text);
INSERT INTO null_pos_a VALUES (NULL, 'x');
INSERT INTO null_pos_b VALUES ('x', NULL);
SELECT isnt(pg_temp.fph('null_pos_a'), pg_temp.fph('null_pos_b'),
            'a NULL in another column is another row');

CREATE TABLE zero_pos (v float8);
CREATE TABLE zero_neg (v float8);
INSERT INTO zero_pos VALUES ('0');
INSERT INTO zero_neg VALUES ('-0');
SELECT isnt(pg_temp.fph('zero_pos'), pg_temp.fph('zero_neg'),
            'float8 -0 and 0 print differently, so they fingerprint differently');

CREATE TABLE num_1 (v numeric);
CREATE TABLE num_10 (v numeric);
INSERT INTO num_1 VALUES (1.0);
INSERT INTO num_10 VALUES (1.00);
SELECT isnt(pg_temp.fph('num_1'), pg_temp.fph('num_10'),
            'numeric 1.0 and 1.00 print differently, so they fingerprint differently');

-- Every byte of a value counts, whatever the bytes around it. These values put in front of
-- the changed bytes the 8 bytes that a wyhash-style mixer multiplies by zero (0xe7037ed1a0b428db,
-- as read in its short and its long path); a hash that loses the other bytes there misses the
-- change.
CREATE TABLE bytes_a (v bytea);
CREATE TABLE bytes_b (v bytea);
INSERT INTO bytes_a VALUES ('\xd17e03e7db28b4a001');
INSERT INTO bytes_b VALUES ('\xd17e03e7db28b4a0ff');
SELECT isnt(pg_temp.fph('bytes_a'), pg_temp.fph('bytes_b'),
            '9-byte bytea values differing in their last byte fingerprint differently');
TRUNCATE bytes_a, bytes_b;
INSERT INTO bytes_a VALUES (decode(repeat('aa', 16) || 'db28b4a0d17e03e7' || repeat('bb', 8) || repeat('cc', 16), 'hex'));
INSERT INTO bytes_b VALUES (decode(repeat('11', 16) || 'db28b4a0d17e03e7' || repeat('bb', 8) || repeat('cc', 16), 'hex'));
SELECT isnt(pg_temp.fph('bytes_a'), pg_temp.fph('bytes_b'),
            '48-byte bytea values differing in their first 16 bytes fingerprint differently');

-- A NaN is a NaN: 'NaN' and a NaN computed by arithmetic print the same, compare equal,
-- and become the same value through a dump and restore.
CREATE TABLE nan_lit (v float8);
CREATE TABLE nan_calc (v float8);
INSERT INTO nan_lit VALUES ('NaN');
INSERT INTO nan_calc VALUES ('Infinity'::float8 * 0);
SELECT is((SELECT v::text FROM nan_calc), 'NaN', 'premise: the computed value prints as NaN');
SELECT is(pg_temp.fp('nan_calc'), pg_temp.fp('nan_lit'),
          'a computed float8 NaN fingerprints like the literal NaN');

-- ============================================================ types
CREATE TYPE fp_mood AS ENUM ('sad', 'ok', 'happy');
CREATE TYPE fp_pair AS (a int, b text);
CREATE DOMAIN fp_posint AS int CHECK (VALUE > 0);
CREATE TABLE typed (
	id int,
	j json, p point, x xml, arr int[], tarr text[], c fp_pair, d fp_posint, m fp_mood,
	r int4range, jb jsonb, by bytea, ts timestamptz, u uuid, iv interval
);
INSERT INTO typed
SELECT g,
       json_build_object('g', g, 'list', json_build_array(g, g + 1)),
       point(g, -g),
       xmlelement(name item, xmlattributes(g AS n), 'v' || g),
       ARRAY[g, NULL, g * 2],
       ARRAY['a' || g, NULL, ''],
       ROW(g, 'pair ' || g)::fp_pair,
       g,
       (ARRAY['sad', 'ok', 'happy'])[1 + g % 3]::fp_mood,
       int4range(g, g + 10),
       jsonb_build_object('g', g, 'nested', jsonb_build_object('x', g % 4)),
       decode(md5(g::text), 'hex'),
       timestamptz '2026-03-01 00:00:00+00' + g * interval '1 hour',
       md5(g::text)::uuid,
       g * interval '1 minute'
FROM generate_series(1, 300) g;
CREATE TABLE typed_shuffled AS SELECT * FROM typed ORDER BY random();
SELECT is(pg_temp.fp('typed_shuffled'), pg_temp.fp('typed'),
          'json, point, xml, arrays, composite, domain, enum, range, jsonb, bytea: order-independent');

CREATE TABLE typed_probe AS SELECT * FROM typed;
UPDATE typed_probe SET j = '{"g": 5, "list": [5, 7]}' WHERE id = 5;
SELECT isnt(pg_temp.fph('typed_probe'), pg_temp.fph('typed'), 'a changed json value is seen');
TRUNCATE typed_probe; INSERT INTO typed_probe SELECT * FROM typed;
UPDATE typed_probe SET p = point(5, 5) WHERE id = 5;
SELECT isnt(pg_temp.fph('typed_probe'), pg_temp.fph('typed'), 'a changed point value is seen');
TRUNCATE typed_probe; INSERT INTO typed_probe SELECT * FROM typed;
UPDATE typed_probe SET x = '<item n="5">w5</item>' WHERE id = 5;
SELECT isnt(pg_temp.fph('typed_probe'), pg_temp.fph('typed'), 'a changed xml value is seen');
TRUNCATE typed_probe; INSERT INTO typed_probe SELECT * FROM typed;
UPDATE typed_probe SET arr = ARRAY[5, 0, 10] WHERE id = 5;
SELECT isnt(pg_temp.fph('typed_probe'), pg_temp.fph('typed'), 'NULL -> 0 inside an int[] is seen');
TRUNCATE typed_probe; INSERT INTO typed_probe SELECT * FROM typed;
UPDATE typed_probe SET c = ROW(5, 'pair 6') WHERE id = 5;
SELECT isnt(pg_temp.fph('typed_probe'), pg_temp.fph('typed'), 'a changed composite field is seen');
TRUNCATE typed_probe; INSERT INTO typed_probe SELECT * FROM typed;
UPDATE typed_probe SET d = 6 WHERE id = 5;
SELECT isnt(pg_temp.fph('typed_probe'), pg_temp.fph('typed'), 'a changed domain value is seen');
TRUNCATE typed_probe; INSERT INTO typed_probe SELECT * FROM typed;
UPDATE typed_probe SET m = 'sad' WHERE id = 5 AND m <> 'sad';
SELECT isnt(pg_temp.fph('typed_probe'), pg_temp.fph('typed'), 'a changed enum value is seen');
TRUNCATE typed_probe; INSERT INTO typed_probe SELECT * FROM typed;
UPDATE typed_probe SET r = int4range(5, 16) WHERE id = 5;
SELECT isnt(pg_temp.fph('typed_probe'), pg_temp.fph('typed'), 'a changed int4range is seen');
TRUNCATE typed_probe; INSERT INTO typed_probe SELECT * FROM typed;
UPDATE typed_probe SET jb = jb || '{"extra": true}' WHERE id = 5;
SELECT isnt(pg_temp.fph('typed_probe'), pg_temp.fph('typed'), 'a changed jsonb value is seen');
TRUNCATE typed_probe; INSERT INTO typed_probe SELECT * FROM typed;
UPDATE typed_probe SET by = by || '\x00'::bytea WHERE id = 5;
SELECT isnt(pg_temp.fph('typed_probe'), pg_temp.fph('typed'), 'a trailing zero byte in bytea is seen');

-- Enums and composites are hashed by value and by their types' names, not by the OIDs behind
-- them: types made again under the same names (as a restore makes them) fingerprint alike;
-- other types holding the same values do not.
CREATE TYPE fp_mood2 AS ENUM ('sad', 'ok', 'happy');
CREATE TYPE fp_pair2 AS (a int, b text);
CREATE TABLE oid_a (m fp_mood, c fp_pair);
CREATE TABLE oid_b (m fp_mood2, c fp_pair2);
INSERT INTO oid_a VALUES ('ok', ROW(1, 'x')), ('happy', ROW(2, NULL));
INSERT INTO oid_b VALUES ('ok', ROW(1, 'x')), ('happy', ROW(2, NULL));
CREATE TEMP TABLE oid_b_before AS SELECT pg_temp.fp('oid_b') AS fp, 'fp_mood2'::regtype::oid AS mood;
DROP TABLE oid_b;
DROP TYPE fp_mood2, fp_pair2;
CREATE TYPE fp_pair2 AS (a int, b text);
CREATE TYPE fp_mood2 AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE oid_b (c fp_pair2, m fp_mood2);
INSERT INTO oid_b VALUES (ROW(1, 'x'), 'ok'), (ROW(2, NULL), 'happy');
SELECT is(pg_temp.fp('oid_b'), (SELECT fp FROM oid_b_before),
          'an enum and a composite made again under their names, with new OIDs: same fingerprint');
SELECT isnt(pg_temp.fp('oid_b'), pg_temp.fp('oid_a'),
          'an enum and a composite of other types with the same values: another fingerprint');

CREATE TABLE dom_plain (d int);
INSERT INTO dom_plain SELECT g FROM generate_series(1, 300) g;
CREATE TABLE dom_typed (d fp_posint);
INSERT INTO dom_typed SELECT g FROM generate_series(1, 300) g;
SELECT is(pg_temp.fp('dom_typed'), pg_temp.fp('dom_plain'),
          'a domain over int fingerprints like int');

-- Session settings change how some values print, not the values: a fingerprint taken by a job
-- in another time zone or date style must match. Composite values hold the types concerned.
CREATE TYPE fp_event AS (at timestamptz, x float8, b bytea, i interval, d date);
CREATE TABLE events (id int, at timestamptz, e fp_event, es fp_event[]);
INSERT INTO events
SELECT g, t, ROW(t, g * 0.1::float8 + 0.2::float8, decode(md5(g::text), 'hex'), g * interval '1 day 2 hours', t::date)::fp_event,
       ARRAY[ROW(t, 0.1::float8 + 0.2::float8, '\x00ff'::bytea, interval '-1 month', date '2026-03-01')::fp_event]
FROM (SELECT g, timestamptz '2026-03-01 23:30:00+00' + g * interval '7 hours' AS t FROM generate_series(1, 50) g) s;
CREATE TEMP TABLE events_fp AS SELECT pg_temp.fp('events') AS fp;
CREATE FUNCTION pg_temp.fp_under(rel regclass, setting text, val text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	old text := current_setting(setting);
	r text;
BEGIN
	PERFORM set_config(setting, val, true);
	r := pg_temp.fp(rel);
	PERFORM set_config(setting, old, true);
	RETURN r;
END $$;
SELECT is(pg_temp.fp_under('events', 'TimeZone', 'Asia/Kathmandu'), (SELECT fp FROM events_fp),
          'fingerprint does not depend on TimeZone');
SELECT is(pg_temp.fp_under('events', 'DateStyle', 'SQL, DMY'), (SELECT fp FROM events_fp),
          'fingerprint does not depend on DateStyle');
SELECT is(pg_temp.fp_under('events', 'IntervalStyle', 'sql_standard'), (SELECT fp FROM events_fp),
          'fingerprint does not depend on IntervalStyle');
SELECT is(pg_temp.fp_under('events', 'bytea_output', 'escape'), (SELECT fp FROM events_fp),
          'fingerprint does not depend on bytea_output');
SELECT is(pg_temp.fp_under('events', 'extra_float_digits', '0'), (SELECT fp FROM events_fp),
          'fingerprint does not depend on extra_float_digits');

-- ============================================================ storage
-- A large compressible value: compressed in one table, stored out of line uncompressed in the other.
CREATE TABLE toast_pglz (id int, v text);
ALTER TABLE toast_pglz ALTER COLUMN v SET COMPRESSION pglz;
CREATE TABLE toast_lz4 (id int, v text);
ALTER TABLE toast_lz4 ALTER COLUMN v SET COMPRESSION lz4;
CREATE TABLE toast_ext (id int, v text);
ALTER TABLE toast_ext ALTER COLUMN v SET STORAGE EXTERNAL;
-- (each value computed afresh: INSERT ... SELECT from a table would copy the stored form)
INSERT INTO toast_pglz SELECT g, repeat('backfill ' || g || ' ', 30000) FROM generate_series(1, 3) g;
INSERT INTO toast_lz4 SELECT g, repeat('backfill ' || g || ' ', 30000) FROM generate_series(1, 3) g;
INSERT INTO toast_ext SELECT g, repeat('backfill ' || g || ' ', 30000) FROM generate_series(1, 3) g;
SELECT ok((SELECT bool_and(pg_column_compression(v) = 'pglz') FROM toast_pglz)
          AND (SELECT bool_and(pg_column_compression(v) = 'lz4') FROM toast_lz4)
          AND (SELECT bool_and(pg_column_compression(v) IS NULL AND pg_column_size(v) > 200000) FROM toast_ext),
          'premise: values are pglz-compressed, lz4-compressed, and out of line uncompressed');
SELECT is(pg_temp.fp('toast_ext'), pg_temp.fp('toast_pglz'),
          'TOASTed uncompressed value fingerprints like the pglz-compressed one');
SELECT is(pg_temp.fp('toast_lz4'), pg_temp.fp('toast_pglz'),
          'lz4-compressed value fingerprints like the pglz-compressed one');
UPDATE toast_ext SET v = v || '.' WHERE id = 2;
SELECT isnt(pg_temp.fph('toast_ext'), pg_temp.fph('toast_pglz'),
            'one byte appended to a 300 kB value is seen');

-- A column added later with a default is a "missing attribute" in the old rows.
CREATE TABLE added_later (x int, s text);
INSERT INTO added_later SELECT g, 's' || g FROM generate_series(1, 500) g;
ALTER TABLE added_later ADD COLUMN c int DEFAULT 7, ADD COLUMN t text DEFAULT 'dflt';
CREATE TABLE created_with (x int, s text, c int, t text);
INSERT INTO created_with SELECT g, 's' || g, 7, 'dflt' FROM generate_series(1, 500) g;
SELECT ok((SELECT bool_and(atthasmissing) FROM pg_attribute
           WHERE attrelid = 'added_later'::regclass AND attname IN ('c', 't')),
          'premise: the added columns are missing attributes');
SELECT is(pg_temp.fp('added_later'), pg_temp.fp('created_with'),
          'a column added with a default fingerprints like one created with the table');

-- A dropped column is not part of the rows.
CREATE TABLE with_dropped (x int, gone text, y text, gone2 int);
INSERT INTO with_dropped SELECT g, 'gone ' || g, 'y' || g, g FROM generate_series(1, 500) g;
ALTER TABLE with_dropped DROP COLUMN gone, DROP COLUMN gone2;
CREATE TABLE without_dropped (x int, y text);
INSERT INTO without_dropped SELECT g, 'y' || g FROM generate_series(1, 500) g;
SELECT is(pg_temp.fp('with_dropped'), pg_temp.fp('without_dropped'),
          'dropped columns are ignored');

-- ============================================================ scope
CREATE TABLE march_15 AS SELECT * FROM base WHERE day = '2026-03-15';
SELECT is(pg_temp.fp('base', $$day = '2026-03-15'$$), pg_temp.fp('march_15'),
          'scoped fingerprint = fingerprint of a table holding just those rows');
CREATE TABLE flagged AS SELECT * FROM base WHERE flag AND amount > 100;
SELECT is(pg_temp.fp('base', 'flag AND amount > 100'), pg_temp.fp('flagged'),
          'scoped fingerprint with a compound scope');
SELECT is(pg_temp.fp('base', 'NULL'), pg_temp.fp('base', 'false'),
          'a scope that is NULL for every row selects no row');
SELECT is((backfill_fingerprint('base', 'day IS NULL')).rows, 1::bigint,
          'scope counts only the rows it holds for');

-- ============================================================ partitions
CREATE TABLE parted (id int, day date, amount numeric(12,2), label text, flag boolean, ratio float8)
	PARTITION BY RANGE (day);
CREATE TABLE parted_early PARTITION OF parted FOR VALUES FROM (MINVALUE) TO ('2026-03-16');
-- a partition with its columns in another physical order and a dropped column
CREATE TABLE parted_late (junk int, ratio float8, flag boolean, label text, amount numeric(12,2), day date, id int);
ALTER TABLE parted_late DROP COLUMN junk;
ALTER TABLE parted ATTACH PARTITION parted_late FOR VALUES FROM ('2026-03-16') TO (MAXVALUE);
CREATE TABLE parted_null PARTITION OF parted DEFAULT;
INSERT INTO parted SELECT * FROM base;
SELECT is((SELECT count(*) FROM parted_late), (SELECT count(*) FROM base WHERE day >= '2026-03-16'),
          'premise: rows are spread over the partitions');
SELECT is(pg_temp.fp('parted'), pg_temp.fp('base'),
          'partitioned parent fingerprints like a plain table with the same rows');
CREATE TABLE late_rows AS SELECT * FROM base WHERE day >= '2026-03-16';
SELECT is(pg_temp.fp('parted', $$day >= '2026-03-16'$$), pg_temp.fp('late_rows'),
          'scope over the parent = a plain table holding the rows of that partition');

-- ============================================================ empty
CREATE TABLE empty_t (id int, v text);
SELECT is((backfill_fingerprint('empty_t')).rows, 0::bigint, 'empty table: rows 0');
SELECT is(pg_temp.fp('base', 'false'), pg_temp.fp('empty_t'),
          'a scope that holds for no row fingerprints like an empty table');

-- ============================================================ column types
-- A row is its columns' names, types and values: the same bytes under another type are other
-- rows.  The type is the one under any domain, and its typmod does not count (both only limit
-- the values); column order does not count either.
CREATE TABLE ty_text (c text);
INSERT INTO ty_text VALUES ('abc');
CREATE TABLE ty_bytea (c bytea);
INSERT INTO ty_bytea VALUES ('\x616263');
SELECT isnt(pg_temp.fph('ty_text'), pg_temp.fph('ty_bytea'), 'text ''abc'' and bytea ''\x616263'' fingerprint apart');
CREATE TABLE ty_bigint (c bigint);
INSERT INTO ty_bigint VALUES (0);
CREATE TABLE ty_ts (c timestamp);
INSERT INTO ty_ts VALUES ('2000-01-01');
SELECT isnt(pg_temp.fph('ty_bigint'), pg_temp.fph('ty_ts'), 'bigint 0 and timestamp 2000-01-01 fingerprint apart');
CREATE TABLE ty_ints (c int[]);
INSERT INTO ty_ints VALUES ('{1,2}');
CREATE TABLE ty_dates (c date[]);
INSERT INTO ty_dates SELECT ARRAY[date '2000-01-02', date '2000-01-03'];
SELECT isnt(pg_temp.fph('ty_ints'), pg_temp.fph('ty_dates'), 'int[] and date[] holding the same words fingerprint apart');
CREATE TYPE ty_mood AS ENUM ('abc');
CREATE TABLE ty_enum (c ty_mood);
INSERT INTO ty_enum VALUES ('abc');
SELECT isnt(pg_temp.fph('ty_enum'), pg_temp.fph('ty_text'), 'an enum and a text with the same label fingerprint apart');
CREATE DOMAIN ty_positive AS bigint CHECK (VALUE >= 0);
CREATE TABLE ty_domain (c ty_positive);
INSERT INTO ty_domain VALUES (0);
SELECT is(pg_temp.fph('ty_domain'), pg_temp.fph('ty_bigint'), 'a domain fingerprints as the type under it');
CREATE TABLE ty_typmod (id int, day date, amount numeric, label text, flag boolean, ratio float8);
INSERT INTO ty_typmod SELECT * FROM base;
SELECT is(pg_temp.fp('ty_typmod'), pg_temp.fp('base'), 'typmods do not count: numeric and numeric(12,2) holding the same values fingerprint alike');
CREATE TABLE ty_varchar (c varchar);
INSERT INTO ty_varchar VALUES ('abc');
SELECT isnt(pg_temp.fph('ty_varchar'), pg_temp.fph('ty_text'), 'varchar and text are two types: apart');
CREATE TABLE ty_order (ratio float8, flag boolean, label text, amount numeric(12,2), day date, id int);
INSERT INTO ty_order SELECT ratio, flag, label, amount, day, id FROM base;
SELECT is(pg_temp.fp('ty_order'), pg_temp.fp('base'), 'with types in the hash, column order still does not count');

SELECT * FROM finish();
ROLLBACK;
