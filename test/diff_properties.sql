-- test/diff_properties.sql: backfill_diff returns exactly the rows two queries disagree on.
--
-- Differences are planted in a copy of a 10000-row table: k changed rows (each in another
-- column, json and point included), k added and k removed. The diff must return exactly those
-- keys, each once, with the right label and the right rows, and nothing for identical data
-- whatever order or column order the queries return it in.
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(67);

CREATE TABLE src (id int, day date, amount numeric(12,2), label text, j json, p point);
INSERT INTO src
SELECT g, date '2026-03-01' + g % 31, g * 1.25, 'item ' || g,
       json_build_object('g', g, 'tags', json_build_array('a', g % 5)), point(g, g % 17)
FROM generate_series(1, 10000) g;

-- The planted keys for k: changed among ids 1..5000, removed among 5001..10000, added above.
CREATE FUNCTION pg_temp.planted(k int, what text) RETURNS SETOF int LANGUAGE sql AS $$
	SELECT CASE what
	       WHEN 'changed' THEN (i * 131) % 5000 + 1
	       WHEN 'removed' THEN 5000 + (i * 173) % 5000 + 1
	       ELSE 20000 + 3 * i END
	FROM generate_series(1, k) i
$$;

-- dst: a copy of src with k changed (column by column in turn), k removed and k added rows.
CREATE FUNCTION pg_temp.make_dst(k int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	DROP TABLE IF EXISTS dst;
	CREATE TABLE dst AS SELECT * FROM src ORDER BY random();
	UPDATE dst SET
		amount = CASE WHEN c.n % 7 = 0 THEN amount + 0.01 ELSE amount END,
		label = CASE WHEN c.n % 7 = 1 THEN label || '!' WHEN c.n % 7 = 2 THEN NULL ELSE label END,
		j = CASE WHEN c.n % 7 = 3 THEN json_build_object('g', id, 'tags', json_build_array('b', id % 5)) ELSE j END,
		p = CASE WHEN c.n % 7 = 4 THEN point(id, -1) ELSE p END,
		day = CASE WHEN c.n % 7 = 5 THEN day + 1 WHEN c.n % 7 = 6 THEN NULL ELSE day END
	FROM (SELECT row_number() OVER () AS n, id AS cid FROM pg_temp.planted(k, 'changed') id) c
	WHERE dst.id = c.cid;
	DELETE FROM dst WHERE id IN (SELECT pg_temp.planted(k, 'removed'));
	INSERT INTO dst
	SELECT id, date '2026-04-01', id * 0.5, 'new ' || id, json_build_object('new', true), point(0, id)
	FROM pg_temp.planted(k, 'added') id;
END $$;

-- Every assertion about one planted diff, a against b (labels as seen from a to b).
CREATE FUNCTION pg_temp.check_planted(k int) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_temp.make_dst(k);
	CREATE TEMP TABLE d ON COMMIT DROP AS
	SELECT * FROM backfill_diff('TABLE src', 'TABLE dst', ARRAY['id']);

	RETURN NEXT results_eq(
		$q$SELECT (key ->> 'id')::int FROM d WHERE change = 'changed' ORDER BY 1$q$,
		format('SELECT id FROM pg_temp.planted(%s, %L) id ORDER BY 1', k, 'changed'),
		format('k=%s: exactly the changed keys are ''changed'', each once', k));
	RETURN NEXT results_eq(
		$q$SELECT (key ->> 'id')::int FROM d WHERE change = 'added' ORDER BY 1$q$,
		format('SELECT id FROM pg_temp.planted(%s, %L) id ORDER BY 1', k, 'added'),
		format('k=%s: exactly the keys only in b are ''added'', each once', k));
	RETURN NEXT results_eq(
		$q$SELECT (key ->> 'id')::int FROM d WHERE change = 'removed' ORDER BY 1$q$,
		format('SELECT id FROM pg_temp.planted(%s, %L) id ORDER BY 1', k, 'removed'),
		format('k=%s: exactly the keys only in a are ''removed'', each once', k));
	RETURN NEXT is(
		(SELECT count(*) FROM d WHERE change NOT IN ('changed', 'added', 'removed')), 0::bigint,
		format('k=%s: no other change label', k));
	RETURN NEXT is(
		(SELECT count(*) FROM d
		 WHERE key IS DISTINCT FROM jsonb_build_object('id', coalesce((a_row ->> 'id')::int, (b_row ->> 'id')::int))
		    OR a_row IS DISTINCT FROM (SELECT to_jsonb(s) FROM src s WHERE s.id = (d.key ->> 'id')::int)
		    OR b_row IS DISTINCT FROM (SELECT to_jsonb(t) FROM dst t WHERE t.id = (d.key ->> 'id')::int)),
		0::bigint,
		format('k=%s: key, a_row and b_row are the rows of a and b for that key (NULL where absent)', k));

	-- the other way round, added and removed trade places
	DROP TABLE d;
	CREATE TEMP TABLE d ON COMMIT DROP AS
	SELECT * FROM backfill_diff('TABLE dst', 'TABLE src', ARRAY['id']);
	RETURN NEXT results_eq(
		$q$SELECT change, (key ->> 'id')::int FROM d ORDER BY 2$q$,
		format($f$SELECT 'changed', id FROM pg_temp.planted(%1$s, 'changed') id
		          UNION ALL SELECT 'removed', id FROM pg_temp.planted(%1$s, 'added') id
		          UNION ALL SELECT 'added', id FROM pg_temp.planted(%1$s, 'removed') id ORDER BY 2$f$, k),
		format('k=%s: sides swapped, ''added'' and ''removed'' trade places', k));
	DROP TABLE d;
END $$;

SELECT * FROM pg_temp.check_planted(1);
SELECT * FROM pg_temp.check_planted(7);
SELECT * FROM pg_temp.check_planted(60);
SELECT * FROM pg_temp.check_planted(0);

-- ============================================================ identical data
SELECT is((SELECT count(*) FROM backfill_diff('TABLE src', 'TABLE src', '{id}')), 0::bigint,
          'a table against itself: no rows');
CREATE TABLE src_copy AS SELECT * FROM src ORDER BY random();
SELECT is((SELECT count(*) FROM backfill_diff('TABLE src', 'TABLE src_copy', '{id}')), 0::bigint,
          'a table against a shuffled copy: no rows');
SELECT is((SELECT count(*) FROM backfill_diff('SELECT * FROM src ORDER BY id DESC',
                                              'SELECT * FROM src_copy ORDER BY label', '{id}')), 0::bigint,
          'queries returning the rows in different orders: no rows');
SELECT is((SELECT count(*) FROM backfill_diff('SELECT * FROM src WHERE false', 'SELECT * FROM src WHERE false', '{id}')),
          0::bigint, 'two empty queries: no rows');
SELECT results_eq(
	$$SELECT change, count(*) FROM backfill_diff('SELECT * FROM src WHERE false', 'TABLE src', '{id}') GROUP BY 1$$,
	$$VALUES ('added', 10000::bigint)$$,
	'empty a: every row of b is added');
SELECT results_eq(
	$$SELECT change, count(*) FROM backfill_diff('TABLE src', 'SELECT * FROM src WHERE id > 9990', '{id}') GROUP BY 1$$,
	$$VALUES ('removed', 9990::bigint)$$,
	'b a subset of a: the rest is removed');

-- ============================================================ column order
-- Columns are matched by name: both sides list them in other orders, of different types.
SELECT pg_temp.make_dst(5);
SELECT results_eq(
	$$SELECT change, (key ->> 'id')::int FROM backfill_diff(
		'SELECT label, p, id, j, day, amount FROM src',
		'SELECT amount, j, day, id, p, label FROM dst', '{id}') ORDER BY 2$$,
	$$SELECT change, (key ->> 'id')::int FROM backfill_diff('TABLE src', 'TABLE dst', '{id}') ORDER BY 2$$,
	'columns in different orders on both sides: the same diff as in table order');
SELECT is((SELECT count(*) FROM backfill_diff('SELECT id, label, amount FROM src',
                                              'SELECT amount, id, label FROM src_copy', '{id}')), 0::bigint,
          'same rows, columns reordered on side b only: no rows');
SELECT is((SELECT count(*) FROM backfill_diff('SELECT amount, label, id FROM src',
                                              'SELECT id, amount, label FROM src_copy', '{id}')), 0::bigint,
          'same rows, key column last on side a and first on side b: no rows');
SELECT is(
	(SELECT count(*) FROM backfill_diff('SELECT id, label, amount FROM src',
	                                    'SELECT amount, label, id FROM dst', '{id}') d
	 WHERE a_row IS DISTINCT FROM (SELECT to_jsonb(x) FROM (SELECT id, label, amount FROM src) x WHERE x.id = (d.key ->> 'id')::int)
	    OR b_row IS DISTINCT FROM (SELECT to_jsonb(x) FROM (SELECT id, label, amount FROM dst) x WHERE x.id = (d.key ->> 'id')::int)),
	0::bigint, 'with b''s columns in another order, a_row and b_row still hold the right values under the right names');

-- ============================================================ json and point
CREATE TABLE jp_a (id int, j json, p point);
CREATE TABLE jp_b (id int, j json, p point);
INSERT INTO jp_a VALUES (1, '{"a": 1}', '(1,2)'), (2, '[1, 2]', '(0,0)'), (3, 'null', NULL), (4, '"x"', '(5,5)');
INSERT INTO jp_b VALUES (1, '{"a": 1}', '(1,2)'), (2, '[1, 2]', '(0,0.5)'), (3, 'null', NULL), (4, '"y"', '(5,5)');
SELECT results_eq(
	$$SELECT change, key, a_row, b_row FROM backfill_diff('TABLE jp_a', 'TABLE jp_b', '{id}') ORDER BY (key ->> 'id')::int$$,
	$$VALUES ('changed', '{"id": 2}'::jsonb, '{"id": 2, "j": [1, 2], "p": "(0,0)"}'::jsonb, '{"id": 2, "j": [1, 2], "p": "(0,0.5)"}'::jsonb),
	         ('changed', '{"id": 4}'::jsonb, '{"id": 4, "j": "x", "p": "(5,5)"}'::jsonb, '{"id": 4, "j": "y", "p": "(5,5)"}'::jsonb)$$,
	'json and point columns (no hash opclass) are compared');
SELECT results_eq(
	$$SELECT change, key FROM backfill_diff('TABLE jp_a', 'TABLE jp_b', '{p}') ORDER BY change COLLATE "C", key ->> 'p' COLLATE "C"$$,
	$$VALUES ('added', '{"p": "(0,0.5)"}'::jsonb), ('changed', '{"p": "(5,5)"}'::jsonb), ('removed', '{"p": "(0,0)"}'::jsonb)$$,
	'a point column works as a key (NULL point included)');

-- ============================================================ multi-column keys
CREATE TABLE mk_a (region text, day date, n int, total numeric);
INSERT INTO mk_a SELECT r, date '2026-03-01' + d, d, d * 10
FROM unnest(ARRAY['north', 'south', 'east']) r, generate_series(0, 29) d;
CREATE TABLE mk_b AS SELECT * FROM mk_a;
UPDATE mk_b SET total = total + 1 WHERE region = 'south' AND day = '2026-03-05';
DELETE FROM mk_b WHERE region = 'east' AND day = '2026-03-10';
INSERT INTO mk_b VALUES ('west', '2026-03-10', 9, 90);
-- the same day in another region, and the same region on another day, are other keys
INSERT INTO mk_b VALUES ('north', '2026-04-01', 31, 310);
SELECT results_eq(
	$$SELECT change, key ->> 'region', key ->> 'day' FROM backfill_diff('TABLE mk_a', 'TABLE mk_b', '{region,day}') ORDER BY key ->> 'region' COLLATE "C", key ->> 'day' COLLATE "C"$$,
	$$VALUES ('removed', 'east', '2026-03-10'), ('added', 'north', '2026-04-01'),
	         ('changed', 'south', '2026-03-05'), ('added', 'west', '2026-03-10')$$,
	'two-column key: each planted difference once, with its label');
SELECT is(
	(SELECT key FROM backfill_diff('TABLE mk_a', 'TABLE mk_b', '{day,region}') WHERE change = 'changed'),
	'{"day": "2026-03-05", "region": "south"}'::jsonb,
	'key holds exactly the key columns');
SELECT throws_ok(
	$$SELECT * FROM backfill_diff('TABLE mk_a', 'TABLE mk_b', '{region}')$$,
	'23505', 'key (region) is not unique in query a',
	'a key column that alone is not unique is refused');

-- ============================================================ NULL in keys
CREATE TABLE nk_a (id int, sub int, v text);
CREATE TABLE nk_b (id int, sub int, v text);
INSERT INTO nk_a VALUES (NULL, 1, 'x'), (1, NULL, 'y'), (1, 1, 'z'), (NULL, NULL, 'w');
INSERT INTO nk_b VALUES (NULL, 1, 'x'), (1, NULL, 'Y'), (1, 1, 'z'), (2, NULL, 'n');
SELECT results_eq(
	$$SELECT change, key FROM backfill_diff('TABLE nk_a', 'TABLE nk_b', '{id,sub}') ORDER BY change COLLATE "C"$$,
	$$VALUES ('added', '{"id": 2, "sub": null}'::jsonb), ('changed', '{"id": 1, "sub": null}'::jsonb),
	         ('removed', '{"id": null, "sub": null}'::jsonb)$$,
	'keys holding NULL match the same NULL key on the other side');
SELECT is(
	(SELECT count(*) FROM backfill_diff('SELECT NULL::int AS id, 1 AS v', 'SELECT NULL::int AS id, 1 AS v', '{id}')),
	0::bigint, 'one NULL key on each side with the same row: no difference');

-- ============================================================ duplicate keys
SELECT throws_ok(
	$$SELECT * FROM backfill_diff('SELECT * FROM src UNION ALL SELECT * FROM src WHERE id = 77', 'TABLE src', '{id}')$$,
	'23505', 'key (id) is not unique in query a',
	'a duplicated key in a: 23505 naming query a');
SELECT throws_ok(
	$$SELECT * FROM backfill_diff('TABLE src', 'SELECT * FROM src UNION ALL SELECT * FROM src WHERE id = 77', '{id}')$$,
	'23505', 'key (id) is not unique in query b',
	'a duplicated key in b: 23505 naming query b');
SELECT throws_ok(
	$$SELECT * FROM backfill_diff('TABLE src', 'SELECT * FROM src UNION ALL SELECT 20001, day, amount, label, j, p FROM src WHERE id = 77 UNION ALL SELECT 20001, day, amount, label, j, p FROM src WHERE id = 78', '{id}')$$,
	'23505', 'key (id) is not unique in query b',
	'a key only in b, twice (with different rows): 23505 naming query b');
SELECT throws_like(
	$$SELECT * FROM backfill_diff('SELECT 1 AS id, 2 AS v UNION ALL SELECT 1, 3', 'SELECT 1 AS id, 2 AS v', '{id}')$$,
	'%not unique in query a%',
	'two rows of a with one key but different values are a duplicate too');
SELECT throws_like(
	$$SELECT * FROM backfill_diff('SELECT 5 AS id', 'SELECT 5 AS id UNION ALL SELECT 5', '{id}')$$,
	'%not unique in query b%',
	'a key in both, repeated in b: named as b''s');
-- The detail of the error a diff of a and b raises for a repeated key.
CREATE FUNCTION pg_temp.duplicate_detail(a text, b text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	d text;
BEGIN
	PERFORM * FROM backfill_diff(a, b, '{id}');
	RETURN NULL;
EXCEPTION WHEN unique_violation THEN
	GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
	RETURN d;
END $$;
SELECT is(pg_temp.duplicate_detail('TABLE src', 'SELECT * FROM src UNION ALL SELECT * FROM src WHERE id = 77'),
          'Key {"id": 77} appears more than once in query b.',
          'the detail names the duplicated key and the side');

-- ============================================================ type mismatches
SELECT throws_ok(
	$$SELECT * FROM backfill_diff('SELECT id, amount FROM src', 'SELECT id, amount::float8 AS amount FROM src', '{id}')$$,
	'42804', 'column "amount" is of type numeric in query a but double precision in query b',
	'a column of another type in b: 42804');
SELECT throws_ok(
	$$SELECT * FROM backfill_diff('SELECT id::bigint AS id, label FROM src', 'SELECT id, label FROM src', '{id}')$$,
	'42804', 'column "id" is of type bigint in query a but integer in query b',
	'a key column of another type in b: 42804');
SELECT throws_ok(
	$$SELECT * FROM backfill_diff('SELECT id, label FROM src', 'SELECT id, label, amount FROM src', '{id}')$$,
	'42804', 'queries a and b return different columns',
	'b returns one column more: 42804');
SELECT throws_ok(
	$$SELECT * FROM backfill_diff('SELECT id, label FROM src', 'SELECT id, label AS name FROM src', '{id}')$$,
	'42804', 'queries a and b return different columns',
	'b names a column differently: 42804');

-- ============================================================ unstable queries
-- a is read again to show removed and changed rows: if it returns other rows then, an error.
SELECT throws_ok(
	$$SELECT * FROM backfill_diff('SELECT id, random() AS x FROM src WHERE id <= 3', 'SELECT id, 2::float8 AS x FROM src WHERE id <= 3', '{id}')$$,
	'55000', 'query a returned different rows when read a second time',
	'a query a that returns other rows on its second reading is an error, not a wrong diff');

-- ============================================================ rows read again by TID
-- Rows that come straight from tables (TABLE t, SELECT * FROM t WHERE ...) are looked up in
-- batches and the few shown are fetched again by their TIDs; rows computed or sorted are read
-- again by a second run.  Both ways must give the same diff, whatever the tables look like.
CREATE FUNCTION pg_temp.same_diff(a1 text, b1 text, a2 text, b2 text, key text[]) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
	m bigint;
BEGIN
	CREATE TEMP TABLE d1 AS SELECT * FROM backfill_diff(a1, b1, key);
	CREATE TEMP TABLE d2 AS SELECT * FROM backfill_diff(a2, b2, key);
	SELECT count(*) INTO n FROM d1;
	SELECT count(*) INTO m FROM ((TABLE d1 EXCEPT ALL TABLE d2) UNION ALL (TABLE d2 EXCEPT ALL TABLE d1)) x;
	DROP TABLE d1, d2;
	RETURN n > 0 AND m = 0;
END $$;
SELECT pg_temp.make_dst(60);
UPDATE src SET label = label || '?' WHERE id % 1000 = 3;	-- rows of a moved by an update too
SELECT ok(pg_temp.same_diff('TABLE src', 'TABLE dst', 'SELECT * FROM src ORDER BY id', 'SELECT * FROM dst ORDER BY id', '{id}'),
          'tables on both sides: the same diff as of the same rows sorted (read again by a second run)');
SELECT ok(pg_temp.same_diff('TABLE src', 'SELECT * FROM dst WHERE id < 20100 UNION ALL SELECT id + 1, day, amount, label, j, p FROM dst WHERE id >= 20100',
                            'SELECT * FROM src ORDER BY id', 'SELECT * FROM (SELECT * FROM dst WHERE id < 20100 UNION ALL SELECT id + 1, day, amount, label, j, p FROM dst WHERE id >= 20100) s ORDER BY id', '{id}'),
          'b of table rows and computed rows: the same diff');
CREATE TABLE src_parts (LIKE src) PARTITION BY RANGE (id);
CREATE TABLE src_parts_1 PARTITION OF src_parts FOR VALUES FROM (MINVALUE) TO (3000);
CREATE TABLE src_parts_2 PARTITION OF src_parts FOR VALUES FROM (3000) TO (7000);
CREATE TABLE src_parts_3 PARTITION OF src_parts FOR VALUES FROM (7000) TO (MAXVALUE);
INSERT INTO src_parts SELECT * FROM src;
SELECT ok(pg_temp.same_diff('TABLE src_parts', 'TABLE dst', 'SELECT * FROM src ORDER BY id', 'SELECT * FROM dst ORDER BY id', '{id}'),
          'a partitioned a (rows from three tables): the same diff');
CREATE TABLE dst_dropped AS SELECT id, 0 AS gone, day, amount, label, j, p FROM dst;
ALTER TABLE dst_dropped DROP COLUMN gone;
SELECT ok(pg_temp.same_diff('TABLE dst_dropped', 'TABLE src', 'SELECT * FROM dst ORDER BY id', 'SELECT * FROM src ORDER BY id', '{id}'),
          'a table with a dropped column as a: the same diff');
SELECT pg_temp.make_dst(2000);	-- more differences than are fetched by TID
SELECT ok(pg_temp.same_diff('TABLE src', 'TABLE dst', 'SELECT * FROM src ORDER BY id', 'SELECT * FROM dst ORDER BY id', '{id}'),
          'many differences (a read again by a second run): the same diff');
SELECT is(pg_temp.duplicate_detail('SELECT * FROM src UNION ALL SELECT * FROM src WHERE id = 77', 'TABLE src'),
          'Key {"id": 77} appears more than once in query a.',
          'a key repeated by table rows of a, looked up in batches: the detail still names it');

-- ============================================================ every byte counts
-- (values that put in front of the change the bytes a wyhash-style mixer multiplies by zero)
SELECT results_eq(
	$$SELECT change, key FROM backfill_diff($q$SELECT 1 AS id, '\xd17e03e7db28b4a001'::bytea AS v$q$,
	                                        $q$SELECT 1 AS id, '\xd17e03e7db28b4a0ffff'::bytea AS v$q$, '{id}')$$,
	$$VALUES ('changed', '{"id": 1}'::jsonb)$$,
	'a bytea value changed after a crafted 8-byte prefix is reported as changed');
SELECT results_eq(
	$$SELECT change, key FROM backfill_diff(
		$q$SELECT 1 AS id, decode(repeat('aa', 16) || 'db28b4a0d17e03e7' || repeat('bb', 24), 'hex') AS v$q$,
		$q$SELECT 1 AS id, decode(repeat('11', 16) || 'db28b4a0d17e03e7' || repeat('bb', 24), 'hex') AS v$q$, '{id}')$$,
	$$VALUES ('changed', '{"id": 1}'::jsonb)$$,
	'a bytea value changed before a crafted 16-byte block is reported as changed');

-- ============================================================ values, not bits
-- Equal values that print the same are the same, whatever their bits.
SELECT is(
	(SELECT count(*) FROM backfill_diff($$SELECT 1 AS id, 'NaN'::float8 AS v$$,
	                                    $$SELECT 1 AS id, 'Infinity'::float8 * 0 AS v$$, '{id}')),
	0::bigint, 'float8 NaN computed by arithmetic equals the literal NaN');
SELECT is(
	(SELECT count(*) FROM backfill_diff($$SELECT 'NaN'::float8 AS k, 1 AS v$$,
	                                    $$SELECT '-NaN'::float8 AS k, 1 AS v$$, '{k}')),
	0::bigint, 'a NaN key matches the NaN key of the other side');

-- ============================================================ every change can be seen
-- jsonb shows json '{"a":1}' and '{"a": 1}' alike, and a float's -0 as 0: a changed row whose
-- two sides would read the same in jsonb is shown by its values' text
CREATE TABLE sh_a (id int, j json, f float8);
CREATE TABLE sh_b (id int, j json, f float8);
INSERT INTO sh_a VALUES (1, '{"a":1}', 1), (2, '[1]', '-0'), (3, '[1]', 5);
INSERT INTO sh_b VALUES (1, '{"a": 1}', 1), (2, '[1]', '0'), (3, '[2]', 5);
SELECT is((SELECT count(*) FROM backfill_diff('TABLE sh_a', 'TABLE sh_b', '{id}') WHERE a_row = b_row), 0::bigint,
	'no changed row is shown with two equal sides');
SELECT results_eq(
	$$SELECT key->>'id', a_row->>'j', b_row->>'j', a_row->>'f', b_row->>'f'
	  FROM backfill_diff('TABLE sh_a', 'TABLE sh_b', '{id}') WHERE key->>'id' IN ('1', '2') ORDER BY 1$$,
	$$VALUES ('1', '{"a":1}', '{"a": 1}', '1', '1'), ('2', '[1]', '[1]', '-0', '0')$$,
	'json spacing and a float''s -0 are shown by the values'' text');
SELECT results_eq(
	$$SELECT a_row, b_row FROM backfill_diff('TABLE sh_a', 'TABLE sh_b', '{id}') WHERE key->>'id' = '3'$$,
	$$VALUES ('{"id": 3, "j": [1], "f": 5}'::jsonb, '{"id": 3, "j": [2], "f": 5}'::jsonb)$$,
	'a change jsonb can show is shown as jsonb, as before');
-- a float key 0 on one side and -0 on the other: two keys (compared by representation),
-- shown by their text, so the removed one and the added one do not read alike
SELECT results_eq(
	$$SELECT change, key FROM backfill_diff('SELECT 0::float8 AS k, 1 AS v', 'SELECT ''-0''::float8 AS k, 1 AS v', '{k}')
	  ORDER BY change COLLATE "C"$$,
	$$VALUES ('added', '{"k": "-0"}'::jsonb), ('removed', '{"k": "0"}'::jsonb)$$,
	'a float key 0 and -0: the added and removed keys are shown by their text');
SELECT is((SELECT count(DISTINCT key) FROM backfill_diff('SELECT 0::float8 AS k, 1 AS v', 'SELECT ''-0''::float8 AS k, 1 AS v', '{k}')),
	2::bigint, 'and read as two keys');

SELECT * FROM finish();
ROLLBACK;
