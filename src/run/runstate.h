/*-------------------------------------------------------------------------
 *
 * src/run/runstate.h
 *		A run and its tasks as their rows say: options, status, rights.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_RUNSTATE_H
#define BACKFILL_RUNSTATE_H

#include "postgres.h"

#include "fmgr.h"
#include "nodes/pg_list.h"

#include "base/throttle.h"
#include "run/runkinds.h"

/* The options of a run, defaults filled in. */
/*
 * strategy 'auto': a partition of at most this many rows is rewritten by a
 * delete and an insert, a larger one swapped (make bench measures where a
 * swap's fixed cost stops outweighing the rows it does not rewrite in place).
 */
#define BACKFILL_SMALL_PARTITION_ROWS 20000

typedef struct BackfillRunOptions
{
	int			max_workers;
	int			pause_ms;
	int			max_attempts;
	bool		on_error_continue;
	bool		refresh_dependents;
	bool		check_untouched;
	bool		untouched_full;	/* check_untouched 'full' (the default): fingerprints, not 'counters' */
	bool		allow_empty;	/* replace: a task may empty its partition */
	bool		keep_old;		/* replace: keep each old partition as an archive */
	bool		delete_missing; /* merge: delete the window's rows the source lacks */
	int			lock_timeout_ms;	/* for the swap; also lock_timeout of the task */
	int			small_partition_rows;	/* auto: at most this many rows, delete + insert */
	char	   *statement_timeout;	/* GUC values as given, or NULL */
	char	   *lock_timeout;
	char	   *work_mem;
	char	   *max_parallel_workers_per_gather;
	List	   *reconcile;		/* measures (char *) */
	char	   *reconcile_tolerance;	/* numeric text */
	char	   *window_column;	/* plain tables */
	char	   *chunk;			/* plain tables */
	char	   *search_path;	/* names in the source resolve under it */
	List	   *unwatched;		/* partitions outside the range not watched (char *) */
	bool		unwatch_newer;	/* unwatched "newer": those above the range's upper neighbour */
	BackfillThrottle throttle;
	char	   *normalized;		/* all of the above as jsonb text */
} BackfillRunOptions;

/* A run, as its row says. */
typedef struct BackfillRun
{
	int64		id;
	Oid			extschema;
	char	   *target;			/* schema-qualified, quoted */
	Oid			targetoid;		/* resolved from target */
	bool		partitioned;
	char	   *strategy;		/* as stored; run.c compares it until it reads strategy_kind */
	BackfillStrategy strategy_kind;
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

extern void BackfillParseRunOptions(const char *json, bool partitioned, BackfillRunOptions *opts);
extern void BackfillRunLoad(Oid extschema, int64 runid, BackfillRun *run, bool lock);
extern bool BackfillRunCheckRights(BackfillRun *run, const char *action, bool gone_ok);
extern void BackfillRunSetState(BackfillRun *run, BackfillRunStatus state, const char *error);
extern void BackfillRunSetStatus(BackfillRun *run, const char *status, const char *error);
extern void BackfillRunUnschedule(BackfillRun *run);
extern char *BackfillRunPinnedChange(BackfillRun *run);
extern void BackfillUntouchedSnapshot(void);
extern int64 BackfillUntouchedWrites(Oid relid);
extern char *BackfillStatsEpoch(void);

#endif							/* BACKFILL_RUNSTATE_H */
