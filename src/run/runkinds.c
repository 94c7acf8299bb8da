/*-------------------------------------------------------------------------
 *
 * src/run/runkinds.c
 *		The closed sets of a run: its status and its strategy, each an enum with
 *		one table of the names stored for it.
 *
 * A name table holds, for each value of its enum, the exact text that
 * backfill_runs_data stores and that users see: code compares the enums,
 * and turns them into text or back only here.  A row
 * inserted from outside backfill may hold any text; it reads as the set's
 * "other" value, and its text is kept beside the enum for messages.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "run/runkinds.h"

static const char *const run_status_names[] = {
	[BACKFILL_RUN_PLANNED] = "planned",
	[BACKFILL_RUN_RUNNING] = "running",
	[BACKFILL_RUN_PAUSED] = "paused",
	[BACKFILL_RUN_BLOCKED] = "blocked",
	[BACKFILL_RUN_DONE] = "done",
	[BACKFILL_RUN_FAILED] = "failed",
	[BACKFILL_RUN_CANCELLED] = "cancelled",
	[BACKFILL_RUN_OTHER] = NULL
};

static const char *const strategy_names[] = {
	[BACKFILL_STRATEGY_REPLACE] = "replace",
	[BACKFILL_STRATEGY_MERGE] = "merge",
	[BACKFILL_STRATEGY_AUTO] = "auto",
	[BACKFILL_STRATEGY_OTHER] = NULL
};

StaticAssertDecl(lengthof(run_status_names) == BACKFILL_RUN_OTHER + 1, "a name for each run status");
StaticAssertDecl(lengthof(strategy_names) == BACKFILL_STRATEGY_OTHER + 1, "a name for each strategy");

const BackfillNames BackfillRunStatusNames = {run_status_names, lengthof(run_status_names)};
const BackfillNames BackfillStrategyNames = {strategy_names, lengthof(strategy_names)};

/* The name of value in set (NULL for a value without one). */
const char *
BackfillName(const BackfillNames *set, int value)
{
	Assert(value >= 0 && value < set->count);
	return set->names[value];
}

/* The value set names name, compared exactly; none when no value is named so. */
int
BackfillNameValue(const BackfillNames *set, const char *name, int none)
{
	for (int v = 0; v < set->count; v++)
		if (set->names[v] != NULL && strcmp(set->names[v], name) == 0)
			return v;
	return none;
}

/*
 * Before the i-th of n words listed in a message, what separates it from
 * the one before: nothing before the first, last (" or ", " and ") before
 * the last, a comma before the others.
 */
void
BackfillAppendListed(StringInfo buf, int i, int n, const char *last)
{
	if (i > 0)
		appendStringInfoString(buf, i == n - 1 ? last : ", ");
}

/* The names of set in its order, each between quote, for a message: 'a', 'b' or 'c'. */
char *
BackfillNamesListed(const BackfillNames *set, char quote)
{
	StringInfoData buf;
	int			n = 0;
	int			i = 0;

	for (int v = 0; v < set->count; v++)
		n += set->names[v] != NULL;
	initStringInfo(&buf);
	for (int v = 0; v < set->count; v++)
	{
		if (set->names[v] == NULL)
			continue;
		BackfillAppendListed(&buf, i++, n, " or ");
		appendStringInfo(&buf, "%c%s%c", quote, set->names[v], quote);
	}
	return buf.data;
}

/* Whether a run that comes to status ends (its finished_at is set): done, failed, blocked, cancelled. */
bool
BackfillRunStatusEnds(BackfillRunStatus status)
{
	return status == BACKFILL_RUN_DONE || status == BACKFILL_RUN_FAILED ||
		status == BACKFILL_RUN_BLOCKED || status == BACKFILL_RUN_CANCELLED;
}
