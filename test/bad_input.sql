-- test/bad_input.sql: every argument of every function, given what it must refuse.
--
-- Each refused call must raise the right SQLSTATE with a message that names the argument, and
-- must leave everything as it was: the rows of every table in the schema (fingerprinted), the
-- set of relations, backfill_log and its sequence (which a rolled-back write would still have
-- advanced). Injection attempts through scopes, queries and measures are refused the same way.
-- Names that need quoting (capitals, spaces, quotes, semicolons, unicode, 63 bytes) work as
-- table and key column names in every function.
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(137);

CREATE TABLE bi (id int, v text, d date, r numeric(10,2), j json, code text);
INSERT INTO bi SELECT g, 'v' || g, date '2026-03-01' + g, g * 1.5, json_build_object('g', g), (g * 7)::text
FROM generate_series(1, 100) g;
CREATE VIEW bi_view AS SELECT * FROM bi;
CREATE SEQUENCE bi_seq;
CREATE INDEX bi_idx ON bi (id);
CREATE TYPE bi_type AS (x int);
CREATE TABLE bi_gone (id int);
CREATE TEMP TABLE gone AS SELECT 'bi_gone'::regclass::oid AS oid;
DROP TABLE bi_gone;

-- state(): every relation of the schema with its fingerprint, the log's rows and its sequence.
CREATE FUNCTION pg_temp.state() RETURNS text LANGUAGE sql AS $$
	SELECT concat_ws(' | ',
		(SELECT string_agg(format('%s %s %s', c.relname, c.relkind,
		                          CASE WHEN c.relkind IN ('r', 'p', 'm') THEN (backfill_fingerprint(c.oid))::text END),
		                   ', ' ORDER BY c.relname COLLATE "C")
		 FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace),
		(SELECT count(*) FROM public.backfill_log),
		(SELECT format('%s/%s', last_value, is_called) FROM public.backfill_log_id_seq))
$$;
CREATE TEMP TABLE baseline AS SELECT pg_temp.state() AS s;

