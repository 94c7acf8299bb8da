/*-------------------------------------------------------------------------
 *
 * src/run/outside.c
 *		What lies outside a run's range: noted when the run is planned,
 *		checked again when it ends.
 *
 * A run never writes outside its range; another session may, and the run's
 * end says so.  options.check_untouched says how each partition outside the
 * range is noted and checked:
 *
 * - "auto" (the default): a partition whose visibility map shows every page
 *   all-visible is noted by its map (storage, pages, VACUUM count) and
 *   proven untouched at the end by reading the map again, not its rows
 *   (base/untouched.c says why that is a proof); any other partition (not
 *   vacuumed since its last write, typically the newest days; a Citus
 *   table's, whose rows live on the workers) is fingerprinted at both ends,
 *   as "full" does.  A partition proven at plan time and not at the end was
 *   written during the run: reported as written, with what its counters
 *   say, never as untouched; its values were not compared (a write rolled
 *   back, or setting a value to itself, is reported too).
 * - "full": every partition fingerprinted at both ends.
 * - "counters": the cumulative statistics' counts of rows written, which
 *   a write not yet reported can escape.
 *
 * A table that is not partitioned is noted by the fingerprint of its rows
 * outside the range: the run itself writes its pages.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"

#include "base/citus.h"
#include "base/compat.h"
#include "base/extension.h"
#include "base/relation.h"
#include "base/spi_util.h"
#include "base/untouched.h"
#include "hash/fingerprint.h"
#include "record/log.h"
#include "run/outside.h"

/* the names an entry's "check" gives its mode */
#define CHECK_MAP			"visibility map"
#define CHECK_FINGERPRINT	"fingerprint"
#define CHECK_COUNTERS		"counters"

/* relid's map as it is now, read under a lock held for that moment only */
static void
ReadMap(Oid relid, BackfillUntouched *u)
{
	LockRelationOid(relid, AccessShareLock);
	BackfillReadUntouched(relid, u);
	UnlockRelationOid(relid, AccessShareLock);
}

/* Append "partition" and "scope" (either may be NULL) to the start of an entry. */
static void
AppendEntryStart(StringInfo buf, const char *partition, const char *scope, const char *check)
{
	appendStringInfoString(buf, "{\"partition\": ");
	if (partition)
		escape_json(buf, partition);
	else
		appendStringInfoString(buf, "null");
	appendStringInfoString(buf, ", \"scope\": ");
	if (scope)
		escape_json(buf, scope);
	else
		appendStringInfoString(buf, "null");
	appendStringInfo(buf, ", \"check\": \"%s\"", check);
}

/* The fingerprint of a relation (or of its rows in scope) as a jsonb object text. */
static char *
FingerprintEntry(Oid relid, const char *partition, const char *scope, int64 lastlog)
{
	BackfillFingerprint fp;
	StringInfoData buf;

	/* a partition through its parent: the caller may not read it directly */
	if (partition)
		BackfillFingerprintThroughParent(get_partition_parent(relid, false), relid, &fp);
	else
		BackfillFingerprintRel(relid, scope, true, &fp);
	initStringInfo(&buf);
	AppendEntryStart(&buf, partition, scope, CHECK_FINGERPRINT);
	appendStringInfo(&buf, ", \"rows\": " UINT64_FORMAT ", \"fingerprint\": ", fp.rows);
	escape_json(&buf, BackfillFingerprintText(&fp));
	appendStringInfo(&buf, ", \"last_log\": " INT64_FORMAT "}", lastlog);
	return buf.data;
}

/*
 * The entry of partition relid (named partition) by its counters: the rows
 * inserted, updated and deleted in it so far, as the cumulative statistics
 * say, its storage, and the last record of backfill_log, so that the run's
 * end can tell whether anything wrote it meanwhile without reading it
 * (BackfillUntouchedWrites); with u, a map that proves it, noted by that
 * map instead, with the counts the map's proof compares.
 */
