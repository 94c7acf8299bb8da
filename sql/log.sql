-- backfill_log: readable by everyone, written only by backfill, never changed
SELECT column_name, data_type
FROM information_schema.columns
WHERE table_name = 'backfill_log'
ORDER BY ordinal_position;

-- Everyone reads it (the view); nobody but its owner may write it, or read the table under it.
SELECT has_table_privilege('public', 'backfill_log', 'SELECT') AS public_select,
       has_table_privilege('public', 'backfill_log', 'INSERT') AS public_insert,
       has_table_privilege('public', 'backfill_log', 'UPDATE') AS public_update,
       has_table_privilege('public', 'backfill_log', 'DELETE') AS public_delete,
       has_table_privilege('public', 'backfill_log_data', 'SELECT') AS public_select_data;

CREATE ROLE regress_analyst;
SET ROLE regress_analyst;
SELECT count(*) >= 0 AS can_read FROM backfill_log;
INSERT INTO backfill_log (logged_by, operation, target) VALUES ('regress_analyst', 'replace', 'public.fct');
RESET ROLE;

-- Records are never changed, by the owner either, through the view or in its table.
INSERT INTO backfill_log_data (logged_by, operation, target, rows_before, rows_after)
VALUES (current_user, 'replace', 'public.fct_revenue_20260315', 100, 100);
UPDATE backfill_log SET target = 'public.other';
UPDATE backfill_log_data SET rows_after = 0;
DELETE FROM backfill_log;
DELETE FROM backfill_log_data;
TRUNCATE backfill_log_data;
SELECT operation, target, rows_before, rows_after FROM backfill_log;

-- pg_dump keeps the records: the table is extension configuration.
SELECT c.relname
FROM pg_extension e, unnest(e.extconfig) AS cfg(oid) JOIN pg_class c ON c.oid = cfg.oid
WHERE e.extname = 'backfill'
ORDER BY 1;
DROP ROLE regress_analyst;
