/*-------------------------------------------------------------------------
 *
 * src/run/plan.h
 *		Planning a run: its tasks, what it pins, what it leaves alone.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_PLAN_H
#define BACKFILL_PLAN_H

#include "postgres.h"


extern char *BackfillPartitionChanged(Oid relid, Oid target, const char *lo, const char *hi);

#endif							/* BACKFILL_PLAN_H */
