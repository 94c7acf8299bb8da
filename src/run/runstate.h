/*-------------------------------------------------------------------------
 *
 * src/run/runstate.h
 *		A run and its tasks as their rows say: status, rights, pg_cron job.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_RUNSTATE_H
#define BACKFILL_RUNSTATE_H

#include "postgres.h"

#include "fmgr.h"
#include "nodes/pg_list.h"

#include "run/runkinds.h"
#include "run/runoptions.h"

/* The schedule of a pg_cron job its run has parked (BackfillRunPark): 31 February never comes. */
#define BACKFILL_CRON_PARKED "0 0 31 2 *"

/* A run, as its row says. */
typedef struct BackfillRun
{
	int64		id;
	Oid			extschema;
	char	   *target;			/* schema-qualified, quoted */
	Oid			targetoid;		/* resolved from target */
	bool		partitioned;
	BackfillStrategy strategy;	/* backfill_runs_data.strategy */
	char	   *source;
	List	   *key;			/* char *, or NIL */
	char	   *window_column;
	char	   *window_type;	/* qualified type name */
	char	   *range_from;
	char	   *range_to;
	BackfillRunOptions opts;
	char	   *pinned;			/* jsonb text */
	char	   *dependents;		/* jsonb text */
	char	   *untouched;		/* jsonb text */
	char	   *status;			/* as stored: a row from outside may hold any text */
	BackfillRunStatus state;	/* status, BACKFILL_RUN_OTHER when it names none */
	int64		cron_job;		/* 0 when none */
	char	   *planned_by;
	bool		outside;		/* inserted from outside backfill: never run */
} BackfillRun;

/* One task of a run. */
typedef struct BackfillTask
{
	int			task;
	char	   *partition;		/* schema-qualified, or NULL for a chunk */
	char	   *range_from;
	char	   *range_to;
	int			attempts;
} BackfillTask;

extern void BackfillRunLoad(Oid extschema, int64 runid, BackfillRun *run, bool lock);
extern bool BackfillRunCheckRights(BackfillRun *run, const char *action, bool gone_ok);
extern void BackfillRunReadStatus(BackfillRun *run);
extern void BackfillRunSetState(BackfillRun *run, BackfillRunStatus state, const char *error);
extern void BackfillRunUnschedule(BackfillRun *run);
extern void BackfillRunPark(BackfillRun *run);
extern char *BackfillCronSchema(void);
extern char *BackfillRunPinnedChange(BackfillRun *run);
extern void BackfillUntouchedSnapshot(void);
extern int64 BackfillUntouchedWrites(Oid relid);
extern char *BackfillStatsEpoch(void);

#endif							/* BACKFILL_RUNSTATE_H */
