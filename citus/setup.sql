-- citus/setup.sql: what the Citus suites share, created once by scripts/run_citus_tests.sh.
CREATE EXTENSION dblink;

-- true once a statement on one of the nodes at these ports waits for a lock, false after 30 s:
-- how a test knows that a session on a worker is held off, without guessing a delay
CREATE FUNCTION public.backfill_test_lock_wait(VARIADIC ports text[]) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1 .. 600 LOOP
		FOR p IN 1 .. array_length(ports, 1) LOOP
			IF (SELECT n > 0 FROM dblink(format('host=127.0.0.1 port=%s dbname=%s', ports[p], current_database()),
					$q$SELECT count(*) FROM pg_locks WHERE NOT granted$q$) AS t(n bigint)) THEN
				RETURN true;
			END IF;
		END LOOP;
		PERFORM pg_sleep(0.05);
	END LOOP;
	RETURN false;
END $$;

-- the plan of query q, as EXPLAIN (FORMAT JSON) gives it: what a test can assert on
CREATE FUNCTION public.backfill_test_plan(q text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	p jsonb;
BEGIN
	EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO p;
	RETURN p;
END $$;
