-- test/replace_contracts.sql: what backfill_replace_partition and backfill_undo promise.
--
-- A replacement gives the partition exactly the rows of the source and changes nothing else:
-- the partition reads the same in the catalog afterwards (columns, constraints, indexes,
-- options, owner, grants, comments, its own triggers, persistence, bound, and what \d+ shows
-- besides), every other partition keeps its rows bit for bit, no staging table or helper
-- constraint is left, and exactly one backfill_log record tells what was done. keep_old keeps
-- the old rows as an archive table that backfill_undo swaps back in, and undo refuses
-- whenever that would lose rows. RANGE, LIST, sub-partitioned and DEFAULT-partitioned tables,
-- source rows that break a constraint, empty sources, names that need quoting and savepoints.
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(153);

-- ============================================================ helpers
-- fp(rel): the fingerprint as text.
CREATE FUNCTION pg_temp.fp(rel regclass) RETURNS text
LANGUAGE sql AS $$ SELECT (backfill_fingerprint(rel))::text $$;
CREATE FUNCTION pg_temp.fph(rel regclass) RETURNS text
LANGUAGE sql AS $$ SELECT (backfill_fingerprint(rel)).hash $$;

-- leaves(root): every leaf partition under root, by name, with its fingerprint.
CREATE FUNCTION pg_temp.leaves(root regclass) RETURNS TABLE (name text, fp text)
LANGUAGE sql AS $$
	SELECT t.relid::text, pg_temp.fp(t.relid) FROM pg_catalog.pg_partition_tree(root) t WHERE t.isleaf
$$;

-- stage_tables(): how many staging tables exist.
CREATE FUNCTION pg_temp.stage_tables() RETURNS bigint
LANGUAGE sql AS $$ SELECT count(*) FROM pg_class WHERE relname LIKE 'backfill\_stage\_%' $$;

-- log_max(): the highest id of backfill_log.
CREATE FUNCTION pg_temp.log_max() RETURNS bigint
LANGUAGE sql AS $$ SELECT coalesce(max(id), 0) FROM public.backfill_log $$;

-- describe(rel): the definition of a table, aspect by aspect, as text. The core aspects are
-- those the brief of the extension promises; the others are what \d+ and pg_dump show too.
CREATE FUNCTION pg_temp.describe(rel regclass) RETURNS TABLE (aspect text, core boolean, val text)
LANGUAGE sql AS $$
	SELECT 'columns', true, (
		SELECT string_agg(format('%I %s collation=%s notnull=%s default=%s storage=%s compression=%s',
		                         a.attname, format_type(a.atttypid, a.atttypmod), coalesce(co.collname, '-'),
		                         a.attnotnull, coalesce(pg_get_expr(d.adbin, d.adrelid), '-'), a.attstorage,
		                         coalesce(nullif(a.attcompression::text, ''), '-')), '; ' ORDER BY a.attnum)
		FROM pg_attribute a
		LEFT JOIN pg_collation co ON co.oid = a.attcollation
		LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped)
	UNION ALL
	SELECT 'constraints', true, (
		SELECT string_agg(format('%I %s%s', c.conname, pg_get_constraintdef(c.oid),
		                         CASE WHEN c.convalidated THEN '' ELSE ' (not valid)' END), '; ' ORDER BY c.conname)
		FROM pg_constraint c WHERE c.conrelid = rel)
	UNION ALL
	SELECT 'indexes', true, (
		SELECT string_agg(format('%s primary=%s unique=%s valid=%s options=%s parent=%s',
		                         replace(pg_get_indexdef(i.indexrelid), ' ON ' || rel::text || ' USING ', ' ON <table> USING '),
		                         i.indisprimary, i.indisunique, i.indisvalid, coalesce(ic.reloptions::text, '-'),
		                         coalesce((SELECT h.inhparent::regclass::text FROM pg_inherits h WHERE h.inhrelid = i.indexrelid), '-')),
		                  '; ' ORDER BY ic.relname)
		FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid WHERE i.indrelid = rel)
	UNION ALL
	SELECT 'reloptions', true, (SELECT coalesce(reloptions::text, '-') FROM pg_class WHERE oid = rel)
	UNION ALL
	SELECT 'tablespace', true, (SELECT coalesce(t.spcname::text, '(database default)')
	                            FROM pg_class c LEFT JOIN pg_tablespace t ON t.oid = c.reltablespace WHERE c.oid = rel)
	UNION ALL
	SELECT 'owner', true, (SELECT relowner::regrole::text FROM pg_class WHERE oid = rel)
	UNION ALL
	SELECT 'relacl', true, (SELECT coalesce(relacl::text, '-') FROM pg_class WHERE oid = rel)
	UNION ALL
	SELECT 'column acls', true, (
		SELECT string_agg(format('%I %s', attname, attacl), '; ' ORDER BY attnum)
		FROM pg_attribute WHERE attrelid = rel AND attnum > 0 AND attacl IS NOT NULL)
	UNION ALL
	SELECT 'comments', true, format('table: %s; columns: %s', obj_description(rel, 'pg_class'), (
		SELECT string_agg(format('%I %s', attname, col_description(rel, attnum)), '; ' ORDER BY attnum)
		FROM pg_attribute WHERE attrelid = rel AND attnum > 0 AND col_description(rel, attnum) IS NOT NULL))
	UNION ALL
	SELECT 'own triggers', true, (
		SELECT string_agg(pg_get_triggerdef(t.oid), '; ' ORDER BY t.tgname)
		FROM pg_trigger t WHERE t.tgrelid = rel AND NOT t.tgisinternal AND t.tgparentid = 0)
	UNION ALL
	SELECT 'persistence', true, (SELECT relpersistence::text FROM pg_class WHERE oid = rel)
	UNION ALL
	SELECT 'partition bound', true, (
		SELECT format('%s of %s', pg_get_expr(c.relpartbound, c.oid),
		              (SELECT h.inhparent::regclass::text FROM pg_inherits h WHERE h.inhrelid = c.oid))
		FROM pg_class c WHERE c.oid = rel)
	-- what \d+ and pg_dump show besides
	UNION ALL
	SELECT 'triggers cloned from the parent', false, (
		SELECT string_agg(format('%s (from %I)', pg_get_triggerdef(t.oid), pt.tgname), '; ' ORDER BY t.tgname)
		FROM pg_trigger t JOIN pg_trigger pt ON pt.oid = t.tgparentid WHERE t.tgrelid = rel AND NOT t.tgisinternal)
	UNION ALL
	SELECT 'trigger firing (enabled/disabled)', false, (
		SELECT string_agg(format('%I %s', tgname, tgenabled), '; ' ORDER BY tgname)
		FROM pg_trigger WHERE tgrelid = rel AND NOT tgisinternal)
	UNION ALL
	SELECT 'column statistics targets and options', false, (
		SELECT string_agg(format('%I stattarget=%s options=%s', attname, attstattarget,
		                         (SELECT coalesce(string_agg(o, ',' ORDER BY o), '-') FROM unnest(attoptions) o
		                          WHERE o NOT LIKE 'pg\_attver=%')),
		                  '; ' ORDER BY attnum)
		FROM pg_attribute WHERE attrelid = rel AND attnum > 0 AND NOT attisdropped)
	UNION ALL
	SELECT 'replica identity and clustered index', false, format('replident=%s clustered=%s replident_index=%s',
		(SELECT relreplident FROM pg_class WHERE oid = rel),
		(SELECT string_agg(indexrelid::regclass::text, ',') FROM pg_index WHERE indrelid = rel AND indisclustered),
		(SELECT string_agg(indexrelid::regclass::text, ',') FROM pg_index WHERE indrelid = rel AND indisreplident))
	UNION ALL
	SELECT 'row security and policies', false, format('enabled=%s forced=%s policies: %s',
		(SELECT relrowsecurity FROM pg_class WHERE oid = rel), (SELECT relforcerowsecurity FROM pg_class WHERE oid = rel),
		(SELECT string_agg(format('%I %s %s %s using %s check %s', polname, polcmd, polpermissive, polroles::regrole[],
		                          pg_get_expr(polqual, polrelid), pg_get_expr(polwithcheck, polrelid)), '; ' ORDER BY polname)
		 FROM pg_policy WHERE polrelid = rel))
	UNION ALL
	SELECT 'extended statistics', false, (
		SELECT string_agg(pg_get_statisticsobjdef(oid), '; ' ORDER BY stxname) FROM pg_statistic_ext WHERE stxrelid = rel)
	UNION ALL
	SELECT 'comments on indexes and constraints', false, concat_ws('; ',
		(SELECT string_agg(format('index %I: %s', ic.relname, obj_description(ic.oid, 'pg_class')), '; ' ORDER BY ic.relname)
		 FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
		 WHERE i.indrelid = rel AND obj_description(ic.oid, 'pg_class') IS NOT NULL),
		(SELECT string_agg(format('constraint %I: %s', conname, obj_description(oid, 'pg_constraint')), '; ' ORDER BY conname)
		 FROM pg_constraint WHERE conrelid = rel AND obj_description(oid, 'pg_constraint') IS NOT NULL))
	UNION ALL
	SELECT 'inheritance of columns and constraints', false, concat_ws(' / ',
		(SELECT string_agg(format('%I local=%s inhcount=%s', attname, attislocal, attinhcount), '; ' ORDER BY attnum)
		 FROM pg_attribute WHERE attrelid = rel AND attnum > 0 AND NOT attisdropped),
		(SELECT string_agg(format('%I local=%s inhcount=%s parent=%s', c.conname, c.conislocal, c.coninhcount,
		                          coalesce((SELECT p.conname FROM pg_constraint p WHERE p.oid = c.conparentid)::text, '-')),
		                   '; ' ORDER BY c.conname)
		 FROM pg_constraint c WHERE c.conrelid = rel))
	UNION ALL
	SELECT 'access method', false, (SELECT amname::text FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = rel)
