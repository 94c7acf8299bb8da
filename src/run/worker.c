/*-------------------------------------------------------------------------
 *
 * src/run/worker.c
 *		The session working a run: a lock that says it is alive, its
 *		heartbeat, and what it is doing, as pg_stat_activity shows it.
 *
 * A CALL of backfill_run holds its run's worker lock (an advisory lock in
 * SHARE mode, at session level) from its start to its end, and writes its
 * pid and a heartbeat into the run's row at its start, after each task and
 * at most once a second while it waits.  The lock goes with the session: a
 * backend that is killed, or whose connection is lost, holds it no more.
 * So a run whose row says running and names a worker, and whose lock
 * nobody holds, has lost its worker: backfill_progress says it is
 * orphaned.  A call that ends of its own clears the pid, unless another
 * session still works the run.
 *
 * What the worker does (a task, a wait, the end of the run) replaces the
 * CALL's text in pg_stat_activity.query, where a DBA looks first and
 * backfill_progress.activity shows it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/lock.h"
#include "utils/backend_status.h"
#include "utils/timestamp.h"

#include "base/extension.h"
#include "base/spi_util.h"
#include "run/worker.h"

/* the heartbeat written last by this session (rate-limited while waiting) */
static TimestampTz last_beat = 0;

static void
WorkerTag(LOCKTAG *tag, int64 runid)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, (uint32) runid, (uint32) ((uint64) runid >> 32),
						 BACKFILL_RUN_WORKER_LOCK);
}

/* Write this session's pid and the heartbeat into the run's row. */
static void
WriteWorker(BackfillRun *run)
{
	Oid			types[2] = {INT8OID, INT4OID};
	Datum		values[2] = {Int64GetDatum(run->id), Int32GetDatum(MyProcPid)};

	/* a sign of life lost in a crash is no loss: its commit is not waited for on disk */
	BackfillCommitUnawaited();
	(void) BackfillStateExec(run->extschema,
							 psprintf("UPDATE %s SET worker_pid = $2, heartbeat = pg_catalog.clock_timestamp()"
									  " WHERE id OPERATOR(pg_catalog.=) $1",
									  BackfillExtName(run->extschema, "backfill_runs_data")),
							 2, types, values, NULL, 0);
	last_beat = GetCurrentTimestamp();
}

/* The call takes the run's worker lock, for the session: BackfillWorkerLeave releases it. */
void
BackfillWorkerLock(int64 runid)
{
	LOCKTAG		tag;

	WorkerTag(&tag, runid);
	(void) LockAcquire(&tag, ShareLock, true, false);
}

/* The call starts working the run: its pid and heartbeat in the run's row. */
void
BackfillWorkerEnter(BackfillRun *run)
{
	WriteWorker(run);
}

/* The call ends, however: its lock goes.  No SQL: safe while an error is raised. */
void
BackfillWorkerLeave(int64 runid)
{
	LOCKTAG		tag;

	WorkerTag(&tag, runid);
	(void) LockRelease(&tag, ShareLock, true);
}

/*
 * A sign of life: after a task (now), or while waiting, at most once a
 * second.  In the caller's transaction.
 */
void
BackfillWorkerHeartbeat(BackfillRun *run, bool now)
{
	if (!now && !TimestampDifferenceExceeds(last_beat, GetCurrentTimestamp(), 1000))
		return;
	WriteWorker(run);
}

/*
 * The call ends of its own (done, paused, enough tasks, an error it
 * raises): its lock goes, then the run's row names another session that
 * still works the run, or none.  The row is locked first, so that of two
 * workers ending at once the second looks at pg_locks after the first has
 * committed: never does the row name a worker that is gone while none is
 * left.
 */
void
BackfillWorkerEnd(BackfillRun *run)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(run->id)};
	const char *runs = BackfillExtName(run->extschema, "backfill_runs_data");

	BackfillWorkerLeave(run->id);
	BackfillCommitUnawaited();
	(void) BackfillStateExec(run->extschema,
							 psprintf("SELECT 1 FROM %s WHERE id OPERATOR(pg_catalog.=) $1 FOR UPDATE", runs),
							 1, types, values, NULL, 0);
	(void) BackfillStateExec(run->extschema,
							 psprintf("UPDATE %s SET heartbeat = pg_catalog.clock_timestamp(),"
									  " worker_pid = (SELECT pg_catalog.min(l.pid) FROM pg_catalog.pg_locks l"
									  "   WHERE l.locktype OPERATOR(pg_catalog.=) 'advisory' AND l.granted"
									  "   AND l.database OPERATOR(pg_catalog.=) %u"
									  "   AND l.classid OPERATOR(pg_catalog.=) %u::pg_catalog.oid"
									  "   AND l.objid OPERATOR(pg_catalog.=) %u::pg_catalog.oid"
									  "   AND l.objsubid OPERATOR(pg_catalog.=) %d)"
									  " WHERE id OPERATOR(pg_catalog.=) $1", runs, MyDatabaseId,
									  (uint32) run->id, (uint32) ((uint64) run->id >> 32), BACKFILL_RUN_WORKER_LOCK),
							 1, types, values, NULL, 0);
}

/* What the worker does now, in pg_stat_activity (BackfillRunActivity). */
void
BackfillWorkerActivity(int64 runid, const char *fmt,...)
{
	char		what[512];
	va_list		args;

	va_start(args, fmt);
	vsnprintf(what, sizeof(what), fmt, args);
	va_end(args);
	BackfillRunActivity(runid, what);
}