-- refuses(sql, sqlstate regex, message regex, description): sql raises that error, and the
-- state afterwards is the baseline.
CREATE FUNCTION pg_temp.refuses(sql text, state_re text, msg_re text, descr text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	s text; m text; raised boolean := false; after text;
BEGIN
	BEGIN
		EXECUTE sql;
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, m = MESSAGE_TEXT;
		raised := true;
	END;
	after := pg_temp.state();
	IF raised AND s ~ ('^(' || state_re || ')$') AND m ~ msg_re AND after = (SELECT b.s FROM baseline b) THEN
		RETURN ok(true, descr);
	END IF;
	RETURN ok(false, descr) || E'\n' || diag(concat_ws(E'\n',
		CASE WHEN raised THEN format('raised %s: %s', s, m) ELSE 'no error was raised' END,
		format('wanted %s: %s', state_re, msg_re),
		CASE WHEN after <> (SELECT b.s FROM baseline b) THEN 'and the state changed' END));
END $$;

-- ============================================================ arrays sized by the caller
-- bounded by what one query can hold, refused at once; repeated names found in n log n
SELECT pg_temp.refuses(format('SELECT * FROM backfill_diff(%L, %L, %L)', 'TABLE bi', 'TABLE bi',
		(SELECT array_agg('k' || g) FROM generate_series(1, 200000) g)),
	'54000', '^key may hold at most 1664 column names, not 200000$',
	'diff: 200,000 key names are refused before any is compared with another');
SELECT pg_temp.refuses(format('SELECT * FROM backfill_merge(%L, %L, %L)', 'bi', 'TABLE bi',
		(SELECT array_agg('k' || g) FROM generate_series(1, 5000) g)),
	'54000', '^key may hold at most 1664 column names, not 5000$', 'merge: 5,000 key names');
SELECT pg_temp.refuses(format('SELECT * FROM backfill_reconcile(%L, %L, %L)', 'TABLE bi', 'TABLE bi',
		(SELECT array_agg('count(*)'::text) FROM generate_series(1, 100000) g)),
	'54000', '^measures may hold at most 1664 expressions, not 100000$', 'reconcile: 100,000 measures');
SELECT pg_temp.refuses(format('SELECT backfill_assert_unique(%L, %L)', 'bi',
		(SELECT array_agg('k' || g ORDER BY g) || ARRAY['k1'] FROM generate_series(1, 1663) g)),
	'42701', '^key names column "k1" more than once$', 'assert_unique: the last of 1,664 names repeats the first');

-- ============================================================ backfill_fingerprint(rel, scope)
SELECT pg_temp.refuses($$SELECT backfill_fingerprint(NULL)$$, '22004', '^rel must not be NULL$', 'fingerprint: rel NULL');
SELECT pg_temp.refuses($$SELECT backfill_fingerprint(NULL, 'true')$$, '22004', '^rel must not be NULL$', 'fingerprint: rel NULL with a scope');
SELECT pg_temp.refuses($$SELECT backfill_fingerprint('bi_view')$$, '42809', '^cannot use "bi_view" as rel$', 'fingerprint: a view');
SELECT pg_temp.refuses($$SELECT backfill_fingerprint('bi_seq')$$, '42809', '^cannot use "bi_seq" as rel$', 'fingerprint: a sequence');
SELECT pg_temp.refuses($$SELECT backfill_fingerprint('bi_idx')$$, '42809', '^cannot use "bi_idx" as rel$', 'fingerprint: an index');
SELECT pg_temp.refuses($$SELECT backfill_fingerprint('bi_type')$$, '42809', '^cannot use "bi_type" as rel$', 'fingerprint: a composite type');
SELECT pg_temp.refuses(format('SELECT backfill_fingerprint(%s::regclass)', (SELECT oid FROM gone)),
                       '42P01', '^rel: relation with OID [0-9]+ does not exist$', 'fingerprint: the OID of a dropped table');
SELECT pg_temp.refuses($$SELECT backfill_fingerprint('bi', '')$$, '22023', '^scope must not be empty$', 'fingerprint: empty scope');
SELECT pg_temp.refuses($$SELECT backfill_fingerprint('bi', '  ')$$, '22023', '^scope must not be empty$', 'fingerprint: blank scope');
SELECT pg_temp.refuses($$SELECT backfill_fingerprint('bi', 'id >')$$, '42601', '^invalid scope: syntax error', 'fingerprint: scope with a syntax error');
SELECT pg_temp.refuses($$SELECT backfill_fingerprint('bi', 'nope > 1')$$, '42703', '^invalid scope: column "nope" does not exist', 'fingerprint: scope naming an unknown column');
SELECT pg_temp.refuses($$SELECT backfill_fingerprint('bi', 'id')$$, '42804', '^invalid scope: ', 'fingerprint: scope that is not boolean');
SELECT pg_temp.refuses($$SELECT backfill_fingerprint('bi', 'sum(id) > 0')$$, '42803', '^invalid scope: ', 'fingerprint: scope with an aggregate');
SELECT pg_temp.refuses($$SELECT backfill_fingerprint('bi', 'true; SELECT 1')$$, '42601', '^invalid scope: ', 'fingerprint: scope of two statements');
SELECT pg_temp.refuses($$SELECT backfill_fingerprint('bi', 'true) UNION SELECT 1, ''x'', NULL, 1, NULL, NULL --')$$, '42601', '^invalid scope: ', 'fingerprint: injection "true) UNION SELECT ... --"');
SELECT pg_temp.refuses($$SELECT backfill_fingerprint('bi', '1=1; DROP TABLE bi')$$, '42601', '^invalid scope: ', 'fingerprint: injection "1=1; DROP TABLE bi" (bi still there)');
SELECT pg_temp.refuses($$SELECT backfill_fingerprint('bi', 'true)) ; DROP TABLE bi; --')$$, '42601', '^invalid scope: ', 'fingerprint: injection closing two parentheses');
SELECT pg_temp.refuses($$SELECT backfill_fingerprint('bi', 'true) UNION (SELECT * FROM bi')$$, '42601', 'scope', 'fingerprint: balanced injection "true) UNION (SELECT ..."');
SELECT pg_temp.refuses($$SELECT backfill_fingerprint('bi', 'true /*')$$, '42601', '^invalid scope: ', 'fingerprint: scope opening a comment');
SELECT pg_temp.refuses($$SELECT backfill_fingerprint('bi', 'EXISTS (WITH x AS (DELETE FROM bi RETURNING 1) SELECT 1)')$$, '0A000', '^invalid scope: ', 'fingerprint: scope that deletes');

SELECT is((backfill_fingerprint('bi', NULL))::text, (backfill_fingerprint('bi'))::text,
          'fingerprint: scope NULL means every row');

-- ============================================================ backfill_assert_unique(rel, key, scope)
SELECT pg_temp.refuses($$SELECT backfill_assert_unique(NULL, '{id}')$$, '22004', '^rel must not be NULL$', 'assert_unique: rel NULL');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi', NULL)$$, '22004', '^key must not be NULL$', 'assert_unique: key NULL');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi_view', '{id}')$$, '42809', '^cannot use "bi_view" as rel$', 'assert_unique: a view');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi_seq', '{last_value}')$$, '42809', '^cannot use "bi_seq" as rel$', 'assert_unique: a sequence');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi_idx', '{id}')$$, '42809', '^cannot use "bi_idx" as rel$', 'assert_unique: an index');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi_type', '{x}')$$, '42809', '^cannot use "bi_type" as rel$', 'assert_unique: a composite type');
SELECT pg_temp.refuses(format('SELECT backfill_assert_unique(%s::regclass, %L)', (SELECT oid FROM gone), '{id}'),
                       '42P01', '^rel: relation with OID [0-9]+ does not exist$', 'assert_unique: the OID of a dropped table');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi', '{nope}')$$, '42703', '^key: column "nope" does not exist in public\.bi$', 'assert_unique: unknown key column');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi', '{ID}')$$, '42703', '^key: column "ID" does not exist', 'assert_unique: key names are case-sensitive');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi', '{"\"id\""}')$$, '42703', '^key: column ""id"" does not exist', 'assert_unique: key names are not unquoted');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi', '{ctid}')$$, '42703', '^key: column "ctid" does not exist', 'assert_unique: a system column is not a key column');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi', '{}')$$, '22023', '^key must name at least one column$', 'assert_unique: empty key array');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi', ARRAY['id', NULL])$$, '22004', '^key must not contain NULL$', 'assert_unique: NULL element in key');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi', '{id,v,id}')$$, '42701', '^key names column "id" more than once$', 'assert_unique: duplicate key names');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi', ARRAY[''])$$, '22023', '^key must not contain an empty column name$', 'assert_unique: empty key name');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi', '{{id},{v}}')$$, '2202E', '^key must be a one-dimensional array$', 'assert_unique: two-dimensional key');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi', '{j}')$$, '42883', '^key column "j" is of type json, which has no equality operator$', 'assert_unique: key of a type without equality');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi', '{id}', '')$$, '22023', '^scope must not be empty$', 'assert_unique: empty scope');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi', '{id}', 'id >')$$, '42601', '^invalid scope: syntax error', 'assert_unique: scope with a syntax error');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi', '{id}', 'nope')$$, '42703', '^invalid scope: column "nope" does not exist', 'assert_unique: scope naming an unknown column');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi', '{id}', 'r')$$, '42804', '^invalid scope: ', 'assert_unique: scope that is not boolean');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi', '{id}', 'true) GROUP BY id) g; DROP TABLE bi; --')$$, '42601', '^invalid scope: ', 'assert_unique: injection closing the subquery');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi', '{id}', '1=1; DROP TABLE bi')$$, '42601', '^invalid scope: ', 'assert_unique: injection "1=1; DROP TABLE bi" (bi still there)');
