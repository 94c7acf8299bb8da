-- sql/replace_prepared.sql: a replacement that cannot lock its partition names who holds it,
-- a prepared transaction included (it holds its locks with no session).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS backfill;
RESET client_min_messages;
CREATE TABLE rp (id int NOT NULL, day date NOT NULL, v int) PARTITION BY RANGE (day);
CREATE TABLE rp_0301 PARTITION OF rp FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
INSERT INTO rp SELECT g, '2026-03-01', g FROM generate_series(1, 10) g;
BEGIN;
LOCK TABLE rp_0301 IN ACCESS SHARE MODE;
PREPARE TRANSACTION 'regress_holds_rp';
SELECT backfill_replace_partition('rp_0301', 'SELECT id, day, v + 1 AS v FROM rp WHERE day >= $1 AND day < $2',
	lock_timeout_ms => 20, max_attempts => 2);
SELECT sum(v) AS unchanged FROM rp;
ROLLBACK PREPARED 'regress_holds_rp';
SELECT (backfill_replace_partition('rp_0301', 'SELECT id, day, v + 1 AS v FROM rp WHERE day >= $1 AND day < $2')).rows_after;
DROP TABLE rp;
