/*-------------------------------------------------------------------------
 *
 * src/write/deleteinsert.h
 *		A window replaced by a delete and an insert in one transaction.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_DELETEINSERT_H
#define BACKFILL_DELETEINSERT_H

#include "postgres.h"

#include "hash/fingerprint.h"
#include "write/context.h"

/* What to delete and insert: a task's window, checked by its run at plan time. */
typedef struct BackfillDeleteInsertParams
{
	Oid			written;		/* the table the rows go into */
	Oid			lockrel;		/* the table whose writers wait: written, or its partition */
	Oid			targetoid;		/* the run's target */
	const char *target;			/* its name, qualified, for the record */
	const char *source;			/* bound to the window */
	const char *scope;			/* through the target: the window on its columns, else NULL */
	const char *stored_scope;	/* through the target: the window on the source's rows (alias
								 * s) as the target stores them, else NULL */
	int			task;			/* the task and its window, for the messages */
	const char *range_from;
	const char *range_to;
	bool		allow_empty;	/* a source with no rows may empty the window */
} BackfillDeleteInsertParams;

/* What a delete and insert did. */
typedef struct BackfillDeleteInsertResult
{
	BackfillFingerprint before;
	BackfillFingerprint after;
	int64		log_id;			/* its record in backfill_log */
} BackfillDeleteInsertResult;

extern char *BackfillSourceColumns(const char *bound, Oid relid, bool *reads);
extern void BackfillDeleteInsert(const BackfillDeleteInsertParams *p, BackfillWriteContext *ctx,
								 BackfillDeleteInsertResult *r);

#endif							/* BACKFILL_DELETEINSERT_H */
