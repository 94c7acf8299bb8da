-- test/probe_outside.sql: a probe never calls idempotent a transform that changed rows outside
-- its scope, however it changed them.
--
-- Its own transaction's counters see the rows it wrote.  They do not see a partition outside
-- the scope detached, a column added with a default (every row changes, none is written), a
-- write committed through another connection (dblink), or a TRUNCATE (it resets the counters
-- of its subtransaction).  The probe follows the target's partitions both ways, compares the
-- target's columns at each point, and reads every partition that the visibility map does not
-- prove untouched: all its pages all-visible before the first run and after the second, with
-- the same storage, page count and VACUUM count.  Under REPEATABLE READ and SERIALIZABLE,
-- where every point reads the transaction's snapshot, it also compares what a new snapshot
-- shows, and gives no verdict when rows changed that the transaction cannot see.
--
-- The tables are committed and vacuumed first (another connection must see them, and the
-- visibility map needs a VACUUM); each block is its own transaction, at its own level.
SET client_min_messages = warning;
-- (a VACUUM marks a page all-visible only once the commits of its rows are flushed: with
-- synchronous_commit off, not right after them)
SET synchronous_commit = on;
CREATE EXTENSION IF NOT EXISTS dblink;
DROP TABLE IF EXISTS po, po_03_gone, po_other;
CREATE TABLE po (id int, day date, v int) PARTITION BY RANGE (day);
SELECT format('CREATE TABLE po_%s PARTITION OF po FOR VALUES FROM (%L) TO (%L) WITH (autovacuum_enabled = off)',
	to_char(d, 'DD'), d, d + 1)
FROM generate_series(date '2026-03-01', date '2026-03-04', interval '1 day') g(t), LATERAL (SELECT t::date AS d) x \gexec
INSERT INTO po SELECT g, date '2026-03-01' + g % 4, g FROM generate_series(1, 2000) g;
CREATE TABLE po_other (n int) WITH (autovacuum_enabled = off);
VACUUM po, po_other;
-- the connection string of this very database, for dblink
SELECT format('host=%s port=%s dbname=%s user=%s', split_part(current_setting('unix_socket_directories'), ',', 1),
	current_setting('port'), current_database(), current_user) AS here \gset
CREATE FUNCTION pg_temp.scans_except(VARIADIC parts regclass[]) RETURNS bigint LANGUAGE sql AS $$
	SELECT sum(pg_stat_get_xact_numscans(c.oid))::bigint FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
	WHERE i.inhparent = 'po'::regclass AND c.oid <> ALL (parts)
$$;
SELECT plan(20);

-- ============================================================ proven untouched: not read
BEGIN;
CREATE TEMP TABLE s0 AS SELECT pg_temp.scans_except('po_01') AS n;
CREATE TEMP TABLE p0 AS SELECT * FROM backfill_probe_idempotency(
	$$UPDATE po SET v = v WHERE day = '2026-03-01'$$, 'po', $$day = '2026-03-01'$$);
SELECT is((SELECT idempotent FROM p0), true, 'vacuumed: a repair of one day is idempotent');
SELECT is(pg_temp.scans_except('po_01') - (SELECT n FROM s0), 0::bigint,
	'vacuumed: no other partition is read, the visibility map proves them untouched');
COMMIT;

