-- test/fingerprint_settings.sql: fingerprints and diffs do not depend on session settings.
--
-- A value's text can depend on TimeZone, DateStyle, IntervalStyle, extra_float_digits,
-- bytea_output and search_path.  The same rows must fingerprint alike under any of them (or
-- backfill_undo would refuse an untouched partition fingerprinted from another time zone),
-- and values that differ must not fingerprint or diff alike because the session prints them
-- alike (two cubes under extra_float_digits = 0).  The queries a diff or a fingerprint's
-- scope runs still see the caller's own settings, before, during and after the call.
BEGIN;
SET LOCAL client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS cube;
SELECT plan(27);

CREATE SCHEMA set_s;
CREATE TABLE set_s.target (id int);
CREATE TYPE set_mood AS ENUM ('sad', 'ok', 'happy');
CREATE TYPE set_tstzr AS RANGE (subtype = timestamptz);
CREATE TYPE set_ivr AS RANGE (subtype = interval);
CREATE TYPE set_pair AS (c cube, m tstzmultirange);

-- One table per kind of value, and one with all of them.
CREATE TABLE set_all (
    id int,
    mr tstzmultirange,
    dmr datemultirange,
    tmr tsmultirange,
    nmr nummultirange,
    ur set_tstzr,
    umr set_tstzr_multirange,
    ivr set_ivr,
    ivmr set_ivr_multirange,
    cb cube,
    cbs cube[],
    mood set_mood,
    rel regclass,
    pair set_pair,
    ts timestamptz,
    iv interval,
    f8 float8,
    b bytea
);
INSERT INTO set_all
SELECT g,
       tstzmultirange(tstzrange('2026-03-01 10:00+00'::timestamptz + g * interval '1 hour',
                                '2026-03-01 12:30+00'::timestamptz + g * interval '1 hour'),
                      tstzrange('2026-04-01 00:00+05', NULL)),
       datemultirange(daterange(date '2026-03-01' + g, date '2026-03-09' + g)),
       tsmultirange(tsrange('2026-03-01 10:00', '2026-03-02 11:00')),
       nummultirange(numrange(g / 3.0, g)),
       set_tstzr('2026-03-01 23:30+00'::timestamptz + g * interval '1 day', NULL),
       set_tstzr_multirange(set_tstzr('2026-03-01 23:30+00', '2026-03-05 01:00+00')),
       set_ivr(interval '1 day 2 hours', interval '1 mon 3 days' + g * interval '1 second'),
       set_ivr_multirange(set_ivr(interval '-1 day', interval '2 years 1 second')),
       cube(ARRAY[g / 7.0, 1.0 / 3, pi() * g]::float8[]),
       ARRAY[cube(g / 9.0), cube(1e-20 * g)],
       (ARRAY['sad', 'ok', 'happy']::set_mood[])[1 + g % 3],
       'set_s.target'::regclass,
       ROW(cube(1.0 / g), tstzmultirange(tstzrange('2026-03-01 10:00+00', '2026-03-01 11:00+00')))::set_pair,
       '2026-03-01 23:30:00.123456+00'::timestamptz + g * interval '1 minute',
       interval '1 day 02:03:04.5' * g,
       1.0 / g,
       '\x00ff'::bytea
FROM generate_series(1, 50) g;

CREATE TEMP TABLE seen (setting text, col text, fp text);

