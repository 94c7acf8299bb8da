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
/* What is wrong with a task's window, against its run's range and the other tasks. */
typedef enum BackfillWindowFault
{
	WINDOW_FITS,
	WINDOW_OUTSIDE,				/* not inside the run's range */
	WINDOW_EMPTY,				/* its lower bound is not below its upper */
	WINDOW_OVERLAPS				/* it overlaps another task's */
} BackfillWindowFault;

extern int	BackfillWindowsOutside(const char *type, const char *lo, const char *hi, int n,
								   const int32 *tasks, char *const *from, char *const *to,
								   BackfillWindowFault *fault, int32 *other);

#endif							/* BACKFILL_WINDOW_H */
