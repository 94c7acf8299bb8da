/*-------------------------------------------------------------------------
 *
 * src/write/remotesource.h
 *		A write's source computed on a standby, read into a temporary table.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_REMOTESOURCE_H
#define BACKFILL_REMOTESOURCE_H

#include "postgres.h"

#include "nodes/params.h"

#include "base/throttle.h"

/* A source to compute on a standby. */
typedef struct BackfillRemoteSourceParams
{
	Oid			target;			/* the table written */
	const char *server;			/* options.source_server: a foreign server */
	const char *source;			/* a checked query, its parameters $1.. */
	int			nargs;
	Oid		   *argtypes;
	ParamListInfo params;		/* their values, or NULL with none */
	BackfillThrottleState *throttle;	/* the run's, or NULL */
} BackfillRemoteSourceParams;

extern void BackfillRefuseRemoteSource(Oid target);
extern void BackfillRefuseRemoteSourceAfterWrites(const char *func);
extern char *BackfillRemoteSource(const BackfillRemoteSourceParams *p);

#endif							/* BACKFILL_REMOTESOURCE_H */
