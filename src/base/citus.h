/*-------------------------------------------------------------------------
 *
 * src/base/citus.h
 *		What backfill needs to know about Citus: is it here, which node is
 *		this, how is a table distributed.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_CITUS_H
#define BACKFILL_CITUS_H

#include "postgres.h"

#include "executor/spi.h"
#include "nodes/params.h"
#include "nodes/pg_list.h"

/* how Citus holds a table (pg_dist_partition) */
typedef enum BackfillCitusKind
{
	BACKFILL_CITUS_NONE,		/* no Citus, or a table Citus does not know */
	BACKFILL_CITUS_DISTRIBUTED, /* hash- or range-distributed: shards on the workers */
	BACKFILL_CITUS_REFERENCE,	/* a copy on every node */
	BACKFILL_CITUS_LOCAL		/* a Citus local table on the coordinator */
} BackfillCitusKind;

typedef struct BackfillCitusRel
{
	BackfillCitusKind kind;
	char	   *distcol;		/* the distribution column (DISTRIBUTED only) */
	int			colocation;		/* its co-location group */
} BackfillCitusRel;

extern bool BackfillCitusPresent(void);
extern void BackfillRequireCoordinator(const char *func);
extern void BackfillCitusDescribe(Oid relid, BackfillCitusRel *cr);
extern bool BackfillCitusDistributed(Oid relid);
extern bool BackfillCitusCheckMerge(Oid relid, List *keys, const char *source, const char *scope,
									const char *mode);
extern void BackfillCitusLock(Oid relid, bool only, const char *mode);

/* citus_fingerprint.c */
struct BackfillFingerprint;
extern bool BackfillCitusFingerprint(Oid relid, const char *scope, bool read_only,
									 struct BackfillFingerprint *fp);

extern bool BackfillCitusShardsMayHash(const char *fn);
extern char *BackfillCitusQuotedSchema(void);

/* citus_diff.c: backfill_diff of two co-located distributed tables, shard by shard */
typedef struct BackfillCitusDiffSide
{
	const char *name;			/* "a" or "b" */
	const char *query;
	SPIPlanPtr	plan;
	TupleDesc	desc;			/* the rows the query returns */
	const int  *keyidx;			/* the key columns in desc, in key order */
	const int  *rowidx;			/* every column in desc, in a's column order */
} BackfillCitusDiffSide;
extern char *BackfillCitusDiffQuery(BackfillCitusDiffSide sides[2], int nkeys, int ncols,
									const uint64 seeds[3]);

/* citus_swap.c: backfill_replace_partition on a distributed partitioned table */
struct BackfillPart;
struct ErrorData;
extern void BackfillCitusRefuseReplace(struct BackfillPart *bp);
extern void BackfillCitusDistributeStaging(struct BackfillPart *bp, Oid staging);
extern void BackfillCitusFillStaging(struct BackfillPart *bp, Oid staging, SPIPlanPtr srcplan,
									 const char *source, int nargs, Oid *argtypes,
									 ParamListInfo params);
extern void BackfillCitusLockForSwap(struct BackfillPart *bp, int timeout_ms, const char *restore);
extern bool BackfillCitusLockTimedOut(struct ErrorData *edata);

#endif							/* BACKFILL_CITUS_H */
