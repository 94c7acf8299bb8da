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

-- The two functions below stay on the coordinator, where the isolation tests connect: Citus
-- would create them on the workers too, where the second would replace PostgreSQL's own.
SET citus.enable_ddl_propagation = off;

-- a statement run through a worker, as a client of that worker would (dblink, autocommit); its
-- connection is named for the calling backend, so that the function below finds it there
CREATE FUNCTION public.backfill_test_on_worker(worker integer, sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	port integer := (SELECT nodeport FROM pg_dist_node WHERE groupid > 0 AND noderole = 'primary'
					 ORDER BY nodeport OFFSET worker - 1 LIMIT 1);
BEGIN
	RETURN dblink_exec(format('host=127.0.0.1 port=%s dbname=%s application_name=backfill_test_%s',
							  port, current_database(), pg_backend_pid()), sql);
END $$;

-- isolationtester knows that a step waits for a lock from pg_isolation_test_session_is_blocked,
-- which looks at this node only; a distributed statement can wait on a worker instead, and so
-- does a step that writes through a worker (backfill_test_on_worker).  As Citus's own isolation
-- tests do, the function is replaced by one that also looks on the workers: a session is
-- blocked when PostgreSQL says so, when Citus's wait graph has it waiting for one of the other
-- sessions of the test (citus_internal.global_blocked_processes, which names the coordinator's
-- backends by global pid), or when the backend it opened on a worker waits for a lock there.
ALTER FUNCTION pg_catalog.pg_isolation_test_session_is_blocked(integer, integer[])
	RENAME TO backfill_local_session_is_blocked;
CREATE FUNCTION pg_catalog.pg_isolation_test_session_is_blocked(pid integer, interesting integer[])
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	node record;
	conn text;
BEGIN
	IF pg_catalog.backfill_local_session_is_blocked(pid, interesting) THEN
		RETURN true;
	END IF;
	IF EXISTS (SELECT FROM citus_internal.global_blocked_processes() b
			   JOIN pg_catalog.get_all_active_transactions() w ON w.global_pid = b.waiting_global_pid
			   JOIN pg_catalog.get_all_active_transactions() o ON o.global_pid = b.blocking_global_pid
			   WHERE w.process_id = $1 AND o.process_id = ANY (interesting)) THEN
		RETURN true;
	END IF;
	IF NOT EXISTS (SELECT FROM pg_stat_activity a WHERE a.pid = $1 AND a.query LIKE '%backfill_test_on_worker%') THEN
		RETURN false;
	END IF;
	FOR node IN SELECT nodeport FROM pg_dist_node WHERE groupid > 0 AND noderole = 'primary' ORDER BY nodeport LOOP
		conn := 'backfill_blocked_' || node.nodeport;
		IF NOT coalesce(conn = ANY (public.dblink_get_connections()), false) THEN
			PERFORM public.dblink_connect(conn, format('host=127.0.0.1 port=%s dbname=%s', node.nodeport, current_database()));
		END IF;
		IF (SELECT waits FROM public.dblink(conn, format(
				$q$SELECT EXISTS (SELECT FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid AND NOT l.granted
								  WHERE a.application_name = 'backfill_test_%s')$q$, pid)) AS t(waits boolean)) THEN
			RETURN true;
		END IF;
	END LOOP;
	RETURN false;
END $$;
RESET citus.enable_ddl_propagation;
