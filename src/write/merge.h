/*-------------------------------------------------------------------------
 *
 * src/write/merge.h
 *		Merging a recomputed window into a table on a proven key.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_MERGE_H
#define BACKFILL_MERGE_H

#include "postgres.h"

#include "nodes/pg_list.h"

#include "write/context.h"

/* What to merge, and how: backfill_merge's arguments, checked. */
typedef struct BackfillMergeParams
{
	Oid			target;			/* as passed (its name is followed) */
	const char *source;			/* a checked query */
	List	   *keys;			/* column names (char *), checked */
	const char *scope;			/* a checked condition on the target's columns, or NULL */
	bool		delete_missing;	/* delete the rows in scope the source lacks */
	bool		allow_empty;	/* a source with no rows may empty the scope */
	const char *source_server;	/* a foreign server: the source is computed on that standby */
} BackfillMergeParams;

/* What a merge did. */
typedef struct BackfillMergeResult
{
	uint64		inserted;
	uint64		updated;
	uint64		deleted;
	int64		unchanged;
	uint64		rows_before;	/* of the scope */
	uint64		rows_after;
	char	   *fingerprint_before;
	char	   *fingerprint_after;
	int64		log_id;			/* its record in backfill_log */
} BackfillMergeResult;

extern void BackfillMerge(const BackfillMergeParams *p, BackfillWriteContext *ctx,
						  BackfillMergeResult *r);

#endif							/* BACKFILL_MERGE_H */
