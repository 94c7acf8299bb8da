-- test/messages.sql: the messages a user meets first say what is wrong and what to do.
--
-- Each case raises with the right SQLSTATE, a message naming the argument or the column, and
-- a hint that says what to do; and changes nothing (the table's fingerprint and backfill_log
-- are as they were).  The dangerous merge with delete_missing is refused without a scope and
-- with an empty source, saying how many rows it would have deleted.
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(37);

CREATE ROLE regress_msg_owner;
CREATE ROLE regress_msg_other;
CREATE ROLE regress_msg_member IN ROLE regress_msg_owner;

-- err(sql[, role]): what sql raised, as 'SQLSTATE | message | hint', or 'no error'
CREATE FUNCTION pg_temp.err(sql text, as_role text DEFAULT NULL) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	s text; m text; h text;
BEGIN
	BEGIN
		IF as_role IS NOT NULL THEN
			EXECUTE format('SET LOCAL ROLE %I', as_role);
		END IF;
		EXECUTE sql;
		RESET ROLE;
		RETURN 'no error';
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, m = MESSAGE_TEXT, h = PG_EXCEPTION_HINT;
	END;
	RETURN concat_ws(' | ', s, m, nullif(h, ''));
END $$;

CREATE TABLE fct (order_id bigint NOT NULL, day date NOT NULL, revenue numeric(12,2) NOT NULL, note text)
	PARTITION BY RANGE (day);
CREATE TABLE fct_0315 PARTITION OF fct FOR VALUES FROM ('2026-03-15') TO ('2026-03-16');
CREATE TABLE fct_0316 PARTITION OF fct FOR VALUES FROM ('2026-03-16') TO ('2026-03-17');
INSERT INTO fct SELECT g, date '2026-03-15' + g % 2, g, 'n' || g FROM generate_series(1, 200) g;
CREATE TABLE src AS SELECT * FROM fct;
ALTER TABLE fct OWNER TO regress_msg_owner;
ALTER TABLE fct_0315 OWNER TO regress_msg_owner;
ALTER TABLE fct_0316 OWNER TO regress_msg_owner;
GRANT SELECT ON src TO regress_msg_owner, regress_msg_other;
GRANT SELECT, INSERT, UPDATE, DELETE ON fct, fct_0315, fct_0316 TO regress_msg_other;
-- state(): the fingerprint of everything a refused call could have changed
CREATE FUNCTION pg_temp.state() RETURNS text LANGUAGE sql AS $$
	SELECT concat_ws(' ', (backfill_fingerprint('fct')).hash, (SELECT count(*) FROM backfill_log),
					 (SELECT count(*) FROM pg_class WHERE relname LIKE 'backfill\_stage\_%'))
$$;
CREATE TEMP TABLE baseline AS SELECT pg_temp.state() AS s;

-- ============================================================ a source without a NOT NULL column
SELECT is(pg_temp.err($$SELECT * FROM backfill_replace_partition('fct_0315',
		'SELECT order_id, day, note FROM src WHERE day >= $1 AND day < $2')$$),
	'23502 | the source lacks column revenue, which is NOT NULL and has no default in partition public.fct_0315 | Add revenue to the source''s select list (columns are matched by name).',
	'replace: a source lacking a NOT NULL column without default is named before any row is written');
SELECT is(pg_temp.err($$SELECT * FROM backfill_replace_partition('fct_0315',
		'SELECT order_id, day, note FROM src WHERE day >= $1 AND day < $2 AND false', allow_empty => true)$$),
	'23502 | the source lacks column revenue, which is NOT NULL and has no default in partition public.fct_0315 | Add revenue to the source''s select list (columns are matched by name).',
	'replace: even when it returns no row');
SELECT is(pg_temp.state(), (SELECT s FROM baseline), 'replace: nothing changed');
SELECT is(pg_temp.err($$SELECT * FROM backfill_replace_partition('fct_0315',
		'SELECT order_id, day, revenue FROM src WHERE day >= $1 AND day < $2')$$)::text ~ '^no error$', true,
	'replace: a nullable column may be left out');

