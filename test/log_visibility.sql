-- test/log_visibility.sql: what backfill_log, backfill_runs, backfill_tasks, backfill_progress
-- and backfill_dry_run show to whom.
--
-- 1. Row-level security: a role whose policy shows it some rows of a table sees the records,
--    runs and tasks of that table, but the counts, fingerprints, details, measures and errors
--    computed over its rows are NULL to it; its owner sees them.  Decided when read: a policy
--    added after the record hides its values from then on.
-- 2. Names reused: after the owner renames a table and another role creates one under the old
--    name, that role sees no record or run of the old table and can act on none of them
--    (pause, resume, cancel, retry, run, dry-run, schedule, undo); the owner still sees them.
-- 3. The dry run shows what it computes over the rows only to a role that sees them all.
BEGIN;
SET LOCAL client_min_messages = warning;
SELECT plan(32);

CREATE ROLE regress_lv_owner;
CREATE ROLE regress_lv_reader;
CREATE ROLE regress_lv_squatter;
GRANT CREATE ON SCHEMA public TO regress_lv_owner, regress_lv_squatter;

SET ROLE regress_lv_owner;
CREATE TABLE lv (id int NOT NULL, day date NOT NULL, grp int, secret text) PARTITION BY RANGE (day);
CREATE TABLE lv_1 PARTITION OF lv FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
CREATE TABLE lv_2 PARTITION OF lv FOR VALUES FROM ('2026-03-02') TO ('2026-03-03');
INSERT INTO lv SELECT g, date '2026-03-01' + g % 2, g % 4, 'hidden ' || g FROM generate_series(1, 40) g;
CREATE TABLE lv_src AS SELECT id, day, grp, secret || ' v2' AS secret FROM lv;
ALTER TABLE lv ENABLE ROW LEVEL SECURITY;
CREATE POLICY regress_lv_grp1 ON lv FOR SELECT TO regress_lv_reader USING (grp = 1);
GRANT SELECT ON lv TO regress_lv_reader;
-- a table without row security, read in full by the reader
CREATE TABLE lv_open (id int, v text);
INSERT INTO lv_open SELECT g, 'v' || g FROM generate_series(1, 10) g;
CREATE TABLE lv_open_src AS SELECT id, v || '!' AS v FROM lv_open;
GRANT SELECT ON lv_open TO regress_lv_reader;

-- the owner replaces a partition, merges into the open table, plans and runs a run
CREATE TEMP TABLE lv_ids (what text, id bigint);
INSERT INTO lv_ids SELECT 'replace', (backfill_replace_partition('lv_1',
	'SELECT * FROM public.lv_src WHERE day >= $1 AND day < $2', keep_old => true)).log_id;
INSERT INTO lv_ids SELECT 'merge', (backfill_merge('lv_open', 'TABLE public.lv_open_src', '{id}')).log_id;
INSERT INTO lv_ids SELECT 'run', backfill_plan('lv', '2026-03-02', '2026-03-03',
	'SELECT * FROM public.lv_src WHERE day >= $1 AND day < $2', options => '{"reconcile": ["pg_catalog.count(*)"]}');
GRANT SELECT ON lv_ids TO PUBLIC;
RESET ROLE;
-- a task done as CALL backfill_run would record it (CALL cannot run inside this transaction)
UPDATE backfill_tasks_data SET status = 'done', rows_before = 20, rows_after = 20, fingerprint_before = 'fb',
	fingerprint_after = 'fa', reconcile = '{"count": 20}', error = 'Key (id)=(2) is hidden', seconds = 0.1
WHERE run_id = (SELECT id FROM lv_ids WHERE what = 'run');
UPDATE backfill_runs_data SET status = 'running', started_at = now(), error = 'row (2, hidden 2)',
	untouched_after = '[{"partition": "public.lv_1", "fingerprint": "x", "same": false, "logged_as": null}]'
WHERE id = (SELECT id FROM lv_ids WHERE what = 'run');

-- ============================================================ 1. row-level security
SET ROLE regress_lv_owner;
SELECT is((SELECT row(rows_before, rows_after, fingerprint_before IS NOT NULL, fingerprint_after IS NOT NULL,
                      details ? 'archived_as')::text
           FROM backfill_log WHERE id = (SELECT id FROM lv_ids WHERE what = 'replace')),
          '(20,20,t,t,t)', 'owner: the replacement''s record shows counts, fingerprints and details');
