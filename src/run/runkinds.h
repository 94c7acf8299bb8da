/*-------------------------------------------------------------------------
 *
 * src/run/runkinds.h
 *		The closed sets of a run: its status, its strategy and the modes of
 *		its options, each an enum with one table of the names stored for it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_RUNKINDS_H
#define BACKFILL_RUNKINDS_H

#include "postgres.h"

#include "nodes/pg_list.h"

/*
 * The names of a closed set, indexed by its enum's values: the exact text
 * backfill_runs_data or a run's options store for each.  A value without a
 * name (NULL) is stored otherwise (a boolean), or is the text of none.
 */
typedef struct BackfillNames
{
	const char *const *names;
	int			count;
} BackfillNames;

extern const char *BackfillName(const BackfillNames *set, int value);
extern int	BackfillNameValue(const BackfillNames *set, const char *name, int none);
extern List *BackfillNamesQuoted(const BackfillNames *set, char quote);
extern char *BackfillListed(List *words, const char *last);

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

/* options.on_error: what a failed task does to its run. */
typedef enum BackfillOnError
{
	BACKFILL_ON_ERROR_STOP,		/* "stop": the run fails with the task */
	BACKFILL_ON_ERROR_CONTINUE	/* "continue": the run goes on to the other tasks */
} BackfillOnError;

extern const BackfillNames BackfillOnErrorNames;

/* options.check_untouched: how a run proves that what lies outside its range was not written. */
typedef enum BackfillUntouchedCheck
{
	BACKFILL_UNTOUCHED_OFF,		/* false: not checked */
	BACKFILL_UNTOUCHED_AUTO,	/* "auto": by the visibility map where it proves, else as "full" */
	BACKFILL_UNTOUCHED_FULL,	/* "full" (or true): fingerprints before and after */
	BACKFILL_UNTOUCHED_COUNTERS /* "counters": the cumulative statistics' counters */
} BackfillUntouchedCheck;

extern const BackfillNames BackfillUntouchedCheckNames;

#endif							/* BACKFILL_RUNKINDS_H */
