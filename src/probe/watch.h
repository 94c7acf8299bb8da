/*-------------------------------------------------------------------------
 *
 * src/probe/watch.h
 *		What a transform run inside our own transaction wrote, told exactly.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_WATCH_H
#define BACKFILL_WATCH_H

#include "postgres.h"

#include "base/untouched.h"
#include "hash/rowhash.h"
#include "c.h"
#include "nodes/pg_list.h"
#include "utils/snapshot.h"

#define WATCH_POINTS 3			/* before, after the first run, after the second */

typedef struct BackfillWatch
{
	Oid			target;
	const char *scope;
	int			nrels;
	Oid		   *rels;			/* the target's relations with storage, by OID */
	List	   *leaves[WATCH_POINTS];	/* those relations at each point, by OID */
	Oid		   *files[WATCH_POINTS];	/* the relfilenodes of rels at each point */
	int64	   *writes[WATCH_POINTS];	/* rows this transaction wrote in rels by then */
	BackfillUntouched *untouched[WATCH_POINTS]; /* what rels' storage said of them then */
	Snapshot	snaps[WATCH_POINTS];	/* what the transaction saw at each point */
	int			npoints;
	bool		moved;			/* the target was renamed, or lost a relation: no use */
	bool		others;			/* rows changed that this transaction's snapshot
								 * cannot see: another session or connection */
	List	   *eager;			/* the scope's partitions, by OID, or NIL */
	List	   *bounds;			/* their bounds (char *) */
	char	   *eagerwhere;		/* their rows: any of their bounds */
	BackfillFingerprint ein[WATCH_POINTS];	/* their rows in the scope at each point */
	BackfillFingerprint eout[WATCH_POINTS]; /* and the others */
	List	   *held;			/* relations held for writing at the first point */
	int64	   *heldwrites;		/* and the rows written in them by then */
	SubTransactionId subid;		/* the subtransaction the first point was in */
	int64		lastlog;		/* the last record of backfill_log at the first point */
} BackfillWatch;

extern bool BackfillWatchable(Oid target);
extern void BackfillWatchPoint(BackfillWatch *w, Oid target, const char *scope);
extern bool BackfillWatchScope(BackfillWatch *w, BackfillFingerprint *inside,
							   BackfillFingerprint *outside);
extern void BackfillWatchEnd(BackfillWatch *w);
extern List *BackfillWrittenElsewhere(BackfillWatch *w, Oid target);

#endif							/* BACKFILL_WATCH_H */