SELECT is((SELECT row(r.untouched IS NOT NULL, r.error, t.rows_after, t.fingerprint_after, t.reconcile, t.error)::text
           FROM backfill_runs r JOIN backfill_tasks t ON t.run_id = r.id
           WHERE r.id = (SELECT id FROM lv_ids WHERE what = 'run')),
          '(t,"row (2, hidden 2)",20,fa,"{""count"": 20}","Key (id)=(2) is hidden")',
          'owner: the run and its task show their values');
SELECT is((SELECT row(rows_written, untouched_changed)::text FROM backfill_progress
           WHERE run_id = (SELECT id FROM lv_ids WHERE what = 'run')),
          '(20,1)', 'owner: backfill_progress shows rows written and changes outside the range');

SET ROLE regress_lv_reader;
SELECT is((SELECT count(*) FROM lv), 10::bigint, 'premise: the reader sees 10 of the 40 rows');
SELECT is((SELECT row(operation, target, partition, rows_before, rows_after, fingerprint_before, fingerprint_after, details)::text
           FROM backfill_log WHERE id = (SELECT id FROM lv_ids WHERE what = 'replace')),
          '(replace,public.lv,public.lv_1,,,,,)',
          'reader under row security: the record is there, its counts, fingerprints and details are NULL');
SELECT is((SELECT row(r.target, r.untouched, r.untouched_after, r.error, r.refreshed)::text
           FROM backfill_runs r WHERE r.id = (SELECT id FROM lv_ids WHERE what = 'run')),
          '(public.lv,,,,)', 'reader under row security: the run is there, its fingerprints and error NULL');
SELECT is((SELECT row(t.status, t.rows_before, t.rows_after, t.fingerprint_before, t.fingerprint_after, t.reconcile, t.error)::text
           FROM backfill_tasks t WHERE t.run_id = (SELECT id FROM lv_ids WHERE what = 'run')),
          '(done,,,,,,)', 'reader under row security: the task''s counts, fingerprints, measures and error are NULL');
SELECT is((SELECT row(status, tasks_done, rows_written, untouched_changed, error)::text FROM backfill_progress
           WHERE run_id = (SELECT id FROM lv_ids WHERE what = 'run')),
          '(running,1,,,)', 'reader under row security: backfill_progress shows no rows written, changes or error');
-- guessing: no fingerprint of any guess can match a NULL
SELECT is((SELECT count(*) FROM backfill_log l WHERE l.target = 'public.lv'
           AND (l.fingerprint_before IS NOT NULL OR l.fingerprint_after IS NOT NULL OR l.rows_before IS NOT NULL)),
          0::bigint, 'reader under row security: no record of the table carries a count or a fingerprint');
SELECT is((SELECT row(rows_before, rows_after, fingerprint_after IS NOT NULL)::text
           FROM backfill_log WHERE id = (SELECT id FROM lv_ids WHERE what = 'merge')),
          '(10,10,t)', 'reader of a table without row security: the merge''s record shows its values');
SELECT is(backfill_may_see_rows('lv'::regclass), false, 'backfill_may_see_rows: false under row security');
SELECT is(backfill_may_see_rows('lv_open'::regclass), true, 'backfill_may_see_rows: true without it');
RESET ROLE;

-- decided when read: row security enabled after the record hides its values from then on
ALTER TABLE lv_open ENABLE ROW LEVEL SECURITY;
CREATE POLICY regress_lv_all ON lv_open FOR SELECT TO regress_lv_reader USING (true);
SET ROLE regress_lv_reader;
SELECT is((SELECT row(rows_before, rows_after, fingerprint_after)::text
           FROM backfill_log WHERE id = (SELECT id FROM lv_ids WHERE what = 'merge')),
          '(,,)', 'row security enabled after the record: its values are NULL to the reader now');
RESET ROLE;
-- FORCE ROW LEVEL SECURITY binds the owner too
ALTER TABLE lv FORCE ROW LEVEL SECURITY;
SET ROLE regress_lv_owner;
SELECT is((SELECT row(rows_before, fingerprint_after)::text
           FROM backfill_log WHERE id = (SELECT id FROM lv_ids WHERE what = 'replace')),
          '(,)', 'owner under FORCE ROW LEVEL SECURITY: the values are NULL to it too');
RESET ROLE;
ALTER TABLE lv NO FORCE ROW LEVEL SECURITY;
SELECT is((SELECT rows_before FROM backfill_log WHERE id = (SELECT id FROM lv_ids WHERE what = 'replace')),
          20::bigint, 'a superuser sees the values');