static char *
CountersEntry(Oid relid, const char *partition, int64 lastlog, const char *epoch, const BackfillUntouched *u)
{
	StringInfoData buf;

	initStringInfo(&buf);
	AppendEntryStart(&buf, partition, NULL, u ? CHECK_MAP : CHECK_COUNTERS);
	appendStringInfo(&buf, ", \"writes\": " INT64_FORMAT ", \"file\": %u",
					 u ? u->writes : BackfillUntouchedWrites(relid), u ? u->relfilenode : BackfillRelFileNode(relid));
	if (u)
		appendStringInfo(&buf, ", \"pages\": %u, \"vacuums\": " INT64_FORMAT, u->pages, u->vacuums);
	appendStringInfo(&buf, ", \"last_log\": " INT64_FORMAT ", \"stats_epoch\": ", lastlog);
	escape_json(&buf, epoch);
	appendStringInfoChar(&buf, '}');
	return buf.data;
}

/* The entry of partition relid when the run checks it by its map where it can ("auto"). */
static char *
AutoEntry(Oid relid, const char *partition, int64 lastlog, const char *epoch)
{
	BackfillUntouched u;

	/* a Citus table's rows are on its workers: its map here proves nothing */
	if (!BackfillCitusDistributed(relid))
	{
		ReadMap(relid, &u);
		if (BackfillUntouchedBetween(&u, &u))
			return CountersEntry(relid, partition, lastlog, epoch, &u);
	}
	return FingerprintEntry(relid, partition, NULL, lastlog);
}

/*
 * Append to untouched (a jsonb array's text, open) an entry for each
 * watched partition, as check says.
 */
void
BackfillOutsidePartitions(List *watched, BackfillUntouchedCheck check, StringInfo untouched)
{
	int64		lastlog = BackfillLastLogId(BackfillInstalledSchema());
	char	   *epoch;
	ListCell   *lc;

	BackfillUntouchedSnapshot();
	epoch = BackfillStatsEpoch();
	foreach(lc, watched)
	{
		Oid			child = lfirst_oid(lc);
		char	   *name = BackfillQualifiedName(child);

		CHECK_FOR_INTERRUPTS();
		appendStringInfoString(untouched, untouched->len > 1 ? ", " : "");
		appendStringInfoString(untouched,
							   check == BACKFILL_UNTOUCHED_FULL ? FingerprintEntry(child, name, NULL, lastlog)
							   : check == BACKFILL_UNTOUCHED_COUNTERS ? CountersEntry(child, name, lastlog, epoch, NULL)
							   : AutoEntry(child, name, lastlog, epoch));
	}
}

/* The entry of the rows of relid (not partitioned) in scope, outside the range: their fingerprint. */
char *
BackfillOutsideRows(Oid relid, const char *scope)
{
	return FingerprintEntry(relid, NULL, scope, BackfillLastLogId(BackfillInstalledSchema()));
}

/* What the end of a run found of one entry of untouched. */
typedef enum OutsideFound
{
	OUTSIDE_UNTOUCHED,			/* proven: the same values, or no page written */
	OUTSIDE_CHANGED,			/* its values differ, or rows were written (counters) */
	OUTSIDE_WRITTEN,			/* pages written (the map); the values were not compared */
	OUTSIDE_UNKNOWN				/* could not be told */
} OutsideFound;

static const char *const found_names[] = {"untouched", "changed", "written", "unknown"};

typedef struct UntouchedState
{
	const char *check;			/* how it was checked */
	OutsideFound found;
	char	   *now;			/* the fingerprint now, or NULL */
	int64		logid;			/* the record of backfill's that wrote it, or 0 */
	char	   *why;			/* what was found, for the warning */
} UntouchedState;

/* An entry's fields, as CheckUntouched reads them. */
enum
{
	F_PARTITION, F_SCOPE, F_FINGERPRINT, F_WRITES, F_FILE, F_LAST_LOG, F_EPOCH, F_CHECK, F_PAGES, F_VACUUMS,
	F_COUNT
};
static const char *const entry_fields[F_COUNT] = {"partition", "scope", "fingerprint", "writes", "file",
"last_log", "stats_epoch", "check", "pages", "vacuums"};

