/*-------------------------------------------------------------------------
 *
 * src/write/lockproto.c
 *		The lock protocol of a replacement (backfill_replace_partition, a
 *		run's task, backfill_undo): which relation each phase holds, in
 *		which mode, and why; and the assertions that check it.
 *
 * Every lock below is held to the end of the transaction, except those
 * marked "let go".  A stronger mode held already (by the caller, or an
 * earlier phase) does as well.
 *
 *  phase (file)            partition      parent          DEFAULT        staging table  others
 *                                                          partition      (undo: the
 *                                                                         archive)
 *  ----------------------  -------------  --------------  -------------  -------------  -----------------------
 *  lock (replace.c:        SHARE ROW      SHARE UPDATE    -              -              what analysing the
 *   BackfillLockPart)      EXCLUSIVE      EXCLUSIVE, only                               source locks: let go
 *                                         when the fill                                 (a subtransaction
 *                                         holds it (1)                                  rolled back)
 *  fill (replace.c,        SHARE ROW      as above        -              ACCESS         the ancestors, read for
 *   staging.c,             EXCLUSIVE                                     EXCLUSIVE      the bound: let go; the
 *   citus_swap.c)                                                        (CREATE TABLE) tables its foreign keys
 *                                                                                       point to: SHARE ROW
 *                                                                                       EXCLUSIVE (ADD FOREIGN
 *                                                                                       KEY; the parent is held)
 *  swap lock (swaplock.c)  ACCESS         ACCESS          ACCESS         ACCESS         the tables foreign keys
 *                          EXCLUSIVE      EXCLUSIVE; by   EXCLUSIVE, its EXCLUSIVE      point to, and their
 *                                         files ACCESS    partitions too                partitions: ACCESS
 *                                         SHARE           (not by files)                EXCLUSIVE
 *  swap by files           ACCESS         ACCESS SHARE    -              ACCESS         each pair of indexes,
 *   (swapfiles.c)          EXCLUSIVE                                     EXCLUSIVE      the TOAST tables and
 *                                                                                       their indexes: ACCESS
 *                                                                                       EXCLUSIVE
 *  DETACH + ATTACH         ACCESS         ACCESS          ACCESS         ACCESS         as the swap lock
 *   (swap.c)               EXCLUSIVE      EXCLUSIVE       EXCLUSIVE      EXCLUSIVE
 *  archive (swap.c)        ACCESS EXCLUSIVE on what is renamed to the archive: the old partition, detached,
 *                          or, after a swap of files, the staging table, which holds the old files
 *  undo (replace.c)        SHARE ROW      SHARE UPDATE    -              ACCESS         -
 *                          EXCLUSIVE,     EXCLUSIVE,                     EXCLUSIVE,
 *                          then as the    then as the                    before the
 *                          swap lock      swap lock                      fingerprints
 *
 *  (1) The fill holds the parent when the partition has foreign keys, when
 *      the source reads the parent or its DEFAULT partition, when this
 *      transaction holds one of them already (FillHoldsParent, replace.c),
 *      and always for backfill_undo.
 *
 * Why each phase holds what it holds:
 *
 * - The fill holds the partition in SHARE ROW EXCLUSIVE mode, which conflicts
 *   with itself and with every write: readers go on, writers of that
 *   partition wait (their rows would be lost by the swap), DDL that reaches
 *   the partition waits, and a second replacement of the same partition
 *   waits for the first and then works on the partition the first left (it
 *   follows the name, BackfillLockFollowingName).
 *
 * - The parent is not locked during the fill, so replacements of different
 *   partitions of one parent fill at once and queue only for the swap, which
 *   needs ACCESS EXCLUSIVE on the parent: two transactions that both held the
 *   parent through their fills could not both swap.  The exceptions (1) take
 *   SHARE UPDATE EXCLUSIVE on the parent before anything else, as every
 *   replacement once did, and run one at a time: SHARE UPDATE EXCLUSIVE
 *   conflicts with itself, so they queue before any work instead of each
 *   holding the parent while waiting for the others to let it go for the
 *   swap.  (Adding a partition's foreign keys to the copy locks the tables
 *   they point to, which a sibling's swap must lock.)  Whatever of the
 *   parent may change during the fill (its name, its publications, forced
 *   row-level security, its DEFAULT partition, the partition detached) is
 *   checked again under the swap's locks (swap.c).
 *
 * - The staging table is made by this transaction, which holds it in ACCESS
 *   EXCLUSIVE mode from its CREATE TABLE on; no other session sees it before
 *   commit, and its files may be given to the partition.
 *
 * - When the swap begins, the transaction already holds SHARE ROW EXCLUSIVE
 *   on the partition, whatever the fill read, and SHARE UPDATE EXCLUSIVE on
 *   the parent only when the fill had to hold it.  Those cannot be let go
 *   without losing the fill.  A swap of files then needs ACCESS SHARE on the
 *   parent (only so that it is not dropped or altered meanwhile) and ACCESS
 *   EXCLUSIVE on the partition and on the tables the foreign keys point to
 *   (ATTACH and DROP change their triggers); a DETACH and ATTACH needs ACCESS
 *   EXCLUSIVE on the parent, the partition, the DEFAULT partition (which
 *   ATTACH and DETACH lock) and those tables; always in that order, the
 *   parent before its partitions, as DETACH itself takes them.  Replacements
 *   of sibling partitions swap their files side by side, or under DETACH and
 *   ATTACH take turns: each waits for the parent holding only its own
 *   partition, which no other swap needs.  How these locks are waited for
 *   without queueing readers behind them or deadlocking: swaplock.c.
 *
 * - A swap of files trades the pg_class rows of the partition and the staging
 *   table, and of their indexes and TOAST tables, as CLUSTER does: each is
 *   held in ACCESS EXCLUSIVE mode.  The parent is neither locked further nor
 *   invalidated.  A DETACH and ATTACH holds its locks only for catalog work
 *   (why no scan runs under them: swap.c).
 *
 * - backfill_undo locks as a replacement whose fill holds the parent, then
 *   takes the archive in ACCESS EXCLUSIVE mode before it fingerprints the
 *   partition and the archive: neither can change between the check that
 *   the partition still holds what the replacement wrote and the swap.
 *
 * - On Citus (a distributed parent) every lock of the lock and swap lock
 *   phases is also taken by SQL LOCK TABLE ONLY, which Citus propagates to
 *   the workers' copies of the tables, through which writes made on a worker
 *   go (base/citus.c, citus_swap.c): in the lock phase the parent in SHARE
 *   UPDATE EXCLUSIVE mode when the fill holds it and the partition in SHARE
 *   ROW EXCLUSIVE mode; the shard resource locks of the parent's shards in
 *   SHARE mode on every node (a COPY into the parent locks no partition);
 *   and the partition's shard tables in SHARE mode on their workers (a write
 *   straight into a shard).  Distributing the staging table takes ACCESS
 *   SHARE on the parent, let go again unless this transaction held it before.
 *   The swap lock takes the parent, the partition and the DEFAULT partition
 *   in ACCESS EXCLUSIVE mode on every node, with the attempt's lock_timeout
 *   sent to the workers.  A distributed table is never swapped by files.
 *
 * The assertions (lockproto.h) check each phase's locks on this node as it
 * starts; they cost nothing unless the server is built with assertions.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/lsyscache.h"

#include "base/compat.h"
#include "write/lockproto.h"

/*
 * Does this transaction hold relid in mode or a stronger one?  If not, say
 * which phase needed which lock on what, for the assertion that then fails.
 */
