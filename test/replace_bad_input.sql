-- test/replace_bad_input.sql: every argument of backfill_replace_partition and backfill_undo,
-- given what they must refuse.
--
-- Each refused call must raise the right SQLSTATE with a message that names the problem, and
-- must leave everything as it was: the rows of every table of the schema (fingerprinted), the
-- set of relations, which table is attached where, every constraint, backfill_log and its
-- sequence (which a rolled-back write would still have advanced). No backfill_stage_% table
-- may remain. Last, objects planted in public to shadow what backfill's own SQL calls change
-- no result and no error of a replacement, an undo or a refusal.
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(99);
-- a foreign server for source_server that is no standby, and reaches nothing
CREATE EXTENSION postgres_fdw;
CREATE SERVER rb_nowhere FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '/nonexistent-backfill-socket-dir', dbname 'postgres');
CREATE USER MAPPING FOR CURRENT_USER SERVER rb_nowhere;

CREATE ROLE regress_rb_writer;
CREATE ROLE regress_rb_partowner;
CREATE FUNCTION public.regress_rb_noop() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN coalesce(NEW, OLD); END$$;

-- the table under test: three RANGE partitions by month, one of them sub-partitioned, and a DEFAULT one
CREATE TABLE rb (
	id int NOT NULL,
	day date NOT NULL,
	region text NOT NULL DEFAULT lower('EU'),
	amount numeric(12,2) NOT NULL DEFAULT 0,
	note text,
	PRIMARY KEY (id, day, region)
) PARTITION BY RANGE (day);
CREATE TABLE rb_2026_01 PARTITION OF rb FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
CREATE TABLE rb_2026_02 PARTITION OF rb FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');
CREATE TABLE rb_2026_03 PARTITION OF rb FOR VALUES FROM ('2026-03-01') TO ('2026-04-01') PARTITION BY LIST (region);
CREATE TABLE rb_2026_03_eu PARTITION OF rb_2026_03 FOR VALUES IN ('eu');
CREATE TABLE rb_default PARTITION OF rb DEFAULT;
INSERT INTO rb SELECT g, date '2026-01-01' + g % 120, (ARRAY['eu', 'us'])[1 + g % 2], g * 1.5, 'n' || g
FROM generate_series(1, 600) g WHERE g % 120 NOT BETWEEN 59 AND 89 OR g % 2 = 0;
CREATE TRIGGER rb_2026_01_touch BEFORE UPDATE ON rb_2026_01 FOR EACH ROW EXECUTE FUNCTION public.regress_rb_noop();
CREATE INDEX rb_2026_01_note_idx ON rb_2026_01 (note);
COMMENT ON TABLE rb_2026_01 IS 'January';
GRANT SELECT, INSERT ON rb, rb_2026_01 TO regress_rb_writer;
GRANT SELECT ON rb_2026_01 TO regress_rb_partowner;
ALTER TABLE rb_2026_02 OWNER TO regress_rb_partowner;
CREATE TABLE rb_src AS SELECT id, day, region, amount + 1 AS amount, note FROM rb;

