-- test/hostile_values.sql: values built to exhaust the server while backfill hashes them.
--
-- Any role can build a value that nests without bound (a record holding a record holding a
-- record..., or records inside arrays inside records) with its own function and hand it to
-- backfill_diff.  Hashing such a value must stop with "stack depth limit exceeded" (54001),
-- never crash the server, whether the value is in a key column or another column; a value
-- nested less deeply is hashed as before.
BEGIN;
SELECT plan(9);

-- nest(n): ROW(ROW(...ROW(1)...)), n levels deep.
CREATE FUNCTION pg_temp.nest(n int) RETURNS record LANGUAGE plpgsql AS $$
DECLARE
    r record := ROW(1);
BEGIN
    FOR i IN 1..n LOOP
        r := ROW(r);
    END LOOP;
    RETURN r;
END $$;

-- nest_in_arrays(n): ROW(ARRAY[ROW(ARRAY[...ROW(1)...])]), n levels of each.
CREATE FUNCTION pg_temp.nest_in_arrays(n int) RETURNS record LANGUAGE plpgsql AS $$
DECLARE
    r record := ROW(1);
BEGIN
    FOR i IN 1..n LOOP
        r := ROW(ARRAY[r]);
    END LOOP;
    RETURN r;
END $$;

-- The depths are far beyond what max_stack_depth (2MB) lets the hasher walk.  Both sides
-- hold the same value, so only the hasher walks it (rows that differ are also written as
-- jsonb, whose own depth check would stop a deep value first); a value deep enough to
-- exhaust the process's whole stack (some 80000 levels) crashed the server before the
-- hasher checked its depth, but takes a minute to build.
SELECT throws_ok(
    $$SELECT * FROM backfill_diff('SELECT 1 AS k, pg_temp.nest(30000) AS v',
                                  'SELECT 1 AS k, pg_temp.nest(30000) AS v', '{k}')$$,
    '54001', NULL,
    'a record nested 30000 deep in a column: stack depth limit exceeded');
SELECT throws_ok(
    $$SELECT * FROM backfill_diff('SELECT pg_temp.nest(30000) AS k',
                                  'SELECT pg_temp.nest(30000) AS k', '{k}')$$,
    '54001', NULL,
    'a record nested 30000 deep in the key: stack depth limit exceeded');
SELECT throws_ok(
    $$SELECT * FROM backfill_diff('SELECT 1 AS k, pg_temp.nest_in_arrays(20000) AS v',
                                  'SELECT 1 AS k, pg_temp.nest_in_arrays(20000) AS v', '{k}')$$,
    '54001', NULL,
    'records in arrays in records 20000 deep: stack depth limit exceeded');
SELECT is((SELECT 1), 1, 'the session (and so the server) is still up');

-- A value nested less deeply is hashed by what it holds.
SELECT is((SELECT count(*) FROM backfill_diff('SELECT 1 AS k, pg_temp.nest(500) AS v',
                                              'SELECT 1 AS k, pg_temp.nest(500) AS v', '{k}')),
          0::bigint, 'records nested 500 deep, equal: no difference');
SELECT is((SELECT change FROM backfill_diff('SELECT 1 AS k, pg_temp.nest(500) AS v',
                                            'SELECT 1 AS k, pg_temp.nest(501) AS v', '{k}')),
          'changed', 'records nested 500 and 501 deep: changed');
SELECT is((SELECT count(*) FROM backfill_diff('SELECT 1 AS k, pg_temp.nest_in_arrays(300) AS v',
                                              'SELECT 1 AS k, pg_temp.nest_in_arrays(300) AS v', '{k}')),
          0::bigint, 'records in arrays 300 deep, equal: no difference');
SELECT is((SELECT array_agg(change ORDER BY change) FROM backfill_diff(
               'SELECT pg_temp.nest(400) AS k', 'SELECT pg_temp.nest(401) AS k', '{k}')),
          '{added,removed}'::text[], 'nested keys of different depths are different keys');
SELECT is((SELECT 1), 1, 'the session is still up at the end');

SELECT * FROM finish();
ROLLBACK;