/*
 * The latest record backfill wrote of partition (a replacement's, or a
 * merge's of the partition itself) after record after whose
 * fingerprint_after is now's, or 0.  after is the last record at plan time:
 * a record made before the plan (a day replaced and undone last month)
 * cannot explain a change made during the run, even one that gives the
 * partition that record's rows again.
 */
static int64
LoggedWrite(BackfillRun *run, const char *partition, const char *now, int64 after)
{
	Oid			types[3] = {TEXTOID, TEXTOID, INT8OID};
	Datum		values[3] = {CStringGetTextDatum(partition), CStringGetTextDatum(now), Int64GetDatum(after)};

	(void) BackfillStateExec(run->extschema,
							 psprintf("SELECT id FROM %s WHERE (partition = $1 OR (partition IS NULL AND target = $1))"
									  " AND fingerprint_after = $2 AND id > $3 AND origin = 'backfill' ORDER BY id DESC LIMIT 1",
									  BackfillExtName(run->extschema, "backfill_log_data")),
							 3, types, values, NULL, 1);
	return SPI_processed == 1 ? pg_strtoint64(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1)) : 0;
}

/*
 * The last record of backfill_log when the entry row of untouched was
 * planned; an entry planned without it is explained by no record.
 */
static int64
PlanLastLog(char **row)
{
	return row[F_LAST_LOG] ? pg_strtoint64(row[F_LAST_LOG]) : PG_INT64_MAX;
}

/*
 * relid, a partition of the run's target found not untouched: its
 * fingerprint now (through the target), and the record of backfill's that
 * explains it, if any.
 */
static void
FindLoggedWrite(BackfillRun *run, Oid relid, char **row, UntouchedState *st)
{
	BackfillFingerprint fp;

	BackfillFingerprintThroughParent(run->targetoid, relid, &fp);
	st->now = BackfillFingerprintText(&fp);
	st->logid = LoggedWrite(run, row[F_PARTITION], st->now, PlanLastLog(row));
}

/* What the counters say of the rows written since the plan (since of them), for a message. */
static char *
CountedWrites(int64 since, bool same_epoch)
{
	if (!same_epoch)
		return "its statistics were reset since the plan";
	if (since < 0)
		return "its statistics were reset";
	return psprintf("its statistics count " INT64_FORMAT " row%s inserted, updated or deleted since the plan",
					since, since == 1 ? "" : "s");
}

/*
 * An entry planned by its visibility map: untouched if the map proves it
 * still, its counters of rows written included (a VACUUM that set again the
 * bits a write cleared and never ended is counted nowhere: only the write's
 * own counters tell, base/untouched.c).  Otherwise written: new storage, a page added or no longer
 * all-visible, or, the map all-visible again after a VACUUM (which sets
 * again the bits a write cleared), rows its counters count since the plan.
 * Else not to be told: a VACUUM counted, or the statistics reset, since the
 * plan, or one running at the end.
 */
static void
CheckUntouchedMap(BackfillRun *run, Oid relid, char **row, const char *epoch, UntouchedState *st)
{
	BackfillUntouched then;
	BackfillUntouched now;
	bool		same_epoch = row[F_EPOCH] == NULL || strcmp(row[F_EPOCH], epoch) == 0;
	int64		since;
	char	   *counted;

	memset(&then, 0, sizeof(then));
	then.relfilenode = (Oid) strtoul(row[F_FILE], NULL, 10);
	then.pages = then.all_visible = (BlockNumber) strtoul(row[F_PAGES], NULL, 10);
	then.vacuums = pg_strtoint64(row[F_VACUUMS]);
	then.writes = pg_strtoint64(row[F_WRITES]);
	ReadMap(relid, &now);
	since = BackfillUntouchedWrites(relid) - then.writes;
	if (BackfillUntouchedBetween(&then, &now) && same_epoch)
	{
		st->found = OUTSIDE_UNTOUCHED;
		return;
	}
	counted = CountedWrites(since, same_epoch);
	st->found = OUTSIDE_WRITTEN;
	if (now.relfilenode != then.relfilenode)
		st->why = psprintf("was truncated or rewritten (%s)", counted);
	else if (now.all_visible == InvalidBlockNumber)
	{
		st->found = OUTSIDE_UNKNOWN;
		st->why = psprintf("could not be proven untouched (a VACUUM of it was running at the end; %s)", counted);
	}
	else if (now.pages != then.pages || now.all_visible != now.pages)
		st->why = psprintf("was written (%u of its %u pages not all-visible, %u pages at plan time; %s)",
						   now.pages - now.all_visible, now.pages, then.pages, counted);
	else if (same_epoch && since > 0)
		st->why = psprintf("was written, then VACUUMed (%s)", counted);
	else
	{
		st->found = OUTSIDE_UNKNOWN;
		st->why = psprintf("could not be proven untouched (VACUUMed, or its statistics reset, since the plan; %s)",
						   counted);
	}
	FindLoggedWrite(run, relid, row, st);
}

