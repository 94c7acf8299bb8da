-- sql/run_in_place.sql: strategy 'auto' rewrites a small partition in place by what differs.
--
-- Rows are matched by their whole value, as multisets: the partition's rows the source lacks
-- are deleted, the source's rows the partition lacks are inserted, and every other row keeps
-- its tuple (the same ctid and xmin), so no dead tuple is left beyond the rows replaced.  The
-- source's values are compared as the partition would store them (a numeric rounded to its
-- column's scale).  A source that does not return the partition's columns as stored makes the
-- task delete and insert every row, as its log record says.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS backfill;
RESET client_min_messages;
SET datestyle = 'ISO';
CREATE TABLE ip (id int NOT NULL, day date NOT NULL, amount numeric(12,2), note varchar(8),
	PRIMARY KEY (id, day)) PARTITION BY RANGE (day);
CREATE TABLE ip_0311 PARTITION OF ip FOR VALUES FROM ('2026-03-11') TO ('2026-03-12');
INSERT INTO ip SELECT g, '2026-03-11', g / 3.0, CASE WHEN g % 4 = 0 THEN NULL ELSE 'n' || g END
FROM generate_series(1, 1000) g;
-- the source computes amounts with more decimals than the partition keeps; one row in ten is
-- corrected, ids 996-1000 are gone and ids 1001-1005 are new
CREATE TABLE ip_src AS
SELECT id, day, CASE WHEN id % 10 = 0 THEN id / 3.0 + 1 ELSE id / 3.0 END AS amount, note::varchar AS note
FROM ip WHERE id <= 995
UNION ALL SELECT g, '2026-03-11', g / 3.0, 'new' FROM generate_series(1001, 1005) g;
CREATE TABLE ip_before AS SELECT ctid AS tid, xmin::text AS tx, id FROM ip_0311;
CREATE TABLE ip_fp_before AS SELECT * FROM backfill_fingerprint('ip_0311');

SELECT backfill_plan('ip', '2026-03-11', '2026-03-12', $$SELECT * FROM ip_src WHERE day >= $1 AND day < $2$$,
	strategy => 'auto') AS run \gset
SET client_min_messages = warning;
CALL backfill_run(:run);
RESET client_min_messages;

-- the partition holds the source's rows, as stored
SELECT (SELECT count(*) FROM (TABLE ip_0311 EXCEPT ALL SELECT id, day, amount::numeric(12,2), note FROM ip_src) x) AS not_in_source,
       (SELECT count(*) FROM (SELECT id, day, amount::numeric(12,2), note FROM ip_src EXCEPT ALL TABLE ip_0311) x) AS missing;
-- 99 corrected rows and 5 gone were deleted, 99 corrected and 5 new inserted; the other 896
-- rows (NULL notes among them) kept their tuples
SELECT l.details->'deleted' AS deleted, l.details->'inserted' AS inserted, l.details->'unchanged' AS unchanged,
       l.rows_before, l.rows_after, l.details->>'why' AS why
FROM backfill_tasks t JOIN backfill_log l ON l.id = t.log_id WHERE t.run_id = :run;
-- the fingerprints the record gives, of the rows before (read as they were matched) and after
SELECT l.fingerprint_before = (SELECT hash FROM ip_fp_before) AS before_is_the_fingerprint,
       l.fingerprint_after = (SELECT hash FROM backfill_fingerprint('ip_0311')) AS after_is_the_fingerprint
FROM backfill_tasks t JOIN backfill_log l ON l.id = t.log_id WHERE t.run_id = :run;
SELECT count(*) AS same_tuple FROM ip_0311 p JOIN ip_before b ON b.tid = p.ctid AND b.tx = p.xmin::text;
SELECT count(*) FILTER (WHERE id % 10 = 0 OR id > 995) AS rewritten_were_the_differing,
       count(*) AS rewritten
FROM ip_0311 p WHERE NOT EXISTS (SELECT FROM ip_before b WHERE b.tid = p.ctid AND b.tx = p.xmin::text);

-- rows are a multiset: without a key, a row held twice and given three times gains one copy,
-- a row held three times and given once loses two
CREATE TABLE ipm (day date NOT NULL, v int, w text) PARTITION BY RANGE (day);
CREATE TABLE ipm_0311 PARTITION OF ipm FOR VALUES FROM ('2026-03-11') TO ('2026-03-12');
INSERT INTO ipm VALUES ('2026-03-11', 1, 'a'), ('2026-03-11', 1, 'a'), ('2026-03-11', 2, NULL),
	('2026-03-11', 2, NULL), ('2026-03-11', 2, NULL), ('2026-03-11', 3, 'c');