-- what a part must not be
CREATE TABLE rb_hash (id int) PARTITION BY HASH (id);
CREATE TABLE rb_hash_0 PARTITION OF rb_hash FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE rb_hash_1 PARTITION OF rb_hash FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO rb_hash SELECT generate_series(1, 100);
CREATE TABLE rb_multi (a int, b int) PARTITION BY RANGE (a, b);
CREATE TABLE rb_multi_1 PARTITION OF rb_multi FOR VALUES FROM (0, 0) TO (10, 10);
INSERT INTO rb_multi VALUES (1, 1);
CREATE TABLE rb_expr (d date) PARTITION BY RANGE ((extract(year FROM d)));
CREATE TABLE rb_expr_2026 PARTITION OF rb_expr FOR VALUES FROM (2026) TO (2027);
INSERT INTO rb_expr VALUES ('2026-05-05');
CREATE TABLE rb_gen (id int, twice int GENERATED ALWAYS AS (id * 2) STORED) PARTITION BY RANGE (id);
CREATE TABLE rb_gen_1 PARTITION OF rb_gen FOR VALUES FROM (0) TO (100);
INSERT INTO rb_gen (id) VALUES (1), (2);
CREATE TABLE rb_rls (id int) PARTITION BY RANGE (id);
CREATE TABLE rb_rls_1 PARTITION OF rb_rls FOR VALUES FROM (0) TO (100);
INSERT INTO rb_rls VALUES (1), (2);
ALTER TABLE rb_rls_1 ENABLE ROW LEVEL SECURITY;
CREATE POLICY rb_rls_1_mine ON rb_rls_1 USING (id > 1);
CREATE TABLE rb_force (id int) PARTITION BY RANGE (id);
CREATE TABLE rb_force_1 PARTITION OF rb_force FOR VALUES FROM (0) TO (100);
INSERT INTO rb_force VALUES (1), (2);
ALTER TABLE rb_force ENABLE ROW LEVEL SECURITY;
ALTER TABLE rb_force FORCE ROW LEVEL SECURITY;
CREATE POLICY rb_force_some ON rb_force USING (id > 1);
-- foreign keys that reference a partition, or its parent
CREATE TABLE rb_fk (id int PRIMARY KEY) PARTITION BY RANGE (id);
CREATE TABLE rb_fk_1 PARTITION OF rb_fk FOR VALUES FROM (0) TO (100);
CREATE TABLE rb_fk_2 PARTITION OF rb_fk FOR VALUES FROM (100) TO (200);
INSERT INTO rb_fk SELECT generate_series(0, 199);
CREATE TABLE rb_fk_child (fk_id int REFERENCES rb_fk_1 (id));
INSERT INTO rb_fk_child VALUES (5), (6);
CREATE TABLE rb_fkp (id int PRIMARY KEY) PARTITION BY RANGE (id);
CREATE TABLE rb_fkp_1 PARTITION OF rb_fkp FOR VALUES FROM (0) TO (100);
INSERT INTO rb_fkp SELECT generate_series(0, 99);
CREATE TABLE rb_fkp_child (fk_id int REFERENCES rb_fkp (id));
INSERT INTO rb_fkp_child VALUES (7);
CREATE TABLE rb_plain (id int);
INSERT INTO rb_plain SELECT generate_series(1, 10);
CREATE INDEX rb_plain_idx ON rb_plain (id);
CREATE VIEW rb_view AS SELECT * FROM rb_plain;
CREATE MATERIALIZED VIEW rb_matview AS SELECT * FROM rb_plain;
-- a partition that a view reads
CREATE TABLE rb_dep (id int, v text) PARTITION BY RANGE (id);
CREATE TABLE rb_dep_1 PARTITION OF rb_dep FOR VALUES FROM (0) TO (100);
INSERT INTO rb_dep SELECT g, 'old' FROM generate_series(0, 99) g;
CREATE VIEW rb_dep_view AS SELECT * FROM rb_dep_1;
-- a partition that a function's SQL-standard body reads (pg_depend ties it by OID)
CREATE TABLE rb_fdep (id int, v text) PARTITION BY RANGE (id);
CREATE TABLE rb_fdep_1 PARTITION OF rb_fdep FOR VALUES FROM (0) TO (100);
INSERT INTO rb_fdep SELECT g, 'old' FROM generate_series(0, 99) g;
CREATE FUNCTION rb_fdep_old() RETURNS bigint LANGUAGE sql STABLE
BEGIN ATOMIC
	SELECT count(*) FROM rb_fdep_1 WHERE v = 'old';
END;
CREATE SEQUENCE rb_seq;
CREATE TYPE rb_type AS (x int);
CREATE FOREIGN DATA WRAPPER regress_rb_fdw;
CREATE SERVER regress_rb_server FOREIGN DATA WRAPPER regress_rb_fdw;
CREATE TABLE rb_ft (id int) PARTITION BY RANGE (id);
CREATE FOREIGN TABLE rb_ft_1 PARTITION OF rb_ft FOR VALUES FROM (0) TO (100) SERVER regress_rb_server;
CREATE TABLE rb_gone (id int);
CREATE TEMP TABLE gone AS SELECT 'rb_gone'::regclass::oid AS oid;
DROP TABLE rb_gone;

-- records for undo: a replacement that kept nothing, one that kept the old partition, and a
-- record that is not a swap
CREATE TEMP TABLE rec AS SELECT
	(SELECT log_id FROM backfill_replace_partition('rb_2026_02', 'SELECT id, day, region, amount, note FROM rb_src WHERE day >= $1 AND day < $2')) AS not_kept;
ALTER TABLE rec ADD COLUMN kept bigint, ADD COLUMN other bigint;
UPDATE rec SET kept = (SELECT log_id FROM backfill_replace_partition('rb_2026_02', 'TABLE rb_2026_02', keep_old => true));
INSERT INTO backfill_log (logged_by, operation, target) VALUES (current_user, 'regress', 'public.rb');
UPDATE rec SET other = (SELECT max(id) FROM backfill_log);

-- state(): every relation of the schema with its fingerprint, which is attached where, every
-- constraint, the log's rows and its sequence.
CREATE FUNCTION pg_temp.state() RETURNS text LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
	SELECT concat_ws(' | ',
		(SELECT string_agg(format('%s %s %s', c.relname, c.relkind,
		                          CASE WHEN c.relkind IN ('r', 'm') THEN (public.backfill_fingerprint(c.oid))::text END),
		                   ', ' ORDER BY c.relname COLLATE "C")
		 FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace),
		(SELECT string_agg(format('%s < %s', h.inhrelid::regclass, h.inhparent::regclass), ', ' ORDER BY h.inhrelid::regclass::text COLLATE "C")
		 FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid WHERE c.relnamespace = 'public'::regnamespace),
		(SELECT string_agg(format('%s.%s %s', c.conrelid::regclass, c.conname, pg_get_constraintdef(c.oid)), ', '
		                   ORDER BY c.conrelid::regclass::text COLLATE "C", c.conname COLLATE "C")
		 FROM pg_constraint c WHERE c.connamespace = 'public'::regnamespace),
		(SELECT count(*) FROM public.backfill_log),
		(SELECT format('%s/%s', last_value, is_called) FROM public.backfill_log_id_seq))
