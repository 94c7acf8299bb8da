/*-------------------------------------------------------------------------
 *
 * src/run/outside.h
 *		What lies outside a run's range: noted at plan time, checked at the end.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_OUTSIDE_H
#define BACKFILL_OUTSIDE_H

#include "postgres.h"

#include "lib/stringinfo.h"
#include "nodes/pg_list.h"

#include "run/runstate.h"

extern void BackfillOutsidePartitions(List *watched, BackfillUntouchedCheck check, StringInfo untouched);
extern char *BackfillOutsideRows(Oid relid, const char *scope);
extern char *BackfillOutsideCheck(BackfillRun *run, int *changed, int *written);

#endif							/* BACKFILL_OUTSIDE_H */
