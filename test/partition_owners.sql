-- test/partition_owners.sql: partitions owned by another role than their parent.
--
-- pg_partman creates a partition as the role that runs its maintenance, so unless
-- inherit_privileges is set, the parent's owner does not own every partition.  A call that
-- would replace such a partition (or change the DEFAULT partition of such a role) is refused
-- up front with 42501 naming the partition, its owner and what to grant, before any lock or
-- write; a plan over a range that leaves that partition out needs no right on it: the
-- untouched check (check_untouched 'full') reads it through the parent, under the parent's row-level security, and
-- finds exactly the partition's rows (and a reader under the parent's row-level security would
-- see only what a query on the parent shows it).
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(13);

CREATE ROLE regress_po_mart;
CREATE ROLE regress_po_maint;
CREATE ROLE regress_po_reader;
GRANT USAGE, CREATE ON SCHEMA public TO regress_po_mart, regress_po_maint;
GRANT USAGE ON SCHEMA public TO regress_po_reader;
CREATE TABLE po_sales (id int NOT NULL, day date NOT NULL, amount numeric) PARTITION BY RANGE (day);
CREATE TABLE po_sales_01 PARTITION OF po_sales FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
CREATE TABLE po_sales_02 PARTITION OF po_sales FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');
CREATE TABLE po_sales_03 PARTITION OF po_sales FOR VALUES FROM ('2026-03-01') TO ('2026-04-01');
INSERT INTO po_sales SELECT g, date '2026-01-01' + (g % 90), g FROM generate_series(1, 900) g;
CREATE TABLE po_model AS SELECT id, day, amount * 2 AS amount FROM po_sales;
ALTER TABLE po_sales OWNER TO regress_po_mart;
ALTER TABLE po_sales_01 OWNER TO regress_po_mart;
ALTER TABLE po_sales_02 OWNER TO regress_po_mart;
ALTER TABLE po_model OWNER TO regress_po_mart;
-- the partition pg_partman's maintenance role created, no grant to the parent's owner
ALTER TABLE po_sales_03 OWNER TO regress_po_maint;
REVOKE ALL ON po_sales_03 FROM regress_po_mart;
-- a reader allowed on the parent, where a policy shows it only even ids
GRANT SELECT ON po_sales TO regress_po_reader;
ALTER TABLE po_sales ENABLE ROW LEVEL SECURITY;
CREATE POLICY po_even ON po_sales FOR SELECT TO regress_po_reader USING (id % 2 = 0);

CREATE FUNCTION pg_temp.state() RETURNS text LANGUAGE sql AS $$
	SELECT concat_ws(' | ',
		(SELECT string_agg(format('%s=%s', c.relname, (backfill_fingerprint(c.oid)).hash), ',' ORDER BY c.relname)
		 FROM pg_class c WHERE c.relname LIKE 'po\_sales\_%' AND c.relkind = 'r'),
		(SELECT count(*) FROM backfill_runs), (SELECT count(*) FROM backfill_log))