$$;
CREATE TEMP TABLE baseline AS SELECT pg_temp.state() AS s, (backfill_fingerprint('rb_2026_01')).hash AS jan;

\ir lib/refuses.psql

SELECT ok((SELECT rows FROM backfill_fingerprint('rb_2026_01')) > 0 AND (SELECT rows FROM backfill_fingerprint('rb_default')) > 0,
          'premise: the partition and the DEFAULT partition hold rows');

-- ============================================================ NULL arguments
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition(NULL, 'TABLE rb_src')$$, '22004', '^part must not be NULL$', 'replace: part NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', NULL)$$, '22004', '^source must not be NULL$', 'replace: source NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'TABLE rb_src', source_server => 'rb_nowhere')$$, '25000', '^backfill_replace_partition with source_server in a transaction that has written$', 'replace: source_server after this transaction wrote (the standby would miss it)');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELEC 1', source_server => 'rb_nowhere')$$, '42601', 'syntax error', 'replace: a bad source is refused before the server is reached');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'TABLE rb_2026_01', keep_old => NULL)$$, '22004', '^keep_old must not be NULL$', 'replace: keep_old NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'TABLE rb_2026_01', allow_empty => NULL)$$, '22004', '^allow_empty must not be NULL$', 'replace: allow_empty NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'TABLE rb_2026_01', lock_timeout_ms => NULL)$$, '22004', '^lock_timeout_ms must not be NULL$', 'replace: lock_timeout_ms NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'TABLE rb_2026_01', max_attempts => NULL)$$, '22004', '^max_attempts must not be NULL$', 'replace: max_attempts NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition(NULL, NULL, NULL, NULL, NULL, NULL)$$, '22004', '^part must not be NULL$', 'replace: every argument NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_undo(NULL)$$, '22004', '^log_id must not be NULL$', 'undo: log_id NULL');
SELECT pg_temp.refuses(format('SELECT * FROM backfill_undo(%s, NULL)', (SELECT kept FROM rec)), '22004', '^lock_timeout_ms must not be NULL$', 'undo: lock_timeout_ms NULL');
SELECT pg_temp.refuses(format('SELECT * FROM backfill_undo(%s, 1000, NULL)', (SELECT kept FROM rec)), '22004', '^max_attempts must not be NULL$', 'undo: max_attempts NULL');

-- ============================================================ part: not a leaf partition of RANGE or LIST
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb', 'TABLE rb_src')$$, '42809', '^cannot replace "rb": it is itself partitioned$', 'part: the partitioned parent');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_03', 'TABLE rb_src')$$, '42809', '^cannot replace "rb_2026_03": it is itself partitioned$', 'part: a partition that is itself partitioned');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_default', 'TABLE rb_default')$$, '22023', '^cannot replace "rb_default": it is the DEFAULT partition of public\.rb$', 'part: the DEFAULT partition');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_plain', 'TABLE rb_plain')$$, '42809', '^cannot replace "rb_plain": it is not a partition$', 'part: a plain table');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_view', 'TABLE rb_plain')$$, '42809', '^cannot use "rb_view" as part$', 'part: a view');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_matview', 'TABLE rb_plain')$$, '42809', '^cannot use "rb_matview" as part$', 'part: a materialized view');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_seq', 'SELECT 1 AS last_value')$$, '42809', '^cannot use "rb_seq" as part$', 'part: a sequence');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_plain_idx', 'TABLE rb_plain')$$, '42809', '^cannot use "rb_plain_idx" as part$', 'part: an index');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01_pkey', 'TABLE rb_2026_01')$$, '42809', '^cannot use "rb_2026_01_pkey" as part$', 'part: the index of a partition');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_type', 'SELECT 1 AS x')$$, '42809', '^cannot use "rb_type" as part$', 'part: a composite type');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_ft_1', 'SELECT 1 AS id')$$, '42809', '^cannot use "rb_ft_1" as part$', 'part: a foreign table partition');
SELECT pg_temp.refuses(format('SELECT * FROM backfill_replace_partition(%s::regclass, %L)', (SELECT oid FROM gone), 'TABLE rb_src'),
                       '42P01', '^part: relation with OID [0-9]+ does not exist$', 'part: the OID of a dropped table');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_hash_0', 'TABLE rb_hash_0')$$, '0A000', '^cannot replace "rb_hash_0": public\.rb_hash is partitioned by HASH$', 'part: a HASH partition');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_multi_1', 'TABLE rb_multi_1')$$, '0A000', '^cannot replace "rb_multi_1": the partition key of public\.rb_multi is not a single column$', 'part: a partition of a two-column key');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_expr_2026', 'TABLE rb_expr_2026')$$, '0A000', '^cannot replace "rb_expr_2026": the partition key of public\.rb_expr is not a single column$', 'part: a partition of an expression key');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_gen_1', 'SELECT id, twice FROM rb_gen_1')$$, '428C9', '^source column "twice" is a generated column of partition public\.rb_gen_1$', 'source: giving a generated column');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_rls_1', 'TABLE rb_rls_1')$$, '0A000', '^cannot replace partition public\.rb_rls_1: it has row-level security of its own$', 'part: a partition with row-level security of its own');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_force_1', 'SELECT 3 AS id')$$, '0A000', '^cannot replace partition public\.rb_force_1: public\.rb_force forces row-level security on its owner$', 'part: under a table that forces row-level security on its owner');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_fk_1', 'TABLE rb_fk_1')$$, '0A000', '^cannot replace partition public\.rb_fk_1: foreign key rb_fk_child_fk_id_fkey of table public\.rb_fk_child references it$', 'part: a partition a foreign key references');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_fk_1', 'TABLE rb_fk_1', keep_old => true)$$, '0A000', '^cannot replace partition public\.rb_fk_1: foreign key ', 'part: a partition a foreign key references, keep_old');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_fkp_1', 'TABLE rb_fkp_1')$$, '0A000', '^cannot replace partition public\.rb_fkp_1: foreign key rb_fkp_child_fk_id_fkey of table public\.rb_fkp_child references it$', 'part: a partition whose parent a foreign key references');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_dep_1', 'SELECT id, ''new'' AS v FROM rb_dep_1')$$, '2BP01|0A000', 'rb_dep_view|depend', 'part: a partition a view reads is refused (it could not be dropped)');

