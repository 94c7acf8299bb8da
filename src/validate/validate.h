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

extern bool BackfillCheckKeyTypes(Oid relid, List *names, List *attnums);
extern bool BackfillKeyProvenByIndex(Oid relid, List *attnums);
extern int64 BackfillAssertUnique(Oid relid, List *names, List *attnums, const char *scope,
								  bool read_only, bool count_rows);

#endif							/* BACKFILL_VALIDATE_H */
