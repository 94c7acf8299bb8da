/*-------------------------------------------------------------------------
 *
 * src/validate/validate.h
 *		Keys proven unique and types that can be compared, for the writers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_VALIDATE_H
#define BACKFILL_VALIDATE_H

#include "postgres.h"

#include "nodes/pg_list.h"

/* One measure of a reconciliation: its value over each side (numeric), and the verdict. */
typedef struct BackfillMeasure
{
	const char *measure;		/* the aggregate expression */
	Datum		target;
	Datum		source;
	Datum		difference;		/* target - source */
	bool		target_null;
	bool		source_null;
	bool		difference_null;
	bool		ok;				/* equal, or within the tolerance */
} BackfillMeasure;

extern bool BackfillCheckKeyTypes(Oid relid, List *names, List *attnums);
extern bool BackfillKeyProvenByIndex(Oid relid, List *attnums);
extern int64 BackfillAssertUnique(Oid relid, List *names, List *attnums, const char *scope,
								  bool read_only, bool count_rows);

extern int	BackfillReconcile(const char *target, const char *source, List *measures,
							  Datum tolerance, BackfillMeasure **out);
extern char *BackfillMeasuresJson(const BackfillMeasure *m, int n);
extern char *BackfillFirstDifference(const BackfillMeasure *m, int n, const char *target_side,
									 const char *source_side);

#endif							/* BACKFILL_VALIDATE_H */