-- ============================================================ source
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', '')$$, '22023', '^source must not be empty$', 'source: empty');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', E' \n\t')$$, '22023', '^source must not be empty$', 'source: blank');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELEC * FROM rb_src')$$, '42601', '^invalid source: syntax error at or near "SELEC"', 'source: a syntax error');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT * FROM rb_src WHERE')$$, '42601', '^invalid source: syntax error', 'source: a syntax error at the end');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'TABLE rb_src; TABLE rb_src')$$, '42601', '^source must be a single query, not 2 statements$', 'source: two statements');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT * FROM rb_src WHERE day >= $1 AND day < $2; DROP TABLE rb_plain')$$, '42601', '^source must be a single query, not 2 statements$', 'source: injection "...; DROP TABLE rb_plain" (rb_plain still there)');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT * FROM rb_src) AS s; DROP TABLE rb_plain; --')$$, '42601', '^invalid source: syntax error', 'source: injection closing the subquery');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'TABLE rb_src /*')$$, '42601', '^invalid source: ', 'source: opening a comment');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'DELETE FROM rb_2026_01 RETURNING *')$$, '42809', '^source must be a SELECT, VALUES or TABLE query$', 'source: a DELETE');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'UPDATE rb_2026_01 SET note = ''x'' RETURNING *')$$, '42809', '^source must be a SELECT, VALUES or TABLE query$', 'source: an UPDATE');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'INSERT INTO rb_plain VALUES (1) RETURNING *')$$, '42809', '^source must be a SELECT, VALUES or TABLE query$', 'source: an INSERT');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'TRUNCATE rb_plain')$$, '42809', '^source must be a SELECT, VALUES or TABLE query$', 'source: a TRUNCATE');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT * INTO rb_copy FROM rb_2026_01')$$, '42809', '^source must be a SELECT, VALUES or TABLE query$', 'source: SELECT INTO');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'WITH d AS (DELETE FROM rb_plain RETURNING id) SELECT id, DATE ''2026-01-02'' AS day FROM d')$$, '42809', '^source must only read$', 'source: a data-modifying WITH (rb_plain keeps its rows)');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT * FROM rb_2026_01 FOR UPDATE')$$, '42809', '^source must only read$', 'source: FOR UPDATE');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT * FROM nope')$$, '42P01', '^invalid source: relation "nope" does not exist', 'source: an unknown table');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT * FROM rb_src WHERE day >= $1 AND day < $3')$$, '42P02', '^invalid source: there is no parameter \$3', 'source: a parameter $3');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT *, 1 AS extra FROM rb_src WHERE day >= $1 AND day < $2')$$, '42703', '^source column "extra" is not a column of partition public\.rb_2026_01$', 'source: an extra column');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT id AS "ID", day FROM rb_src WHERE day >= $1 AND day < $2')$$, '42703', '^source column "ID" is not a column of partition public\.rb_2026_01$', 'source: column names are case-sensitive');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT 1')$$, '42703', '^source column "\?column\?" is not a column of partition public\.rb_2026_01$', 'source: an unnamed column');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT id, day, note AS id FROM rb_src WHERE day >= $1 AND day < $2')$$, '42701', '^source returns column "id" more than once$', 'source: one column twice');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT id, day, day AS amount FROM rb_src WHERE day >= $1 AND day < $2')$$, '42804', '^source column "amount" is of type date but column "amount" of partition public\.rb_2026_01 is of type numeric$', 'source: a mistyped column');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT day AS id, day FROM rb_src WHERE day >= $1 AND day < $2')$$, '42804', '^source column "id" is of type date but column "id" of partition public\.rb_2026_01 is of type integer$', 'source: a mistyped key column');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT id, day, region, amount, note FROM rb_src')$$, '23514', '^[0-9]+ rows of the source fall outside partition public\.rb_2026_01$', 'source: rows outside the bound');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT 1 AS id, NULL::date AS day')$$, '23514', '^1 row of the source falls outside partition public\.rb_2026_01$', 'source: a NULL key');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT id, day FROM rb_src WHERE false')$$, '22023', '^source returned no rows for partition public\.rb_2026_01, which has [0-9]+ rows$', 'source: no rows, without allow_empty');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', $q$SELECT g::int AS id, date '2020-01-01' AS day FROM generate_series(1, 10000000) g$q$)$$, '23514', '^10000000 rows of the source fall outside partition public\.rb_2026_01$', 'source: 10 million rows, all outside the partition');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT 1 AS id, $1 AS day, NULL::numeric AS amount')$$, '23502', 'column "amount"', 'source: NULL for a NOT NULL column');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT 1 AS id, $1 AS day FROM generate_series(1, 2)')$$, '23505', '', 'source: the same primary key twice');

