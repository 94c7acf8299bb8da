-- test/replace_generated.sql: a partition with stored generated columns is replaced with the
-- values its expressions compute, as an INSERT or a COPY would store them.
--
-- The source leaves the generated columns out (giving one is refused: test/replace_bad_input.sql);
-- each new row gets them computed from its other columns, after its defaults, before its
-- CHECK constraints (which may read them) are checked.  The partition fingerprints as the
-- same rows inserted into a twin table by INSERT; the new partition still generates the
-- column for rows inserted later (a run's task: sql/run_in_place.sql).  An expression that fails on a
-- row fails the replacement with the expression's SQLSTATE, and the partition, the log and
-- the catalog are as they were.  From 18 a VIRTUAL generated column (not stored) is refused,
-- naming it; on a server without them the test says so.
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(10);

SELECT EXISTS (SELECT FROM pg_get_keywords() WHERE word = 'virtual') AS virtual_generated \gset

-- line items by day; total and net are computed, and a CHECK reads one of them
CREATE TABLE rg (
	id int NOT NULL,
	day date NOT NULL,
	price numeric(12,2) NOT NULL,
	qty int NOT NULL DEFAULT 1,
	total numeric(14,2) GENERATED ALWAYS AS (price * qty) STORED,
	net numeric(14,2) GENERATED ALWAYS AS (price * qty * 0.8) STORED,
	CHECK (total >= 0),
	PRIMARY KEY (id, day)
) PARTITION BY RANGE (day);
CREATE TABLE rg_0310 PARTITION OF rg FOR VALUES FROM ('2026-03-10') TO ('2026-03-11');
CREATE TABLE rg_0311 PARTITION OF rg FOR VALUES FROM ('2026-03-11') TO ('2026-03-12');
INSERT INTO rg (id, day, price, qty) SELECT g, date '2026-03-10' + g % 2, g % 50, 1 + g % 3 FROM generate_series(1, 400) g;
-- the recomputed prices
CREATE TABLE rg_src (id int, day date, price numeric(12,2), qty int);
INSERT INTO rg_src SELECT id, day, price + 1, qty FROM rg;
-- the twin: the same new rows of the 11th, inserted as an INSERT stores them
CREATE TABLE rg_twin (LIKE rg INCLUDING ALL);
INSERT INTO rg_twin (id, day, price, qty) SELECT id, day, price, qty FROM rg_src WHERE day = '2026-03-11';
CREATE TEMP TABLE rg_logs AS SELECT count(*) AS n FROM backfill_log;

SELECT is((SELECT rows_after FROM backfill_replace_partition('rg_0311',
	$$SELECT id, day, price, qty FROM rg_src WHERE day >= $1 AND day < $2$$)),
	(SELECT count(*) FROM rg_twin), 'the day is replaced with the source''s rows');
SELECT is((SELECT count(*) FROM rg_0311 WHERE total = price * qty AND net = price * qty * 0.8), (SELECT count(*) FROM rg_twin),
	'every new row has its generated columns computed from its own values');
SELECT is((backfill_fingerprint('rg_0311')).hash, (backfill_fingerprint('rg_twin')).hash,
	'the partition fingerprints as the same rows stored by INSERT');
-- the 10th from a source without qty: its default, 1, is what the expressions read
CREATE TEMP TABLE rg_0310_swap AS
	SELECT * FROM backfill_replace_partition('rg_0310', $$SELECT id, day, price FROM rg_src WHERE day >= $1 AND day < $2$$);
SELECT is((SELECT count(*) FROM rg_0310 WHERE qty = 1 AND total = price AND net = price * 0.8),
	(SELECT count(*) FROM rg_src WHERE day = '2026-03-10'),
	'a column the source leaves out gets its default, which the generated columns read');
INSERT INTO rg (id, day, price, qty) VALUES (9001, '2026-03-11', 10, 3);
SELECT is((SELECT total FROM rg WHERE id = 9001), 30.00::numeric(14,2),
	'the new partition still generates the column for a row inserted later');
SELECT is((SELECT attgenerated FROM pg_attribute WHERE attrelid = 'rg_0311'::regclass AND attname = 'total'), 's'::"char",
	'and its column is still a stored generated column');

-- an expression that fails on a row: its SQLSTATE, nothing changed
CREATE TABLE rd (id int NOT NULL, day date NOT NULL, a int, per int GENERATED ALWAYS AS (100 / a) STORED)
	PARTITION BY RANGE (day);
CREATE TABLE rd_0310 PARTITION OF rd FOR VALUES FROM ('2026-03-10') TO ('2026-03-11');
INSERT INTO rd (id, day, a) SELECT g, '2026-03-10', g FROM generate_series(1, 50) g;
CREATE TEMP TABLE rd_before AS SELECT (backfill_fingerprint('rd_0310'))::text AS fp, (SELECT count(*) FROM backfill_log) AS logs;
SELECT throws_ok($$SELECT backfill_replace_partition('rd_0310',
	'SELECT id, day, a - 25 AS a FROM rd WHERE day >= $1 AND day < $2')$$, '22012', NULL,
	'an expression that fails on a row fails the replacement with its SQLSTATE');
SELECT ok((SELECT (backfill_fingerprint('rd_0310'))::text = fp AND (SELECT count(*) FROM backfill_log) = logs FROM rd_before)
	AND NOT EXISTS (SELECT FROM pg_class WHERE relname LIKE 'backfill_stage%'),
	'and the partition, the log and the catalog are as they were');

-- from 18: a virtual generated column is not stored, and is refused
\if :virtual_generated
CREATE TABLE rv (id int NOT NULL, day date NOT NULL, a int, b int GENERATED ALWAYS AS (a * 2) VIRTUAL)
	PARTITION BY RANGE (day);
CREATE TABLE rv_0310 PARTITION OF rv FOR VALUES FROM ('2026-03-10') TO ('2026-03-11');
SELECT throws_ok($$SELECT backfill_replace_partition('rv_0310', 'SELECT 1 AS id, date ''2026-03-10'' AS day, 1 AS a')$$,
	'0A000', 'cannot replace partition public.rv_0310: column b is a virtual generated column',
	'a virtual generated column is refused, naming it');
\else
SELECT skip('this server has no virtual generated columns', 1);
\endif
SELECT is((SELECT count(*) FROM backfill_log) - (SELECT n FROM rg_logs), 2::bigint,
	'two log records: the two replacements that worked');

SELECT * FROM finish();
ROLLBACK;
