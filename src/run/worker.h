/*-------------------------------------------------------------------------
 *
 * src/run/worker.h
 *		The session working a run: a lock that says it is alive, its
 *		heartbeat, and what it is doing, as pg_stat_activity shows it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_WORKER_H
#define BACKFILL_WORKER_H

#include "postgres.h"

#include "run/runstate.h"

/*
 * locktag_field4 of a run's worker lock: an advisory lock on (database,
 * low 32 bits of the run's id, high 32 bits, this), held in SHARE mode at
 * session level by every CALL working the run.  pg_locks shows it as
 * locktype 'advisory', classid, objid and objsubid.
 */
#define BACKFILL_RUN_WORKER_LOCK 0x4247

extern void BackfillWorkerLock(int64 runid);
extern void BackfillWorkerEnter(BackfillRun *run);
extern void BackfillWorkerLeave(int64 runid);
extern void BackfillWorkerHeartbeat(BackfillRun *run, bool now);
extern void BackfillWorkerEnd(BackfillRun *run);
extern void BackfillWorkerActivity(int64 runid, const char *fmt,...) pg_attribute_printf(2, 3);

#endif							/* BACKFILL_WORKER_H */
