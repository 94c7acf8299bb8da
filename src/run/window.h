/*-------------------------------------------------------------------------
 *
 * src/run/window.h
 *		A run's window in SQL: the source bound to a task's window, and the
 *		scope of a window on a column.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_WINDOW_H
#define BACKFILL_WINDOW_H

#include "postgres.h"

extern char *BackfillBindWindow(const char *source, const char *type, const char *lo, const char *hi);
extern char *BackfillWindowScope(const char *column, const char *type, const char *lo, const char *hi,
								 const char *alias);

#endif							/* BACKFILL_WINDOW_H */
