/*-------------------------------------------------------------------------
 *
 * src/base/untouched.c
 *		Proof that no one wrote a relation between two moments, from its
 *		visibility map; or that no other session did.
 *
 * Every heap insert, update and delete clears the all-visible bit of the
 * page it changes, in the same critical section as the change, whether its
 * transaction commits or not, and whichever session or connection makes it;
 * only VACUUM sets the bit again on existing storage (COPY FREEZE only into
 * storage made in its own transaction).  So a relation whose every page was
 * all-visible at one moment, and that later has the same storage, the same
 * number of pages, every page still all-visible and the same count of
 * VACUUMs, had no row written in between: reading its visibility map (a few
 * bytes per thousand pages) proves it without reading a row.  But a VACUUM
 * counts itself only when it ends: one that set again the bits a write
 * cleared and never ended (an autovacuum cancelled by a lock waiter, a
 * VACUUM cancelled or failed, one run with track_counts off) leaves the map
 * and the count as they were; so the rows inserted, updated and deleted, as
 * the writers' sessions reported them, must not have moved either.  Anything
 * less proves nothing, and the caller reads the rows.  docs/validation.md says
 * where each of these facts is in PostgreSQL's sources, per version.
 *
 * The VACUUM counts are read from the shared statistics directly, not from
 * this transaction's cached copy of them (stats_fetch_consistency), which
 * would not move within a transaction.  A VACUUM counts itself when it ends,
 * after setting the bits: the map is read only while none runs.
 *
 * Within one transaction there is a second proof, against other sessions
 * only: storage this transaction created (a table created, truncated or
 * rewritten in it) is invisible to every other session until it commits, so
 * only this transaction can have written it, and its own counters say what.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/visibilitymap.h"
#include "catalog/pg_class.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/guc.h"
#include "utils/rel.h"

#include "base/compat.h"
#include "base/untouched.h"

/*
 * VACUUMs and autovacuums of relid, and the rows inserted, updated and
 * deleted in it, as the shared statistics count them now (this
 * transaction's own writes are not there until it ends).
 */
static void
ReadCounts(Oid relid, BackfillUntouched *u)
{
	int			nest = NewGUCNestLevel();
	PgStat_StatTabEntry *tab;

	(void) set_config_option("stats_fetch_consistency", "none", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	tab = pgstat_fetch_stat_tabentry(relid);
	if (tab)
	{
		u->vacuums = tab->vacuum_count + BackfillAutovacuumCount(tab);
		u->writes = tab->tuples_inserted + tab->tuples_updated + tab->tuples_deleted;
	}
	AtEOXact_GUC(true, nest);
}

/*
 * Read what relid's storage says of it now into u.  The caller holds a lock
 * on relid that keeps it from being dropped.
 */
void
BackfillReadUntouched(Oid relid, BackfillUntouched *u)
{
	Relation	rel = try_relation_open(relid, NoLock);

	memset(u, 0, sizeof(*u));
	if (rel == NULL)
		return;
	Assert(CheckRelationLockedByMe(rel, AccessShareLock, true));
	if (rel->rd_rel->relkind == RELKIND_RELATION || rel->rd_rel->relkind == RELKIND_MATVIEW ||
		rel->rd_rel->relkind == RELKIND_TOASTVALUE)
	{
		BlockNumber all_frozen;

		u->relfilenode = rel->rd_rel->relfilenode;
		u->pages = RelationGetNumberOfBlocks(rel);

		/*
		 * A VACUUM sets the bits of the pages it passes, and counts itself
		 * only at its end: one running now could have set again a bit that a
		 * write cleared, and not be counted yet.  So the map is read only
		 * while no VACUUM runs on the relation: holding, for that moment, the
		 * lock every VACUUM takes (writers do not wait for it); else it
		 * proves nothing.
		 */
		if (ConditionalLockRelationOid(relid, ShareUpdateExclusiveLock))
		{
			visibilitymap_count(rel, &u->all_visible, &all_frozen);
			ReadCounts(relid, u);
			UnlockRelationOid(relid, ShareUpdateExclusiveLock);
		}
		else
			u->all_visible = InvalidBlockNumber;	/* never equal to the page count */
		u->own = rel->rd_createSubid != InvalidSubTransactionId ||
			BackfillRelFirstStorageSubid(rel) != InvalidSubTransactionId;
	}
	relation_close(rel, NoLock);
}

/* Whether no row of the relation was written between then and now (see above). */
bool
BackfillUntouchedBetween(const BackfillUntouched *then, const BackfillUntouched *now)
{
	return then->relfilenode != InvalidOid &&
		then->relfilenode == now->relfilenode &&
		then->pages == now->pages &&
		then->all_visible == then->pages &&
		now->all_visible == now->pages &&
		then->vacuums == now->vacuums &&
		then->writes == now->writes;
}

/*
 * Whether no other session or connection wrote the relation between then and
 * now: no one did (BackfillUntouchedBetween), or its storage was this
 * transaction's own then and is the same now.
 */
bool
BackfillOthersUntouched(const BackfillUntouched *then, const BackfillUntouched *now)
{
	if (then->relfilenode != InvalidOid && then->own && then->relfilenode == now->relfilenode)
		return true;
	return BackfillUntouchedBetween(then, now);
}
