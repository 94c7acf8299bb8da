-- backfill_diff of two co-located distributed tables keyed on their distribution column runs
-- shard by shard: each worker hashes and joins its pairs of shards, and only the rows that
-- differ reach the coordinator.  The result is the one the same rows give in local tables;
-- queries that cannot be diffed per shard are diffed on the coordinator, with the same result.
SET datestyle = 'ISO';
CREATE SCHEMA cd;
SET search_path = cd, public;
-- (fingerprint.sql, run before this file, starts with the workers' own keys and shares the
-- coordinator's; sharing it again changes nothing)
SELECT backfill_share_key() > 0 AS workers_given_the_key;

CREATE TABLE cd.facts (order_id bigint NOT NULL, day date NOT NULL, amount numeric(12,2), note text,
	tags text[], PRIMARY KEY (order_id, day)) PARTITION BY RANGE (day);
CREATE TABLE cd.facts_20260314 PARTITION OF cd.facts FOR VALUES FROM ('2026-03-14') TO ('2026-03-15');
CREATE TABLE cd.facts_20260315 PARTITION OF cd.facts FOR VALUES FROM ('2026-03-15') TO ('2026-03-16');
SELECT create_distributed_table('cd.facts', 'order_id', shard_count => 8);
INSERT INTO cd.facts SELECT g, date '2026-03-14' + (g % 2), CASE WHEN g % 17 = 0 THEN NULL ELSE g % 1000 + 0.5 END,
	CASE WHEN g % 5 = 0 THEN NULL ELSE 'note ' || g END, ARRAY['a', g::text]
FROM generate_series(1, 5000) g;
-- the recomputed table, co-located: 52 amounts changed, 5 notes filled in, 56 rows gone, 10 new
CREATE TABLE cd.facts_new (LIKE cd.facts);
SELECT create_distributed_table('cd.facts_new', 'order_id', colocate_with => 'cd.facts');
INSERT INTO cd.facts_new SELECT * FROM cd.facts;
UPDATE cd.facts_new SET amount = amount + 1 WHERE order_id % 97 = 0;
UPDATE cd.facts_new SET note = 'filled' WHERE order_id IN (5, 10, 15, 20, 25);
DELETE FROM cd.facts_new WHERE order_id % 89 = 0;
INSERT INTO cd.facts_new SELECT g, '2026-03-15', 1, 'new', NULL FROM generate_series(5001, 5010) g;
-- the same rows in local tables
CREATE TABLE cd.local_facts AS SELECT * FROM cd.facts;
CREATE TABLE cd.local_facts_new AS SELECT * FROM cd.facts_new;

-- diffed shard by shard (the DEBUG line says so), with the local diff's result
CREATE TEMP TABLE shard_diff (change text, key jsonb, a_row jsonb, b_row jsonb);
CREATE TEMP TABLE shard_diff2 (LIKE shard_diff);
CREATE TEMP TABLE other_diff (LIKE shard_diff);
CREATE TEMP TABLE reader_diff (LIKE shard_diff);
GRANT INSERT ON reader_diff TO PUBLIC;
SET client_min_messages = debug1;
INSERT INTO shard_diff SELECT * FROM backfill_diff('TABLE cd.facts', 'TABLE cd.facts_new', '{order_id,day}');
RESET client_min_messages;
CREATE TEMP TABLE local_diff AS SELECT * FROM backfill_diff('TABLE cd.local_facts', 'TABLE cd.local_facts_new', '{order_id,day}');
SELECT change, count(*) FROM shard_diff GROUP BY change ORDER BY change COLLATE "C";
SELECT (SELECT count(*) FROM (TABLE shard_diff EXCEPT ALL TABLE local_diff) x) AS only_per_shard,
       (SELECT count(*) FROM (TABLE local_diff EXCEPT ALL TABLE shard_diff) x) AS only_local;
SELECT * FROM shard_diff WHERE (key->>'order_id')::bigint IN (5, 89, 97, 5001) ORDER BY key::text COLLATE "C";

-- a filter, a subset of the columns, another column order on one side: still per shard
SET client_min_messages = debug1;
INSERT INTO shard_diff2 SELECT * FROM backfill_diff(
	$$SELECT order_id, day, amount FROM cd.facts WHERE day = '2026-03-15'$$,
	$$SELECT amount, day, order_id FROM cd.facts_new WHERE day = '2026-03-15'$$, '{order_id}');
RESET client_min_messages;
SELECT (SELECT count(*) FROM shard_diff2) AS rows,
       (SELECT count(*) FROM (TABLE shard_diff2 EXCEPT ALL SELECT * FROM backfill_diff(
		$$SELECT order_id, day, amount FROM cd.local_facts WHERE day = '2026-03-15'$$,
		$$SELECT amount, day, order_id FROM cd.local_facts_new WHERE day = '2026-03-15'$$, '{order_id}')) x) AS not_local;

-- a key repeated on one side is refused, as locally
INSERT INTO cd.facts_new VALUES (4242, '2026-03-14', 1, 'twin', NULL);
SELECT count(*) FROM backfill_diff('TABLE cd.facts', 'TABLE cd.facts_new', '{order_id}');
DELETE FROM cd.facts_new WHERE note = 'twin';
-- a key repeated on one side with its rows equal to the other side's, too
INSERT INTO cd.facts SELECT order_id, day + 1, amount, note, tags FROM cd.facts WHERE order_id = 4;
INSERT INTO cd.facts_new SELECT order_id, day + 1, amount, note, tags FROM cd.facts_new WHERE order_id = 4;
SELECT count(*) FROM backfill_diff('SELECT order_id, note FROM cd.facts', 'SELECT order_id, note FROM cd.facts_new', '{order_id}');
DELETE FROM cd.facts WHERE order_id = 4 AND day = '2026-03-15';
DELETE FROM cd.facts_new WHERE order_id = 4 AND day = '2026-03-15';

-- not per shard, diffed on the coordinator with the same result (no DEBUG line): a key without
-- the distribution column, a computed column, a table not co-located, a role without
-- backfill_diff_hash
CREATE TABLE cd.facts_other (LIKE cd.facts);
SELECT create_distributed_table('cd.facts_other', 'order_id', shard_count => 4, colocate_with => 'none');
INSERT INTO cd.facts_other SELECT * FROM cd.facts_new;
CREATE ROLE regress_cd_reader LOGIN;
GRANT USAGE ON SCHEMA cd TO regress_cd_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA cd TO regress_cd_reader;
SET client_min_messages = debug1;
SELECT count(*) AS no_distribution_column FROM backfill_diff('SELECT day, tags FROM cd.facts WHERE order_id < 100',
	'SELECT day, tags FROM cd.facts_new WHERE order_id < 100', '{tags}');
SELECT count(*) AS computed FROM backfill_diff('SELECT order_id, day, amount * 2 AS amount FROM cd.facts',
	'SELECT order_id, day, amount * 2 AS amount FROM cd.facts_new', '{order_id,day}');
INSERT INTO other_diff SELECT * FROM backfill_diff('TABLE cd.facts', 'TABLE cd.facts_other', '{order_id,day}');
SET ROLE regress_cd_reader;
INSERT INTO reader_diff SELECT * FROM backfill_diff('TABLE cd.facts', 'TABLE cd.facts_new', '{order_id,day}');
RESET ROLE;
RESET client_min_messages;
SELECT (SELECT count(*) FROM (TABLE other_diff EXCEPT ALL TABLE local_diff) x) +
       (SELECT count(*) FROM (TABLE local_diff EXCEPT ALL TABLE other_diff) x) AS not_co_located_differs,
       (SELECT count(*) FROM (TABLE reader_diff EXCEPT ALL TABLE local_diff) x) +
       (SELECT count(*) FROM (TABLE local_diff EXCEPT ALL TABLE reader_diff) x) AS without_the_hash_differs;

-- a role granted backfill_diff_hash on the coordinator only (the grant does not reach the
-- workers) is diffed on the coordinator too, with the same result
GRANT EXECUTE ON FUNCTION backfill_diff_hash(bigint, "any") TO regress_cd_reader;
SELECT count(*) FILTER (WHERE result = 't') AS workers_granting_it
FROM run_command_on_workers($$SELECT has_function_privilege('regress_cd_reader', 'backfill_diff_hash(bigint, "any")', 'EXECUTE')$$);
TRUNCATE reader_diff;
SET client_min_messages = debug1;
SET ROLE regress_cd_reader;
INSERT INTO reader_diff SELECT * FROM backfill_diff('TABLE cd.facts', 'TABLE cd.facts_new', '{order_id,day}');
RESET ROLE;
RESET client_min_messages;
SELECT (SELECT count(*) FROM (TABLE reader_diff EXCEPT ALL TABLE local_diff) x) +
       (SELECT count(*) FROM (TABLE local_diff EXCEPT ALL TABLE reader_diff) x) AS granted_on_coordinator_only_differs;
REVOKE EXECUTE ON FUNCTION backfill_diff_hash(bigint, "any") FROM regress_cd_reader;

-- rows of 120 columns, more than a function takes as arguments: diffed on the coordinator
SELECT format('CREATE TABLE cd.wide (id bigint NOT NULL, %s)', string_agg(format('c%s int', g), ', '))
FROM generate_series(1, 119) g \gexec
CREATE TABLE cd.wide2 (LIKE cd.wide);
SELECT create_distributed_table('cd.wide', 'id', colocate_with => 'cd.facts');
SELECT create_distributed_table('cd.wide2', 'id', colocate_with => 'cd.facts');
INSERT INTO cd.wide (id, c1, c119) SELECT g, g, g FROM generate_series(1, 100) g;
INSERT INTO cd.wide2 SELECT * FROM cd.wide;
UPDATE cd.wide2 SET c119 = 0 WHERE id % 10 = 0;
SET client_min_messages = debug1;
SELECT change, count(*) FROM backfill_diff('TABLE cd.wide', 'TABLE cd.wide2', '{id}') GROUP BY change;
RESET client_min_messages;
-- and fingerprinted on the coordinator, as a local copy of its rows is
CREATE TABLE cd.wide_local AS TABLE cd.wide;
SELECT (backfill_fingerprint('cd.wide')).hash = (backfill_fingerprint('cd.wide_local')).hash AS wide_fingerprinted_as_local;

SET client_min_messages = warning;
DROP SCHEMA cd CASCADE;
DROP ROLE regress_cd_reader;
