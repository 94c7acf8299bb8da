/*-------------------------------------------------------------------------
 *
 * src/run/pin.h
 *		The code a run pins: what its source reaches, and whether it changed.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_PIN_H
#define BACKFILL_PIN_H

#include "postgres.h"


extern char *BackfillPinnedObjects(const char *sql, const char *search_path);
extern char *BackfillPinnedChange(int64 runid, const char *pinned, const char *source,
								  const char *search_path);

#endif							/* BACKFILL_PIN_H */