$$;

-- core(rel): the core aspects in one text.
CREATE FUNCTION pg_temp.core(rel regclass) RETURNS text
LANGUAGE sql AS $$
	SELECT string_agg(aspect || ': ' || coalesce(val, '-'), E'\n' ORDER BY aspect) FROM pg_temp.describe(rel) WHERE core
$$;

-- fails(sql, sqlstate, message regex, description): sql raises exactly that.
CREATE FUNCTION pg_temp.fails(sql text, state text, msg_re text, descr text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	s text; m text;
BEGIN
	BEGIN
		EXECUTE sql;
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, m = MESSAGE_TEXT;
		IF s = state AND m ~ msg_re THEN
			RETURN ok(true, descr);
		END IF;
		RETURN ok(false, descr) || E'\n' || diag(format(E'raised %s: %s\nwanted %s: %s', s, m, state, msg_re));
	END;
	RETURN ok(false, descr) || E'\n' || diag('no error was raised');
END $$;

-- error_message(sql): the message of the error sql raises.
CREATE FUNCTION pg_temp.error_message(sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE sql;
	RETURN '(no error)';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLERRM;
END $$;

-- refused(sql, sqlstate, message regex, description, watched): sql raises that error and
-- leaves the watched partition's rows, backfill_log and the set of relations as they were.
CREATE FUNCTION pg_temp.refused(sql text, state text, msg_re text, descr text, watched regclass)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	s text; m text; raised boolean := false;
	fp0 text := pg_temp.fp(watched);
	log0 bigint := pg_temp.log_max();
	rels0 bigint := (SELECT count(*) FROM pg_class);
	fp1 text; log1 bigint; rels1 bigint;
BEGIN
	BEGIN
		EXECUTE sql;
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, m = MESSAGE_TEXT;
		raised := true;
	END;
	fp1 := pg_temp.fp(watched);
	log1 := pg_temp.log_max();
	rels1 := (SELECT count(*) FROM pg_class);
	IF raised AND s = state AND m ~ msg_re AND fp1 = fp0 AND log1 = log0 AND rels1 = rels0
	   AND pg_temp.stage_tables() = 0 THEN
		RETURN ok(true, descr);
	END IF;
	RETURN ok(false, descr) || E'\n' || diag(concat_ws(E'\n',
		CASE WHEN raised THEN format('raised %s: %s', s, m) ELSE 'no error was raised' END,
		format('wanted %s: %s', state, msg_re),
		CASE WHEN fp1 <> fp0 THEN format('the partition changed: %s -> %s', fp0, fp1) END,
		CASE WHEN log1 <> log0 THEN 'backfill_log got a record' END,
		CASE WHEN rels1 <> rels0 THEN 'the set of relations changed' END));
END $$;

-- ============================================================ the partitioned table
CREATE ROLE regress_rp_owner;
CREATE ROLE regress_rp_reader;
CREATE FUNCTION public.regress_rp_noop() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN coalesce(NEW, OLD); END$$;

CREATE TABLE rp_customer (id int PRIMARY KEY);
INSERT INTO rp_customer SELECT generate_series(1, 50);
CREATE TABLE rp_tag (tag text PRIMARY KEY);
INSERT INTO rp_tag VALUES ('red'), ('green'), ('blue');

CREATE TABLE sales (
	id int NOT NULL,
	day date NOT NULL,
	region text NOT NULL DEFAULT 'eu',
	amount numeric(12,2) NOT NULL DEFAULT 0,
	note text,
	tag text,
	customer int REFERENCES rp_customer (id),
	PRIMARY KEY (id, day, region),
	CONSTRAINT sales_amount_sane CHECK (amount > -1000000)
) PARTITION BY RANGE (day);
CREATE INDEX sales_region_idx ON sales (region);
CREATE TRIGGER sales_audit AFTER INSERT ON sales FOR EACH ROW EXECUTE FUNCTION public.regress_rp_noop();
CREATE TABLE sales_2026_01 PARTITION OF sales FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
CREATE TABLE sales_2026_02 PARTITION OF sales FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');
CREATE TABLE sales_2026_03 PARTITION OF sales FOR VALUES FROM ('2026-03-01') TO ('2026-04-01') PARTITION BY LIST (region);
CREATE TABLE sales_2026_03_eu PARTITION OF sales_2026_03 FOR VALUES IN ('eu', 'uk');
CREATE TABLE sales_2026_03_rest PARTITION OF sales_2026_03 DEFAULT;
CREATE TABLE sales_default PARTITION OF sales DEFAULT;

INSERT INTO sales (id, day, region, amount, note, tag, customer)
SELECT g, date '2026-01-01' + g % 90, (ARRAY['eu', 'uk', 'us', 'jp'])[1 + g % 4], g * 1.5,
       'note ' || g, (ARRAY['red', 'green', 'blue', NULL])[1 + g % 4], 1 + g % 50
FROM generate_series(1, 900) g;
INSERT INTO sales (id, day, region, amount, note)
SELECT g, date '2027-01-01' + g % 20, 'eu', g, 'later ' || g FROM generate_series(1, 60) g;

-- sales_2026_02 gets one of each thing a partition can have of its own
ALTER TABLE sales_2026_02 ADD CONSTRAINT sales_2026_02_note_short CHECK (length(note) < 200);
ALTER TABLE sales_2026_02 SET (fillfactor = 80, autovacuum_enabled = false);
COMMENT ON TABLE sales_2026_02 IS 'February, recomputed by the nightly backfill';
COMMENT ON COLUMN sales_2026_02.note IS 'free text';
ALTER TABLE sales_2026_02 OWNER TO regress_rp_owner;
GRANT SELECT, UPDATE ON sales_2026_02 TO regress_rp_reader;
GRANT INSERT (note, tag) ON sales_2026_02 TO regress_rp_reader WITH GRANT OPTION;
CREATE TRIGGER sales_2026_02_touch BEFORE UPDATE ON sales_2026_02
	FOR EACH ROW WHEN (OLD.note IS DISTINCT FROM NEW.note) EXECUTE FUNCTION public.regress_rp_noop();
CREATE INDEX sales_2026_02_note_idx ON sales_2026_02 (lower(note)) WITH (fillfactor = 60) WHERE note IS NOT NULL;
ALTER TABLE sales_2026_02 ADD CONSTRAINT sales_2026_02_tag_fkey FOREIGN KEY (tag) REFERENCES rp_tag (tag);
ALTER TABLE sales_2026_02 ALTER COLUMN note SET STORAGE EXTERNAL;
ALTER TABLE sales_2026_02 ALTER COLUMN note SET COMPRESSION pglz;
-- and what \d+ shows besides
ALTER TABLE sales_2026_02 ALTER COLUMN amount SET STATISTICS 321;
ALTER TABLE sales_2026_02 ALTER COLUMN note SET (n_distinct = 50);
CREATE TRIGGER sales_2026_02_off BEFORE DELETE ON sales_2026_02 FOR EACH ROW EXECUTE FUNCTION public.regress_rp_noop();
ALTER TABLE sales_2026_02 DISABLE TRIGGER sales_2026_02_off;
ALTER TABLE sales_2026_02 REPLICA IDENTITY USING INDEX sales_2026_02_pkey;
CREATE INDEX sales_2026_02_tag_idx ON sales_2026_02 (tag);
ALTER TABLE sales_2026_02 CLUSTER ON sales_2026_02_tag_idx;
CREATE STATISTICS sales_2026_02_stats (dependencies) ON region, tag FROM sales_2026_02;
COMMENT ON INDEX sales_2026_02_note_idx IS 'for the search box';
COMMENT ON CONSTRAINT sales_2026_02_note_short ON sales_2026_02 IS 'notes stay short';
COMMENT ON CONSTRAINT sales_2026_02_tag_fkey ON sales_2026_02 IS 'tags are known';

-- the source: February recomputed (amounts changed, some rows gone, some new)
CREATE TABLE sales_src AS
SELECT id, day, region, amount * 2 AS amount, note || ' (fixed)' AS note, tag, customer
FROM sales WHERE id % 7 <> 0;
INSERT INTO sales_src VALUES (5001, '2026-02-14', 'eu', 14.02, 'new', 'red', 3), (5002, '2026-02-28', 'us', 28.02, NULL, NULL, NULL);
CREATE TEMP TABLE src_sql AS SELECT
	$$SELECT id, day, region, amount, note, tag, customer FROM sales_src WHERE day >= $1 AND day < $2$$::text AS q;
CREATE TABLE sales_expected AS
SELECT id, day, region, amount, note, tag, customer FROM sales_src WHERE day >= '2026-02-01' AND day < '2026-03-01';

-- ============================================================ one replacement, everything it promises
CREATE TEMP TABLE desc_before AS SELECT * FROM pg_temp.describe('sales_2026_02');
CREATE TEMP TABLE leaves_before AS SELECT * FROM pg_temp.leaves('sales');
CREATE TEMP TABLE fp_before AS SELECT * FROM backfill_fingerprint('sales_2026_02');
CREATE TEMP TABLE default_constraints_before AS
	SELECT string_agg(conname || ' ' || pg_get_constraintdef(oid), '; ' ORDER BY conname) AS s
	FROM pg_constraint WHERE conrelid = 'sales_default'::regclass;
CREATE TEMP TABLE log_before AS SELECT pg_temp.log_max() AS id;
CREATE TEMP TABLE settings_before AS SELECT current_setting('search_path') AS sp, current_setting('lock_timeout') AS lt;
CREATE TEMP TABLE old_oid AS SELECT 'sales_2026_02'::regclass::oid AS oid, pg_relation_filenode('sales_2026_02') AS node;

SELECT is((SELECT count(*) FROM sales_expected), 242::bigint, 'premise: the source has 242 rows for February');
SELECT isnt(pg_temp.fph('sales_expected'), (SELECT hash FROM fp_before), 'premise: they differ from the partition''s rows');

CREATE TEMP TABLE r1 AS
SELECT * FROM backfill_replace_partition('sales_2026_02', (SELECT q FROM src_sql));

SELECT is((SELECT partition FROM r1), 'sales_2026_02'::regclass, 'partition: the partition now carrying the name');
SELECT is((SELECT partition::oid FROM r1), (SELECT oid FROM old_oid), 'partition: the same table, its files traded with its copy''s');
SELECT is(pg_temp.fp('sales_2026_02'), pg_temp.fp('sales_expected'),
          'rows: the partition holds exactly the source''s rows');
SELECT is((SELECT fingerprint_after FROM r1), pg_temp.fph('sales_2026_02'),
          'fingerprint_after is the fingerprint of the partition afterwards');
SELECT is((SELECT rows_after FROM r1), (backfill_fingerprint('sales_2026_02')).rows, 'rows_after is its row count');
SELECT is((SELECT rows_before FROM r1), (SELECT rows FROM fp_before), 'rows_before is the count before');
SELECT is((SELECT fingerprint_before FROM r1), (SELECT hash FROM fp_before), 'fingerprint_before is the fingerprint before');
SELECT is((SELECT archived_as FROM r1), NULL, 'keep_old false: no archive');
SELECT ok(NOT EXISTS (SELECT FROM pg_class WHERE relfilenode = (SELECT node FROM old_oid)), 'keep_old false: the old files are dropped');
SELECT is((SELECT attempts FROM r1), 1, 'attempts: one, nobody held a lock');
SELECT ok((SELECT swap_ms >= 0 AND swap_ms < 60000 FROM r1), 'swap_ms is a duration');

-- every aspect of the definition, one by one
SELECT is(a.val, b.val, 'definition unchanged: ' || b.aspect)
FROM desc_before b JOIN pg_temp.describe('sales_2026_02') a USING (aspect) WHERE b.core ORDER BY b.aspect;
SELECT is(a.val, b.val, 'definition unchanged (\d+, pg_dump): ' || b.aspect)
FROM desc_before b JOIN pg_temp.describe('sales_2026_02') a USING (aspect) WHERE NOT b.core ORDER BY b.aspect;
SELECT ok((SELECT val FROM desc_before WHERE aspect = 'own triggers') LIKE '%sales_2026_02_touch%'
          AND (SELECT val FROM desc_before WHERE aspect = 'constraints') LIKE '%sales_2026_02_tag_fkey%'
          AND (SELECT val FROM desc_before WHERE aspect = 'indexes') LIKE '%sales_2026_02_note_idx%'
          AND (SELECT val FROM desc_before WHERE aspect = 'column acls') LIKE '%regress_rp_reader%'
          AND (SELECT val FROM desc_before WHERE aspect = 'triggers cloned from the parent') LIKE '%sales_audit%',
          'premise: the description sees the trigger, foreign key, index, column grant and cloned trigger');

-- every other partition, the DEFAULT one included, keeps its rows bit for bit
SELECT is(a.fp, b.fp, 'other partition unchanged: ' || b.name)
FROM leaves_before b LEFT JOIN pg_temp.leaves('sales') a USING (name)
WHERE b.name <> 'sales_2026_02' ORDER BY b.name;
SELECT is((SELECT count(*) FROM pg_temp.leaves('sales')), (SELECT count(*) FROM leaves_before), 'same number of leaf partitions');

-- nothing left behind
SELECT is(pg_temp.stage_tables(), 0::bigint, 'no backfill_stage_% table is left');
SELECT is((SELECT string_agg(conname || ' ' || pg_get_constraintdef(oid), '; ' ORDER BY conname)
           FROM pg_constraint WHERE conrelid = 'sales_default'::regclass),
          (SELECT s FROM default_constraints_before), 'the DEFAULT partition''s constraints are as before');
SELECT is((SELECT count(*) FROM pg_constraint WHERE conname LIKE 'backfill%' AND conrelid IN ('sales_default'::regclass, 'sales_2026_02'::regclass)),
          0::bigint, 'no backfill_% constraint on the new partition or the DEFAULT partition');
SELECT is((SELECT row(current_setting('search_path'), current_setting('lock_timeout'))::text),
          (SELECT row(sp, lt)::text FROM settings_before), 'search_path and lock_timeout are as before');

-- the log record
SELECT is((SELECT count(*) FROM backfill_log WHERE id > (SELECT id FROM log_before)), 1::bigint, 'log: exactly one new record');
SELECT is((SELECT row(l.id, l.operation, l.target, l.partition, l.rows_before, l.rows_after,
                      l.fingerprint_before, l.fingerprint_after, l.logged_by)::text
           FROM backfill_log l WHERE l.id > (SELECT id FROM log_before)),
          (SELECT row(r.log_id, 'replace', 'public.sales', 'public.sales_2026_02', r.rows_before, r.rows_after,
                      r.fingerprint_before, r.fingerprint_after, current_user)::text FROM r1 r),
          'log: id, operation, target, partition, rows, fingerprints and logged_by are those returned');
SELECT is((SELECT details->>'attempts' FROM backfill_log WHERE id = (SELECT log_id FROM r1)), (SELECT attempts::text FROM r1),
          'log: details->>''attempts'' is the attempts returned');
SELECT is((SELECT row(details->>'source', details->>'bound', details->'archived_as')::text
           FROM backfill_log WHERE id = (SELECT log_id FROM r1)),
          row((SELECT q FROM src_sql), $$FOR VALUES FROM ('2026-02-01') TO ('2026-03-01')$$, 'null'::jsonb)::text,
          'log: details has the source, the bound and no archive');
SELECT is((SELECT xact_id FROM backfill_log WHERE id = (SELECT log_id FROM r1)), pg_current_xact_id(),
          'log: written in the caller''s transaction');

-- $1 and $2 are the bounds, typed as the key
CREATE TEMP TABLE r_params AS SELECT * FROM backfill_replace_partition('sales_2026_01',
	$$SELECT 1 AS id, $1 AS day, pg_typeof($1)::text || ' ' || pg_typeof($2)::text || ' ' || $2::text AS note$$);
SELECT is((SELECT format('%s %s', day, note) FROM sales_2026_01), '2026-01-01 date date 2026-02-01',
          'RANGE: $1 is the lower bound and $2 the upper bound, both of the key''s type');
-- a column the source leaves out takes its default
SELECT is((SELECT row(region, amount, tag, customer)::text FROM sales_2026_01), '(eu,0.00,,)',
          'columns left out of the source take their defaults (or NULL)');

-- ============================================================ keep_old, the archive and backfill_undo
CREATE TEMP TABLE k_before AS SELECT * FROM backfill_fingerprint('sales_2026_02');
CREATE TEMP TABLE k_core AS SELECT pg_temp.core('sales_2026_02') AS d;
CREATE TABLE k_old_rows AS TABLE sales_2026_02;
CREATE TEMP TABLE k_log AS SELECT pg_temp.log_max() AS id;
CREATE TEMP TABLE r2 AS
SELECT * FROM backfill_replace_partition('sales_2026_02',
	$$SELECT id, day, region, amount + 1 AS amount, tag FROM sales_2026_02 WHERE id % 2 = 0$$, keep_old => true);

SELECT is((SELECT archived_as::text FROM r2), 'sales_2026_02_archived', 'keep_old: the old partition is kept as <name>_archived');
SELECT is(pg_temp.fph((SELECT archived_as FROM r2)), (SELECT hash FROM k_before),
          'keep_old: the archive holds the old rows (its fingerprint is the old fingerprint)');
SELECT is((SELECT fingerprint_before FROM r2), (SELECT hash FROM k_before), 'keep_old: fingerprint_before is the archive''s');
SELECT ok((SELECT NOT relispartition FROM pg_class WHERE oid = (SELECT archived_as FROM r2))
          AND NOT EXISTS (SELECT FROM pg_inherits WHERE inhrelid = (SELECT archived_as FROM r2)),
          'keep_old: the archive is not attached');
SELECT ok((SELECT archived_as FROM r2) NOT IN (SELECT relid FROM pg_partition_tree('sales')),
          'keep_old: the archive is not in the partition tree');
SELECT is((SELECT details->>'archived_as' FROM backfill_log WHERE id = (SELECT log_id FROM r2)), 'public.sales_2026_02_archived',
          'keep_old: the log names the archive');
SELECT is(pg_temp.core('sales_2026_02'), (SELECT d FROM k_core), 'keep_old: the new partition''s definition reads the same');
SELECT is((SELECT count(*) FROM pg_constraint WHERE conname LIKE 'backfill%' AND conrelid = (SELECT archived_as FROM r2)),
          0::bigint, 'keep_old: no backfill_% constraint on the archive');

-- undo is refused while the partition differs from what the replacement wrote
INSERT INTO sales VALUES (7777, '2026-02-02', 'eu', 1, 'late arrival', NULL, NULL);
SELECT pg_temp.refused(format('SELECT * FROM backfill_undo(%s)', (SELECT log_id FROM r2)),
                       '55000', format('^cannot undo record %s: partition public\.sales_2026_02 changed since$', (SELECT log_id FROM r2)),
                       'undo refused: the partition changed after the replacement', 'sales_2026_02');
SELECT is(pg_temp.fph((SELECT archived_as FROM r2)), (SELECT hash FROM k_before), 'after the refused undo the archive is intact');
DELETE FROM sales WHERE id = 7777;
SELECT pg_temp.refused(format('SELECT * FROM backfill_undo(%s)', (SELECT log_id FROM r1)),
                       '55000', format('^cannot undo record %s: the old partition was not kept$', (SELECT log_id FROM r1)),
                       'undo refused: the replacement was made without keep_old', 'sales_2026_02');
SELECT pg_temp.refused('SELECT * FROM backfill_undo(987654321)',
                       '22023', '^log_id 987654321 is not a record of backfill_log$',
                       'undo refused: a log_id that does not exist', 'sales_2026_02');

-- undo: the old rows and the old definition are back, and a record says so
CREATE TEMP TABLE u_log AS SELECT pg_temp.log_max() AS id;
CREATE TEMP TABLE u_node AS SELECT pg_relation_filenode((SELECT archived_as FROM r2)) AS node;
CREATE TEMP TABLE u AS SELECT * FROM backfill_undo((SELECT log_id FROM r2));
SELECT is(pg_temp.fph('sales_2026_02'), (SELECT hash FROM k_before), 'undo: the old fingerprint is back');
SELECT is((SELECT count(*) FROM (TABLE sales_2026_02 EXCEPT ALL TABLE k_old_rows) x)
          + (SELECT count(*) FROM (TABLE k_old_rows EXCEPT ALL TABLE sales_2026_02) y), 0::bigint,
          'undo: the old rows are back, row for row');
SELECT is(pg_relation_filenode((SELECT partition FROM u)), (SELECT node FROM u_node), 'undo: the partition has the archived files again');
SELECT is(pg_temp.core('sales_2026_02'), (SELECT d FROM k_core), 'undo: the partition''s definition reads as before');
SELECT is((SELECT row(rows_before, rows_after, fingerprint_before, fingerprint_after)::text FROM u),
          (SELECT row(r2.rows_after, k.rows, r2.fingerprint_after, k.hash)::text FROM r2, k_before k),
          'undo: returns the rows and fingerprints it swapped');
SELECT is((SELECT count(*) FROM backfill_log WHERE id > (SELECT id FROM u_log)), 1::bigint, 'undo: one new log record');
SELECT is((SELECT row(l.id, l.operation, l.target, l.partition, l.rows_before, l.rows_after, l.fingerprint_before,
                      l.fingerprint_after, l.logged_by, l.details->>'undoes')::text
           FROM backfill_log l WHERE l.id > (SELECT id FROM u_log)),
          (SELECT row(u.log_id, 'undo', 'public.sales', 'public.sales_2026_02', u.rows_before, u.rows_after,
                      u.fingerprint_before, u.fingerprint_after, current_user, (SELECT log_id FROM r2)::text)::text FROM u),
          'undo: the record says undo, of which record, with the rows and fingerprints');
SELECT is(pg_temp.stage_tables(), 0::bigint, 'undo: no staging table');
SELECT is((SELECT count(*) FROM pg_constraint WHERE conname LIKE 'backfill\_%' AND conrelid IN
           (SELECT relid FROM pg_partition_tree('sales'))), 0::bigint, 'undo: no backfill_% constraint in the tree');
SELECT is(a.fp, b.fp, 'undo: other partition unchanged: ' || b.name)
FROM leaves_before b LEFT JOIN pg_temp.leaves('sales') a USING (name)
WHERE b.name NOT IN ('sales_2026_02', 'sales_2026_01') ORDER BY b.name;

-- the same undo again is refused: the partition is no longer what that replacement wrote
SELECT pg_temp.refused(format('SELECT * FROM backfill_undo(%s)', (SELECT log_id FROM r2)),
                       '55000', '^cannot undo record [0-9]+: (partition public\.sales_2026_02 changed since|its archive .* no longer exists|.*already undone)',
                       'undo refused: undoing the same record twice', 'sales_2026_02');
-- undo is refused when the archive was dropped
CREATE TEMP TABLE r3 AS SELECT * FROM backfill_replace_partition('sales_2026_02',
	$$SELECT id, day, region, amount FROM sales_2026_02$$, keep_old => true);
SELECT ok((SELECT archived_as IS NOT NULL FROM r3), 'premise: a second archive was kept');
CREATE TEMP TABLE r3_archive AS SELECT archived_as::text AS name FROM r3;
DO $$BEGIN EXECUTE format('DROP TABLE %s', (SELECT name FROM r3_archive)); END$$;
SELECT pg_temp.refused(format('SELECT * FROM backfill_undo(%s)', (SELECT log_id FROM r3)),
                       '55000', format('^cannot undo record %s: its archive public\.%s no longer exists$',
                                       (SELECT log_id FROM r3), (SELECT name FROM r3_archive)),
                       'undo refused: the archive was dropped', 'sales_2026_02');

-- ============================================================ LIST
CREATE TABLE by_region (id int, region text, amount numeric) PARTITION BY LIST (region);
CREATE TABLE by_region_europe PARTITION OF by_region FOR VALUES IN ('eu', 'uk', 'ch');
CREATE UNLOGGED TABLE by_region_us PARTITION OF by_region FOR VALUES IN ('us');
CREATE TABLE by_region_odd PARTITION OF by_region FOR VALUES IN ('xx', NULL);
CREATE TABLE by_region_other PARTITION OF by_region DEFAULT;
INSERT INTO by_region SELECT g, (ARRAY['eu', 'uk', 'ch', 'us', 'xx', NULL, 'jp'])[1 + g % 7], g FROM generate_series(1, 700) g;
CREATE TABLE by_region_src AS SELECT id, region, amount * 10 AS amount FROM by_region WHERE id % 3 <> 0;
CREATE TEMP TABLE l_leaves AS SELECT * FROM pg_temp.leaves('by_region');
CREATE TEMP TABLE l_core AS SELECT pg_temp.core('by_region_europe') AS d;

CREATE TEMP TABLE r_list AS SELECT * FROM backfill_replace_partition('by_region_europe',
	$$SELECT id, region, amount FROM by_region_src WHERE region = ANY ($1)$$);
CREATE TABLE by_region_expected AS SELECT id, region, amount FROM by_region_src WHERE region IN ('eu', 'uk', 'ch');
SELECT is(pg_temp.fp('by_region_europe'), pg_temp.fp('by_region_expected'), 'LIST: the partition holds exactly the source''s rows');
SELECT is((SELECT fingerprint_after FROM r_list), pg_temp.fph('by_region_europe'), 'LIST: fingerprint_after is the partition''s');
SELECT is(pg_temp.core('by_region_europe'), (SELECT d FROM l_core), 'LIST: the definition reads the same');
SELECT is(a.fp, b.fp, 'LIST: other partition unchanged: ' || b.name)
FROM l_leaves b LEFT JOIN pg_temp.leaves('by_region') a USING (name) WHERE b.name <> 'by_region_europe' ORDER BY b.name;
CREATE TEMP TABLE r_list_params AS SELECT * FROM backfill_replace_partition('by_region_europe',
	$$SELECT ordinality::int AS id, r AS region, NULL::numeric AS amount FROM unnest($1) WITH ORDINALITY AS u(r)$$);
SELECT is((SELECT array_agg(region ORDER BY region) FROM by_region_europe), ARRAY['ch', 'eu', 'uk'],
          'LIST: $1 is the array of the partition''s values');
CREATE TEMP TABLE r_list_null AS SELECT * FROM backfill_replace_partition('by_region_odd',
	$$SELECT ordinality::int AS id, r AS region FROM unnest($1) WITH ORDINALITY AS u(r)$$);
SELECT is((SELECT array_agg(region ORDER BY region NULLS LAST) FROM by_region_odd), ARRAY['xx', NULL],
          'LIST: a partition that accepts NULL gets NULL in $1');
-- an UNLOGGED partition stays unlogged
CREATE TEMP TABLE u_core AS SELECT pg_temp.core('by_region_us') AS d;
CREATE TEMP TABLE r_unlogged AS SELECT * FROM backfill_replace_partition('by_region_us',
	$$SELECT id, region, amount + 1 AS amount FROM by_region_src WHERE region = ANY ($1)$$);
SELECT is((SELECT relpersistence::text FROM pg_class WHERE oid = 'by_region_us'::regclass), 'u', 'UNLOGGED: the new partition is unlogged too');
SELECT is(pg_temp.core('by_region_us'), (SELECT d FROM u_core), 'UNLOGGED: the definition reads the same');

-- ============================================================ sub-partitions
CREATE TEMP TABLE s_leaves AS SELECT * FROM pg_temp.leaves('sales');
CREATE TEMP TABLE s_core AS SELECT pg_temp.core('sales_2026_03_eu') AS d;
CREATE TEMP TABLE s_log AS SELECT pg_temp.log_max() AS id;
CREATE TEMP TABLE r_sub AS SELECT * FROM backfill_replace_partition('sales_2026_03_eu',
	$$SELECT id, day, region, amount, note, tag, customer FROM sales_src
	  WHERE day >= '2026-03-01' AND day < '2026-04-01' AND region = ANY ($1)$$);
CREATE TABLE sales_sub_expected AS SELECT id, day, region, amount, note, tag, customer FROM sales_src
	WHERE day >= '2026-03-01' AND day < '2026-04-01' AND region IN ('eu', 'uk');
SELECT is(pg_temp.fp('sales_2026_03_eu'), pg_temp.fp('sales_sub_expected'), 'sub-partition: the leaf holds exactly the source''s rows');
SELECT is((SELECT inhparent::regclass FROM pg_inherits WHERE inhrelid = 'sales_2026_03_eu'::regclass), 'sales_2026_03'::regclass,
          'sub-partition: the new leaf is attached under its direct parent');
SELECT is((SELECT format('%s %s', target, partition) FROM backfill_log WHERE id = (SELECT log_id FROM r_sub)),
          'public.sales_2026_03 public.sales_2026_03_eu', 'sub-partition: the log names the direct parent as target');
SELECT is(pg_temp.core('sales_2026_03_eu'), (SELECT d FROM s_core), 'sub-partition: the definition reads the same');
SELECT is(a.fp, b.fp, 'sub-partition: other partition unchanged: ' || b.name)
FROM s_leaves b LEFT JOIN pg_temp.leaves('sales') a USING (name) WHERE b.name <> 'sales_2026_03_eu' ORDER BY b.name;
SELECT is(pg_temp.stage_tables(), 0::bigint, 'sub-partition: no staging table');
-- rows inside the leaf's own list but outside its parent's range
SELECT pg_temp.refused($$SELECT * FROM backfill_replace_partition('sales_2026_03_eu', 'SELECT 1 AS id, DATE ''2026-05-05'' AS day, ''eu'' AS region')$$,
                       '23514', '', 'sub-partition: a row outside the parent''s range is refused (23514)', 'sales_2026_03_eu');
SELECT matches(pg_temp.error_message($$SELECT * FROM backfill_replace_partition('sales_2026_03_eu', 'SELECT g AS id, DATE ''2026-05-05'' AS day, ''eu'' AS region FROM generate_series(1, 2) g')$$),
               '^2 rows of the source fall outside partition public\.sales_2026_03_eu',
               'sub-partition: that error is the one for rows outside the bound: it names the partition and counts the rows');

-- ============================================================ a DEFAULT partition holding rows
SELECT ok((SELECT rows FROM backfill_fingerprint('sales_default')) = 60, 'premise: the DEFAULT partition holds 60 rows');
SELECT ok((SELECT rows FROM backfill_fingerprint('by_region_other')) = 100, 'premise: the LIST DEFAULT partition holds 100 rows');
-- (the replacements above ran with these DEFAULT partitions: their rows were checked unchanged)
SELECT is((SELECT count(*) FROM pg_constraint WHERE conname LIKE 'backfill%'
           AND conrelid IN ('by_region_other'::regclass, 'by_region_europe'::regclass, 'by_region_odd'::regclass)),
          0::bigint, 'LIST: no backfill_% constraint left on the DEFAULT or the new partitions');

-- ============================================================ rows the partition's constraints refuse
SELECT pg_temp.refused($$SELECT * FROM backfill_replace_partition('sales_2026_01', 'SELECT 1 AS id, $1 AS day, NULL::numeric AS amount')$$,
                       '23502', 'amount', 'a NOT NULL column given NULL: 23502 naming the column', 'sales_2026_01');
SELECT matches(pg_temp.error_message($$SELECT * FROM backfill_replace_partition('sales_2026_01', 'SELECT 1 AS id, $1 AS day, NULL::numeric AS amount')$$),
               'sales_2026_01', 'a NOT NULL column given NULL: the error names the partition');
SELECT pg_temp.refused($$SELECT * FROM backfill_replace_partition('sales_2026_01', 'SELECT 1 AS id, $1 AS day FROM generate_series(1, 2)')$$,
                       '23505', '', 'duplicate primary keys in the source: 23505', 'sales_2026_01');
SELECT matches(pg_temp.error_message($$SELECT * FROM backfill_replace_partition('sales_2026_01', 'SELECT 1 AS id, $1 AS day FROM generate_series(1, 2)')$$),
               'sales_2026_01', 'duplicate primary keys: the error names the partition');
SELECT pg_temp.refused($$SELECT * FROM backfill_replace_partition('sales_2026_01', 'SELECT 1 AS id, $1 AS day, 999 AS customer')$$,
                       '23503', '', 'a value the foreign key inherited from the parent does not find: 23503', 'sales_2026_01');
SELECT pg_temp.refused($$SELECT * FROM backfill_replace_partition('sales_2026_02', 'SELECT 1 AS id, $1 AS day, ''x'' AS tag')$$,
                       '23503', '', 'a value the partition''s own foreign key does not find: 23503', 'sales_2026_02');
SELECT pg_temp.refused($$SELECT * FROM backfill_replace_partition('sales_2026_02', 'SELECT 1 AS id, $1 AS day, repeat(''x'', 300) AS note')$$,
                       '23514', '', 'a row breaking the partition''s own CHECK constraint: 23514', 'sales_2026_02');
SELECT pg_temp.refused($$SELECT * FROM backfill_replace_partition('sales_2026_01', 'SELECT g AS id, DATE ''2026-01-05'' + g * 10 AS day FROM generate_series(1, 5) g')$$,
                       '23514', '^3 rows of the source fall outside partition public\.sales_2026_01$',
                       'rows outside the bound: 23514 naming the partition and counting the rows', 'sales_2026_01');
SELECT pg_temp.refused($$SELECT * FROM backfill_replace_partition('sales_2026_01', 'SELECT 1 AS id, DATE ''2026-02-01'' AS day')$$,
                       '23514', '^1 row of the source falls outside partition public\.sales_2026_01$',
                       'a row on the exclusive upper bound is outside', 'sales_2026_01');
SELECT pg_temp.refused($$SELECT * FROM backfill_replace_partition('sales_2026_01', 'SELECT 1 AS id, day FROM sales_2026_01 WHERE false')$$,
                       '22023', '^source returned no rows for partition public\.sales_2026_01, which has 1 rows$',
                       'an empty source for a non-empty partition is refused', 'sales_2026_01');
CREATE TEMP TABLE r_empty AS SELECT * FROM backfill_replace_partition('sales_2026_01',
	'SELECT 1 AS id, day FROM sales_2026_01 WHERE false', allow_empty => true);
SELECT is((SELECT count(*) FROM sales_2026_01), 0::bigint, 'allow_empty => true: the partition is emptied');
SELECT is((SELECT row(rows_before, rows_after)::text FROM r_empty), '(1,0)', 'allow_empty => true: rows_before 1, rows_after 0');
CREATE TEMP TABLE r_empty2 AS SELECT * FROM backfill_replace_partition('sales_2026_01', 'SELECT 1 AS id, day FROM sales_2026_01 WHERE false');
SELECT is((SELECT rows_after FROM r_empty2), 0::bigint, 'an empty source for an empty partition needs no allow_empty');

-- ============================================================ a role that owns the table
CREATE ROLE regress_rp_admin;
GRANT CREATE ON SCHEMA public TO regress_rp_admin;
CREATE TABLE owned (id int PRIMARY KEY, v text) PARTITION BY RANGE (id);
CREATE TABLE owned_1 PARTITION OF owned FOR VALUES FROM (0) TO (100);
INSERT INTO owned SELECT g, 'v' || g FROM generate_series(0, 99) g;
ALTER TABLE owned OWNER TO regress_rp_admin;
ALTER TABLE owned_1 OWNER TO regress_rp_admin;
CREATE TEMP TABLE o_log AS SELECT pg_temp.log_max() AS id;
SET ROLE regress_rp_admin;
CREATE TEMP TABLE r_owned AS SELECT * FROM backfill_replace_partition('owned_1', 'SELECT id, upper(v) AS v FROM owned_1');
RESET ROLE;
SELECT is((SELECT string_agg(v, ',' ORDER BY id) FROM owned_1 WHERE id < 3), 'V0,V1,V2', 'a non-superuser owner can replace');
SELECT is((SELECT logged_by::text FROM backfill_log WHERE id > (SELECT id FROM o_log)), 'regress_rp_admin',
          'logged_by is the role that ran it');
SELECT is((SELECT relowner::regrole::text FROM pg_class WHERE oid = 'owned_1'::regclass), 'regress_rp_admin',
          'the new partition belongs to the owner of the old one');

-- ============================================================ names that need quoting
-- names(parent, partition): replace, then keep_old and undo, work on such a table. Five
-- assertions whatever happens.
CREATE FUNCTION pg_temp.names(pname text, cname text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	r record;
	u record;
	part regclass;
	def text;
	err text;
	n_marked bigint;
	n_all bigint;
	label text := format('names %s / %s: ', pname, cname);
BEGIN
	EXECUTE format('CREATE TABLE %I (%I int PRIMARY KEY, %I text) PARTITION BY RANGE (%I)', pname, 'Key "K"; x', 'Wert ✓', 'Key "K"; x');
	EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (0) TO (100)', cname, pname);
	EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (100) TO (200)', left(cname, 20) || ' next', pname);
	EXECUTE format('CREATE INDEX ON %I (%I)', cname, 'Wert ✓');
	EXECUTE format('CREATE TRIGGER %I BEFORE UPDATE ON %I FOR EACH ROW EXECUTE FUNCTION public.regress_rp_noop()', 't ' || left(cname, 20), cname);
	EXECUTE format('COMMENT ON TABLE %I IS %L', cname, 'about ' || cname);
	EXECUTE format('INSERT INTO %I SELECT g, g::text FROM generate_series(0, 199) g', pname);
	part := format('%I', cname)::regclass;
	def := pg_temp.core(part);

	-- a replacement
	BEGIN
		EXECUTE format('SELECT * FROM backfill_replace_partition(%L, %L)', part,
		               format('SELECT %I, %I || ''!'' AS %I FROM %I', 'Key "K"; x', 'Wert ✓', 'Wert ✓', cname)) INTO r;
	EXCEPTION WHEN OTHERS THEN
		err := format('raised %s: %s', SQLSTATE, SQLERRM);
	END;
	part := to_regclass(format('%I', cname));
	IF part IS NOT NULL THEN
		EXECUTE format('SELECT count(*) FILTER (WHERE right(%I, 1) = ''!''), count(*) FROM %I', 'Wert ✓', cname) INTO n_marked, n_all;
	END IF;
	RETURN NEXT ok(err IS NULL AND n_marked = 100 AND n_all = 100, label || 'replace gives the partition the source''s rows')
	            || CASE WHEN err IS NOT NULL THEN E'\n' || diag(err) ELSE '' END;
	RETURN NEXT is(pg_temp.core(part), def, label || 'after replace the definition reads the same');
	RETURN NEXT is((SELECT format('%s %s %s', operation, target, partition) FROM backfill_log WHERE id = r.log_id),
	               format('replace %I.%I %I.%I', 'public', pname, 'public', cname),
	               label || 'the log names the parent and the partition, quoted');

	-- keep_old, then undo
	err := NULL;
	BEGIN
		EXECUTE format('SELECT * FROM backfill_replace_partition(%L, %L, keep_old => true)', part,
		               format('SELECT %I, %I || ''?'' AS %I FROM %I', 'Key "K"; x', 'Wert ✓', 'Wert ✓', cname)) INTO r;
		EXECUTE format('SELECT * FROM backfill_undo(%s)', r.log_id) INTO u;
	EXCEPTION WHEN OTHERS THEN
		err := format('raised %s: %s', SQLSTATE, SQLERRM);
	END;
	n_marked := NULL;
	part := to_regclass(format('%I', cname));
	IF part IS NOT NULL THEN
		EXECUTE format('SELECT count(*) FILTER (WHERE right(%I, 1) = ''!''), count(*) FROM %I', 'Wert ✓', cname) INTO n_marked, n_all;
	END IF;
	RETURN NEXT ok(err IS NULL AND n_marked = 100 AND n_all = 100 AND pg_temp.core(part) = def,
	               label || 'keep_old then undo brings back the rows and the definition')
	            || CASE WHEN err IS NOT NULL THEN E'\n' || diag(err) ELSE '' END;
	RETURN NEXT is(pg_temp.stage_tables(), 0::bigint, label || 'no staging table left');
END $$;

SELECT * FROM pg_temp.names('Sales By Day', 'Sales By Day 2026-01');
SELECT * FROM pg_temp.names('Fakten "Q1"; DROP TABLE sales; --', 'Teil ''1''; DROP TABLE sales; --');
SELECT * FROM pg_temp.names('Zählerstände ✓', 'Jänner ✓ €');
SELECT * FROM pg_temp.names('P' || repeat('x', 62), 'C' || repeat('y', 61) || 'z');
SELECT * FROM pg_temp.names(repeat('é', 31) || 'P', repeat('ü', 31) || 'C');
SELECT is((SELECT array_agg(octet_length(relname) ORDER BY relname COLLATE "C") FROM pg_class
           WHERE relname IN ('P' || repeat('x', 62), 'C' || repeat('y', 61) || 'z', repeat('é', 31) || 'P', repeat('ü', 31) || 'C')),
          ARRAY[63, 63, 63, 63], 'premise: the 63-byte names were kept whole');

-- ============================================================ inside a transaction block: rolled back with it
CREATE TEMP TABLE sp_before AS SELECT pg_temp.fp('sales_2026_02') AS fp, 'sales_2026_02'::regclass::oid AS oid,
	pg_temp.log_max() AS log, (SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class WHERE relnamespace = 'public'::regnamespace) AS rels;
SAVEPOINT before_replace;
SELECT pg_temp.fp('sales_2026_02') AS sp_inside_before \gset
SELECT log_id AS sp_log_id FROM backfill_replace_partition('sales_2026_02', 'SELECT id, day, region FROM sales_2026_02 WHERE id % 3 = 0', keep_old => true) \gset
SELECT pg_temp.fp('sales_2026_02') AS sp_inside_after \gset
ROLLBACK TO SAVEPOINT before_replace;
SELECT isnt(:'sp_inside_after'::text, :'sp_inside_before'::text, 'savepoint: inside it the partition was replaced');
SELECT is(pg_temp.fp('sales_2026_02'), (SELECT fp FROM sp_before), 'savepoint: after ROLLBACK TO SAVEPOINT the old rows are back');
SELECT is('sales_2026_02'::regclass::oid, (SELECT oid FROM sp_before), 'savepoint: the old table is the partition again');
SELECT ok(NOT EXISTS (SELECT FROM backfill_log WHERE id = :sp_log_id) AND pg_temp.log_max() = (SELECT log FROM sp_before),
          'savepoint: the log record is rolled back with it');
SELECT is((SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class WHERE relnamespace = 'public'::regnamespace),
          (SELECT rels FROM sp_before), 'savepoint: no archive or staging table remains');

-- row-level security on the parent binds its owner only under FORCE: without it, the owner replaces
CREATE TABLE rc_unforced (id int) PARTITION BY RANGE (id);
CREATE TABLE rc_unforced_1 PARTITION OF rc_unforced FOR VALUES FROM (0) TO (100);
INSERT INTO rc_unforced VALUES (1), (2);
ALTER TABLE rc_unforced ENABLE ROW LEVEL SECURITY;
CREATE POLICY rc_unforced_some ON rc_unforced USING (id > 1);
SELECT is((SELECT rows_after FROM backfill_replace_partition('rc_unforced_1', 'SELECT 3 AS id')), 1::bigint,
		  'row security: under a table whose policies its owner is exempt from, the owner replaces');

-- a table planted under the name a staging table would take is skipped, not written to
CREATE TABLE rc_plant (id int) PARTITION BY RANGE (id);
CREATE TABLE rc_plant_1 PARTITION OF rc_plant FOR VALUES FROM (0) TO (100);
INSERT INTO rc_plant VALUES (1), (2);
DO $$ BEGIN
	EXECUTE format('CREATE TABLE %I (id int)', 'backfill_stage_rc_plant_1_' || 'rc_plant_1'::regclass::oid);
	EXECUTE format('INSERT INTO %I VALUES (42)', 'backfill_stage_rc_plant_1_' || 'rc_plant_1'::regclass::oid);
END $$;
CREATE TEMP TABLE planted AS SELECT c.oid::regclass AS rel FROM pg_class c WHERE c.relname LIKE 'backfill\_stage\_rc\_plant\_1\_%';
SELECT is((SELECT rows_after FROM backfill_replace_partition('rc_plant_1', 'SELECT 3 AS id')), 1::bigint,
		  'planted: a table under the staging name does not stop the replacement');
SELECT is((SELECT count(*) FROM rc_plant) || ' ' || (SELECT string_agg(id::text, ',') FROM rc_plant), '1 3',
		  'planted: the partition has the new rows');
SELECT is((SELECT (xpath('/row/c/text()', query_to_xml(format('SELECT string_agg(id::text, '','') AS c FROM %s', rel), false, true, '')))[1]::text
		   FROM planted), '42', 'planted: the planted table still holds its own row, and only it');

SELECT * FROM finish();
ROLLBACK;