/*
 * An entry planned by its counters: the same if no row of it was written
 * since and it has the same storage; written by a record of backfill's
 * since the plan if its fingerprint now is that record's; otherwise
 * changed, or, its statistics reset meanwhile, not to be told.
 */
static void
CheckUntouchedCounters(BackfillRun *run, Oid relid, char **row, const char *epoch, UntouchedState *st)
{
	int64		planned = pg_strtoint64(row[F_WRITES]);
	int64		writes = BackfillUntouchedWrites(relid);

	st->found = OUTSIDE_CHANGED;
	if (BackfillRelFileNode(relid) != (Oid) strtoul(row[F_FILE], NULL, 10))
		st->why = "was truncated or rewritten";
	else if (row[F_EPOCH] && strcmp(row[F_EPOCH], epoch) != 0)
	{
		/* reset, then written as often: the counters would read the same */
		st->found = OUTSIDE_UNKNOWN;
		st->why = "could not be checked (the statistics were reset, or lost in a crash, since the plan)";
	}
	else if (writes == planned)
		st->found = OUTSIDE_UNTOUCHED;
	else if (writes < planned)
	{
		st->found = OUTSIDE_UNKNOWN;
		st->why = "could not be checked (its statistics were reset)";
	}
	else
		st->why = psprintf("had " INT64_FORMAT " rows inserted, updated or deleted", writes - planned);
	if (st->found == OUTSIDE_CHANGED)
		FindLoggedWrite(run, relid, row, st);
}

/*
 * An entry planned by its fingerprint: the same if its fingerprint is;
 * rewritten by a logged write if a record of backfill's has its fingerprint
 * now.
 */
static void
CheckUntouchedFingerprint(BackfillRun *run, Oid relid, char **row, UntouchedState *st)
{
	BackfillFingerprint fp;

	if (row[F_PARTITION] && get_rel_relispartition(relid) && get_partition_parent(relid, true) == run->targetoid)
		BackfillFingerprintThroughParent(run->targetoid, relid, &fp);	/* SELECT on the target suffices */
	else
		BackfillFingerprintRel(relid, row[F_SCOPE], true, &fp);
	st->now = BackfillFingerprintText(&fp);
	st->found = strcmp(st->now, row[F_FINGERPRINT]) == 0 ? OUTSIDE_UNTOUCHED : OUTSIDE_CHANGED;
	st->why = "changed";
	if (st->found == OUTSIDE_CHANGED && row[F_PARTITION])
		st->logid = LoggedWrite(run, row[F_PARTITION], st->now, PlanLastLog(row));
}

/* Append the entry of untouched_after for one entry of untouched. */
static void
AppendUntouched(StringInfo out, bool first, const char *partition, UntouchedState *st)
{
	appendStringInfoString(out, first ? "{\"partition\": " : ", {\"partition\": ");
	if (partition)
		escape_json(out, partition);
	else
		appendStringInfoString(out, "null");
	appendStringInfo(out, ", \"check\": \"%s\", \"found\": \"%s\", \"fingerprint\": ", st->check,
					 found_names[st->found]);
	if (st->now)
		escape_json(out, st->now);
	else
		appendStringInfoString(out, "null");
	appendStringInfo(out, ", \"same\": %s, \"logged_as\": ",
					 st->found == OUTSIDE_UNTOUCHED ? "true" : st->found == OUTSIDE_CHANGED ? "false" : "null");
	if (st->logid)
		appendStringInfo(out, INT64_FORMAT "}", st->logid);
	else
		appendStringInfoString(out, "null}");
}

