-- test/freeze_contracts.sql: what backfill_freeze_new_rows promises, each stated so that it can fail.
--
-- On Citus a replacement calls it on each new shard, in the workers' part of its transaction;
-- anyone may call it, so it must be safe for anyone.  It freezes exactly the rows this
-- transaction inserted into a table it created in the current subtransaction and did not
-- delete: a row only locked is frozen, a deleted row and a row of a subtransaction rolled back
-- are not; the rows read the same afterwards, and a second call freezes nothing.  It refuses,
-- naming the table, a table created before the current subtransaction (55000), a table of
-- another owner (42501), a view or a partitioned table (42809), an OID that is no relation
-- (42P01); NULL gives NULL.  (That a refused call never waits for the table's lock, and so
-- never queues readers behind it, is specs/freeze_no_queue.spec.)
BEGIN;
SET LOCAL client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pageinspect;
SELECT plan(17);

-- frozen_ctids(rel): the line pointers of rel whose tuple has its xmin marked frozen
CREATE FUNCTION pg_temp.frozen_ctids(rel regclass) RETURNS SETOF tid LANGUAGE sql AS $$
	SELECT format('(%s,%s)', b, i.lp)::tid
	FROM generate_series(0, (pg_relation_size(rel) / current_setting('block_size')::int)::int - 1) b,
		 heap_page_items(get_raw_page(rel::text, b)) i
	WHERE i.lp_flags = 1 AND (i.t_infomask & 768) = 768
$$;

-- 100 rows inserted, 10 deleted, 5 locked, 7 more inserted in a subtransaction rolled back
CREATE TABLE fz (id integer, v text);
INSERT INTO fz SELECT g, 'v' || g FROM generate_series(1, 100) g;
DELETE FROM fz WHERE id <= 10;
DO $$ BEGIN PERFORM id FROM fz WHERE id BETWEEN 11 AND 15 FOR UPDATE; END $$;
SAVEPOINT gone;
INSERT INTO fz SELECT g, 'gone' FROM generate_series(101, 107) g;
ROLLBACK TO SAVEPOINT gone;
RELEASE SAVEPOINT gone;
CREATE TEMP TABLE fz_before AS SELECT count(*) AS n, sum(id) AS ids, string_agg(v, ',' ORDER BY id) AS vs FROM fz;

SELECT is(backfill_freeze_new_rows('fz'), 90::bigint,
		  'the 90 live rows are frozen: not the 10 deleted, nor the 7 rolled back; the 5 locked are');
SELECT is((SELECT count(*) FROM pg_temp.frozen_ctids('fz')), 90::bigint,
		  'the pages hold 90 tuples with a frozen xmin');
SELECT is((SELECT count(*) FROM fz WHERE ctid IN (SELECT pg_temp.frozen_ctids('fz'))), 90::bigint,
		  'and they are the table''s 90 live rows');
SELECT is((SELECT count(*) AS n FROM fz WHERE id <= 10 OR id > 100), 0::bigint,
		  'the deleted and the rolled back rows are still not seen');
SELECT ok((SELECT row(count(*), sum(id), string_agg(v, ',' ORDER BY id)) FROM fz) =
		  (SELECT row(n, ids, vs) FROM fz_before), 'the rows read as before');
SELECT is(backfill_freeze_new_rows('fz'), 0::bigint, 'a second call freezes nothing');

-- a table created before the current subtransaction: refused, nothing frozen
CREATE TABLE fz_old (id integer);
INSERT INTO fz_old VALUES (1), (2);
SAVEPOINT sub;
SELECT throws_ok($$SELECT backfill_freeze_new_rows('fz_old')$$, '55000',
				 'cannot freeze the rows of table fz_old: it was not created in the current subtransaction',
				 'a table created before the current subtransaction is refused');
ROLLBACK TO SAVEPOINT sub;
RELEASE SAVEPOINT sub;
SELECT is((SELECT count(*) FROM pg_temp.frozen_ctids('fz_old')), 0::bigint, 'and none of its rows was frozen');

-- another owner's table
CREATE ROLE regress_fz_other;
GRANT CREATE, USAGE ON SCHEMA public TO regress_fz_other;
SET LOCAL ROLE regress_fz_other;
SELECT throws_ok($$SELECT backfill_freeze_new_rows('fz')$$, '42501', 'must be owner of table fz',
				 'a table of another owner is refused');
RESET ROLE;
SELECT is((SELECT count(*) FROM fz), 90::bigint, 'and the owner''s table is as it was');

-- what is not a heap table, and what is no relation
CREATE VIEW fz_view AS SELECT * FROM fz;
SELECT throws_ok($$SELECT backfill_freeze_new_rows('fz_view')$$, '42809',
				 'rel must be a heap table: fz_view is not', 'a view is refused');
CREATE TABLE fz_parent (id integer) PARTITION BY RANGE (id);
SELECT throws_ok($$SELECT backfill_freeze_new_rows('fz_parent')$$, '42809',
				 'rel must be a heap table: fz_parent is not', 'a partitioned table is refused');
SELECT throws_ok($$SELECT backfill_freeze_new_rows(4000000000::oid::regclass)$$, '42P01',
				 'rel: relation with OID 4000000000 does not exist', 'an OID that is no relation is refused');
SELECT is(backfill_freeze_new_rows(NULL), NULL, 'NULL gives NULL');

-- a cursor opened on the table still empty would see the rows appear: refused, as COPY FREEZE
-- refuses, and the cursor still finds no row
SAVEPOINT cursor;
CREATE TABLE fz_cursor (id integer);
DECLARE fz_early CURSOR FOR SELECT * FROM fz_cursor;
INSERT INTO fz_cursor SELECT generate_series(1, 10);
SELECT throws_ok($$SELECT backfill_freeze_new_rows('fz_cursor')$$, '25000',
				 'cannot freeze the rows of table fz_cursor because of prior transaction activity',
				 'a cursor of the transaction is open: refused');
SELECT is((SELECT count(*) FROM pg_temp.frozen_ctids('fz_cursor')), 0::bigint, 'and no row was frozen');
MOVE FORWARD ALL IN fz_early;
CLOSE fz_early;
SELECT is(backfill_freeze_new_rows('fz_cursor'), 10::bigint, 'the cursor closed: its rows are frozen');
RELEASE SAVEPOINT cursor;	-- not rolled back: that would undo pgTAP's count of the three tests above

SELECT * FROM finish();
ROLLBACK;
