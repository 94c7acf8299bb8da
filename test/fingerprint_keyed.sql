-- test/fingerprint_keyed.sql: nobody can make two different tables fingerprint alike.
--
-- Row hashes are SipHash-1-3 under the database's secret key (the oldest row of
-- backfill_key_data), and a fingerprint shows its count and sums sealed under a second key.
-- The unkeyed hash this replaced folded each value by xor, multiply by an odd constant and
-- rotate, all public: flipping the top bit of one word passes the multiply unchanged and the
-- rotate moves it to bit 28, so a second word of the same chain flipped at bit 28 cancels it.
-- Two different rows hashed alike, whatever the seed, and backfill_undo took a table holding
-- one for a table holding the other.  Each case below held before the key.
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(15);

-- Two-column chains: c0 and c2 went into the same chain, one after the other.
CREATE TABLE kc_a (c0 bigint, c1 bigint, c2 bigint);
CREATE TABLE kc_b (c0 bigint, c1 bigint, c2 bigint);
INSERT INTO kc_a SELECT g * 7919, g, g * 104729 FROM generate_series(1, 200) g;
INSERT INTO kc_b SELECT (g * 7919) # (1::bigint << 63), g, (g * 104729) # (1::bigint << 28) FROM generate_series(1, 200) g;

SELECT isnt((backfill_fingerprint('kc_a')).hash, (backfill_fingerprint('kc_b')).hash,
	'200 rows crafted to collide under the unkeyed hash: the two tables fingerprint differently');
SELECT is((SELECT count(*) FROM backfill_diff('TABLE kc_a', 'TABLE kc_b', '{c1}') WHERE change = 'changed'), 200::bigint,
	'and backfill_diff sees each crafted row as changed');
SELECT is((SELECT count(*) FROM (SELECT (backfill_fingerprint('kc_a', format('c1 = %s', g))).hash AS a,
		(backfill_fingerprint('kc_b', format('c1 = %s', g))).hash AS b FROM generate_series(1, 200) g) x WHERE a = b), 0::bigint,
	'and so does every one-row scope: no crafted row hashes like its twin');

-- backfill_undo must not take the crafted twin of what it wrote for what it wrote.
CREATE TABLE kc_p (c0 bigint, c1 bigint, c2 bigint, day date NOT NULL) PARTITION BY RANGE (day);
CREATE TABLE kc_p_0301 PARTITION OF kc_p FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
INSERT INTO kc_p SELECT c0, c1, c2, '2026-03-01' FROM kc_a WHERE c1 <= 10;
CREATE TEMP TABLE kc_log AS SELECT log_id FROM backfill_replace_partition('kc_p_0301',
	'SELECT c0, c1, c2 + 1 AS c2, day FROM kc_p_0301', keep_old => true);
UPDATE kc_p_0301 SET c0 = c0 # (1::bigint << 63), c2 = c2 # (1::bigint << 28) WHERE c1 = 3;
SELECT throws_ok(format('SELECT backfill_undo(%s)', (SELECT log_id FROM kc_log)), '55000',
	format('cannot undo record %s: partition public.kc_p_0301 changed since', (SELECT log_id FROM kc_log)),
	'a crafted UPDATE after a replacement is seen: backfill_undo refuses instead of discarding it');
SELECT is((SELECT c0 FROM kc_p_0301 WHERE c1 = 3), (3 * 7919) # (1::bigint << 63), 'and the updated row is still there');

-- The sums are sealed: a fingerprint does not add up from the fingerprints of its parts, so
-- no row's hash can be read off a one-row table and summed into a collision.
CREATE TABLE kc_x AS SELECT * FROM kc_a WHERE c1 <= 100;
CREATE TABLE kc_y AS SELECT * FROM kc_a WHERE c1 > 100;
CREATE FUNCTION pg_temp.half(h text, i int) RETURNS numeric LANGUAGE sql AS $$
	SELECT ('x' || substr(h, 16 * i + 1, 16))::bit(64)::bigint::numeric % 18446744073709551616 $$;
SELECT ok((SELECT (pg_temp.half(x.hash, 0) + pg_temp.half(y.hash, 0)) % 18446744073709551616 <> pg_temp.half(a.hash, 0)
		   AND (pg_temp.half(x.hash, 1) + pg_temp.half(y.hash, 1)) % 18446744073709551616 <> pg_temp.half(a.hash, 1)
		   FROM backfill_fingerprint('kc_x') x, backfill_fingerprint('kc_y') y, backfill_fingerprint('kc_a') a),
	'the hash of a table is not the sum of the hashes of its halves: the sums are sealed');
SELECT is((SELECT (backfill_fingerprint('kc_x')).rows + (backfill_fingerprint('kc_y')).rows), (backfill_fingerprint('kc_a')).rows,
	'while the counts still add up');

-- The key: made by CREATE EXTENSION, private, and what the fingerprint depends on.
SELECT is((SELECT count(*) FROM backfill_key_data WHERE length(key) = 32), 1::bigint, 'CREATE EXTENSION made one 32-byte key');
CREATE ROLE regress_kc_reader;
GRANT SELECT ON kc_a TO regress_kc_reader;
CREATE TEMP TABLE kc_fp AS SELECT (backfill_fingerprint('kc_a')).hash;
GRANT SELECT ON kc_fp TO regress_kc_reader;
SET LOCAL ROLE regress_kc_reader;
SELECT throws_ok('SELECT key FROM backfill_key_data', '42501', NULL, 'a role that is not the owner cannot read the key');
SELECT is((backfill_fingerprint('kc_a')).hash, (SELECT hash FROM kc_fp),
	'and its fingerprints are the owner''s: the functions read the key whoever calls');
RESET ROLE;

-- Another key (an older row wins, as after a restore): other fingerprints; the old key back,
-- the old ones.
INSERT INTO backfill_key_data VALUES (decode(repeat('ab', 32), 'hex'), '2000-01-01');
SELECT isnt((backfill_fingerprint('kc_a')).hash, (SELECT hash FROM kc_fp), 'under another key the same rows fingerprint differently');
SELECT is((SELECT count(*) FROM backfill_diff('TABLE kc_a', 'TABLE kc_a', '{c1}')), 0::bigint,
	'and backfill_diff still pairs equal rows under it');
DELETE FROM backfill_key_data WHERE created = '2000-01-01';
SELECT is((backfill_fingerprint('kc_a')).hash, (SELECT hash FROM kc_fp), 'the first key back, the first fingerprint back');

-- No key at all: refused, saying what to do; no fingerprint under a made-up key.
SAVEPOINT nokey;
DELETE FROM backfill_key_data;
SELECT throws_ok($$SELECT backfill_fingerprint('kc_a')$$, '55000',
	'backfill has no key to hash rows with: the table backfill_key_data holds no key',
	'without a key, fingerprints are refused');
ROLLBACK TO SAVEPOINT nokey;
SELECT lives_ok($$SELECT backfill_fingerprint('kc_a')$$, 'and work again once it is back');

SELECT * FROM finish();
ROLLBACK;
