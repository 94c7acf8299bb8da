-- test/swap_files.sql: a replacement trades the partition's files, and leaves the parent alone.
--
-- When the staging table has the partition's shape (always, unless the partition has dropped
-- columns), the swap gives the partition the staging table's files instead of detaching it
-- and attaching the copy. Checked here: the partition keeps its OID and its place under the
-- parent (its pg_inherits row is the same row version), and the parent's catalog row is not
-- rewritten; the rows are the source's, read through every index as through the table; TOAST
-- values (stored out of line) read back, and the TOAST tables are named for their owners, so
-- that a later CLUSTER of the partition or of the archive (which renames TOAST tables by that
-- rule) works; the planner statistics are the new rows'; undo swaps the archive back in (by
-- DETACH and ATTACH: its files are not new); a swap rolled back to a savepoint leaves the
-- partition's rows as they were; a NOT VALID constraint, checked on every new row, is valid
-- after a swap of files. By DETACH and ATTACH instead: a replacement keeping the old rows of
-- a partition with a column added with a default after them (the archive must still read
-- that default for them), and a partition with a dropped column.
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(43);

CREATE FUNCTION pg_temp.fp(rel regclass) RETURNS text
LANGUAGE sql AS $$ SELECT (backfill_fingerprint(rel)).hash $$;
-- the version of a catalog row, as text: it changes when the row is rewritten
CREATE FUNCTION pg_temp.rowver(cat regclass, key text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE v text;
BEGIN
	EXECUTE format('SELECT xmin::text || ctid::text FROM %s WHERE %s', cat, key) INTO v;
	RETURN v;
END $$;
-- the names of the TOAST table of rel and of its index
CREATE FUNCTION pg_temp.toast_names(rel regclass) RETURNS text
LANGUAGE sql AS $$
	SELECT t.relname || ' ' || i.relname FROM pg_class c JOIN pg_class t ON t.oid = c.reltoastrelid
	JOIN pg_index x ON x.indrelid = t.oid JOIN pg_class i ON i.oid = x.indexrelid WHERE c.oid = rel
$$;

CREATE TABLE sf (id bigint NOT NULL, day date NOT NULL, revenue numeric(12,2), note text,
	PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
CREATE INDEX sf_note ON sf (left(note, 8));
CREATE TABLE sf_0301 PARTITION OF sf FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
CREATE TABLE sf_0302 PARTITION OF sf FOR VALUES FROM ('2026-03-02') TO ('2026-03-03');
-- old rows: distinct revenues and short notes; new rows: one revenue and notes far over the
-- TOAST threshold that do not compress (so they are stored out of line)
INSERT INTO sf SELECT g, '2026-03-01', g, 'old ' || g FROM generate_series(1, 2000) g;
INSERT INTO sf SELECT g, '2026-03-02', g, 'other ' || g FROM generate_series(1, 100) g;
CREATE TABLE sf_src AS
	SELECT g::bigint AS id, date '2026-03-01' AS day, 42.00::numeric(12,2) AS revenue,
		   (SELECT string_agg(md5(g::text || ':' || k), '') FROM generate_series(1, 100) k) AS note
	FROM generate_series(1, 2000) g;
ANALYZE sf;

CREATE TEMP TABLE before AS
	SELECT 'sf_0301'::regclass::oid AS part, pg_relation_filenode('sf_0301') AS node,
		   pg_temp.rowver('pg_inherits', 'inhrelid = ''sf_0301''::regclass') AS inherits,
		   pg_temp.rowver('pg_class', 'oid = ''sf''::regclass') AS parent,
		   pg_temp.fp('sf_0301') AS fp, pg_temp.fp('sf_0302') AS other;

SELECT lives_ok($$SELECT backfill_replace_partition('sf_0301',
	'SELECT * FROM sf_src WHERE day >= $1 AND day < $2', keep_old => true)$$, 'a replacement keeping the old rows');
SELECT is('sf_0301'::regclass::oid, (SELECT part FROM before), 'the partition keeps its OID');
SELECT isnt(pg_relation_filenode('sf_0301'), (SELECT node FROM before), 'it has other files');
SELECT is(pg_temp.rowver('pg_inherits', 'inhrelid = ''sf_0301''::regclass'), (SELECT inherits FROM before),
	'its pg_inherits row is the same row: it was neither detached nor attached');
SELECT is(pg_temp.rowver('pg_class', 'oid = ''sf''::regclass'), (SELECT parent FROM before),
	'the parent''s pg_class row was not rewritten');
SELECT is(pg_temp.fp('sf_0301'), pg_temp.fp('sf_src'), 'the partition holds the source''s rows');
SELECT is(pg_temp.fp('sf_0302'), (SELECT other FROM before), 'the other partition is as it was');
SELECT is((SELECT count(*) FROM sf_0301 WHERE length(note) = 3200), 2000::bigint,
	'every TOAST value reads back whole');
SELECT ok(pg_relation_size((SELECT reltoastrelid FROM pg_class WHERE oid = 'sf_0301'::regclass)) > 0,
	'the new notes are stored out of line');

-- every index gives what the table gives
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT is((SELECT count(*) FROM sf WHERE day = '2026-03-01' AND id BETWEEN 1 AND 2000), 2000::bigint,
	'the primary key finds every new row');
SELECT is((SELECT count(*) FROM sf_0301 WHERE left(note, 8) = (SELECT left(note, 8) FROM sf_src WHERE id = 7)),
	(SELECT count(*) FROM sf_src WHERE left(note, 8) = (SELECT left(note, 8) FROM sf_src WHERE id = 7)),
	'the expression index finds the new rows');
RESET enable_seqscan;
RESET enable_bitmapscan;

SELECT is((SELECT most_common_vals::text FROM pg_stats WHERE tablename = 'sf_0301' AND attname = 'revenue'),
	'{42.00}', 'the partition''s planner statistics are the new rows''');
SELECT is((SELECT reltuples FROM pg_class WHERE oid = 'sf_0301'::regclass), 2000::real,
	'and so is its row estimate');
SELECT is(pg_temp.toast_names('sf_0301'),
	format('pg_toast_%s pg_toast_%s_index', 'sf_0301'::regclass::oid, 'sf_0301'::regclass::oid),
	'the partition''s TOAST table is named for it');
SELECT is(pg_temp.toast_names('sf_0301_archived'),
	format('pg_toast_%s pg_toast_%s_index', 'sf_0301_archived'::regclass::oid, 'sf_0301_archived'::regclass::oid),
	'the archive''s is named for the archive');
SELECT is(pg_temp.fp('sf_0301_archived'), (SELECT fp FROM before), 'the archive holds the old rows');
SELECT lives_ok($$CLUSTER sf_0301 USING sf_0301_pkey$$, 'the partition can be clustered (its TOAST table renamed)');
SELECT lives_ok($$CLUSTER sf_0301_archived USING sf_0301_pkey_archived$$, 'so can the archive');
SELECT is(pg_temp.fp('sf_0301'), pg_temp.fp('sf_src'), 'and the partition still holds the source''s rows');

-- undo swaps the archive back in
SELECT lives_ok($$SELECT backfill_undo((SELECT max(id) FROM backfill_log))$$, 'undo');
SELECT is(pg_temp.fp('sf_0301'), (SELECT fp FROM before), 'the partition holds the old rows again');
SELECT is((SELECT most_common_vals IS NULL FROM pg_stats WHERE tablename = 'sf_0301' AND attname = 'revenue'), true,
	'with the old rows'' statistics (distinct revenues: no common value)');

-- a swap rolled back leaves everything as it was
SAVEPOINT s;
SELECT backfill_replace_partition('sf_0302', 'SELECT id, day, 1 AS revenue, note FROM sf WHERE day >= $1 AND day < $2');
ROLLBACK TO s;
SELECT is(pg_temp.fp('sf_0302'), (SELECT other FROM before), 'a swap rolled back: the old rows are there');

-- a constraint the old rows were never checked against: valid once every row is new
ALTER TABLE sf_0301 ADD CONSTRAINT sf_0301_revenue CHECK (revenue >= 0) NOT VALID;
CREATE TEMP TABLE before_check AS SELECT 'sf_0301'::regclass::oid AS part;
SELECT backfill_replace_partition('sf_0301', 'SELECT * FROM sf_src WHERE day >= $1 AND day < $2');
SELECT is('sf_0301'::regclass::oid, (SELECT part FROM before_check), 'a swap of files');
SELECT is((SELECT convalidated FROM pg_constraint WHERE conname = 'sf_0301_revenue' AND conrelid = 'sf_0301'::regclass), true,
	'the NOT VALID constraint, checked on every new row, is valid now');

-- a column added with a default after the old rows, which are kept: DETACH and ATTACH
ALTER TABLE sf ADD COLUMN extra int DEFAULT 7;
SELECT backfill_replace_partition('sf_0302', 'SELECT id, day, revenue, note, 8 AS extra FROM sf WHERE day >= $1 AND day < $2',
	keep_old => true);
SELECT is((SELECT count(*) FROM sf_0302_archived WHERE extra = 7), 100::bigint,
	'the archive still reads the added column''s default for the old rows');
SELECT is((SELECT count(*) FROM sf_0302 WHERE extra = 8), 100::bigint, 'the partition holds the new rows');

-- a dropped column: the copy cannot take the partition's files; DETACH and ATTACH instead
ALTER TABLE sf DROP COLUMN note;
CREATE TEMP TABLE before_drop AS SELECT 'sf_0302'::regclass::oid AS part;
SELECT backfill_replace_partition('sf_0302', 'SELECT id, day, revenue + 1 AS revenue FROM sf WHERE day >= $1 AND day < $2');
SELECT isnt('sf_0302'::regclass::oid, (SELECT part FROM before_drop),
	'a partition with a dropped column is replaced by another table');

-- the session's own cursor on the partition, on one of its indexes, or one the source leaves
-- open: the swap is refused (as CLUSTER and TRUNCATE refuse), and the cursor reads on the old
-- rows, all of them
CREATE TABLE sc (id int, day date, v int, PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
CREATE TABLE sc_0301 PARTITION OF sc FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
INSERT INTO sc SELECT g, '2026-03-01', g FROM generate_series(1, 1000) g;
CREATE TEMP TABLE sc_before AS SELECT pg_temp.fp('sc_0301') AS fp;
DECLARE sc_heap CURSOR FOR SELECT v FROM sc_0301;
MOVE 10 IN sc_heap;
SELECT throws_ok($$SELECT backfill_replace_partition('sc_0301', 'SELECT id, day, v + 1000 AS v FROM sc WHERE day >= $1 AND day < $2')$$,
	'55006', 'cannot replace partition public.sc_0301: this session is still reading it',
	'a cursor on the partition: the replacement is refused');
MOVE FORWARD ALL IN sc_heap;
SELECT is(pg_temp.fp('sc_0301'), (SELECT fp FROM sc_before), 'a cursor on the partition: the rows are the old ones');
CLOSE sc_heap;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
DECLARE sc_index CURSOR FOR SELECT id FROM sc_0301 WHERE id > 5 ORDER BY id;
MOVE 2 IN sc_index;
SELECT throws_ok($$SELECT backfill_replace_partition('sc_0301', 'SELECT id, day, v + 1000 AS v FROM sc WHERE day >= $1 AND day < $2')$$,
	'55006', NULL, 'a cursor on an index of the partition: the replacement is refused');
CLOSE sc_index;
RESET enable_seqscan;
RESET enable_bitmapscan;
CREATE FUNCTION pg_temp.leave_cursor() RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	c refcursor := 'sc_left_open';
BEGIN
	OPEN c FOR SELECT * FROM sc_0301;
	RETURN 0;
END $$;
SELECT throws_ok($$SELECT backfill_replace_partition('sc_0301',
	'SELECT s.* FROM (SELECT pg_temp.leave_cursor() AS n OFFSET 0) x, LATERAL (SELECT id, day, v + 1000 AS v FROM sc WHERE day >= $1 AND day < $2) s')$$,
	'55006', NULL, 'a cursor the source leaves open: the swap is refused');
SELECT is(pg_temp.fp('sc_0301'), (SELECT fp FROM sc_before), 'after the refusals the partition is as it was');
SELECT is((SELECT count(*) FROM pg_class WHERE relname LIKE 'backfill_stage%'), 0::bigint, 'and no staging table is left');
SELECT lives_ok($$SELECT backfill_replace_partition('sc_0301', 'SELECT id, day, v + 1000 AS v FROM sc WHERE day >= $1 AND day < $2')$$,
	'no cursor open: the replacement goes on');

-- indexes matched by what they are, not by cutting their definition's text: a name with
-- " USING " in it, an expression index with a predicate; by files, and by DETACH and ATTACH
-- (a dropped column: the same columns at other attribute numbers)
CREATE TABLE su (id int, gone int, day date, v int) PARTITION BY RANGE (day);
CREATE TABLE su_0301 PARTITION OF su FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
CREATE INDEX "su by v USING btree (id)" ON su_0301 (v);
CREATE INDEX su_expr ON su_0301 ((v * 2)) WHERE v > 10;
INSERT INTO su SELECT g, g, '2026-03-01', g FROM generate_series(1, 100) g;
CREATE TEMP TABLE su_before AS SELECT 'su_0301'::regclass::oid AS part;
SELECT lives_ok($$SELECT backfill_replace_partition('su_0301', 'SELECT id, gone, day, v + 1 AS v FROM su WHERE day >= $1 AND day < $2')$$,
	'an index named with " USING " in it: the partition is replaced');
SELECT is(ARRAY(SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = 'su_0301'::regclass ORDER BY indexrelid::regclass::text COLLATE "C"),
	ARRAY['"su by v USING btree (id)"', 'su_expr'], 'by files: each index keeps its name');
ALTER TABLE su DROP COLUMN gone;
SELECT lives_ok($$SELECT backfill_replace_partition('su_0301', 'SELECT id, day, v + 1 AS v FROM su WHERE day >= $1 AND day < $2')$$,
	'and with a dropped column, by DETACH and ATTACH');
SELECT isnt('su_0301'::regclass::oid, (SELECT part FROM su_before), 'a new table');
SELECT is(ARRAY(SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = 'su_0301'::regclass ORDER BY indexrelid::regclass::text COLLATE "C"),
	ARRAY['"su by v USING btree (id)"', 'su_expr'], 'its indexes are renamed to the old names, each matched by its shape');
SELECT is((SELECT sum(v) FROM su WHERE v * 2 > 300 AND v > 10), (SELECT sum(g + 2) FROM generate_series(1, 100) g WHERE (g + 2) * 2 > 300),
	'the new rows, read through the expression index');

-- a session's default_table_access_method does not reach the copy: a heap, as the partition is
CREATE ACCESS METHOD regress_heap_alias TYPE TABLE HANDLER heap_tableam_handler;
CREATE TEMP TABLE sam_before AS SELECT 'su_0301'::regclass::oid AS part;
SET LOCAL default_table_access_method = regress_heap_alias;
SELECT backfill_replace_partition('su_0301', 'SELECT id, day, v FROM su WHERE day >= $1 AND day < $2');
RESET default_table_access_method;
SELECT is((SELECT amname::text FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = 'su_0301'::regclass),
	'heap', 'a session default access method: the partition is still a heap');
SELECT is('su_0301'::regclass::oid, (SELECT part FROM sam_before), 'and its files were swapped, the copy being a heap too');

SELECT * FROM finish();
ROLLBACK;
