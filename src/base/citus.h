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
extern void BackfillCitusHoldOffCopy(Oid relid);
extern bool BackfillCitusCancelledByDeadlock(void);
extern char *BackfillCitusHolders(Oid relid);
extern void BackfillCitusOnPlacements(Oid relid, const char *before, const char *after, bool literal);

#endif							/* BACKFILL_CITUS_H */
