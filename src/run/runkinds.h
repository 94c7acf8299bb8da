/*-------------------------------------------------------------------------
 *
 * src/run/runkinds.h
 *		The closed sets of a run: its status and its strategy, each an enum with
 *		one table of the names stored for it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_RUNKINDS_H
#define BACKFILL_RUNKINDS_H

#include "postgres.h"

#include "lib/stringinfo.h"

/*
 * The names of a closed set, indexed by its enum's values: the exact text
 * backfill_runs_data stores for each.  A value without a name (NULL) is the
 * text of none.
 */
typedef struct BackfillNames
{
	const char *const *names;
	int			count;
} BackfillNames;

extern const char *BackfillName(const BackfillNames *set, int value);
extern int	BackfillNameValue(const BackfillNames *set, const char *name, int none);
extern void BackfillAppendListed(StringInfo buf, int i, int n, const char *last);
extern char *BackfillNamesListed(const BackfillNames *set, char quote);

/* A run's status, backfill_runs_data.status (runstate.c says how one leads to another). */
typedef enum BackfillRunStatus
{
	BACKFILL_RUN_PLANNED,
	BACKFILL_RUN_RUNNING,
	BACKFILL_RUN_PAUSED,
	BACKFILL_RUN_BLOCKED,		/* its pinned code changed */
	BACKFILL_RUN_DONE,
	BACKFILL_RUN_FAILED,
	BACKFILL_RUN_CANCELLED,
	BACKFILL_RUN_OTHER			/* a text none of the above: a row from outside backfill */
} BackfillRunStatus;

extern const BackfillNames BackfillRunStatusNames;
extern bool BackfillRunStatusEnds(BackfillRunStatus status);

/* The text status is stored as; the status a stored text names, BACKFILL_RUN_OTHER for none. */
#define BackfillRunStatusName(status) BackfillName(&BackfillRunStatusNames, (status))
#define BackfillRunStatusFromName(name) \
	((BackfillRunStatus) BackfillNameValue(&BackfillRunStatusNames, (name), BACKFILL_RUN_OTHER))

/* A run's strategy, backfill_runs_data.strategy: how its tasks write. */
typedef enum BackfillStrategy
{
	BACKFILL_STRATEGY_REPLACE,	/* each partition swapped for a copy filled from the source */
	BACKFILL_STRATEGY_MERGE,	/* merged on the run's key */
	BACKFILL_STRATEGY_AUTO,		/* a small partition written in place, a larger one swapped */
	BACKFILL_STRATEGY_OTHER		/* a text none of the above: a row from outside backfill */
} BackfillStrategy;

extern const BackfillNames BackfillStrategyNames;

/* The text strategy is stored as; the strategy a stored text names, BACKFILL_STRATEGY_OTHER for none. */
#define BackfillStrategyName(strategy) BackfillName(&BackfillStrategyNames, (strategy))
#define BackfillStrategyFromName(name) \
	((BackfillStrategy) BackfillNameValue(&BackfillStrategyNames, (name), BACKFILL_STRATEGY_OTHER))

#endif							/* BACKFILL_RUNKINDS_H */
