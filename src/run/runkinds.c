/*-------------------------------------------------------------------------
 *
 * src/run/runkinds.c
 *		The closed sets of a run: its status, its strategy and the modes of
 *		its options, each an enum with one table of the names stored for it.
 *
 * A name table holds, for each value of its enum, the exact text that
 * backfill_runs_data or a run's options store and that users see: code
 * compares the enums, and turns them into text or back through the table.  A row
 * inserted from outside backfill may hold any text; it reads as the set's
 * "other" value, and its text is kept beside the enum for messages.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"

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

static const char *const on_error_names[] = {
	[BACKFILL_ON_ERROR_STOP] = "stop",
	[BACKFILL_ON_ERROR_CONTINUE] = "continue"
};

/* off is stored as false; messages list the names in this order */
static const char *const untouched_check_names[] = {
	[BACKFILL_UNTOUCHED_OFF] = NULL,
	[BACKFILL_UNTOUCHED_AUTO] = "auto",
	[BACKFILL_UNTOUCHED_FULL] = "full",
	[BACKFILL_UNTOUCHED_COUNTERS] = "counters"
};

StaticAssertDecl(lengthof(run_status_names) == BACKFILL_RUN_OTHER + 1, "a name for each run status");
StaticAssertDecl(lengthof(strategy_names) == BACKFILL_STRATEGY_OTHER + 1, "a name for each strategy");
StaticAssertDecl(lengthof(on_error_names) == BACKFILL_ON_ERROR_CONTINUE + 1, "a name for each on_error");
StaticAssertDecl(lengthof(untouched_check_names) == BACKFILL_UNTOUCHED_COUNTERS + 1,
				 "an entry for each check_untouched");

const BackfillNames BackfillRunStatusNames = {run_status_names, lengthof(run_status_names)};
const BackfillNames BackfillStrategyNames = {strategy_names, lengthof(strategy_names)};
const BackfillNames BackfillOnErrorNames = {on_error_names, lengthof(on_error_names)};
const BackfillNames BackfillUntouchedCheckNames = {untouched_check_names, lengthof(untouched_check_names)};

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

/* The names of set in its order, each between quote, as a list of words (char *). */
List *
BackfillNamesQuoted(const BackfillNames *set, char quote)
{
	List	   *words = NIL;

	for (int v = 0; v < set->count; v++)
		if (set->names[v] != NULL)
			words = lappend(words, psprintf("%c%s%c", quote, set->names[v], quote));
	return words;
}

/* Words as a message lists them: "a, b or c", with last (" or ", " and ") before the last one. */
char *
BackfillListed(List *words, const char *last)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, words)
	{
		if (foreach_current_index(lc) > 0)
			appendStringInfoString(&buf, lnext(words, lc) == NULL ? last : ", ");
		appendStringInfoString(&buf, (char *) lfirst(lc));
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