SELECT pg_temp.refuses($$SELECT backfill_assert_unique('bi', '{id}', 'true) UNION SELECT 1, 1, 1 --')$$, '42601', '^invalid scope: ', 'assert_unique: injection "true) UNION SELECT ... --"');

SELECT is(backfill_assert_unique('bi', '{id}', NULL), 100::bigint, 'assert_unique: scope NULL means every row');

-- ============================================================ backfill_diff(a, b, key)
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff(NULL, 'TABLE bi', '{id}')$$, '22004', '^(query )?a must not be NULL$', 'diff: a NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('TABLE bi', NULL, '{id}')$$, '22004', '^(query )?b must not be NULL$', 'diff: b NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('TABLE bi', 'TABLE bi', NULL)$$, '22004', '^key must not be NULL$', 'diff: key NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('', 'TABLE bi', '{id}')$$, '22023', '^(query )?a must not be empty$', 'diff: a empty');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('TABLE bi', ' ', '{id}')$$, '22023', '^(query )?b must not be empty$', 'diff: b blank');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('SELEC * FROM bi', 'TABLE bi', '{id}')$$, '42601', '^invalid (query )?a: syntax error', 'diff: a with a syntax error');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('TABLE bi', 'SELECT * FROM bi WHERE', '{id}')$$, '42601', '^invalid (query )?b: syntax error', 'diff: b with a syntax error');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('TABLE nope', 'TABLE bi', '{id}')$$, '42P01', '^invalid (query )?a: relation "nope" does not exist$', 'diff: a reading an unknown table');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('TABLE bi; TABLE bi', 'TABLE bi', '{id}')$$, '42601', '^(query )?a must be a single query', 'diff: a of two statements');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('TABLE bi', 'TABLE bi; DROP TABLE bi', '{id}')$$, '42601', '^(query )?b must be a single query', 'diff: b "TABLE bi; DROP TABLE bi" (bi still there)');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('DELETE FROM bi RETURNING *', 'TABLE bi', '{id}')$$, '42809', '^(query )?a must be a SELECT, VALUES or TABLE query$', 'diff: a DELETE as a');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('TABLE bi', 'DELETE FROM bi RETURNING *', '{id}')$$, '42809', '^(query )?b must be a SELECT, VALUES or TABLE query$', 'diff: a DELETE as b');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('TABLE bi', 'UPDATE bi SET v = ''x'' RETURNING *', '{id}')$$, '42809', '^(query )?b must be a SELECT', 'diff: an UPDATE as b');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('INSERT INTO bi SELECT * FROM bi RETURNING *', 'TABLE bi', '{id}')$$, '42809', '^(query )?a must be a SELECT', 'diff: an INSERT as a');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('TABLE bi', 'SELECT * INTO bi_copy FROM bi', '{id}')$$, '42809', '^(query )?b must be a SELECT', 'diff: SELECT INTO as b');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('TABLE bi', 'WITH x AS (DELETE FROM bi RETURNING *) SELECT * FROM x', '{id}')$$, '42809', 'query b', 'diff: a DELETE in a WITH of b is refused naming query b');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('TABLE bi', 'SELECT * FROM bi FOR UPDATE', '{id}')$$, '42809', '^query b must only read$', 'diff: b locking rows');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('TABLE bi', 'TABLE bi', '{nope}')$$, '42703', '^key column "nope" is not a column of query a$', 'diff: unknown key column');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('TABLE bi', 'SELECT v, d FROM bi', '{id}')$$, '42703', '^key column "id" is not a column of query b$', 'diff: key column missing from b only');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('TABLE bi', 'TABLE bi', '{}')$$, '22023', '^key must name at least one column$', 'diff: empty key array');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('TABLE bi', 'TABLE bi', ARRAY[NULL, 'id'])$$, '22004', '^key must not contain NULL$', 'diff: NULL element in key');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('TABLE bi', 'TABLE bi', '{id,id}')$$, '42701', '^key names column "id" more than once$', 'diff: duplicate key names');
SELECT pg_temp.refuses($$SELECT * FROM backfill_diff('SELECT id, v AS id FROM bi', 'TABLE bi', '{id}')$$, '42701', 'query a returns column "id" more than once', 'diff: a query with two columns of one name');