bool
BackfillHoldsLock(Oid relid, LOCKMODE mode, const char *phase)
{
	LOCKTAG		tag;
	char	   *name;

	SET_LOCKTAG_RELATION(tag, MyDatabaseId, relid);
	if (BackfillLockHeldOrStronger(&tag, mode))
		return true;
	name = get_rel_name(relid);
	elog(WARNING, "lock protocol: the %s phase needs %s on %s (%u), which this transaction does not hold",
		 phase, GetLockmodeName(DEFAULT_LOCKMETHOD, mode), name ? name : "a relation", relid);
	return false;
}

/* Does this transaction hold every relation of relids in mode or a stronger one? */
bool
BackfillHoldsLocks(List *relids, LOCKMODE mode, const char *phase)
{
	ListCell   *lc;
	bool		held = true;

	foreach(lc, relids)
		held = BackfillHoldsLock(lfirst_oid(lc), mode, phase) && held;
	return held;
}

/*
 * The fill's locks (see the table): the partition in SHARE ROW EXCLUSIVE
 * mode and, once it exists (staging valid), the staging table in ACCESS
 * EXCLUSIVE mode.
 */
bool
BackfillHoldsFillLocks(const BackfillPart *bp, Oid staging, const char *phase)
{
	bool		held = BackfillHoldsLock(bp->part, ShareRowExclusiveLock, phase);

	if (OidIsValid(staging))
		held = BackfillHoldsLock(staging, AccessExclusiveLock, phase) && held;
	return held;
}

/*
 * The swap's locks on the partition, the parent, the DEFAULT partition and
 * staging (the tables foreign keys point to are checked where they are
 * locked, swaplock.c): of a DETACH and ATTACH when detach_attach, else of a
 * swap of files.
 */
bool
BackfillHoldsSwapLocks(const BackfillPart *bp, Oid staging, bool detach_attach, const char *phase)
{
	bool		held = BackfillHoldsLock(bp->parent, detach_attach ? AccessExclusiveLock : AccessShareLock,
										 phase);

	held = BackfillHoldsLock(bp->part, AccessExclusiveLock, phase) && held;
	if (detach_attach && OidIsValid(bp->defaultpart))
		held = BackfillHoldsLock(bp->defaultpart, AccessExclusiveLock, phase) && held;
	held = BackfillHoldsLock(staging, AccessExclusiveLock, phase) && held;
	return held;
}