-- ============================================================ lock_timeout_ms and max_attempts
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'TABLE rb_2026_01', lock_timeout_ms => 0)$$, '22023', '^lock_timeout_ms must be between 1 and 600000, not 0$', 'replace: lock_timeout_ms 0');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'TABLE rb_2026_01', lock_timeout_ms => -5)$$, '22023', '^lock_timeout_ms must be between 1 and 600000, not -5$', 'replace: lock_timeout_ms negative');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'TABLE rb_2026_01', lock_timeout_ms => 600001)$$, '22023', '^lock_timeout_ms must be between 1 and 600000, not 600001$', 'replace: lock_timeout_ms too large');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'TABLE rb_2026_01', max_attempts => 0)$$, '22023', '^max_attempts must be between 1 and 1000, not 0$', 'replace: max_attempts 0');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'TABLE rb_2026_01', max_attempts => 1001)$$, '22023', '^max_attempts must be between 1 and 1000, not 1001$', 'replace: max_attempts too large');
SELECT pg_temp.refuses(format('SELECT * FROM backfill_undo(%s, 0)', (SELECT kept FROM rec)), '22023', '^lock_timeout_ms must be between 1 and 600000, not 0$', 'undo: lock_timeout_ms 0');
SELECT pg_temp.refuses(format('SELECT * FROM backfill_undo(%s, 1000, 0)', (SELECT kept FROM rec)), '22023', '^max_attempts must be between 1 and 1000, not 0$', 'undo: max_attempts 0');

-- ============================================================ log_id
SELECT pg_temp.refuses($$SELECT * FROM backfill_undo(987654321)$$, '22023', '^log_id 987654321 is not a record of backfill_log$', 'undo: a log_id that does not exist');
SELECT pg_temp.refuses($$SELECT * FROM backfill_undo(-1)$$, '22023', '^log_id -1 is not a record of backfill_log$', 'undo: a negative log_id');
SELECT pg_temp.refuses(format('SELECT * FROM backfill_undo(%s)', (SELECT other FROM rec)), '22023',
                       format('^record %s of backfill_log is a regress, not a partition swap$', (SELECT other FROM rec)), 'undo: a record that is not a swap');
SELECT pg_temp.refuses(format('SELECT * FROM backfill_undo(%s)', (SELECT not_kept FROM rec)), '55000',
                       format('^cannot undo record %s: the old partition was not kept$', (SELECT not_kept FROM rec)), 'undo: a replacement that kept nothing');

-- ============================================================ privileges
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'TABLE rb_2026_01')$$, '42501',
                       '^must be owner of table public\.rb to replace its partitions$', 'replace: a role with SELECT and INSERT that does not own the table', 'regress_rb_writer');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_02', 'TABLE rb_2026_02')$$, '42501',
                       '^must be owner of table public\.rb', 'replace: the owner of the partition who does not own the parent', 'regress_rb_partowner');
SELECT pg_temp.refuses(format('SELECT * FROM backfill_undo(%s)', (SELECT kept FROM rec)), '42501',
                       '^must be owner of table public\.rb', 'undo: a role that does not own the table', 'regress_rb_writer');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT id, day FROM rb_2026_01', allow_empty => true)$$, '42501',
                       '^must be owner of table public\.rb', 'replace: allow_empty changes nothing for a role that does not own the table', 'regress_rb_writer');

SELECT is(pg_temp.state(), (SELECT s FROM baseline), 'after every refusal the state is the baseline');