-- ============================================================ backfill_reconcile(target, source, measures, tolerance, raise)
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile(NULL, 'TABLE bi', '{count(*)}')$$, '22004', '^target must not be NULL$', 'reconcile: target NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', NULL, '{count(*)}')$$, '22004', '^source must not be NULL$', 'reconcile: source NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', NULL)$$, '22004', '^measures must not be NULL$', 'reconcile: measures NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', '{count(*)}', NULL)$$, '22004', '^tolerance must not be NULL$', 'reconcile: tolerance NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', '{count(*)}', 0, NULL)$$, '22004', '^raise must not be NULL$', 'reconcile: raise NULL');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('', 'TABLE bi', '{count(*)}')$$, '22023', '^target must not be empty$', 'reconcile: target empty');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', '', '{count(*)}')$$, '22023', '^source must not be empty$', 'reconcile: source empty');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('SELEC 1', 'TABLE bi', '{count(*)}')$$, '42601', '^invalid target: syntax error', 'reconcile: target with a syntax error');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'SELECT FROM WHERE', '{count(*)}')$$, '42601', '^invalid source: syntax error', 'reconcile: source with a syntax error');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE nope', 'TABLE bi', '{count(*)}')$$, '42P01', '^invalid target: relation "nope" does not exist$', 'reconcile: target reading an unknown table');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi; TABLE bi', 'TABLE bi', '{count(*)}')$$, '42601', '^target must be a single query', 'reconcile: target of two statements');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi; DROP TABLE bi', '{count(*)}')$$, '42601', '^source must be a single query', 'reconcile: source "TABLE bi; DROP TABLE bi" (bi still there)');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('DELETE FROM bi RETURNING *', 'TABLE bi', '{count(*)}')$$, '42809', '^target must be a SELECT, VALUES or TABLE query$', 'reconcile: a DELETE as target');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'DELETE FROM bi RETURNING *', '{count(*)}')$$, '42809', '^source must be a SELECT, VALUES or TABLE query$', 'reconcile: a DELETE as source');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'WITH x AS (DELETE FROM bi RETURNING *) SELECT * FROM x', '{count(*)}')$$, '42809', 'source', 'reconcile: a DELETE in a WITH of source is refused as a DML query naming source');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', '{}')$$, '22023', '^measures must hold at least one aggregate expression$', 'reconcile: empty measures');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', ARRAY['count(*)', NULL])$$, '22004', '^measures must not contain NULL$', 'reconcile: NULL element in measures');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', '{{count(*)},{sum(r)}}')$$, '2202E', '^measures must be a one-dimensional array$', 'reconcile: two-dimensional measures');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', ARRAY[''])$$, '22023', '^measures\[1\] must not be empty$', 'reconcile: empty measure');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', ARRAY['sum('])$$, '42601', '^invalid measures\[1\]: syntax error', 'reconcile: measure with a syntax error');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', ARRAY['sum(nope)'])$$, '42703', '^invalid measure "sum\(nope\)" over target: column "nope" does not exist$', 'reconcile: measure over an unknown column');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'SELECT id FROM bi', ARRAY['sum(r)'])$$, '42703', '^invalid measure "sum\(r\)" over source: column "r" does not exist$', 'reconcile: measure over a column only the target has');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', ARRAY['count(*)', 'r'])$$, '42803', '^measure "r" is not an aggregate$', 'reconcile: measure that is not an aggregate');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', ARRAY['42'])$$, '42803', '^measure "42" is not an aggregate$', 'reconcile: constant measure');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', ARRAY['count(*) OVER ()'])$$, '42803', '^measure "count\(\*\) OVER \(\)" is not an aggregate$', 'reconcile: window function as measure');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', ARRAY['sum(r) + r'])$$, '42803', 'measure', 'reconcile: measure mixing an aggregate and a column');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', ARRAY['min(d)'])$$, '42846|42804', 'measure', 'reconcile: measure returning a date');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', ARRAY['bool_and(id > 0)'])$$, '42846|42804', 'measure', 'reconcile: measure returning a boolean');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', ARRAY['max(v)'])$$, '42846|42804', 'measure|max\(v\)', 'reconcile: measure returning text is refused naming the measure');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', ARRAY['max(code)'])$$, '42846|42804', 'measure|max\(code\)', 'reconcile: measure returning text that looks numeric is refused too');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', '{count(*)}', -1)$$, '22023', '^tolerance must be zero or positive, not -1$', 'reconcile: negative tolerance');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', '{count(*)}', -0.0001)$$, '22023', '^tolerance must be zero or positive', 'reconcile: slightly negative tolerance');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', '{count(*)}', 'NaN')$$, '22023', '^tolerance must be zero or positive, not NaN$', 'reconcile: NaN tolerance');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', ARRAY['sum(r); DROP TABLE bi'])$$, '42601', '^invalid measures\[1\]: ', 'reconcile: injection "sum(r); DROP TABLE bi" (bi still there)');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', ARRAY['sum(r)) FROM bi --'])$$, '42601', '^invalid measures\[1\]: ', 'reconcile: injection closing the measure and commenting out the rest');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi', 'TABLE bi', ARRAY['count(*)) FROM pg_class WHERE (true'])$$, '42601', '^measures\[1\] must be a single SQL expression$', 'reconcile: balanced injection adding a FROM');
SELECT pg_temp.refuses($$SELECT * FROM backfill_reconcile('TABLE bi) AS x; DROP TABLE bi; --', 'TABLE bi', '{count(*)}')$$, '42601', '^invalid target: ', 'reconcile: injection through target');

