/*-------------------------------------------------------------------------
 *
 * src/write/publication.c
 *		Replacements and logical replication.
 *
 * A replacement writes its rows into a new table and swaps it in with DETACH
 * and ATTACH.  Logical replication carries row changes, not DDL: subscribers
 * would keep the old rows, and nothing would tell them.  Taking the table out
 * of the publication for the backfill and adding it back does not bring them
 * up to date either.  backfill_merge writes INSERT, UPDATE and DELETE, which
 * replicate, so a replacement of a published partition is refused, when a
 * run is planned as when the partition is replaced, pointing at the merge.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "base/spi_util.h"
#include "write/publication.h"

/* The name of a publication that replicates part (itself, an ancestor or its schema), or NULL. */
static char *
PublicationOf(Oid part)
{
	return BackfillQueryText(
		"SELECT p.pubname FROM pg_catalog.pg_publication p"
		" WHERE p.puballtables"
		"    OR EXISTS (SELECT 1 FROM pg_catalog.pg_publication_rel r"
		"               WHERE r.prpubid OPERATOR(pg_catalog.=) p.oid"
		"                 AND r.prrelid IN (SELECT relid FROM pg_catalog.pg_partition_ancestors($1)))"
		"    OR EXISTS (SELECT 1 FROM pg_catalog.pg_publication_namespace n, pg_catalog.pg_class c"
		"               WHERE n.pnpubid OPERATOR(pg_catalog.=) p.oid AND n.pnnspid OPERATOR(pg_catalog.=) c.relnamespace"
		"                 AND c.oid IN (SELECT relid FROM pg_catalog.pg_partition_ancestors($1)))"
		" ORDER BY p.pubname LIMIT 1", part);
}

/*
 * Refuse to replace the partition part if a publication replicates it.
 * plantarget: the table a run is being planned on, or NULL when the
 * partition itself is being replaced.  Inside SPI.
 */
void
BackfillRefusePublished(Oid part, const char *plantarget)
{
	char	   *pub = PublicationOf(part);

	if (pub == NULL)
		return;
	if (plantarget != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot plan a run replacing the partitions of %s: publication \"%s\" replicates partition %s",
						plantarget, pub, BackfillQualifiedName(part)),
				 errdetail("A replacement swaps in a new table by DETACH and ATTACH, which logical replication does not carry: subscribers would keep the old rows."),
				 errhint("Plan the run with strategy => 'merge' and a key: its inserts, updates and deletes replicate. Taking the table out of the publication for the backfill does not bring the subscribers up to date when it is added back.")));
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cannot replace partition %s: publication \"%s\" replicates it", BackfillQualifiedName(part), pub),
			 errdetail("The new rows are written to a staging table and swapped in by DETACH and ATTACH, which logical replication does not carry: subscribers would keep the old rows."),
			 errhint("Use backfill_merge on the partition with a key (or a run planned with strategy => 'merge'): its inserts, updates and deletes replicate. Taking the table out of the publication for the backfill does not bring the subscribers up to date when it is added back.")));
}
