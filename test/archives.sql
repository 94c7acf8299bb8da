-- test/archives.sql: the archives keep_old keeps, as a DBA finds them.
--
-- 1. An archive is named <partition>_archived (then _archived1, ...).  A name too long for
--    that keeps its end, where the date of a daily partition is, and its beginning, with a
--    short hash of the whole name in place of the middle: archives of partitions that differ
--    only in their date differ in that date, and repeated replacements of one partition get
--    distinct names.  Its indexes are renamed the same way.  Multibyte names are cut on a
--    character boundary.
-- 2. Undo of a record whose partition was detached since (as retention does) says so: the
--    partition was detached, what the log knows of it, what the archive holds, what to do;
--    and changes nothing.
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(17);

-- err(sql): the error sql raises, as 'SQLSTATE: message | detail | hint'.
CREATE FUNCTION pg_temp.err(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE s text; m text; d text; h text;
BEGIN
	EXECUTE sql;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL, h = PG_EXCEPTION_HINT;
	RETURN s || ': ' || m || ' | ' || coalesce(d, '') || ' | ' || coalesce(h, '');
END $$;

-- ============================================================ 1. names
-- a 63-byte parent name: its partitions' names are cut by PostgreSQL, keeping the date last
CREATE TABLE fact_sales_by_region_and_channel_daily_snapshot_all (id int PRIMARY KEY, day date NOT NULL, v int)
	PARTITION BY RANGE (id);
CREATE TABLE fact_sales_by_region_and_channel_daily_snapshot_all_p20260315
	PARTITION OF fact_sales_by_region_and_channel_daily_snapshot_all FOR VALUES FROM (0) TO (100);
CREATE TABLE fact_sales_by_region_and_channel_daily_snapshot_all_p20260316
	PARTITION OF fact_sales_by_region_and_channel_daily_snapshot_all FOR VALUES FROM (100) TO (200);
INSERT INTO fact_sales_by_region_and_channel_daily_snapshot_all SELECT g, '2026-03-15', g FROM generate_series(0, 199) g;

CREATE TEMP TABLE arch AS
SELECT 1 AS n, (backfill_replace_partition('fact_sales_by_region_and_channel_daily_snapshot_all_p20260315',
	'SELECT id, day, v + 1 AS v FROM fact_sales_by_region_and_channel_daily_snapshot_all_p20260315', keep_old => true)).archived_as::text AS name
UNION ALL
SELECT 2, (backfill_replace_partition('fact_sales_by_region_and_channel_daily_snapshot_all_p20260316',
	'SELECT id, day, v + 1 AS v FROM fact_sales_by_region_and_channel_daily_snapshot_all_p20260316', keep_old => true)).archived_as::text;
INSERT INTO arch
SELECT 3, (backfill_replace_partition('fact_sales_by_region_and_channel_daily_snapshot_all_p20260315',
	'SELECT id, day, v + 2 AS v FROM fact_sales_by_region_and_channel_daily_snapshot_all_p20260315', keep_old => true)).archived_as::text;

SELECT ok((SELECT bool_and(octet_length(name) <= 63) FROM arch), 'every archive name fits in 63 bytes: '
	|| (SELECT string_agg(name, ', ' ORDER BY n) FROM arch));
SELECT alike((SELECT name FROM arch WHERE n = 1), '%p20260315_archived', 'the archive of the 15th ends with its date');
SELECT alike((SELECT name FROM arch WHERE n = 2), '%p20260316_archived', 'the archive of the 16th ends with its date');
SELECT alike((SELECT name FROM arch WHERE n = 3), '%p20260315_archived1', 'a second archive of the 15th too, numbered');
SELECT alike((SELECT name FROM arch WHERE n = 1), 'fact_sales_by_region%', 'and each starts as its partition does');
SELECT is((SELECT count(DISTINCT name) FROM arch), 3::bigint, 'the three archives have three names');
SELECT ok((SELECT name FROM arch WHERE n = 1) ~ '_[0-9a-f]{6}_', 'a short hash of the whole name stands for the middle');
SELECT is((SELECT count(*) FROM pg_class c JOIN arch a ON c.oid = a.name::regclass WHERE NOT c.relispartition),
	3::bigint, 'they are the detached old partitions');
SELECT ok((SELECT bool_and(i.indexrelid::regclass::text ~ '_archived1?$' AND octet_length(i.indexrelid::regclass::text) <= 63)
		   FROM pg_index i JOIN arch a ON i.indrelid = a.name::regclass),
	'their indexes are renamed the same way: ' || (SELECT string_agg(i.indexrelid::regclass::text, ', ' ORDER BY a.n)
		   FROM pg_index i JOIN arch a ON i.indrelid = a.name::regclass));

-- a short name is unchanged: <name>_archived
CREATE TABLE short_p (id int) PARTITION BY RANGE (id);
CREATE TABLE short_p_1 PARTITION OF short_p FOR VALUES FROM (0) TO (10);
SELECT is((SELECT archived_as::text FROM backfill_replace_partition('short_p_1', 'SELECT 1 AS id', keep_old => true)),
	'short_p_1_archived', 'a name that fits is <name>_archived');

-- multibyte: 15 three-byte characters (62 bytes) and a date, cut on character boundaries
CREATE TABLE "ventes_€€€€€€€€€€€€€€€" (id int) PARTITION BY RANGE (id);
CREATE TABLE "ventes_€€€€€€€€€€€€€€€_p20260315" PARTITION OF "ventes_€€€€€€€€€€€€€€€" FOR VALUES FROM (0) TO (10);
SELECT alike((SELECT archived_as::text FROM backfill_replace_partition('"ventes_€€€€€€€€€€€€€€€_p20260315"',
		'SELECT 1 AS id', keep_old => true)), '%_p20260315_archived%', 'a multibyte name keeps its date too');

-- ============================================================ 2. undo after a detach
CREATE TABLE ret (id int, day date) PARTITION BY RANGE (day);
CREATE TABLE ret_0301 PARTITION OF ret FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
CREATE TABLE ret_0302 PARTITION OF ret FOR VALUES FROM ('2026-03-02') TO ('2026-03-03');
INSERT INTO ret SELECT g, '2026-03-01' FROM generate_series(1, 40) g;
CREATE TEMP TABLE ret_rec AS
SELECT * FROM backfill_replace_partition('ret_0301', 'SELECT id * 10 AS id, day FROM ret_0301', keep_old => true);
-- retention detaches the old day
ALTER TABLE ret DETACH PARTITION ret_0301;
CREATE TEMP TABLE ret_err AS SELECT pg_temp.err(format('SELECT backfill_undo(%s)', (SELECT log_id FROM ret_rec))) AS e;

SELECT alike((SELECT e FROM ret_err), format('55000: cannot undo record %s: partition public.ret_0301 was detached from public.ret |%%',
	(SELECT log_id FROM ret_rec)), 'undo says the partition was detached, and from what');
SELECT alike((SELECT e FROM ret_err), '%It is now a table of its own.%', 'what it is now');
SELECT alike((SELECT e FROM ret_err), '%No later record of backfill_log concerns it: it was detached outside backfill%',
	'that the log does not know who detached it');
SELECT alike((SELECT e FROM ret_err), format('%%The archive public.ret_0301_archived holds the 40 rows public.ret_0301 had before record %s (fingerprint %s).%%',
	(SELECT log_id FROM ret_rec), (SELECT fingerprint_before FROM ret_rec)), 'what the archive holds, from the record');
SELECT alike((SELECT e FROM ret_err), '%| If the range is to stay out of public.ret, drop public.ret_0301_archived when it is no longer needed; to bring the old rows back, attach public.ret_0301_archived to public.ret%',
	'and what to do');
SELECT ok(NOT (SELECT relispartition FROM pg_class WHERE oid = 'ret_0301_archived'::regclass)
	AND (SELECT count(*) FROM ret_0301_archived) = 40 AND (SELECT count(*) FROM ret_0301) = 40
	AND (SELECT count(*) FROM ret) = 0,
	'and nothing was changed');

SELECT * FROM finish();
ROLLBACK;
