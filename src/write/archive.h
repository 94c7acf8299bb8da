/*-------------------------------------------------------------------------
 *
 * src/write/archive.h
 *		The archives a replacement keeps: names, and undo after a detach.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_ARCHIVE_H
#define BACKFILL_ARCHIVE_H

#include "postgres.h"

extern char *BackfillArchiveName(const char *name, Oid nsp);
extern void BackfillRefuseUndoDetached(Oid extschema, int64 logid, Oid partoid, const char *partname,
									   Oid targetoid, const char *archivename);

#endif							/* BACKFILL_ARCHIVE_H */
