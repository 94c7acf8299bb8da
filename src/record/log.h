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
} BackfillLogRecord;

/* the run whose task is writing, or 0: recorded as run_id */
extern int64 BackfillLogRunId;
extern const char *BackfillLogWhy;

extern int64 BackfillLogWrite(Oid logschema, const BackfillLogRecord *rec);
extern int64 BackfillLogWriteChange(Oid logschema, const char *operation, const char *target,
									const char *partition, const BackfillFingerprint *before,
									const BackfillFingerprint *after, const char *details);
extern bool BackfillRecordVisible(Oid extschema, Oid relid);
extern int64 BackfillLastLogId(Oid logschema);
extern List *BackfillArchivedSince(Oid logschema, int64 after);

#endif							/* BACKFILL_LOG_H */
