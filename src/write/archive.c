/*-------------------------------------------------------------------------
 *
 * src/write/archive.c
 *		The archives a replacement keeps: their names, and what backfill_undo
 *		says when the partition they would go back into has left its table.
 *
 * An archive is the old partition, detached and renamed <name>_archived (then
 * _archived1, _archived2, ...) in the partition's schema; its indexes are
 * renamed the same way.  A name has at most NAMEDATALEN - 1 bytes.  Cutting
 * the end of a long name would cut what tells partitions apart (their date,
 * most often), so a name too long keeps its beginning and its end and puts a
 * short hash of the whole name in place of the middle.
 *
 * Retention jobs (pg_partman's run_maintenance, or a DBA) detach and drop old
 * partitions.  When a partition a record replaced has been detached since,
 * undo cannot swap the archive back in; it says so, with what the log knows.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/partition.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "base/extension.h"
#include "base/relation.h"
#include "base/spi_util.h"
#include "record/log.h"
#include "write/archive.h"

/* the bytes of a long name's end that its archive's name keeps */
#define ARCHIVE_NAME_TAIL	24

/* name followed by suffix, in NAMEDATALEN - 1 bytes: the middle hashed if need be */
static char *
FitName(const char *name, const char *suffix)
{
	int			len = strlen(name);
	int			budget = NAMEDATALEN - 1 - strlen(suffix);
	int			tail = 0;
	int			headlen;
	char		mid[16];

	if (len <= budget)
		return psprintf("%s%s", name, suffix);
	snprintf(mid, sizeof(mid), "_%06x_",
			 hash_bytes((const unsigned char *) name, len) & 0xffffff);
	/* the end starts on a character boundary */
	while (len - tail > ARCHIVE_NAME_TAIL)
		tail += pg_mblen(name + tail);
	headlen = pg_mbcliplen(name, len, budget - (int) strlen(mid) - (len - tail));
	return psprintf("%.*s%s%s%s", headlen, name, mid, name + tail, suffix);
}

/*
 * A free name in schema nsp for the archive of the relation (table or index)
 * named name: name_archived, else name_archived1, ...
 */
char *
BackfillArchiveName(const char *name, Oid nsp)
{
	for (int pass = 0;; pass++)
	{
		char		suffix[32];
		char	   *candidate;

		CHECK_FOR_INTERRUPTS();
		if (pass == 0)
			snprintf(suffix, sizeof(suffix), "_archived");
		else
			snprintf(suffix, sizeof(suffix), "_archived%d", pass);
		candidate = FitName(name, suffix);
		if (!OidIsValid(get_relname_relid(candidate, nsp)))
			return candidate;
	}
}

/*
 * What the log says of partname after record logid: its latest record
 * writing it or archiving it, as a sentence, or NULL.
 */
static char *
LaterRecord(Oid extschema, int64 logid, const char *partname)
{
	int			rc;

	rc = BackfillStateExec(extschema,
						   psprintf("SELECT pg_catalog.format('Record %%s of backfill_log (%%s by %%s at %%s) is the last about it.',"
									"   id, operation, logged_by, logged_at)"
									" FROM %s.backfill_log_data"
									" WHERE id OPERATOR(pg_catalog.>) $1"
									"   AND (partition OPERATOR(pg_catalog.=) $2"
									"        OR details OPERATOR(pg_catalog.->>) 'archived_as' OPERATOR(pg_catalog.=) $2)"
									" ORDER BY id DESC LIMIT 1",
									quote_identifier(get_namespace_name(extschema))),
						   2, (Oid[]) {INT8OID, TEXTOID},
						   (Datum[]) {Int64GetDatum(logid), CStringGetTextDatum(partname)}, NULL, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not read backfill_log");
	return SPI_processed == 1 ? SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1) : NULL;
}

/* What the archive holds, as record logid describes it, as a sentence. */
static char *
ArchiveHolds(Oid extschema, int64 logid, Oid targetoid, const char *partname, const char *archivename)
{
	int			rc;

	if (!BackfillMaySeeRows(targetoid))
		return psprintf("The archive %s holds the rows %s had before record " INT64_FORMAT ".",
						archivename, partname, logid);
	rc = BackfillStateExec(extschema,
						   psprintf("SELECT rows_before, fingerprint_before FROM %s.backfill_log_data"
									" WHERE id OPERATOR(pg_catalog.=) $1",
									quote_identifier(get_namespace_name(extschema))),
						   1, (Oid[]) {INT8OID}, (Datum[]) {Int64GetDatum(logid)}, NULL, 1);
	if (rc != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read backfill_log");
	return psprintf("The archive %s holds the %s rows %s had before record " INT64_FORMAT " (fingerprint %s).",
					archivename, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1),
					partname, logid, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2));
}

/*
 * Refuse to undo record logid if partoid, the table now named as the
 * partition it replaced, is no longer a partition of targetoid: say that it
 * was detached, by what the log knows, and what the archive holds.
 */
void
BackfillRefuseUndoDetached(Oid extschema, int64 logid, Oid partoid, const char *partname,
						   Oid targetoid, const char *archivename)
{
	char	   *now;
	char	   *who;

	if (get_rel_relispartition(partoid) &&
		list_member_oid(get_partition_ancestors(partoid), targetoid))
		return;
	if (get_rel_relispartition(partoid))
		now = psprintf("It is now a partition of %s.",
					   BackfillQualifiedName(get_partition_parent(partoid, false)));
	else
		now = pstrdup("It is now a table of its own.");
	who = LaterRecord(extschema, logid, partname);
	if (who == NULL)
		who = "No later record of backfill_log concerns it: it was detached outside backfill, by hand or by a retention job (pg_partman's run_maintenance detaches the partitions past its retention).";
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("cannot undo record " INT64_FORMAT ": partition %s was detached from %s",
					logid, partname, BackfillQualifiedName(targetoid)),
			 errdetail("%s %s %s", now, who,
					   ArchiveHolds(extschema, logid, targetoid, partname, archivename)),
			 errhint("If the range is to stay out of %s, drop %s when it is no longer needed; to bring the old rows back, attach %s to %s with the partition's bounds.",
					 BackfillQualifiedName(targetoid), archivename, archivename,
					 BackfillQualifiedName(targetoid))));
}
