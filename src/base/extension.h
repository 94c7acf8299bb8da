/*-------------------------------------------------------------------------
 *
 * src/base/extension.h
 *		The extension's own objects: its schema, their names, and statements
 *		on its state tables as their owner.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_EXTENSION_H
#define BACKFILL_EXTENSION_H

#include "postgres.h"

#include "fmgr.h"

extern void BackfillCheckVersion(void);
extern Oid	BackfillExtensionSchema(FunctionCallInfo fcinfo);
extern Oid	BackfillInstalledSchema(void);
extern char *BackfillExtName(Oid extschema, const char *name);
extern bool BackfillIsStateTable(Oid relid);
extern bool BackfillWritingState(void);
extern char *BackfillRunStatusText(Oid extschema, int64 runid);
extern void BackfillRunActivity(int64 runid, const char *what);
extern int	BackfillStateExec(Oid extschema, const char *sql, int nargs, Oid *types,
							  Datum *values, const char *nulls, long tcount);

#endif							/* BACKFILL_EXTENSION_H */
