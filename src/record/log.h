/*-------------------------------------------------------------------------
 *
 * src/record/log.h
 *		backfill_log: the append-only record of every write.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_LOG_H
#define BACKFILL_LOG_H

#include "postgres.h"

#include "hash/fingerprint.h"

typedef struct BackfillLogRecord
{
	const char *operation;		/* 'replace', 'undo', ... */
	const char *target;			/* the table written, schema-qualified */
	const char *partition;		/* the partition written, or NULL */
	int64		rows_before;	/* -1 for NULL */
	int64		rows_after;		/* -1 for NULL */
	const char *fingerprint_before;
	const char *fingerprint_after;
	const char *details;		/* jsonb text */
	int64		run_id;			/* the run whose task wrote, or 0 */
} BackfillLogRecord;

extern int64 BackfillLogWrite(Oid logschema, const BackfillLogRecord *rec);
extern int64 BackfillLogWriteChange(Oid logschema, const char *operation, const char *target,
									const char *partition, const BackfillFingerprint *before,
									const BackfillFingerprint *after, const char *details,
									int64 run_id, const char *why);
extern bool BackfillRecordVisible(Oid extschema, Oid relid);
extern int64 BackfillLastLogId(Oid logschema);
extern List *BackfillArchivedSince(Oid logschema, int64 after);

#endif							/* BACKFILL_LOG_H */
