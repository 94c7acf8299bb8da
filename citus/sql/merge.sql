-- backfill_merge into a distributed partitioned table: co-located sources merge shard by
-- shard; what Citus cannot merge is refused before anything is read or written; writers
-- through a worker wait for the merge to commit.
SET datestyle = 'ISO';
\getenv worker1 BACKFILL_WORKER1_PORT
\getenv worker2 BACKFILL_WORKER2_PORT
CREATE SCHEMA cm;
SET search_path = cm, public;
CREATE TABLE cm.revenue (order_id bigint NOT NULL, day date NOT NULL, amount numeric(12,2) NOT NULL,
	note text, PRIMARY KEY (order_id, day)) PARTITION BY RANGE (day);
CREATE TABLE cm.revenue_20260314 PARTITION OF cm.revenue FOR VALUES FROM ('2026-03-14') TO ('2026-03-15');
CREATE TABLE cm.revenue_20260315 PARTITION OF cm.revenue FOR VALUES FROM ('2026-03-15') TO ('2026-03-16');
SELECT create_distributed_table('cm.revenue', 'order_id', shard_count => 4);
INSERT INTO cm.revenue SELECT g, date '2026-03-14' + (g % 2), g % 100, 'n' || g FROM generate_series(1, 1000) g;

-- the fixed model's rows for the 15th, distributed and co-located with the target
CREATE TABLE cm.model (order_id bigint, day date, amount numeric(12,2), note text);
SELECT create_distributed_table('cm.model', 'order_id', colocate_with => 'cm.revenue');
INSERT INTO cm.model SELECT order_id, day, CASE WHEN order_id % 7 = 0 THEN amount + 0.5 ELSE amount END, note
FROM cm.revenue WHERE day = '2026-03-15' AND order_id % 13 <> 0;
INSERT INTO cm.model SELECT g, '2026-03-15', 1, 'new' FROM generate_series(2001, 2101, 2) g;
CREATE TEMP TABLE day14 AS SELECT * FROM backfill_fingerprint('cm.revenue', $$day = '2026-03-14'$$);

SELECT inserted, updated, deleted, unchanged
FROM backfill_merge('cm.revenue', 'SELECT * FROM cm.model', ARRAY['order_id', 'day'],
	scope => $$day = '2026-03-15'$$, delete_missing => true);
-- the scope now is the model, the day outside it untouched, the record on the coordinator
SELECT (SELECT f FROM backfill_fingerprint('cm.revenue', $$day = '2026-03-15'$$) f) =
       (SELECT f FROM backfill_fingerprint('cm.model') f) AS scope_is_model,
       (SELECT f = d FROM backfill_fingerprint('cm.revenue', $$day = '2026-03-14'$$) f, day14 d) AS other_day_untouched;
SELECT operation, target, rows_before, rows_after, details->>'inserted' AS inserted
FROM backfill_log WHERE target = 'cm.revenue' ORDER BY id;
-- a rerun writes nothing
SELECT inserted, updated, deleted, unchanged
FROM backfill_merge('cm.revenue', 'SELECT * FROM cm.model', ARRAY['order_id', 'day'],
	scope => $$day = '2026-03-15'$$, delete_missing => true);

-- ... also when the source's values lack the column's typmod (compared as the column stores them)
SELECT inserted, updated, deleted, unchanged
FROM backfill_merge('cm.revenue', $$SELECT order_id, day, amount::numeric AS amount, note FROM cm.model$$,
	ARRAY['order_id', 'day'], scope => $$day = '2026-03-15'$$);