-- ============================================================ a table name where a query is expected
SELECT is(pg_temp.err($$SELECT * FROM backfill_reconcile('fct', 'TABLE src', ARRAY['count(*)'])$$),
	'42601 | target is a table name, not a query | A query is expected, e.g. ''TABLE fct'' or ''SELECT * FROM fct''.',
	'reconcile: a table name as target is refused with a hint showing the query to write');
SELECT is(pg_temp.err($$SELECT * FROM backfill_reconcile('TABLE fct', 'public.src', ARRAY['count(*)'])$$),
	'42601 | source is a table name, not a query | A query is expected, e.g. ''TABLE public.src'' or ''SELECT * FROM public.src''.',
	'reconcile: a qualified table name as source too');
SELECT is(pg_temp.err($$SELECT * FROM backfill_diff('fct', 'TABLE src', ARRAY['order_id'])$$),
	'42601 | query a is a table name, not a query | A query is expected, e.g. ''TABLE fct'' or ''SELECT * FROM fct''.',
	'diff: a table name as a is refused the same way');
SELECT is(pg_temp.err($$SELECT * FROM backfill_diff('TABLE fct', '"Src"', ARRAY['order_id'])$$),
	'42601 | query b is a table name, not a query | A query is expected, e.g. ''TABLE "Src"'' or ''SELECT * FROM "Src"''.',
	'diff: a quoted name as b too');
SELECT is(pg_temp.err($$SELECT * FROM backfill_diff('TABLE fct', 'SELECT 1 AS order_id', ARRAY['order_id'])$$) ~ 'a table name, not a query',
	false, 'diff: a real query is not taken for a name');

-- ============================================================ a scope typo
SELECT is(pg_temp.err($$SELECT backfill_fingerprint('fct', 'dya = ''2026-03-15''')$$),
	'42703 | invalid scope: column "dya" does not exist',
	'fingerprint: a scope typo names the argument and the column');
SELECT is(pg_temp.err($$SELECT * FROM backfill_merge('fct', 'TABLE src', ARRAY['order_id'], scope => 'dya = ''2026-03-15''')$$),
	'42703 | invalid scope: column "dya" does not exist',
	'merge: the same');

-- ============================================================ must be owner: who owns it, and that membership suffices
SELECT is(pg_temp.err($$SELECT * FROM backfill_replace_partition('fct_0315', 'SELECT * FROM src WHERE day >= $1 AND day < $2')$$,
		'regress_msg_other'),
	'42501 | must be owner of table public.fct to replace its partitions | Table public.fct is owned by role regress_msg_owner: run this as regress_msg_owner or as a member of it (GRANT regress_msg_owner TO regress_msg_other).',
	'replace: the hint names the owner and the grant that would let the caller do it');
SELECT is(pg_temp.err($$SELECT backfill_plan('fct', '2026-03-15', '2026-03-17', 'SELECT * FROM src WHERE day >= $1 AND day < $2')$$,
		'regress_msg_other'),
	'42501 | must be owner of table public.fct to plan a run on it | Table public.fct is owned by role regress_msg_owner: run this as regress_msg_owner or as a member of it (GRANT regress_msg_owner TO regress_msg_other).',
	'plan: the same hint');
SELECT is(pg_temp.err($$SELECT * FROM backfill_replace_partition('fct_0315', 'SELECT * FROM src WHERE day >= $1 AND day < $2')$$,
		'regress_msg_member'),
	'42501 | role regress_msg_owner, the owner of partition public.fct_0315, must have CREATE on schema public for a member of it to replace the partition | GRANT CREATE ON SCHEMA public TO regress_msg_owner, or replace it as regress_msg_owner.',
	'replace: a member whose owner role may not create tables in the partition''s schema is told so, up front');
