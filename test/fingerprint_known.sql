-- test/fingerprint_known.sql: row hashes are the same whichever way a row is read.
--
-- Most rows hold only integers, dates, booleans, timestamps, floats, uuids, numerics or text,
-- none of them NULL.  Those are hashed by a plan made once per hasher, straight from the heap
-- tuple when their columns lie at fixed offsets (a table of fixed-length columns, perhaps
-- with one varlena last), else from the values the executor produced; any other row (NULLs,
-- a column added later, a compressed or out-of-line value, a composite...) value by value.
-- The fingerprints below, under a fixed key, were recorded when the columns' types entered
-- the hash (every fingerprint changed then; the plan and the value-by-value path gave the
-- same ones, as they had before): a fingerprint recorded in backfill_log since must still
-- compare equal.  Then each way of reading a row (heap, minimal tuple after a sort, values of
-- a projection, parallel workers) is shown to hash alike.
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(31);

-- A known key, older than the one CREATE EXTENSION made, so it is the one used.
INSERT INTO backfill_key_data VALUES (decode('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', 'hex'), '1999-01-01');
CREATE TABLE fk_fixed (id int, s int2, big int8, flag bool, d date, c "char", o oid, ts timestamp,
    t time, tz timestamptz, f8 float8, f4 float4, cash money, ch char(3), u uuid);
INSERT INTO fk_fixed
SELECT g, (g % 30000 - 15000)::int2, g::int8 * -1000003, g % 3 = 0, date '2026-01-01' + g % 400,
       chr(65 + g % 26)::"char", (g * 7)::oid, timestamp '2026-01-01' + g * interval '17 minutes',
       time '00:00' + g * interval '13 seconds', timestamptz '2026-01-01 00:00+00' + g * interval '1 hour',
       CASE WHEN g % 50 = 0 THEN 'NaN' ELSE g / 3.0 END, g / 9.0, (g * 1.25)::money,
       lpad((g % 1000)::text, 3, '0'), md5(g::text)::uuid
FROM generate_series(1, 3000) g;
-- the same values, in another physical order, a dropped column in between, one column added later
CREATE TABLE fk_order (tz timestamptz, gone int, id int, f4 float4, o oid, flag bool, s int2, t time,
    ts timestamp, cash money, big int8, d date, f8 float8, ch char(3), u uuid);
ALTER TABLE fk_order DROP COLUMN gone;
INSERT INTO fk_order SELECT tz, id, f4, o, flag, s, t, ts, cash, big, d, f8, ch, u FROM fk_fixed WHERE id <= 1500;
ALTER TABLE fk_order ADD COLUMN c "char" NOT NULL DEFAULT 'A';
INSERT INTO fk_order SELECT tz, id, f4, o, flag, s, t, ts, cash, big, d, f8, ch, u, c FROM fk_fixed WHERE id > 1500;
UPDATE fk_order o SET c = f.c FROM fk_fixed f WHERE f.id = o.id AND f.id <= 1500 AND f.c <> 'A';
-- only the columns hashed by their bytes, some rows with NULLs
CREATE TABLE fk_ints (id int, s int2, big int8, flag bool, d date, c "char", o oid, ts timestamp, cash money);
INSERT INTO fk_ints SELECT id, CASE WHEN id % 7 = 0 THEN NULL ELSE s END, big, flag,
    CASE WHEN id % 11 = 0 THEN NULL ELSE d END, c, o, ts, cash FROM fk_fixed;
-- 70 columns: two words of NULL flags
SELECT format('CREATE TABLE fk_wide (%s)', string_agg(format('c%s %s', k, CASE k % 3 WHEN 0 THEN 'int' WHEN 1 THEN 'bool' ELSE 'int8' END), ', ' ORDER BY k))
FROM generate_series(1, 70) k \gexec
SELECT format('INSERT INTO fk_wide SELECT %s FROM generate_series(1, 2000) g',
    string_agg(CASE k % 3 WHEN 0 THEN format('g * %s', k) WHEN 1 THEN format('(g + %s) %% 3 = 0', k) ELSE format('g::int8 << %s', k % 40) END, ', ' ORDER BY k))
