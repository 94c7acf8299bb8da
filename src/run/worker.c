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
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "base/extension.h"
#include "run/worker.h"

/* the heartbeat written last by this session (rate-limited while waiting) */
static TimestampTz last_beat = 0;

static void
WorkerTag(LOCKTAG *tag, int64 runid)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, (uint32) runid, (uint32) ((uint64) runid >> 32),
						 BACKFILL_RUN_WORKER_LOCK);
}

/* Write the pid (NULL: clear it) and the heartbeat into the run's row. */
static void
WriteWorker(BackfillRun *run, bool clear)
{
	Oid			types[2] = {INT8OID, INT4OID};
	Datum		values[2] = {Int64GetDatum(run->id), Int32GetDatum(MyProcPid)};

	/* a sign of life lost in a crash is no loss: its commit is not waited for on disk */
	(void) set_config_option("synchronous_commit", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_LOCAL, true, 0, false);
	(void) BackfillStateExec(run->extschema,
							 psprintf("UPDATE %s SET worker_pid = %s, heartbeat = pg_catalog.clock_timestamp()"
									  " WHERE id OPERATOR(pg_catalog.=) $1",
									  BackfillExtName(run->extschema, "backfill_runs_data"),
									  clear ? "NULL::pg_catalog.int4" : "$2"),
							 2, types, values, NULL, 0);
	last_beat = GetCurrentTimestamp();
}

/*
 * The call starts working the run: its lock, and its pid and heartbeat in
 * the run's row (committed with the call's start).
 */
void
BackfillWorkerEnter(BackfillRun *run)
{
	LOCKTAG		tag;

	WorkerTag(&tag, run->id);
	(void) LockAcquire(&tag, ShareLock, true, false);
	WriteWorker(run, false);
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
	WriteWorker(run, false);
}

/*
 * The call ends of its own (done, paused, enough tasks, an error it
 * raises): the pid is cleared unless another session still works the run.
 * A session holding the lock in SHARE mode stops an EXCLUSIVE request of
 * another; this session's own SHARE lock does not.
 */
void
BackfillWorkerEnd(BackfillRun *run)
{
	LOCKTAG		tag;
	bool		alone;

	WorkerTag(&tag, run->id);
	alone = LockAcquire(&tag, ExclusiveLock, true, true) != LOCKACQUIRE_NOT_AVAIL;
	if (alone)
		(void) LockRelease(&tag, ExclusiveLock, true);
	WriteWorker(run, alone);
}

/*
 * What the worker does now, in pg_stat_activity.query after the CALL's own
 * words, as: CALL backfill_run(12) -- task 5 (public.fct_20260311).
 */
void
BackfillWorkerActivity(int64 runid, const char *fmt,...)
{
	char		what[512];
	va_list		args;

	va_start(args, fmt);
	vsnprintf(what, sizeof(what), fmt, args);
	va_end(args);
	/* pg_stat_activity shows it, nothing runs it */
	pgstat_report_activity(STATE_RUNNING,
						   psprintf("CALL backfill_run(" INT64_FORMAT ") -- %s", runid, what));
}
