-- test/fingerprint_parallel.sql: a fingerprint computed by parallel workers is the serial one.
--
-- With parallel query allowed, a whole table's fingerprint is read by a parallel scan of
-- backfill's own (the leader and its workers each sum the rows they read; that the workers
-- do start is checked by t/010_fingerprint_workers.pl, on a cluster of its own), and a
-- scoped one by backfill_fingerprint_agg (each worker sums its share of the rows, the leader
-- adds the sums); with it off, one process hashes every row, straight from the table, or
-- from the query when there is a scope.  All must give the same fingerprint for every kind
-- of value (arrays, composites, ranges, multiranges, json, numeric, NULLs, toasted values,
-- values hashed by their text), with dropped columns and columns in another physical order,
-- for a plain and a partitioned table, with a scope.  The aggregate's plans are checked to
-- be parallel, so the workers' path is the one exercised.
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(24);

CREATE SCHEMA fpp_s;
CREATE TYPE fpp_s.mood AS ENUM ('sad', 'ok', 'happy');
CREATE TYPE fpp_s.pair AS (x int, t text, a numeric[]);
CREATE TYPE fpp_s.tsr AS RANGE (subtype = timestamptz);
CREATE TABLE fpp_s.target (id int);

CREATE TABLE fpp_many (
    id int,
    gone text,
    big bigint,
    t text,
    n numeric,
    f8 float8,
    f4 float4,
    b bool,
    d date,
    ts timestamptz,
    iv interval,
    by bytea,
    u uuid,
    j json,
    jb jsonb,
    ia int[],
    ta text[],
    m2 int[][],
    p fpp_s.pair,
    r int4range,
    nr numrange,
    ur fpp_s.tsr,
    mr int4multirange,
    umr fpp_s.tsr_multirange,
    mood fpp_s.mood,
    rel regclass,
    pt point,
    bx box,
    ip inet
);
ALTER TABLE fpp_many DROP COLUMN gone;
INSERT INTO fpp_many
SELECT g, g::bigint * 1000003,
       CASE WHEN g % 11 = 0 THEN NULL WHEN g % 97 = 0 THEN repeat('long ' || g, 2000) ELSE 'text ' || g END,
       CASE WHEN g % 13 = 0 THEN NULL ELSE round(g / 7.0, g % 5) END,
       CASE WHEN g % 17 = 0 THEN 'NaN'::float8 ELSE g / 3.0 END,
       g / 9.0, g % 2 = 0,
       date '2026-01-01' + g % 400,
       timestamptz '2026-01-01 00:00+00' + g * interval '37 minutes',
       g * interval '1 second' + (g % 3) * interval '1 month',
       decode(md5(g::text), 'hex'),
       md5(g::text)::uuid,
       json_build_object('g', g, 'odd', g % 2 = 1),
       jsonb_build_object('g', g, 'a', jsonb_build_array(g, 'x')),
       CASE WHEN g % 19 = 0 THEN NULL ELSE ARRAY[g, NULL, g + 1] END,
       ARRAY['a' || g, NULL],
       ARRAY[[g, g + 1], [g + 2, g + 3]],
       ROW(g, 'p' || g, ARRAY[g / 3.0, NULL])::fpp_s.pair,
       int4range(g, g + g % 5),
       numrange(g / 3.0, NULL),
       fpp_s.tsr(timestamptz '2026-01-01 00:00+00' + g * interval '1 hour', NULL, '()'),
       int4multirange(int4range(g, g + 2), int4range(g + 5, g + 9)),
       fpp_s.tsr_multirange(fpp_s.tsr(timestamptz '2026-01-01 00:00+00', timestamptz '2026-01-01 00:00+00' + g * interval '1 day')),
       (ARRAY['sad', 'ok', 'happy']::fpp_s.mood[])[g % 3 + 1],
       'fpp_s.target'::regclass,
       point(g, -g), box(point(0, 0), point(g, g)),
       ('10.0.' || g % 256 || '.' || g % 200)::inet
FROM generate_series(1, 4000) g;
INSERT INTO fpp_many (id) VALUES (0);	-- a row of NULLs
ANALYZE fpp_many;

-- The same rows in a table with its columns in another physical order.
CREATE TABLE fpp_reordered AS
SELECT ip, bx, pt, rel, mood, umr, mr, ur, nr, r, p, m2, ta, ia, jb, j, u, by, iv, ts, d, b,
       f4, f8, n, t, big, id
FROM fpp_many;
ANALYZE fpp_reordered;