FROM generate_series(1, 70) k \gexec
UPDATE fk_wide SET c66 = NULL WHERE c3 % 13 = 0;
-- the shapes of the speed table
CREATE TABLE fk_money (order_id bigint NOT NULL, day date NOT NULL, revenue numeric(12,2));
INSERT INTO fk_money SELECT g, date '2026-03-15', (g % 10000) / 100.0 + 1 FROM generate_series(1, 3000) g;
CREATE TABLE fk_text (id int, name text, n int, f bool, note varchar(20), day date);
INSERT INTO fk_text SELECT g, repeat('x', g % 200), g * 3, g % 2 = 0, 'n' || g, date '2026-01-01' + g FROM generate_series(1, 3000) g;
ANALYZE;
-- fixed-length columns and a last varlena: read straight from the heap tuple
CREATE TABLE fk_floats (id int NOT NULL, f8 float8 NOT NULL, f4 float4 NOT NULL, u uuid NOT NULL, cash money NOT NULL, n numeric NOT NULL);
INSERT INTO fk_floats
SELECT g, CASE g % 97 WHEN 0 THEN 'NaN' WHEN 1 THEN '-0' WHEN 2 THEN 'Infinity' ELSE g / 7.0 END,
       CASE g % 89 WHEN 0 THEN 'NaN' WHEN 1 THEN '-0' ELSE g / 11.0 END,
       md5(g::text)::uuid, (g * 3.5)::money, CASE WHEN g % 50 = 0 THEN 'NaN' ELSE round(g / 13.0, g % 6) END
FROM generate_series(1, 3000) g;
-- long values: compressed inline, and kept out of line
CREATE TABLE fk_long (id int NOT NULL, t text NOT NULL);
ALTER TABLE fk_long ALTER COLUMN t SET STORAGE MAIN;
INSERT INTO fk_long SELECT g, repeat('v' || g, 1000 + g) FROM generate_series(1, 40) g;
INSERT INTO fk_long SELECT g, md5(g::text) FROM generate_series(41, 100) g;
CREATE TABLE fk_long_ext (id int NOT NULL, t text NOT NULL);
ALTER TABLE fk_long_ext ALTER COLUMN t SET STORAGE EXTERNAL;
INSERT INTO fk_long_ext SELECT id, t || '' FROM fk_long;
ANALYZE;

-- Which way each table's rows take (premises).
SELECT is((SELECT count(*) FROM fk_ints WHERE s IS NULL OR d IS NULL), 662::bigint,
          'premise: fk_ints has rows with NULLs (hashed value by value) and rows without (planned)');
SELECT is((SELECT count(*) FROM fk_long WHERE pg_column_compression(t) IS NOT NULL), 40::bigint,
          'premise: 40 values of fk_long are compressed (hashed value by value)');
SELECT is((SELECT count(*) FROM fk_long_ext WHERE pg_column_compression(t) IS NULL), 100::bigint,
          'premise: fk_long_ext keeps the same values uncompressed');
SELECT cmp_ok(pg_relation_size((SELECT reltoastrelid FROM pg_class WHERE oid = 'fk_long_ext'::regclass)), '>', 0::bigint,
              'premise: and the long ones out of line');

-- The fingerprints recorded, every way of reading the rows giving the same.
SET LOCAL max_parallel_workers_per_gather = 0;
CREATE TEMP TABLE fk_known (t text, hash text);
INSERT INTO fk_known VALUES
    ('fk_fixed', 'db461c4bb438ea82e26110b7e6692d18'),
    ('fk_order', 'db461c4bb438ea82e26110b7e6692d18'),
    ('fk_ints', '1ffeb024b7433217666ee7e871499d17'),
    ('fk_wide', 'df58ee35aeabaedf780120295d91f5d7'),
    ('fk_money', 'dc4ae35a292fd71a292c8a7853d2b083'),
    ('fk_text', 'fdb7c570801d1e937a0a774a7055a061'),
    ('fk_floats', '5db134cde109e6d7a86a3137c36fbddd'),
    ('fk_long', 'e4168534daab2c6414fb8fb4e130e8cd'),
    ('fk_long_ext', 'e4168534daab2c6414fb8fb4e130e8cd');