-- ============================================================ what is accepted
-- (each rolled back again: a successful call changes the state)
-- works(sql, check): runs sql, then returns what the query check returns, as text, or the
-- error either raised; rolled back either way.
CREATE FUNCTION pg_temp.works(sql text, check_sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	v text;
BEGIN
	BEGIN
		EXECUTE sql;
		EXECUTE check_sql INTO v;
		RAISE EXCEPTION USING ERRCODE = 'RGRSS', MESSAGE = coalesce(v, '<NULL>');
	EXCEPTION WHEN SQLSTATE 'RGRSS' THEN
		RETURN SQLERRM;
	WHEN OTHERS THEN
		RETURN 'ERROR ' || SQLSTATE || ': ' || SQLERRM;
	END;
END $$;
CREATE TEMP TABLE jan AS SELECT count(*) AS n FROM rb_src WHERE day >= '2026-01-01' AND day < '2026-02-01';
SELECT is(pg_temp.works($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT id, day FROM rb_src WHERE day >= $1 AND day < $2')$$,
                        $$SELECT format('%s %s', (SELECT string_agg(DISTINCT row(region, amount, note)::text, ',') FROM rb_2026_01), count(*)) FROM rb_2026_01$$),
          format('(eu,0.00,) %s', (SELECT n FROM jan)),
          'source: columns it leaves out take their defaults');
SELECT matches(pg_temp.works($$SELECT * FROM backfill_replace_partition('rb_dep_1', 'SELECT id, ''new'' AS v FROM rb_dep_1', keep_old => true)$$,
                             $$SELECT format('the view reads %s rows of the new partition and %s of the archive',
                                             count(*) FILTER (WHERE v = 'new'), count(*) FILTER (WHERE v = 'old')) FROM rb_dep_view$$),
               '^(ERROR (2BP01|0A000): |the view reads 100 rows of the new partition and 0 of the archive$)',
               'part: with keep_old, a partition a view reads is refused, or the view reads the new partition (not silently the archive)');
SELECT is(pg_temp.works($$SELECT * FROM backfill_replace_partition('rb_fdep_1', 'SELECT id, ''new'' AS v FROM rb_fdep_1', keep_old => true)$$,
                        $$SELECT format('the function counts %s old rows', rb_fdep_old())$$),
          'ERROR 0A000: cannot replace partition public.rb_fdep_1: function public.rb_fdep_old() depends on it',
          'part: with keep_old, a partition a BEGIN ATOMIC function reads is refused (not silently read from the archive)');
SELECT pg_temp.refuses($$SELECT * FROM backfill_replace_partition('rb_fdep_1', 'SELECT id, ''new'' AS v FROM rb_fdep_1')$$, '0A000',
	'^cannot replace partition public\.rb_fdep_1: function public\.rb_fdep_old\(\) depends on it$', 'part: a partition a BEGIN ATOMIC function reads is refused, naming the function');
SELECT is(pg_temp.works($$SELECT * FROM backfill_replace_partition('rb_2026_01', 'SELECT id, day FROM rb_src WHERE false', allow_empty => true)$$,
                        $$SELECT count(*) FROM rb_2026_01$$),
          '0', 'source: no rows, with allow_empty');
SELECT is(pg_temp.works($$SELECT * FROM backfill_replace_partition('rb_2026_01', E'TABLE rb_2026_01;\n-- done\n', lock_timeout_ms => 1, max_attempts => 1)$$,
                        $$SELECT (backfill_fingerprint('rb_2026_01')).hash$$),
          (SELECT jan FROM baseline), 'source: a trailing semicolon and comment; lock_timeout_ms and max_attempts at their minimum');

-- ============================================================ hostile objects in public
-- capture(): what a replacement, a replacement with keep_old and its undo, and three refusals
-- return, as text, each rolled back.
CREATE FUNCTION pg_temp.core(rel regclass) RETURNS text LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
	SELECT concat_ws(E'\n',
		(SELECT string_agg(format('%I %s %s %s', a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
		                          pg_get_expr(d.adbin, d.adrelid)), '; ' ORDER BY a.attnum)
		 FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		 WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped),
		(SELECT string_agg(format('%I %s', conname, pg_get_constraintdef(oid)), '; ' ORDER BY conname) FROM pg_constraint WHERE conrelid = rel),
		(SELECT string_agg(pg_get_indexdef(indexrelid), '; ' ORDER BY indexrelid::regclass::text) FROM pg_index WHERE indrelid = rel),
		(SELECT string_agg(pg_get_triggerdef(oid), '; ' ORDER BY tgname) FROM pg_trigger WHERE tgrelid = rel AND NOT tgisinternal),
		(SELECT format('%s %s %s %s', relacl, reloptions, obj_description(oid, 'pg_class'), pg_get_expr(relpartbound, oid)) FROM pg_class WHERE oid = rel),
		(SELECT string_agg(format('%I %s', conname, pg_get_constraintdef(oid)), '; ' ORDER BY conname) FROM pg_constraint WHERE conrelid = 'public.rb_default'::regclass),
		(SELECT (public.backfill_fingerprint('public.rb_default'::regclass))::text))
$$;
CREATE FUNCTION pg_temp.relname(rel oid) RETURNS text LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
	SELECT relname::text FROM pg_class WHERE oid = rel
$$;
CREATE FUNCTION pg_temp.log_row(id bigint) RETURNS text LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
	SELECT format('%s %s %s %s %s %s %s %s %s', operation, target, partition, rows_before, rows_after, fingerprint_before,
	              fingerprint_after, details->>'archived_as', details->>'bound')
	FROM public.backfill_log l WHERE l.id = log_row.id
$$;
CREATE FUNCTION pg_temp.capture() RETURNS TABLE (name text, val text) LANGUAGE plpgsql AS $$
DECLARE
	r record;
	u record;
BEGIN
	name := 'replace';
	BEGIN
		SELECT * INTO r FROM public.backfill_replace_partition('public.rb_2026_01'::regclass,
			'SELECT id, day, amount OPERATOR(pg_catalog.*) 2 AS amount, note FROM public.rb_src'
			' WHERE day OPERATOR(pg_catalog.>=) $1 AND day OPERATOR(pg_catalog.<) $2');
		val := concat_ws(E'\n', pg_temp.relname(r.partition), r.rows_before, r.rows_after, r.fingerprint_before,
		                 r.fingerprint_after, r.archived_as, r.attempts,
		                 pg_temp.core('public.rb_2026_01'::regclass), pg_temp.log_row(r.log_id));
		RAISE EXCEPTION USING ERRCODE = 'RGRSS';
	EXCEPTION WHEN OTHERS THEN
		IF SQLSTATE <> 'RGRSS' THEN val := 'ERROR ' || SQLSTATE || ': ' || SQLERRM; END IF;
	END;
	RETURN NEXT;

	name := 'replace with keep_old, then undo';
	BEGIN
		SELECT * INTO r FROM public.backfill_replace_partition('public.rb_2026_01'::regclass,
			'SELECT id, day, region, note FROM public.rb_src'
			' WHERE day OPERATOR(pg_catalog.>=) $1 AND day OPERATOR(pg_catalog.<) $2', keep_old => true);
		val := concat_ws(E'\n', pg_temp.relname(r.archived_as), (public.backfill_fingerprint(r.archived_as)).hash,
		                 pg_temp.log_row(r.log_id));
		SELECT * INTO u FROM public.backfill_undo(r.log_id);
		val := concat_ws(E'\n', val, u.rows_before, u.rows_after, u.fingerprint_before, u.fingerprint_after, pg_temp.relname(u.archived_as),
		                 pg_temp.core('public.rb_2026_01'::regclass), pg_temp.log_row(u.log_id));
		RAISE EXCEPTION USING ERRCODE = 'RGRSS';
	EXCEPTION WHEN OTHERS THEN
		IF SQLSTATE <> 'RGRSS' THEN val := 'ERROR ' || SQLSTATE || ': ' || SQLERRM; END IF;
	END;
	RETURN NEXT;

	name := 'refused: rows outside the bound';
	BEGIN
		PERFORM public.backfill_replace_partition('public.rb_2026_01'::regclass, 'SELECT id, day FROM public.rb_src');
		val := 'no error';
	EXCEPTION WHEN OTHERS THEN
		val := SQLSTATE || ': ' || SQLERRM;
	END;
	RETURN NEXT;

	name := 'refused: a referenced partition';
	BEGIN
		PERFORM public.backfill_replace_partition('public.rb_fk_1'::regclass, 'TABLE public.rb_fk_1');
		val := 'no error';
	EXCEPTION WHEN OTHERS THEN
		val := SQLSTATE || ': ' || SQLERRM;
	END;
	RETURN NEXT;

	name := 'refused: the partition changed since';
	BEGIN
		SELECT * INTO r FROM public.backfill_replace_partition('public.rb_2026_01'::regclass, 'TABLE public.rb_2026_01', keep_old => true);
		INSERT INTO public.rb_2026_01 (id, day) VALUES (99999, '2026-01-09');
		PERFORM public.backfill_undo(r.log_id);
		val := 'no error';
	EXCEPTION WHEN OTHERS THEN
		val := SQLSTATE || ': ' || regexp_replace(SQLERRM, '[0-9]+', 'N');
	END;
	RETURN NEXT;
END $$;

CREATE TEMP TABLE clean AS SELECT * FROM pg_temp.capture();

-- the hostile objects: each would change a result if backfill's own SQL resolved it
CREATE FUNCTION public.pg_get_partition_constraintdef(oid) RETURNS text LANGUAGE sql AS $$SELECT 'false'$$;
CREATE FUNCTION public.pg_get_expr(pg_node_tree, oid) RETURNS text LANGUAGE sql AS $$SELECT 'FOR VALUES FROM (MINVALUE) TO (MAXVALUE)'$$;
CREATE FUNCTION public.pg_get_expr(pg_node_tree, oid, boolean) RETURNS text LANGUAGE sql AS $$SELECT 'FOR VALUES FROM (MINVALUE) TO (MAXVALUE)'$$;
CREATE FUNCTION public.pg_get_constraintdef(oid) RETURNS text LANGUAGE sql AS $$SELECT 'CHECK (false)'$$;
CREATE FUNCTION public.pg_get_triggerdef(oid) RETURNS text LANGUAGE sql AS $$SELECT 'SELECT 1'$$;
CREATE FUNCTION public.pg_partition_ancestors(regclass) RETURNS TABLE (relid regclass) LANGUAGE sql AS $$SELECT NULL::regclass WHERE false$$;
CREATE FUNCTION public.aclexplode(aclitem[]) RETURNS TABLE (grantor oid, grantee oid, privilege_type text, is_grantable boolean)
	LANGUAGE sql AS $$SELECT NULL::oid, NULL::oid, NULL::text, NULL::boolean WHERE false$$;
CREATE FUNCTION public.quote_ident(text) RETURNS text LANGUAGE sql AS $$SELECT 'regress_nobody'$$;
CREATE FUNCTION public.lower(text) RETURNS text LANGUAGE sql AS $$SELECT 'hostile'$$;
CREATE FUNCTION public.regress_rb_true(date, date) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE FUNCTION public.regress_rb_false(date, date) RETURNS boolean LANGUAGE sql AS 'SELECT false';
CREATE OPERATOR public.= (LEFTARG = date, RIGHTARG = date, FUNCTION = public.regress_rb_true);
CREATE OPERATOR public.>= (LEFTARG = date, RIGHTARG = date, FUNCTION = public.regress_rb_true);
CREATE OPERATOR public.< (LEFTARG = date, RIGHTARG = date, FUNCTION = public.regress_rb_true);
CREATE OPERATOR public.<> (LEFTARG = date, RIGHTARG = date, FUNCTION = public.regress_rb_false);
CREATE FUNCTION public.regress_rb_oid_false(oid, oid) RETURNS boolean LANGUAGE sql AS 'SELECT false';
CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = public.regress_rb_oid_false);
-- temporary tables with the names of the partition and of the log
CREATE TEMP TABLE rb_2026_01 (id int, day date);
CREATE TEMP TABLE backfill_log (id bigint);