-- What Citus cannot merge is refused up front, and nothing is written.
CREATE TEMP TABLE before AS SELECT * FROM backfill_fingerprint('cm.revenue');
CREATE TABLE cm.local_model AS SELECT * FROM cm.model;
CREATE TABLE cm.other (order_id bigint, day date, amount numeric(12,2), note text);
SELECT create_distributed_table('cm.other', 'order_id', shard_count => 3);
CREATE TABLE cm.ref (order_id bigint PRIMARY KEY, day date, amount numeric(12,2), note text);
SELECT create_reference_table('cm.ref');
-- a key without the distribution column
SELECT * FROM backfill_merge('cm.revenue', 'SELECT * FROM cm.model', ARRAY['day']);
-- a source reading a local table, a table not co-located, a reference table
SELECT * FROM backfill_merge('cm.revenue', 'SELECT * FROM cm.local_model', ARRAY['order_id', 'day']);
SELECT * FROM backfill_merge('cm.revenue', 'SELECT * FROM cm.other', ARRAY['order_id', 'day']);
SELECT * FROM backfill_merge('cm.revenue', 'SELECT m.* FROM cm.model m JOIN cm.ref r USING (order_id)', ARRAY['order_id', 'day']);
-- a source of constants alone, which reads no table
SELECT * FROM backfill_merge('cm.revenue', $$SELECT g::bigint AS order_id, date '2026-03-15' AS day,
	1::numeric(12,2) AS amount, 'v'::text AS note FROM generate_series(1, 3) g$$, ARRAY['order_id', 'day']);
SELECT * FROM backfill_merge('cm.revenue', $$SELECT * FROM (VALUES (1::bigint, date '2026-03-15', 1::numeric(12,2), 'v'::text))
	AS v (order_id, day, amount, note)$$,
	ARRAY['order_id', 'day'], scope => $$day = '2026-03-15'$$);
-- functions that are not IMMUTABLE, in the source or in the scope
SELECT * FROM backfill_merge('cm.revenue', $$SELECT order_id, day, amount, now()::text AS note FROM cm.model$$,
	ARRAY['order_id', 'day']);
SELECT * FROM backfill_merge('cm.revenue', 'SELECT * FROM cm.model', ARRAY['order_id', 'day'],
	scope => $$day >= current_date - 1000$$);
SELECT * FROM backfill_merge('cm.revenue', 'SELECT * FROM cm.model', ARRAY['order_id', 'day'],
	scope => $$day >= now()::date - 1000$$);
-- ... the same with a constant works
SELECT inserted, updated, deleted, unchanged FROM backfill_merge('cm.revenue', 'SELECT * FROM cm.model',
	ARRAY['order_id', 'day'], scope => $$day >= date '2026-03-15'$$);
-- a source column of another type than the target's
SELECT * FROM backfill_merge('cm.revenue', 'SELECT order_id, day, amount::float8 AS amount FROM cm.model',
	ARRAY['order_id', 'day']);
-- a reference table as the target
SELECT * FROM backfill_merge('cm.ref', 'SELECT * FROM cm.ref', ARRAY['order_id']);
SELECT f = b AS nothing_written FROM backfill_fingerprint('cm.revenue') f, before b;

-- A writer through a worker waits for the merge to commit (LOCK TABLE, propagated).
SELECT dblink_connect('w1', format('host=127.0.0.1 port=%s dbname=%s', :'worker1', current_database())) AS connected;
BEGIN;
SELECT updated FROM backfill_merge('cm.revenue', $$SELECT order_id, day, amount + 1 AS amount, note FROM cm.model$$,
	ARRAY['order_id', 'day'], scope => $$day = '2026-03-15'$$);
SELECT dblink_send_query('w1', $$INSERT INTO cm.revenue VALUES (3001, '2026-03-15', 7, 'through a worker')$$) AS sent;
-- wait until the worker's statement waits for a lock (on whichever worker holds the shard)
SELECT backfill_test_lock_wait(:'worker1', :'worker2') AS worker_statement_waits_for_a_lock;
SELECT dblink_is_busy('w1') AS worker_insert_waits;
COMMIT;
SELECT * FROM dblink_get_result('w1') AS t(status text);
SELECT count(*) AS worker_row_kept FROM cm.revenue WHERE order_id = 3001;
SELECT dblink_disconnect('w1');

SET client_min_messages = warning;
DROP SCHEMA cm CASCADE;
