/*-------------------------------------------------------------------------
 *
 * src/run/runoptions.h
 *		A run's options: read from jsonb, checked, defaults filled in, and
 *		stored back with every key.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_RUNOPTIONS_H
#define BACKFILL_RUNOPTIONS_H

#include "postgres.h"

#include "nodes/pg_list.h"

#include "base/throttle.h"
#include "run/runkinds.h"

/*
 * strategy 'auto': a partition of at most this many rows is rewritten by a
 * delete and an insert, a larger one swapped (make bench measures where a
 * swap's fixed cost stops outweighing the rows it does not rewrite in place).
 */
#define BACKFILL_SMALL_PARTITION_ROWS 20000

/* The options of a run, defaults filled in (runoptions.c's table says each). */
typedef struct BackfillRunOptions
{
	int			max_workers;
	int			pause_ms;
	int			notice_every;	/* a progress NOTICE every so many tasks of a call */
	int64		max_disk_bytes; /* refuse a plan whose peak disk is above it; 0: none */
	int			max_attempts;
	BackfillOnError on_error;
	bool		refresh_dependents;
	BackfillUntouchedCheck untouched_check; /* check_untouched */
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
	char	   *source_server;	/* a foreign server: the source is computed on that standby */
	List	   *unwatched;		/* partitions outside the range not watched (char *) */
	bool		unwatch_newer;	/* unwatched "newer": those above the range's upper neighbour */
	BackfillThrottle throttle;
	char	   *normalized;		/* all of the above as jsonb text */
} BackfillRunOptions;

extern void BackfillParseRunOptions(const char *json, bool partitioned, BackfillRunOptions *opts);

#endif							/* BACKFILL_RUNOPTIONS_H */