CREATE TEMP TABLE hostile AS SELECT * FROM pg_temp.capture();
SET LOCAL search_path = public, pg_catalog;
CREATE TEMP TABLE hostile_first AS SELECT * FROM pg_temp.capture();
-- proof that the hostile objects are live under this search_path
CREATE TEMP TABLE premise AS SELECT
	(SELECT pg_get_partition_constraintdef('public.rb_2026_01'::regclass)) AS constraintdef,
	(SELECT DATE '2026-01-01' = DATE '2027-01-01') AS date_eq,
	(SELECT count(*) FROM pg_class WHERE oid = 'public.rb'::regclass) AS oid_eq,
	(SELECT lower('EU')) AS lower;
RESET search_path;
DROP TABLE pg_temp.rb_2026_01, pg_temp.backfill_log;
DROP OPERATOR public.= (date, date), public.>= (date, date), public.< (date, date), public.<> (date, date), public.= (oid, oid);
DROP FUNCTION public.pg_get_partition_constraintdef(oid), public.pg_get_expr(pg_node_tree, oid), public.pg_get_expr(pg_node_tree, oid, boolean),
	public.pg_get_constraintdef(oid), public.pg_get_triggerdef(oid), public.pg_partition_ancestors(regclass),
	public.aclexplode(aclitem[]), public.quote_ident(text), public.lower(text);

