/*-------------------------------------------------------------------------
 *
 * src/base/relation.h
 *		Checking the relations and columns that callers name.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_RELATION_H
#define BACKFILL_RELATION_H

#include "postgres.h"

#include "fmgr.h"
#include "access/tupdesc.h"
#include "nodes/pg_list.h"
#include "storage/lockdefs.h"

/* Kinds of relation a function accepts. */
#define BACKFILL_REL_TABLE			0x01	/* plain table */
#define BACKFILL_REL_PARTITIONED	0x02	/* partitioned table */
#define BACKFILL_REL_MATVIEW		0x04	/* materialized view */
#define BACKFILL_REL_FOREIGN		0x08	/* foreign table */
#define BACKFILL_REL_READABLE \
	(BACKFILL_REL_TABLE | BACKFILL_REL_PARTITIONED | BACKFILL_REL_MATVIEW | BACKFILL_REL_FOREIGN)

extern Oid	BackfillLockFollowingName(Oid relid, const char *name, Oid nsp, const char *what,
									  LOCKMODE lockmode);
extern Oid	BackfillOpenRel(Oid relid, const char *argname, int kinds, LOCKMODE lockmode);
extern Oid	BackfillOpenRelArg(FunctionCallInfo fcinfo, int argno, const char *argname,
							   int kinds, LOCKMODE lockmode);
extern char *BackfillRelColumnArgs(Oid relid, int *ncols);
extern Oid	BackfillForcedRowSecurity(Oid relid);
extern bool BackfillSameLayout(TupleDesc a, TupleDesc b);
extern bool BackfillSameColumns(TupleDesc a, TupleDesc b);
extern List *BackfillRelColumns(Oid relid, List *names, const char *argname);
extern Oid	BackfillRelOwner(Oid relid);
extern Oid	BackfillRelFileNode(Oid relid);
extern void BackfillRefuseInUse(Oid relid, const char *what);
extern char *BackfillEqualityOperator(Oid type);
extern char *BackfillOwnerHint(Oid relid);
extern bool BackfillMaySeeRows(Oid relid);
extern void BackfillRelationBytes(Oid relid, int64 *heap, int64 *toast, int64 *indexes);
extern int64 BackfillFreeBytes(Oid relid);
extern char *BackfillStoredValue(const char *expr, Oid srctype, int32 srctypmod, Oid type, int32 typmod);

#endif							/* BACKFILL_RELATION_H */