CREATE TABLE fpp_part (id int, day date, v numeric, tags text[]) PARTITION BY RANGE (day);
CREATE TABLE fpp_part_1 PARTITION OF fpp_part FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
CREATE TABLE fpp_part_2 PARTITION OF fpp_part FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');
CREATE TABLE fpp_part_d PARTITION OF fpp_part DEFAULT;
INSERT INTO fpp_part
SELECT g, date '2026-01-01' + g % 90, CASE WHEN g % 7 = 0 THEN NULL ELSE g / 4.0 END, ARRAY['t' || g % 10]
FROM generate_series(1, 6000) g;
ANALYZE fpp_part;

-- Serial fingerprints first.
SET LOCAL max_parallel_workers_per_gather = 0;
CREATE TEMP TABLE fpp_serial AS
SELECT 'many' AS k, (backfill_fingerprint('fpp_many')).*
UNION ALL SELECT 'many scoped', (backfill_fingerprint('fpp_many', 'id % 3 = 1 AND t IS NOT NULL')).*
UNION ALL SELECT 'many none', (backfill_fingerprint('fpp_many', 'false')).*
UNION ALL SELECT 'part', (backfill_fingerprint('fpp_part')).*
UNION ALL SELECT 'part scoped', (backfill_fingerprint('fpp_part', $$day >= '2026-01-15' AND v IS NOT NULL$$)).*;

-- A scope of 'true' takes the query path: it gives what the direct read of the table gives.
SELECT is((SELECT row(f.*)::text FROM backfill_fingerprint('fpp_many', 'true') f),
          (SELECT row(rows, hash)::text FROM fpp_serial WHERE k = 'many'),
          'many types: the query path gives the direct read''s fingerprint');
SELECT is((SELECT row(f.*)::text FROM backfill_fingerprint('fpp_part', 'true') f),
          (SELECT row(rows, hash)::text FROM fpp_serial WHERE k = 'part'),
          'partitioned table: the query path gives the direct read''s fingerprint');

-- Parallel query forced on, even for small tables.
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;