$$;
\ir lib/refuses.psql
CREATE FUNCTION pg_temp.hint_of(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE h text;
BEGIN
	EXECUTE sql;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS h = PG_EXCEPTION_HINT;
	RETURN h;
END $$;

-- 1. replacing the other role's partition: refused up front, with what to grant
SELECT pg_temp.refuses(
	$$SELECT backfill_replace_partition('po_sales_03', 'SELECT * FROM po_model WHERE day >= $1 AND day < $2')$$,
	'42501', '^must be a member of role regress_po_maint, the owner of partition public\.po_sales_03, to replace partition public\.po_sales_03$',
	'replace: a partition owned by another role is refused, naming it and its owner', 'regress_po_mart');
SET LOCAL ROLE regress_po_mart;
SELECT is(pg_temp.hint_of($$SELECT backfill_replace_partition('po_sales_03', 'SELECT * FROM po_model WHERE day >= $1 AND day < $2')$$),
		  'GRANT regress_po_maint TO regress_po_mart, or ALTER TABLE public.po_sales_03 OWNER TO regress_po_mart. pg_partman gives new partitions the parent''s owner when inherit_privileges is set in partman.part_config.',
		  'replace: the hint says what to grant');
RESET ROLE;

-- 2. a plan whose range includes it: refused the same way, at plan time
SELECT pg_temp.refuses(
	$$SELECT backfill_plan('po_sales', '2026-02-01', '2026-04-01', 'SELECT * FROM po_model WHERE day >= $1 AND day < $2')$$,
	'42501', '^must be a member of role regress_po_maint, the owner of partition public\.po_sales_03, to replace partition public\.po_sales_03$',
	'plan: a range including a partition of another role is refused at plan time', 'regress_po_mart');

-- 3. a plan whose range leaves it out: the untouched check reads it through the parent,
--    which the parent's owner may read, not the partition, which it may not
SET LOCAL ROLE regress_po_mart;
SELECT throws_ok('SELECT count(*) FROM po_sales_03', '42501', NULL, 'the parent''s owner may not read the partition itself');
SELECT lives_ok($$SELECT backfill_plan('po_sales', '2026-01-01', '2026-03-01', 'SELECT * FROM po_model WHERE day >= $1 AND day < $2',
	options => '{"check_untouched": "full"}')$$,
				'plan: a range leaving out a partition of another role needs no right on it');
RESET ROLE;
SELECT is((SELECT u->>'rows' FROM backfill_runs, jsonb_array_elements(untouched) u
		   WHERE u->>'partition' = 'public.po_sales_03' ORDER BY id DESC LIMIT 1),
		  (SELECT count(*)::text FROM po_sales_03), 'plan: the untouched partition''s rows, counted through the parent');
SELECT is((SELECT u->>'fingerprint' FROM backfill_runs, jsonb_array_elements(untouched) u
		   WHERE u->>'partition' = 'public.po_sales_03' ORDER BY id DESC LIMIT 1),
		  (backfill_fingerprint('po_sales_03')).hash, 'plan: its fingerprint through the parent is the partition''s own');

-- 4. the run does it and checks the untouched partition again, as the parent's owner
SET LOCAL ROLE regress_po_mart;
SELECT lives_ok($$SELECT backfill_replace_partition('po_sales_01', 'SELECT * FROM po_model WHERE day >= $1 AND day < $2')$$,
				'replace: the parent owner''s own partition is replaced');
RESET ROLE;
SELECT is((SELECT sum(amount) FROM po_sales_01), (SELECT sum(amount) FROM po_model WHERE day < '2026-02-01'),
		  'replace: with the new rows');

-- 5. the DEFAULT partition, whose constraint a swap changes, owned by the other role
CREATE TABLE po_sales_default PARTITION OF po_sales DEFAULT;
ALTER TABLE po_sales_default OWNER TO regress_po_maint;
SELECT pg_temp.refuses(
	$$SELECT backfill_replace_partition('po_sales_02', 'SELECT * FROM po_model WHERE day >= $1 AND day < $2')$$,
	'42501', '^must be a member of role regress_po_maint, the owner of the DEFAULT partition public\.po_sales_default, to replace partition public\.po_sales_02$',
	'replace: a DEFAULT partition owned by another role is refused up front', 'regress_po_mart');
DROP TABLE po_sales_default;

-- 6. the same plan under a policy forced on the parent's owner: the untouched check reads
--    the partition by a query on the parent, which shows the owner only what the policy does
CREATE FUNCTION pg_temp.untouched_03() RETURNS text LANGUAGE sql AS $$
	SELECT u->>'rows' || ' ' || (u->>'fingerprint') FROM backfill_runs, jsonb_array_elements(untouched) u
	WHERE u->>'partition' = 'public.po_sales_03' ORDER BY id DESC LIMIT 1
$$;
CREATE POLICY po_mart_odd ON po_sales FOR SELECT TO regress_po_mart USING (id % 2 = 1);
ALTER TABLE po_sales FORCE ROW LEVEL SECURITY;
SET LOCAL ROLE regress_po_mart;
SELECT lives_ok($$SELECT backfill_plan('po_sales', '2026-01-01', '2026-03-01', 'SELECT * FROM po_model WHERE day >= $1 AND day < $2',
	options => '{"check_untouched": "full"}')$$,
				'plan: under a policy forced on the parent''s owner');
RESET ROLE;
CREATE TEMP TABLE po_odd_03 AS SELECT * FROM po_sales_03 WHERE id % 2 = 1;
SELECT is(pg_temp.untouched_03(), (SELECT count(*) || ' ' || (backfill_fingerprint('po_odd_03')).hash FROM po_odd_03),
		  'plan: ... the untouched partition''s rows are those the policy shows, and their fingerprint');
SELECT cmp_ok((SELECT count(*) FROM po_odd_03), '<', (SELECT count(*) FROM po_sales_03),
			  'premise: the policy hides some of the partition''s rows');
ALTER TABLE po_sales NO FORCE ROW LEVEL SECURITY;

SELECT * FROM finish();
ROLLBACK;