CREATE TABLE ipm_src (day date, v int, w text);
INSERT INTO ipm_src VALUES ('2026-03-11', 1, 'a'), ('2026-03-11', 1, 'a'), ('2026-03-11', 1, 'a'),
	('2026-03-11', 2, NULL), ('2026-03-11', 3, 'c');
SELECT backfill_plan('ipm', '2026-03-11', '2026-03-12', $$SELECT * FROM ipm_src WHERE day >= $1 AND day < $2$$,
	strategy => 'auto') AS run_multi \gset
SET client_min_messages = warning;
CALL backfill_run(:run_multi);
RESET client_min_messages;
SELECT v, w, count(*) FROM ipm GROUP BY v, w ORDER BY v;
SELECT l.details->'deleted' AS deleted, l.details->'inserted' AS inserted, l.details->'unchanged' AS unchanged
FROM backfill_tasks t JOIN backfill_log l ON l.id = t.log_id WHERE t.run_id = :run_multi;

-- a value too long for its column is refused as INSERT refuses it, and nothing is written
UPDATE ip_src SET note = 'far too long' WHERE id = 7;
CREATE TABLE ip_fp AS SELECT * FROM backfill_fingerprint('ip_0311');
SELECT backfill_plan('ip', '2026-03-11', '2026-03-12', $$SELECT * FROM ip_src WHERE day >= $1 AND day < $2$$,
	strategy => 'auto') AS run_long \gset
\set VERBOSITY sqlstate
SET client_min_messages = warning;
CALL backfill_run(:run_long);
RESET client_min_messages;
\set VERBOSITY default
SELECT status, error FROM backfill_tasks WHERE run_id = :run_long;
SELECT f = (SELECT f FROM backfill_fingerprint('ip_0311') f) AS partition_unchanged FROM ip_fp f;
SELECT backfill_cancel(:run_long);
UPDATE ip_src SET note = 'n7' WHERE id = 7;

-- a source that lacks a column (note, left to its default) has every row deleted and inserted
SELECT backfill_plan('ip', '2026-03-11', '2026-03-12', $$SELECT id, day, amount FROM ip_src WHERE day >= $1 AND day < $2$$,
	strategy => 'auto') AS run_cols \gset
SET client_min_messages = warning;
CALL backfill_run(:run_cols);
RESET client_min_messages;
SELECT l.details->'deleted' AS deleted, l.details->'inserted' AS inserted, l.details->'unchanged' AS unchanged,
       l.details->>'why' AS why
FROM backfill_tasks t JOIN backfill_log l ON l.id = t.log_id WHERE t.run_id = :run_cols;
SELECT count(*) AS rows, count(note) AS notes FROM ip_0311;

-- a composite column is written whole; a partition with a trigger of its own, and a source
-- naming a column twice, have every row deleted and inserted (the trigger sees every row; the
-- twice-named column is refused as INSERT refuses it)
CREATE TYPE ip_pair AS (x int, y int);
CREATE TABLE ipc (day date NOT NULL, id int, p ip_pair) PARTITION BY RANGE (day);
CREATE TABLE ipc_0311 PARTITION OF ipc FOR VALUES FROM ('2026-03-11') TO ('2026-03-12');
INSERT INTO ipc SELECT '2026-03-11', g, ROW(g, -g)::ip_pair FROM generate_series(1, 10) g;
CREATE TABLE ipc_src AS SELECT day, id, CASE WHEN id = 3 THEN ROW(3, 33)::ip_pair ELSE p END AS p FROM ipc;
SELECT backfill_plan('ipc', '2026-03-11', '2026-03-12', $$SELECT * FROM ipc_src WHERE day >= $1 AND day < $2$$,
	strategy => 'auto') AS run_pair \gset
SET client_min_messages = warning;
CALL backfill_run(:run_pair);
RESET client_min_messages;
SELECT l.details->'deleted' AS deleted, l.details->'inserted' AS inserted, l.details->'unchanged' AS unchanged,
       (SELECT p FROM ipc WHERE id = 3) AS p3
FROM backfill_tasks t JOIN backfill_log l ON l.id = t.log_id WHERE t.run_id = :run_pair;

CREATE TABLE ipc_seen (id int);
CREATE FUNCTION ipc_seen() RETURNS trigger LANGUAGE plpgsql AS
	'BEGIN INSERT INTO ipc_seen VALUES (NEW.id); RETURN NEW; END';