SELECT is((backfill_fingerprint(t::regclass)).hash, hash,
          t || ': the recorded fingerprint')
FROM fk_known ORDER BY t;
SELECT is((backfill_fingerprint('fk_ints', 'id % 5 = 0')).hash, 'e4a26dfa1fe3679069cb688a985564ee',
          'fk_ints with a scope: the recorded fingerprint');

-- Every way of reading a row hashes it alike: a minimal tuple out of a sort, the values of a
-- projection, against the heap tuple.
SELECT is((SELECT count(*) FROM backfill_diff('TABLE ' || t, format('SELECT * FROM %s ORDER BY %s DESC', t, k), ARRAY[k])),
          0::bigint, t || ': rows read out of a sort pair with the table''s')
FROM (VALUES ('fk_floats', 'id'), ('fk_ints', 'id'), ('fk_money', 'order_id'), ('fk_wide', 'c3')) v(t, k);
SELECT is((SELECT count(*) FROM backfill_diff('TABLE fk_ints',
          'SELECT id + 0 AS id, s, big, NOT NOT flag AS flag, d + 0 AS d, c, o, ts, cash FROM fk_ints', '{id}')), 0::bigint,
          'fk_ints: the values of a projection pair with the table''s rows');
SELECT is((SELECT count(*) FROM backfill_diff('TABLE fk_floats',
          'SELECT id, f8 + 0 AS f8, f4, u, cash, n + 0 AS n FROM fk_floats', '{id}')), 0::bigint,
          'fk_floats: the values of a projection pair with the table''s rows');

-- Parallel workers hash the values their scan produced: the same fingerprints.
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
SELECT is((backfill_fingerprint(t::regclass)).hash, hash, t || ': the parallel fingerprint is the recorded one')
FROM fk_known WHERE t IN ('fk_ints', 'fk_wide', 'fk_floats', 'fk_money', 'fk_long') ORDER BY t;
SET LOCAL max_parallel_workers_per_gather = 0;

-- What a planned row is hashed by still tells rows apart.
CREATE TEMP TABLE fk_nan AS SELECT id, -f8 AS f8, -f4 AS f4, u, cash, n FROM fk_floats;
SELECT is((SELECT count(*) FROM fk_nan WHERE f8 = 'NaN' AND get_byte(float8send(f8), 0) = 255), 30::bigint,
          'premise: fk_nan negates every value, NaN too: its sign bit set');
CREATE TEMP TABLE fk_back AS SELECT id, -f8 AS f8, -f4 AS f4, u, cash, n FROM fk_nan;
SELECT is((backfill_fingerprint('fk_back')).hash, (SELECT hash FROM fk_known WHERE t = 'fk_floats'),
          'every float NaN hashes alike: negated twice, the fingerprint of fk_floats');
UPDATE fk_ints SET s = s + 1 WHERE id = 5;
SELECT isnt((backfill_fingerprint('fk_ints')).hash, (SELECT hash FROM fk_known WHERE t = 'fk_ints'),
            'one small value changed in a planned row: another fingerprint');
UPDATE fk_ints SET s = s - 1 WHERE id = 5;
SELECT is((backfill_fingerprint('fk_ints')).hash, (SELECT hash FROM fk_known WHERE t = 'fk_ints'),
          'changed back: the recorded fingerprint');
UPDATE fk_wide SET c3 = c6, c6 = c3 WHERE c3 = 3 * 10;
SELECT isnt((backfill_fingerprint('fk_wide')).hash, (SELECT hash FROM fk_known WHERE t = 'fk_wide'),
            'two values of a planned row swapped between columns: another fingerprint');
UPDATE fk_money SET revenue = revenue * 10 WHERE order_id = 7;
SELECT isnt((backfill_fingerprint('fk_money')).hash, (SELECT hash FROM fk_known WHERE t = 'fk_money'),
            'the varlena last in a planned row changed: another fingerprint');

SELECT * FROM finish();
ROLLBACK;