-- ============================================================ a partition outside the scope detached
BEGIN;
CREATE TEMP TABLE p1 AS SELECT * FROM backfill_probe_idempotency(
	$$DO 'BEGIN IF EXISTS (SELECT FROM pg_inherits WHERE inhrelid = ''po_03''::regclass) THEN
	       ALTER TABLE po DETACH PARTITION po_03; END IF; END'$$, 'po', $$day = '2026-03-01'$$);
SELECT is((SELECT idempotent FROM p1), false, 'detached outside the scope: not idempotent');
SELECT matches((SELECT verdict FROM p1), 'it changed rows outside the scope',
	'detached outside the scope: the verdict says the rows outside changed');
SELECT is((SELECT count(*) FROM pg_inherits WHERE inhrelid = 'po_03'::regclass), 1::bigint,
	'detached outside the scope: rolled back, still attached');
COMMIT;

-- ============================================================ a column added with a default
BEGIN;
CREATE TEMP TABLE p2 AS SELECT * FROM backfill_probe_idempotency(
	$$ALTER TABLE po ADD COLUMN IF NOT EXISTS extra int DEFAULT 7$$, 'po', $$day = '2026-03-01'$$);
SELECT is((SELECT idempotent FROM p2), false, 'a column added with a default: not idempotent');
SELECT matches((SELECT verdict FROM p2), 'the first run changed the target''s columns \(.*extra integer\)',
	'a column added with a default: the verdict names the new columns');
CREATE TEMP TABLE p2b AS SELECT * FROM backfill_probe_idempotency(
	$$ALTER TABLE po ADD COLUMN IF NOT EXISTS extra int DEFAULT 7$$, 'po');
SELECT is((SELECT idempotent FROM p2b), true,
	'a column added with a default, no scope: the window is the table, and a second run changes nothing');
COMMIT;

-- ============================================================ written through another connection
BEGIN;
CREATE TEMP TABLE p3 AS SELECT * FROM backfill_probe_idempotency(
	format($$SELECT dblink_exec(%L, 'UPDATE po SET v = v + 1 WHERE day = ''2026-03-03''')$$, :'here'),
	'po', $$day = '2026-03-01'$$);
SELECT is((SELECT idempotent FROM p3), false, 'read committed, another connection writes outside the scope: not idempotent');
SELECT matches((SELECT verdict FROM p3), 'changed rows outside the scope',
	'read committed, another connection: the verdict says the rows outside changed');
COMMIT;
BEGIN ISOLATION LEVEL REPEATABLE READ;
CREATE TEMP TABLE p4 AS SELECT * FROM backfill_probe_idempotency(
	format($$SELECT dblink_exec(%L, 'UPDATE po SET v = v + 1 WHERE day = ''2026-03-04''')$$, :'here'),
	'po', $$day = '2026-03-01'$$);
SELECT is((SELECT idempotent FROM p4), false, 'repeatable read, another connection writes outside the scope: not idempotent');
SELECT matches((SELECT verdict FROM p4), '^no verdict: rows of the target changed that this transaction''s snapshot cannot see',
	'repeatable read, another connection: no verdict, and why');
COMMIT;
BEGIN ISOLATION LEVEL SERIALIZABLE;
CREATE TEMP TABLE p5 AS SELECT * FROM backfill_probe_idempotency(
	format($$SELECT dblink_exec(%L, 'UPDATE po SET v = v + 1 WHERE day = ''2026-03-01''')$$, :'here'),
	'po', $$day = '2026-03-01'$$);
SELECT is((SELECT idempotent FROM p5), false, 'serializable, another connection writes the window: not idempotent');
SELECT matches((SELECT verdict FROM p5), '^no verdict:', 'serializable, another connection: no verdict');
COMMIT;
BEGIN ISOLATION LEVEL REPEATABLE READ;
CREATE TEMP TABLE p6 AS SELECT * FROM backfill_probe_idempotency(
	format($$SELECT dblink_exec(%L, 'INSERT INTO po_other VALUES (1)')$$, :'here'), 'po_other', 'n > 0');
SELECT is((SELECT idempotent FROM p6), false, 'repeatable read, another connection appends to a plain table: not idempotent');
COMMIT;

-- ============================================================ not proven untouched: read
BEGIN;
-- po_03 and po_04 were written through dblink above and not vacuumed since
CREATE TEMP TABLE s7 AS SELECT pg_temp.scans_except('po_01') AS n;
CREATE TEMP TABLE p7 AS SELECT * FROM backfill_probe_idempotency(
	$$UPDATE po SET v = v WHERE day = '2026-03-01'$$, 'po', $$day = '2026-03-01'$$);
SELECT is((SELECT idempotent FROM p7), true, 'written since the VACUUM, outside the scope: still idempotent');
SELECT cmp_ok(pg_temp.scans_except('po_01') - (SELECT n FROM s7), '>', 0::bigint,
	'written since the VACUUM: the partitions the visibility map does not prove are read');
COMMIT;

-- ============================================================ a table outside the target truncated
BEGIN;
INSERT INTO po_other VALUES (2);
CREATE TEMP TABLE p8 AS SELECT * FROM backfill_probe_idempotency($$TRUNCATE po_other$$, 'po', $$day = '2026-03-01'$$);
SELECT matches((SELECT verdict FROM p8), 'it also writes outside the target: public.po_other',
	'a table outside the target truncated, after rows this transaction wrote: named');
COMMIT;

-- ============================================================ a replacement that keeps the old rows
BEGIN;
CREATE TEMP TABLE p9 AS SELECT * FROM backfill_probe_idempotency(
	$$SELECT backfill_replace_partition('po_01', 'SELECT id, day, v FROM po WHERE day >= $1 AND day < $2', keep_old => true)$$,
	'po', $$day = '2026-03-01'$$);
SELECT is((SELECT idempotent FROM p9), true, 'a replacement keeping the old rows: idempotent');
SELECT doesnt_match((SELECT verdict FROM p9), 'writes outside the target',
	'and the archives its own runs made are not named as writes outside the target');
COMMIT;

SELECT * FROM finish();
SET client_min_messages = warning;
DROP TABLE po, po_other;
