/*-------------------------------------------------------------------------
 *
 * src/validate/diff.h
 *		The rows two queries disagree on: matched on a key, or as multisets.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_DIFF_H
#define BACKFILL_DIFF_H

#include "postgres.h"

#include "nodes/pg_list.h"
#include "utils/snapshot.h"

extern void BackfillDiffSummary(const char *a, const char *b, List *keys, int sample_max,
								int64 *added, int64 *removed, int64 *changed, char **sample);
extern void BackfillMultisetDiff(const char *a, Snapshot asnap, const char *b,
								 int64 *added, int64 *removed, char **sample);

#endif							/* BACKFILL_DIFF_H */