-- ============================================================ names that need quoting
-- names(table, key column, value column): every function works on such a table and column.
CREATE FUNCTION pg_temp.names(tname text, kname text, vname text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	t regclass;
	cp regclass;
	cname text := 'copy ' || md5(tname);
BEGIN
	EXECUTE format('CREATE TABLE %I (%I int, %I numeric)', tname, kname, vname);
	EXECUTE format('INSERT INTO %I SELECT g, g * 2 FROM generate_series(1, 50) g', tname);
	EXECUTE format('CREATE TABLE %I AS SELECT * FROM %I', cname, tname);
	EXECUTE format('UPDATE %I SET %I = 0 WHERE %I = 7', cname, vname, kname);
	t := format('%I', tname)::regclass;
	cp := format('%I', cname)::regclass;

	RETURN NEXT ok((SELECT relname = tname FROM pg_class WHERE oid = t)
	               AND (SELECT count(*) = 2 FROM pg_attribute WHERE attrelid = t AND attname IN (kname, vname))
	               AND (backfill_fingerprint(t)).rows = 50
	               AND (backfill_fingerprint(t, format('%I > 40', kname))).rows = 10,
	               format('fingerprint of table %s, scope over column %s', tname, kname));
	RETURN NEXT is(backfill_assert_unique(t, ARRAY[kname], format('%I <= 30', kname)), 30::bigint,
	               format('assert_unique on table %s, key column %s', tname, kname));
	RETURN NEXT is((SELECT array_agg(change || ' ' || key::text)
	                FROM backfill_diff(format('TABLE %I', tname), format('SELECT %I, %I FROM %I', vname, kname, cname), ARRAY[kname])),
	               ARRAY['changed ' || jsonb_build_object(kname, 7)::text],
	               format('diff of table %s on key column %s', tname, kname));
	RETURN NEXT is((SELECT array_agg(format('%s %s %s %s', measure, target_value, source_value, ok))
	                FROM backfill_reconcile(format('TABLE %I', tname), format('TABLE %I', cname),
	                                        ARRAY[format('sum(%I)', vname), format('count(DISTINCT %I)', kname)], 0, false)),
	               ARRAY[format('sum(%I) 2550 2536 f', vname), format('count(DISTINCT %I) 50 50 t', kname)],
	               format('reconcile of table %s on columns %s and %s', tname, kname, vname));
END $$;

-- big inputs: 10 million rows on each side
SELECT is((SELECT string_agg(measure || '=' || ok, ',' ORDER BY measure) FROM backfill_reconcile(
			'SELECT g FROM generate_series(1, 10000000) g', 'SELECT g FROM generate_series(1, 10000000) g', '{count(*),sum(g)}')),
		  'count(*)=true,sum(g)=true', 'reconcile: 10 million rows a side, in constant memory');

SELECT * FROM pg_temp.names('Orders By Day', 'Order ID', 'Amount EUR');
SELECT * FROM pg_temp.names('quote"d ''table''', 'key"col', 'val''col');
SELECT * FROM pg_temp.names('semi; DROP TABLE bi; --', 'k; DROP TABLE bi', 'v) FROM bi; --');
SELECT * FROM pg_temp.names('Zählerstände ✓', 'Schlüssel', 'Menge €');
SELECT * FROM pg_temp.names('t' || repeat('x', 62), 'k' || repeat('y', 62), 'v' || repeat('z', 62));
SELECT * FROM pg_temp.names(repeat('é', 31) || 'x', repeat('ü', 31) || 'k', repeat('ö', 31) || 'v');

SELECT is((SELECT array_agg(octet_length(relname) ORDER BY relname COLLATE "C") FROM pg_class
           WHERE relname IN ('t' || repeat('x', 62), repeat('é', 31) || 'x')),
          ARRAY[63, 63], 'premise: the 63-byte table names were kept whole');
INSERT INTO "Orders By Day" VALUES (3, 0);
CREATE FUNCTION pg_temp.error_detail(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	d text;
BEGIN
	EXECUTE sql;
	RETURN '(no error)';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
	RETURN d;
END $$;
SELECT is(
	pg_temp.error_detail($$SELECT backfill_assert_unique('"Orders By Day"', ARRAY['Order ID'], '"Order ID" BETWEEN 3 AND 5')$$),
	'1 key value appears more than once, for example ("Order ID")=(3) 2 times.',
	'errdetail quotes a key column name that needs quoting');

SELECT * FROM finish();
ROLLBACK;