CREATE TRIGGER ipc_seen BEFORE INSERT ON ipc_0311 FOR EACH ROW EXECUTE FUNCTION ipc_seen();
UPDATE ipc_src SET p = ROW(4, 44)::ip_pair WHERE id = 4;
SELECT backfill_plan('ipc', '2026-03-11', '2026-03-12', $$SELECT * FROM ipc_src WHERE day >= $1 AND day < $2$$,
	strategy => 'auto') AS run_trig \gset
SET client_min_messages = warning;
CALL backfill_run(:run_trig);
RESET client_min_messages;
SELECT l.details->'deleted' AS deleted, l.details->'inserted' AS inserted, l.details->'unchanged' AS unchanged,
       (SELECT count(*) FROM ipc_seen) AS rows_the_trigger_saw,
       l.details->>'why' LIKE '%but the partition has a trigger of its own, so every row was%' AS why_says_so
FROM backfill_tasks t JOIN backfill_log l ON l.id = t.log_id WHERE t.run_id = :run_trig;
DROP TRIGGER ipc_seen ON ipc_0311;

SELECT backfill_plan('ipm', '2026-03-11', '2026-03-12', $$SELECT day, v, v AS v FROM ipm_src WHERE day >= $1 AND day < $2$$,
	strategy => 'auto') AS run_twice \gset
\set VERBOSITY sqlstate
SET client_min_messages = warning;
CALL backfill_run(:run_twice);
RESET client_min_messages;
\set VERBOSITY default
SELECT status, error FROM backfill_tasks WHERE run_id = :run_twice;
SELECT backfill_cancel(:run_twice);

-- rows to insert that outgrow maintenance_work_mem (30 values of 100 kB against 1 MB) are
-- found before anything is written, and every row is deleted and inserted in one statement
CREATE TABLE ipb (day date NOT NULL, id int, t text) PARTITION BY RANGE (day);
CREATE TABLE ipb_0311 PARTITION OF ipb FOR VALUES FROM ('2026-03-11') TO ('2026-03-12');
INSERT INTO ipb SELECT '2026-03-11', g, repeat('x', 100000) || g FROM generate_series(1, 30) g;
CREATE TABLE ipb_src AS SELECT day, id, repeat('y', 100000) || id AS t FROM ipb;
SELECT backfill_plan('ipb', '2026-03-11', '2026-03-12', $$SELECT * FROM ipb_src WHERE day >= $1 AND day < $2$$,
	strategy => 'auto') AS run_big \gset
SET maintenance_work_mem = '1MB';
SET client_min_messages = warning;
CALL backfill_run(:run_big);
RESET client_min_messages;
RESET maintenance_work_mem;
SELECT l.details->'deleted' AS deleted, l.details->'inserted' AS inserted, l.details->'unchanged' AS unchanged,
       l.details->>'why' LIKE '%but the rows outgrew maintenance_work_mem, so every row was%' AS why_says_so,
       (SELECT count(*) FROM (TABLE ipb EXCEPT ALL TABLE ipb_src) x) AS not_in_source
FROM backfill_tasks t JOIN backfill_log l ON l.id = t.log_id WHERE t.run_id = :run_big;

DROP TABLE ip, ip_src, ip_before, ip_fp_before, ipm, ipm_src, ip_fp, ipc, ipc_src, ipc_seen, ipb, ipb_src;
DROP FUNCTION ipc_seen();
DROP TYPE ip_pair;

-- A run replacing a partition with a stored generated column: the new rows get it computed.
CREATE TABLE ipg (id int NOT NULL, day date NOT NULL, v int, w int GENERATED ALWAYS AS (v * 2) STORED)
	PARTITION BY RANGE (day);
CREATE TABLE ipg_0311 PARTITION OF ipg FOR VALUES FROM ('2026-03-11') TO ('2026-03-12');
INSERT INTO ipg (id, day, v) SELECT g, '2026-03-11', g FROM generate_series(1, 20) g;
SELECT backfill_plan('ipg', '2026-03-11', '2026-03-12',
	$$SELECT id, day, v + 1 AS v FROM ipg WHERE day >= $1 AND day < $2$$) AS run_gen \gset
SET client_min_messages = warning;
CALL backfill_run(:run_gen);
RESET client_min_messages;
SELECT t.status, l.operation FROM backfill_tasks t JOIN backfill_log l ON l.id = t.log_id WHERE t.run_id = :run_gen;
SELECT count(*) AS n, count(*) FILTER (WHERE w = v * 2) AS computed, sum(v) AS sum_v FROM ipg;