/* Warn of an entry the end of the run did not find untouched, nor explained by a record. */
static void
WarnOutside(BackfillRun *run, char **row, UntouchedState *st)
{
	ereport(WARNING,
			(errmsg("run " INT64_FORMAT ": %s, outside the range, %s during the run", run->id,
					row[F_PARTITION] ? row[F_PARTITION] : "the rows", st->why),
			 row[F_FINGERPRINT] ? errdetail("Fingerprint at plan time %s, now %s.", row[F_FINGERPRINT],
											st->now ? st->now : "none")
			 : row[F_PAGES] ? errdetail("Checked by its visibility map: all %s pages all-visible at plan time.",
										row[F_PAGES])
			 : errdetail("Checked by its statistics: %s rows inserted, updated or deleted at plan time.",
						 row[F_WRITES]),
			 st->found == OUTSIDE_UNKNOWN
			 ? errhint("Plan with options => '{\"check_untouched\": \"full\"}' to compare fingerprints instead.")
			 : st->found == OUTSIDE_WRITTEN
			 ? errhint("The run never writes outside its range: another session did (a write rolled back, or one"
					   " that set values to themselves, writes pages too).")
			 : errhint("The run never writes outside its range: another session did.")));
}

/*
 * Check again what lay outside the range, as noted when the run was
 * planned; returns jsonb text, *changed the count found changed or written
 * for no logged reason (a partition another run or a replacement rewrote is
 * named with its log record instead), *written those of them only known
 * written.
 */
char *
BackfillOutsideCheck(BackfillRun *run, int *changed, int *written)
{
	uint64		n;
	char	 ***rows = BackfillJsonbRows(run->untouched, F_COUNT, entry_fields, &n);
	StringInfoData out;
	char	   *epoch;

	*changed = *written = 0;
	initStringInfo(&out);
	appendStringInfoChar(&out, '[');
	BackfillUntouchedSnapshot();
	epoch = BackfillStatsEpoch();
	for (uint64 i = 0; i < n; i++)
	{
		char	  **row = rows[i];
		Oid			relid = row[F_PARTITION]
			? RangeVarGetRelid(makeRangeVarFromNameList(BackfillQualifiedNameList(row[F_PARTITION])), NoLock, true)
			: run->targetoid;
		bool		map = row[F_CHECK] && strcmp(row[F_CHECK], CHECK_MAP) == 0 && row[F_PAGES] && row[F_VACUUMS];
		bool		counters = !map && row[F_WRITES] && row[F_FILE];
		UntouchedState st = {map ? CHECK_MAP : counters ? CHECK_COUNTERS : CHECK_FINGERPRINT,
		OUTSIDE_CHANGED, NULL, 0, "was dropped"};

		CHECK_FOR_INTERRUPTS();
		if (OidIsValid(relid) && map)
			CheckUntouchedMap(run, relid, row, epoch, &st);
		else if (OidIsValid(relid) && counters)
			CheckUntouchedCounters(run, relid, row, epoch, &st);
		else if (OidIsValid(relid) && row[F_FINGERPRINT])
			CheckUntouchedFingerprint(run, relid, row, &st);
		if (st.found != OUTSIDE_UNTOUCHED && st.logid == 0)
		{
			*changed += st.found == OUTSIDE_CHANGED || st.found == OUTSIDE_WRITTEN;
			*written += st.found == OUTSIDE_WRITTEN;
			WarnOutside(run, row, &st);
		}
		AppendUntouched(&out, i == 0, row[F_PARTITION], &st);
	}
	appendStringInfoChar(&out, ']');
	return out.data;
}