SELECT is((SELECT row(constraintdef, date_eq, oid_eq, lower)::text FROM premise), '(false,t,0,hostile)',
          'premise: with public first, the hostile function, operators on date and oid, and lower() are live');
SELECT ok((SELECT val FROM clean WHERE name = 'replace') ~ '^rb_2026_01\n'
          AND (SELECT val FROM clean WHERE name = 'replace with keep_old, then undo') ~ '^rb_2026_01_archived\n'
          AND (SELECT val FROM clean WHERE name = 'refused: rows outside the bound') ~ '^23514: '
          AND (SELECT val FROM clean WHERE name = 'refused: a referenced partition') ~ '^0A000: '
          AND (SELECT val FROM clean WHERE name = 'refused: the partition changed since') ~ '^55000: ',
          'premise: without hostile objects, the replacements work and the refusals refuse');
SELECT is(h.val, c.val, 'hostile objects, default search_path: same ' || c.name)
FROM clean c LEFT JOIN hostile h USING (name) ORDER BY c.name;
SELECT is(h.val, c.val, 'hostile objects, public before pg_catalog: same ' || c.name)
FROM clean c LEFT JOIN hostile_first h USING (name) ORDER BY c.name;
SELECT is(regexp_replace(pg_temp.state(), '[0-9]+/[tf]$', ''), regexp_replace((SELECT s FROM baseline), '[0-9]+/[tf]$', ''),
          'after the hostile captures, rolled back, everything but the log''s sequence is as before');

SELECT * FROM finish();
ROLLBACK;