-- note(label): every column's fingerprint (as a one-column scope) and the whole row's.
CREATE FUNCTION pg_temp.note(label text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    c text;
BEGIN
    FOR c IN SELECT attname FROM pg_attribute
             WHERE attrelid = 'set_all'::regclass AND attnum > 0 AND NOT attisdropped LOOP
        EXECUTE format('CREATE TEMP TABLE set_col AS SELECT %I FROM set_all', c);
        INSERT INTO seen SELECT label, c, (backfill_fingerprint('set_col')).hash;
        DROP TABLE set_col;
    END LOOP;
    INSERT INTO seen SELECT label, '(row)', (backfill_fingerprint('set_all')).hash;
END $$;

SELECT pg_temp.note('default');

SET LOCAL TimeZone = 'America/New_York';
SET LOCAL DateStyle = 'SQL, DMY';
SET LOCAL IntervalStyle = 'sql_standard';
SET LOCAL extra_float_digits = 0;
SET LOCAL bytea_output = 'escape';
SET LOCAL search_path = set_s, public;
SELECT pg_temp.note('new_york_sql');
SELECT is(current_setting('TimeZone'), 'America/New_York', 'fingerprinting left TimeZone as the session set it');
SELECT is(current_setting('DateStyle'), 'SQL, DMY', 'and DateStyle');
SELECT is(current_setting('IntervalStyle'), 'sql_standard', 'and IntervalStyle');
SELECT is(current_setting('extra_float_digits'), '0', 'and extra_float_digits');
SELECT is(current_setting('bytea_output'), 'escape', 'and bytea_output');
SELECT is(current_setting('search_path'), 'set_s, public', 'and search_path');

SET LOCAL TimeZone = 'Asia/Kolkata';
SET LOCAL DateStyle = 'German';
SET LOCAL IntervalStyle = 'iso_8601';
SET LOCAL extra_float_digits = -15;
SET LOCAL search_path = public;
SELECT pg_temp.note('kolkata_german');

SET LOCAL TimeZone = 'Pacific/Chatham';
SET LOCAL DateStyle = 'Postgres, MDY';
SET LOCAL IntervalStyle = 'postgres_verbose';
SET LOCAL extra_float_digits = 3;
SELECT pg_temp.note('chatham_postgres');

RESET TimeZone; RESET DateStyle; RESET IntervalStyle; RESET extra_float_digits;
RESET bytea_output; RESET search_path;

SELECT is((SELECT count(DISTINCT setting) FROM seen), 4::bigint, 'premise: four sets of settings seen');
SELECT is((SELECT count(DISTINCT col) FROM seen), 19::bigint, 'premise: every column and the row');
SELECT is((SELECT array_agg(col ORDER BY col COLLATE "C") FROM (
               SELECT col FROM seen GROUP BY col HAVING count(DISTINCT fp) > 1) d),
          NULL, 'every column and the whole row fingerprint alike under the four sets of settings');
SELECT is((SELECT count(DISTINCT fp) FROM seen WHERE col = '(row)'), 1::bigint,
          'the whole row: one fingerprint');
SELECT is((SELECT count(DISTINCT fp) FROM seen WHERE col = 'mr'), 1::bigint,
          'tstzmultirange: one fingerprint');
SELECT is((SELECT count(DISTINCT fp) FROM seen WHERE col = 'cb'), 1::bigint,
          'cube: one fingerprint');

-- Values that the session prints alike are still different values.
CREATE TABLE set_cube_a (id int, c cube);
CREATE TABLE set_cube_b (id int, c cube);
INSERT INTO set_cube_a VALUES (1, cube(1.0)), (2, cube(ARRAY[0.1, 0.2]::float8[]));
INSERT INTO set_cube_b VALUES (1, cube(1.0000000000000002)), (2, cube(ARRAY[0.1, 0.2]::float8[]));
SET LOCAL extra_float_digits = 0;
SELECT is((SELECT c::text FROM set_cube_a WHERE id = 1), (SELECT c::text FROM set_cube_b WHERE id = 1),
          'premise: with extra_float_digits = 0 the two cubes print alike');
SELECT isnt((backfill_fingerprint('set_cube_a')).hash, (backfill_fingerprint('set_cube_b')).hash,
            'with extra_float_digits = 0 two tables with different cubes fingerprint differently');
SELECT is((SELECT array_agg(change || ' ' || (key->>'id')) FROM backfill_diff(
               'SELECT id, c FROM set_cube_a', 'SELECT id, c FROM set_cube_b', '{id}')),
          '{"changed 1"}'::text[], 'and backfill_diff reports the cube that changed');
SELECT is((SELECT array_agg(change ORDER BY change) FROM backfill_diff(
               'SELECT c FROM set_cube_a WHERE id = 1', 'SELECT c FROM set_cube_b WHERE id = 1', '{c}')),
          '{added,removed}'::text[], 'different cubes as keys are different keys');
SELECT is((SELECT count(*) FROM backfill_diff(
               'SELECT c, 1 AS v FROM set_cube_a', 'SELECT c, 1 AS v FROM set_cube_a', '{c}')),
          0::bigint, 'equal cubes as keys are one key');
CREATE TABLE set_f8 (x float8);
INSERT INTO set_f8 VALUES (1.0000000000000002);
SELECT is((SELECT array_agg(change ORDER BY change) FROM backfill_diff(
               'SELECT 1.0::float8 AS x', 'SELECT x FROM set_f8', '{x}')),
          '{added,removed}'::text[], 'floats that print alike are different keys');
RESET extra_float_digits;

-- A tstzmultirange key is matched by its value, which its text in another zone is not.
SET LOCAL TimeZone = 'Asia/Tokyo';
CREATE TEMP TABLE set_tokyo AS SELECT mr, mr::text AS t, id FROM set_all WHERE id <= 5;
RESET TimeZone;
SELECT is((SELECT count(*) FROM backfill_diff(
               'SELECT t, id FROM set_tokyo', 'SELECT mr::text AS t, id FROM set_all WHERE id <= 5', '{id}')),
          5::bigint, 'premise: the text of a tstzmultirange changes with TimeZone');
SELECT is((SELECT count(*) FROM backfill_diff(
               'SELECT mr, id FROM set_tokyo', 'SELECT mr, id FROM set_all WHERE id <= 5', '{mr}')),
          0::bigint, 'tstzmultirange keys match by value');

-- The caller's queries run under the caller's settings, row after row, while values
-- printed under fixed settings are hashed.
SET LOCAL TimeZone = 'America/New_York';
SET LOCAL extra_float_digits = 0;
SELECT is((SELECT count(*) FROM backfill_diff(
               $q$SELECT g AS k, cube(g) AS c, current_setting('TimeZone') AS tz,
                         current_setting('extra_float_digits') AS efd FROM generate_series(1, 5) g$q$,
               $q$SELECT g AS k, cube(g) AS c, 'America/New_York'::text AS tz, '0'::text AS efd
                  FROM generate_series(1, 5) g$q$, '{k}')),
          0::bigint, 'the diff''s queries see the session''s settings on every row');
SELECT is((backfill_fingerprint('set_all', $s$current_setting('TimeZone') = 'America/New_York'
                                          AND current_setting('extra_float_digits') = '0'$s$)).rows,
          50::bigint, 'a fingerprint''s scope sees the session''s settings on every row');
SELECT is((SELECT a_row->>'ts' FROM backfill_diff(
               'SELECT 1 AS k, ts FROM set_all WHERE id = 1', 'SELECT 1 AS k, NULL::timestamptz AS ts', '{k}')),
          to_json((SELECT ts FROM set_all WHERE id = 1)) #>> '{}',
          'rows shown by backfill_diff are written in the session''s settings');
SELECT is(current_setting('TimeZone'), 'America/New_York', 'the diff left TimeZone as the session set it');
RESET TimeZone;
RESET extra_float_digits;

-- reg* names: by text, as a dump writes them, whatever search_path.
CREATE TABLE set_reg (r regclass);
INSERT INTO set_reg VALUES ('set_s.target');
SET LOCAL search_path = set_s, public;
SELECT is((SELECT r::text FROM public.set_reg), 'target', 'premise: with set_s searched the name prints unqualified');
CREATE TEMP TABLE set_reg_fp AS SELECT (backfill_fingerprint('public.set_reg')).hash AS h;
RESET search_path;
SELECT is((backfill_fingerprint('set_reg')).hash, (SELECT h FROM set_reg_fp),
          'a regclass fingerprints alike whatever search_path');
SELECT is(current_setting('search_path'), '"$user", public', 'search_path back as it was');

SELECT * FROM finish();
ROLLBACK;