CREATE FUNCTION pg_temp.plan_of(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text; result text := '';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        result := result || line || E'\n';
    END LOOP;
    RETURN result;
END $$;

CREATE FUNCTION pg_temp.agg_query(rel regclass, scope text DEFAULT 'true') RETURNS text LANGUAGE sql AS $$
    SELECT format('SELECT backfill_fingerprint_agg(%L::regclass, %s) FROM %s WHERE %s', rel, string_agg(quote_ident(attname), ', ' ORDER BY attnum), rel, scope)
    FROM pg_attribute WHERE attrelid = rel AND attnum > 0 AND NOT attisdropped
$$;

SELECT matches(pg_temp.plan_of(pg_temp.agg_query('fpp_many')),
               '(?s)Finalize Aggregate.*Gather.*Workers Planned: 2.*Partial Aggregate.*Parallel Seq Scan',
               'premise: the aggregate over the many-types table is planned in parallel');
SELECT matches(pg_temp.plan_of(pg_temp.agg_query('fpp_part', $$day >= '2026-01-15'$$)),
               '(?s)Finalize Aggregate.*Gather.*Workers Planned: 2.*Partial Aggregate.*Parallel Append',
               'premise: the aggregate over the partitioned table is planned in parallel (Parallel Append)');
CREATE FUNCTION pg_temp.workers_launched(query text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || query INTO j;
    RETURN (j -> 0 -> 'Plan' -> 'Plans' -> 0 ->> 'Workers Launched')::int;
END $$;
SELECT cmp_ok(pg_temp.workers_launched(pg_temp.agg_query('fpp_many')), '>', 0,
              'premise: parallel workers ran the aggregate');

SELECT is((backfill_fingerprint('fpp_many')).rows, 4001::bigint, 'premise: every row counted in parallel');
SELECT is((SELECT (backfill_fingerprint('fpp_many')).hash), (SELECT hash FROM fpp_serial WHERE k = 'many'),
          'many types: the parallel fingerprint is the serial one');
SELECT is((SELECT row(f.*)::text FROM backfill_fingerprint('fpp_many', 'id % 3 = 1 AND t IS NOT NULL') f),
          (SELECT row(rows, hash)::text FROM fpp_serial WHERE k = 'many scoped'),
          'many types with a scope: the parallel fingerprint is the serial one');
SELECT is((SELECT row(f.*)::text FROM backfill_fingerprint('fpp_many', 'false') f),
          (SELECT row(rows, hash)::text FROM fpp_serial WHERE k = 'many none'),
          'no row in scope: the parallel fingerprint is the serial one (0 rows, zero sums)');
SELECT is((SELECT (backfill_fingerprint('fpp_reordered')).hash), (SELECT hash FROM fpp_serial WHERE k = 'many'),
          'columns in another physical order: the parallel fingerprint is the serial one');
SELECT is((SELECT row(f.*)::text FROM backfill_fingerprint('fpp_many', 'true') f),
          (SELECT row(rows, hash)::text FROM fpp_serial WHERE k = 'many'),
          'many types: the parallel aggregate over the whole table gives the serial fingerprint');
SELECT is((SELECT row(f.*)::text FROM backfill_fingerprint('fpp_part', 'true') f),
          (SELECT row(rows, hash)::text FROM fpp_serial WHERE k = 'part'),
          'partitioned table: the parallel aggregate over all of it gives the serial fingerprint');
SELECT is((SELECT row(f.*)::text FROM backfill_fingerprint('fpp_part') f),
          (SELECT row(rows, hash)::text FROM fpp_serial WHERE k = 'part'),
          'partitioned table: the parallel fingerprint is the serial one');
SELECT is((SELECT row(f.*)::text FROM backfill_fingerprint('fpp_part', $$day >= '2026-01-15' AND v IS NOT NULL$$) f),
          (SELECT row(rows, hash)::text FROM fpp_serial WHERE k = 'part scoped'),
          'partitioned table with a scope: the parallel fingerprint is the serial one');

-- The aggregate called directly, in parallel, gives backfill_fingerprint's result.
SELECT is((SELECT (backfill_fingerprint_agg('fpp_many', id, big, t, n, f8, f4, b, d, ts, iv, by, u, j, jb, ia, ta, m2,
                                            p, r, nr, ur, mr, umr, mood, rel, pt, bx, ip)).hash FROM fpp_many),
          (SELECT hash FROM fpp_serial WHERE k = 'many'),
          'backfill_fingerprint_agg over every column is the serial fingerprint');
SELECT is((SELECT row(f.*)::text FROM (SELECT (backfill_fingerprint_agg('fpp_part', id, day, v, tags)).* FROM fpp_part
                                        WHERE day >= '2026-01-15' AND v IS NOT NULL) f),
          (SELECT row(rows, hash)::text FROM fpp_serial WHERE k = 'part scoped'),
          'backfill_fingerprint_agg over a partitioned table with a scope is the serial fingerprint');

-- Values hashed by their text: the workers print them under the same fixed settings.
SET LOCAL search_path = fpp_s, public;
SET LOCAL TimeZone = 'Asia/Kolkata';
SET LOCAL DateStyle = 'SQL, DMY';
SELECT is((SELECT rel::text FROM public.fpp_many WHERE id = 1), 'target', 'premise: the regclass prints unqualified here');
SELECT is((SELECT (backfill_fingerprint('public.fpp_many')).hash), (SELECT hash FROM fpp_serial WHERE k = 'many'),
          'under other settings the parallel fingerprint is the serial one');
SELECT is(current_setting('search_path'), 'fpp_s, public', 'search_path back as it was after the parallel scan');
RESET search_path;
RESET TimeZone;
RESET DateStyle;

-- A value changed in one row changes the parallel fingerprint as it does the serial one.
UPDATE fpp_many SET n = n + 1 WHERE id = 2000;
SELECT isnt((SELECT (backfill_fingerprint('fpp_many')).hash), (SELECT hash FROM fpp_serial WHERE k = 'many'),
            'one value changed: the parallel fingerprint changes');
SET LOCAL max_parallel_workers_per_gather = 0;
CREATE TEMP TABLE fpp_changed AS SELECT (backfill_fingerprint('fpp_many')).hash;
SET LOCAL max_parallel_workers_per_gather = 2;
SELECT is((SELECT (backfill_fingerprint('fpp_many')).hash), (SELECT hash FROM fpp_changed),
          'after a write in the same transaction the parallel fingerprint is the serial one');

-- A scope that may not run in a worker: the planner keeps the aggregate serial, same result.
CREATE FUNCTION pg_temp.unsafe_odd(i int) RETURNS bool LANGUAGE plpgsql PARALLEL UNSAFE AS $$ BEGIN RETURN i % 2 = 1; END $$;
SELECT is((SELECT row(f.*)::text FROM backfill_fingerprint('fpp_part', 'pg_temp.unsafe_odd(id)') f),
          (SELECT row(f.*)::text FROM backfill_fingerprint('fpp_part', 'id % 2 = 1') f),
          'a scope calling a parallel-unsafe function: a serial plan, the same fingerprint');

-- The aggregate refuses arguments that are not the columns of rel.
SELECT throws_ok($$SELECT backfill_fingerprint_agg('fpp_part', id, day, v) FROM fpp_part$$, '22023',
                 'backfill_fingerprint_agg needs every column of public.fpp_part, in order',
                 'a column missing: an error');
SELECT throws_ok($$SELECT backfill_fingerprint_agg('fpp_part', day, id, v, tags) FROM fpp_part$$, '22023',
                 'backfill_fingerprint_agg needs every column of public.fpp_part, in order',
                 'columns out of order: an error');

SELECT * FROM finish();
ROLLBACK;