GRANT CREATE ON SCHEMA public TO regress_msg_owner;
SELECT is(pg_temp.err($$SELECT * FROM backfill_replace_partition('fct_0315', 'SELECT * FROM src WHERE day >= $1 AND day < $2')$$,
		'regress_msg_member'), 'no error',
	'replace: a member of the owner''s role may, as the hint says');
SELECT is((SELECT logged_by::text FROM backfill_log ORDER BY id DESC LIMIT 1), 'regress_msg_member', 'replace: the member''s replacement is recorded, by the member');
DELETE FROM fct_0315;	-- (the replaced partition has a new OID: start again from the same rows)
INSERT INTO fct_0315 SELECT * FROM src WHERE day = '2026-03-15';

-- ============================================================ a probe of a transform that changes nothing
SELECT is((SELECT verdict FROM backfill_probe_idempotency($$UPDATE fct SET note = note WHERE day = '2026-03-16'$$,
		'fct', $$day = '2026-03-16'$$)),
	'idempotent, and the transform changed no row of the window (its 100 rows are the same before and after both runs)',
	'probe: a transform that changes nothing is said to change nothing');

-- ============================================================ delete_missing cannot wipe a table by accident
CREATE TEMP TABLE before_merge AS SELECT (backfill_fingerprint('fct')).hash AS h, (SELECT count(*) FROM backfill_log) AS logs;
SELECT is(pg_temp.err($$SELECT * FROM backfill_merge('fct', 'SELECT * FROM src WHERE day = ''2026-03-15''', ARRAY['order_id'],
		delete_missing => true)$$),
	'22023 | delete_missing needs a scope: without one, every row of public.fct that the source lacks would be deleted (100 rows) | Pass scope => the window the source recomputes (a condition on the columns of public.fct), so that only rows of that window can be deleted; scope => ''true'' if it is the whole table.',
	'merge: delete_missing without a scope is refused, with the count it would have deleted');
SELECT is(pg_temp.err($$SELECT * FROM backfill_merge('fct', 'SELECT * FROM src WHERE false', ARRAY['order_id'],
		scope => 'day = ''2026-03-15''', delete_missing => true)$$),
	'22023 | the source returned no rows: with delete_missing, merging it would delete all 100 rows of the scope | If the scope must really be emptied, pass allow_empty => true.',
	'merge: an empty source with delete_missing is refused, with the count it would have deleted');
SELECT is((SELECT (backfill_fingerprint('fct')).hash), (SELECT h FROM before_merge), 'merge: the refusals deleted nothing');
SELECT is((SELECT count(*) FROM backfill_log), (SELECT logs FROM before_merge), 'merge: and logged nothing');
SELECT is((SELECT row(inserted, updated, deleted)::text FROM backfill_merge('fct', 'SELECT * FROM src WHERE false', ARRAY['order_id'],
		scope => 'day = ''2026-03-15''', delete_missing => true, allow_empty => true)), '(0,0,100)',
	'merge: with allow_empty => true the scope is emptied, as asked');
SELECT is((SELECT count(*) FROM fct_0315), 0::bigint, 'merge: the scope is empty');
SELECT is((SELECT count(*) FROM fct_0316), 100::bigint, 'merge: and nothing outside it was touched');
SELECT is((SELECT row(inserted, updated, deleted)::text FROM backfill_merge('fct', 'SELECT * FROM src WHERE day = ''2026-03-15''', ARRAY['order_id'],
		scope => 'day = ''2026-03-15''', delete_missing => true)), '(100,0,0)',
	'merge: a scoped delete_missing with rows is allowed');
SELECT is(pg_temp.err($$SELECT * FROM backfill_merge('fct', 'SELECT * FROM src WHERE false', ARRAY['order_id'],
		scope => 'day = ''2026-03-15''')$$) ~ '^no error', true,
	'merge: an empty source without delete_missing deletes nothing, and needs no allow_empty');
