-- test/replace_visibility.sql: a replaced partition needs no VACUUM.
--
-- The new rows are written frozen in batches, as COPY FREEZE writes them, so every page of the
-- new partition is all-visible and all-frozen in the visibility map as soon as the swap commits:
-- an index-only scan reads no heap page, and VACUUM has nothing to do.  Also with a fillfactor,
-- TOASTed values, more rows than one batch, and inside a savepoint; and the batching keeps the
-- fill's promises (rows and fingerprint of the source, per-row constraint and bound checks).
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(12);
CREATE EXTENSION IF NOT EXISTS pg_visibility;

-- vm(rel): pages, all-visible pages and all-frozen pages of rel, as text.
CREATE FUNCTION pg_temp.vm(rel regclass) RETURNS text LANGUAGE sql AS $$
	SELECT pg_catalog.pg_relation_size(rel) / current_setting('block_size')::int || ' pages, '
		|| all_visible || ' all-visible, ' || all_frozen || ' all-frozen'
	FROM pg_visibility_map_summary(rel)
$$;
-- all_set(rel): rel has pages and every one is all-visible and all-frozen.
CREATE FUNCTION pg_temp.all_set(rel regclass) RETURNS boolean LANGUAGE sql AS $$
	SELECT pg_catalog.pg_relation_size(rel) > 0
	   AND all_visible = pg_catalog.pg_relation_size(rel) / current_setting('block_size')::int
	   AND all_frozen = all_visible
	FROM pg_visibility_map_summary(rel)
$$;
-- heap_fetches(query): the heap fetches of the index-only scan under query's plan.
CREATE FUNCTION pg_temp.heap_fetches(query text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE j jsonb;
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_bitmapscan = off;
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || query INTO j;
	RETURN (jsonb_path_query_first(j, 'strict $.**."Heap Fetches"'))::bigint;
END $$;

CREATE TABLE vis (id bigint NOT NULL, day date NOT NULL, amount numeric(12,2) CHECK (amount >= 0), note text,
	PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
CREATE TABLE vis_1 PARTITION OF vis FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
CREATE TABLE vis_2 PARTITION OF vis FOR VALUES FROM ('2026-03-02') TO ('2026-03-03') WITH (fillfactor = 50);
INSERT INTO vis SELECT g, '2026-03-01', g, NULL FROM generate_series(1, 100) g;
INSERT INTO vis SELECT g, '2026-03-02', g, NULL FROM generate_series(1, 100) g;
CREATE TABLE vis_src AS
SELECT g::bigint AS id, d AS day, ((g % 1000) / 10.0)::numeric(12,2) AS amount,
	CASE WHEN g % 500 = 0 THEN repeat(md5(g::text), 300) END AS note
FROM generate_series(1, 5000) g, (VALUES (date '2026-03-01'), (date '2026-03-02')) v(d);

SELECT is((SELECT rows_after FROM backfill_replace_partition('vis_1',
		'SELECT * FROM vis_src WHERE day >= $1 AND day < $2')), 5000::bigint,
	'a replacement of more rows than one batch writes them all');
SELECT is((SELECT fingerprint_after FROM backfill_log ORDER BY id DESC LIMIT 1),
	(SELECT (backfill_fingerprint('vis_src', $$day = '2026-03-01'$$)).hash),
	'the fingerprint recorded is the source''s');
SELECT ok(pg_temp.all_set('vis_1'), 'every page of the new partition is all-visible and all-frozen: ' || pg_temp.vm('vis_1'));
SELECT is((SELECT relallvisible FROM pg_class WHERE oid = 'vis_1'::regclass),
	(SELECT relpages FROM pg_class WHERE oid = 'vis_1'::regclass),
	'the statistics taken after the fill count every page all-visible');
SELECT is(pg_temp.heap_fetches('SELECT count(*) FROM vis_1 WHERE id > 0'), 0::bigint,
	'an index-only scan of the new partition reads no heap page');
SELECT is(pg_temp.heap_fetches('SELECT count(*) FROM vis WHERE day = ''2026-03-01'' AND id > 0'), 0::bigint,
	'nor one through the parent');

SAVEPOINT s;
SELECT is((SELECT rows_after FROM backfill_replace_partition('vis_2',
		'SELECT * FROM vis_src WHERE day >= $1 AND day < $2', keep_old => true)), 5000::bigint,
	'a replacement inside a savepoint, of a partition with a fillfactor');
RELEASE SAVEPOINT s;
SELECT ok(pg_temp.all_set('vis_2'), 'its pages are all-visible and all-frozen too: ' || pg_temp.vm('vis_2'));
SELECT cmp_ok(pg_relation_size('vis_2'), '>', pg_relation_size('vis_1'), 'the fillfactor was kept (the pages are half full)');

-- the checks of every row stay: a CHECK violation and a row outside the bound, after a full batch
SELECT throws_ok($$SELECT backfill_replace_partition('vis_1',
		'SELECT id, day, CASE WHEN id = 4000 THEN -1 ELSE amount END AS amount, note FROM vis_src WHERE day >= $1 AND day < $2')$$,
	'23514', NULL, 'a row breaking a CHECK constraint after the first batch fails the call');
SELECT throws_ok($$SELECT backfill_replace_partition('vis_1',
		'SELECT id, CASE WHEN id = 4000 THEN day + 1 ELSE day END AS day, amount, note FROM vis_src WHERE day >= $1 AND day < $2')$$,
	'23514', NULL, 'a row outside the bound after the first batch fails the call');
SELECT is((SELECT (backfill_fingerprint('vis_1')).hash), (SELECT (backfill_fingerprint('vis_src', $$day = '2026-03-01'$$)).hash),
	'and the partition keeps the rows it had');

SELECT * FROM finish();
ROLLBACK;
