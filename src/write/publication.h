/*-------------------------------------------------------------------------
 *
 * src/write/publication.h
 *		Replacements and logical replication.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_PUBLICATION_H
#define BACKFILL_PUBLICATION_H

#include "postgres.h"

extern void BackfillRefusePublished(Oid part, const char *plantarget);

#endif							/* BACKFILL_PUBLICATION_H */
