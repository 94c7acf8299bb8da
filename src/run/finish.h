/*-------------------------------------------------------------------------
 *
 * src/run/finish.h
 *		The end of a run: dependents refreshed, what lay outside checked.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_FINISH_H
#define BACKFILL_FINISH_H

#include "postgres.h"

#include "nodes/pg_list.h"

#include "run/runstate.h"

extern char *BackfillRunFinish(BackfillRun *run, List *failed_here, int64 *pending_elsewhere,
							   bool *tasks_failed);

#endif							/* BACKFILL_FINISH_H */