-- ============================================================ 3. the dry run
-- The partition is read directly, outside the parent's policies: under FORCE the dry run is
-- refused as the replacement would be; for a merge it computes but shows nothing of the rows.
ALTER TABLE lv FORCE ROW LEVEL SECURITY;
SET ROLE regress_lv_owner;
SELECT throws_ok(format('SELECT * FROM backfill_dry_run(%s, 1)', (SELECT id FROM lv_ids WHERE what = 'run')),
                 '0A000', NULL, 'dry run of a replacement under FORCE ROW LEVEL SECURITY: refused like the replacement');
INSERT INTO lv_ids SELECT 'merge run', backfill_plan('lv', '2026-03-02', '2026-03-03',
	'SELECT * FROM public.lv_src WHERE day >= $1 AND day < $2', 'merge', '{id,day}');
SELECT is((SELECT row(rows_before, rows_after, fingerprint_before, fingerprint_after, added, removed, changed, sample, reconcile, reconciled)::text
           FROM backfill_dry_run((SELECT id FROM lv_ids WHERE what = 'merge run'))),
          '(,,,,,,,,,)', 'dry run of a merge under FORCE ROW LEVEL SECURITY: nothing computed over the rows is shown');
RESET ROLE;
ALTER TABLE lv NO FORCE ROW LEVEL SECURITY;
SET ROLE regress_lv_owner;
SELECT is((SELECT row(rows_before, rows_after, changed)::text
           FROM backfill_dry_run((SELECT id FROM lv_ids WHERE what = 'merge run'))),
          '(20,20,20)', 'dry run of the owner, which bypasses row security: values shown');

-- ============================================================ 2. a reused name
ALTER TABLE lv RENAME TO lv_renamed;
RESET ROLE;
SET ROLE regress_lv_squatter;
CREATE TABLE lv (id int NOT NULL, day date NOT NULL, grp int, secret text) PARTITION BY RANGE (day);
CREATE TABLE lv_1_new PARTITION OF lv FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
SELECT is((SELECT count(*) FROM backfill_log WHERE target = 'public.lv'), 0::bigint,
          'squatter of the name: sees no record of the old table');
SELECT is((SELECT count(*) FROM backfill_runs WHERE target = 'public.lv'), 0::bigint,
          'squatter of the name: sees no run of the old table');
SELECT is((SELECT count(*) FROM backfill_tasks), 0::bigint, 'squatter of the name: sees no task');
SELECT is((SELECT count(*) FROM backfill_progress), 0::bigint, 'squatter of the name: sees no progress');
SELECT throws_ok(format('SELECT backfill_pause(%s)', (SELECT id FROM lv_ids WHERE what = 'run')),
                 '22023', NULL, 'squatter: cannot pause the old table''s run');
SELECT throws_ok(format('SELECT backfill_cancel(%s)', (SELECT id FROM lv_ids WHERE what = 'run')),
                 '22023', NULL, 'squatter: cannot cancel it');
SELECT throws_ok(format('SELECT backfill_resume(%s)', (SELECT id FROM lv_ids WHERE what = 'run')),
                 '22023', NULL, 'squatter: cannot resume it');
SELECT throws_ok(format('SELECT backfill_retry(%s, 1)', (SELECT id FROM lv_ids WHERE what = 'run')),
                 '22023', NULL, 'squatter: cannot retry its task');
SELECT throws_ok(format('SELECT backfill_skip(%s, 1, ''gone'')', (SELECT id FROM lv_ids WHERE what = 'run')),
                 '22023', NULL, 'squatter: cannot skip its task');
SELECT throws_ok(format('SELECT * FROM backfill_dry_run(%s)', (SELECT id FROM lv_ids WHERE what = 'run')),
                 '22023', NULL, 'squatter: cannot dry-run it');
SELECT throws_ok(format('SELECT backfill_undo(%s)', (SELECT id FROM lv_ids WHERE what = 'replace')),
                 '22023', NULL, 'squatter: cannot undo the old table''s replacement');
RESET ROLE;
SET ROLE regress_lv_owner;
SELECT is((SELECT string_agg(target || ' ' || target_oid::regclass::text, ', ' ORDER BY id) FROM backfill_log
           WHERE id = (SELECT id FROM lv_ids WHERE what = 'replace')),
          'public.lv lv_renamed', 'owner: the record follows the renamed table (the name kept for display)');
SELECT is((SELECT string_agg(target, ', ') FROM backfill_progress WHERE run_id = (SELECT id FROM lv_ids WHERE what = 'run')),
          'public.lv', 'owner: still sees the run');
SELECT is(backfill_pause((SELECT id FROM lv_ids WHERE what = 'run')), 'paused', 'owner: may still pause its run');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