SELECT is((SELECT count(*) FROM fct), 200::bigint, 'merge: so every row is still there');
SELECT is(pg_temp.err($$SELECT * FROM backfill_merge('fct', 'SELECT * FROM src WHERE false', ARRAY['order_id'],
		scope => 'day = ''2026-03-17''', delete_missing => true)$$) ~ '^no error', true,
	'merge: an empty source over an empty scope deletes nothing, and is not refused');
SELECT is(pg_temp.err($$SELECT * FROM backfill_merge('fct', 'SELECT * FROM src WHERE false', ARRAY['order_id'],
		scope => NULL, delete_missing => true, allow_empty => true)$$) ~ '^22023 \| delete_missing needs a scope', true,
	'merge: allow_empty does not lift the need for a scope');

-- ============================================================ the time left is measured
-- (backfill_progress: elapsed per finished task times the tasks pending; see sql/run.sql for a run)
SELECT is((SELECT count(*) FROM pg_attribute WHERE attrelid = 'backfill_progress'::regclass
			AND attname IN ('cron_status', 'cron_message')), 2::bigint,
	'progress: the last run of a run''s pg_cron job has its columns');

SELECT is(pg_temp.err($$SELECT * FROM backfill_reconcile('TABLE fct', 'TABLE src', ARRAY['count(*)'])$$) ~ '^no error', true,
	'reconcile: queries are accepted as before');
SELECT is(pg_temp.err($$SELECT * FROM backfill_diff('TABLE fct', 'TABLE src', ARRAY['order_id'])$$), 'no error',
	'diff: queries are accepted as before');
SELECT is(pg_temp.err($$SELECT * FROM backfill_merge('fct', 'TABLE src', ARRAY['order_id'], delete_missing => false)$$) ~ '^no error', true,
	'merge: without delete_missing no scope is needed');
SELECT is(pg_temp.err($$SELECT backfill_assert_unique('fct', ARRAY['order_id'])$$), 'no error', 'assert_unique: unchanged');


-- ============================================================ tools that show only the first line
-- (Dataform, many schedulers): the first offending key or measure is in the message itself
CREATE TABLE dup_src AS SELECT * FROM src;
INSERT INTO dup_src SELECT * FROM src WHERE order_id = 7;
SELECT matches(pg_temp.err($$SELECT backfill_assert_unique('dup_src', ARRAY['order_id'])$$),
	'^23505 \| key \(order_id\) of table public\.dup_src is not unique: \(order_id\)=\(7\) appears 2 times \| ',
	'assert_unique: the first duplicated key and its count in the message');
SELECT matches(pg_temp.err($$SELECT * FROM backfill_reconcile('TABLE dup_src', 'TABLE src', ARRAY['count(*)', 'sum(revenue)'])$$),
	'^23514 \| reconciliation failed: count\(\*\) is 201 in target, 200 in source \(2 of 2 measures differ\) \| ',
	'reconcile: the first measure that differs and its two values in the message');

-- ============================================================ a driver that opened the transaction
-- psycopg2 opens one before the first statement unless autocommit is on: the hint says so
CREATE TEMP TABLE msg_run AS
	SELECT backfill_plan('fct', '2026-03-15', '2026-03-17', 'SELECT * FROM src WHERE day >= $1 AND day < $2') AS id;
SELECT is(pg_temp.err(format('CALL backfill_run(%s)', (SELECT id FROM msg_run))),
	format('2D000 | backfill_run must be called with CALL, outside a transaction block | Run CALL backfill_run(%s) on its own, not inside BEGIN or a function. A driver may have opened the transaction itself, without a BEGIN of yours: turn autocommit on for this call (psycopg 2 and 3: connection.autocommit = True; node-postgres sends no BEGIN of its own; JDBC: setAutoCommit(true)).',
		(SELECT id FROM msg_run)),
	'run: inside a transaction block, 2D000 with a hint that names a driver''s implicit transaction');
SELECT * FROM finish();
ROLLBACK;
