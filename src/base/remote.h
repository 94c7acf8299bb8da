/*-------------------------------------------------------------------------
 *
 * src/base/remote.h
 *		A query read on a physical standby of this server, named by a
 *		foreign server, row by row.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_REMOTE_H
#define BACKFILL_REMOTE_H

#include "postgres.h"

#include "access/xlogdefs.h"

#include "base/throttle.h"

/* What a read on a standby is given: where, what, and from which WAL position. */
typedef struct BackfillRemoteQuery
{
	const char *server;			/* the foreign server's name, as given */
	const char *argname;		/* what the caller calls it, for the errors */
	const char *sql;			/* the query, its parameters $1, $2... */
	int			nparams;
	const Oid  *paramtypes;		/* the same types there: a standby has our catalog */
	const char *const *paramvalues; /* as text, NULL for a NULL */
	XLogRecPtr	replayed;		/* the standby must have replayed this far first */
	BackfillThrottleState *throttle;	/* the run's, which waits and pauses; NULL: a call's */
	int			ncols;			/* the query's columns here, and their types (NULL: not */
	const Oid  *coltypes;		/* checked): the standby's must be the same */
	void		(*ready) (void *arg);	/* once the standby has caught up, before the read, or NULL */
} BackfillRemoteQuery;

/* One row of the query: ncols values as text, NULL for a NULL. */
typedef void (*BackfillRemoteRowFn) (void *arg, int ncols, char **values);

extern void BackfillRemoteCheck(const char *server, const char *argname, bool caught_up);
extern XLogRecPtr BackfillRemoteWrittenUpTo(void);
extern char *BackfillRemoteBehind(const char *server, const char *argname);
extern uint64 BackfillRemoteRead(const BackfillRemoteQuery *q, BackfillRemoteRowFn fn, void *arg);

#endif							/* BACKFILL_REMOTE_H */
