/*-------------------------------------------------------------------------
 *
 * src/hash/siphash.c
 *		The database's secret keys, which row hashes and fingerprints' seals
 *		are made under.
 *
 * The words a row's values give (valuehash.c, rowhash.c) are hashed by
 * SipHash-1-3 (siphash.h) under a secret 128-bit key (backfill_key_data,
 * made by CREATE EXTENSION from the server's strong random source, kept by
 * pg_dump): SipHash is a pseudorandom function, so without the key nobody
 * can compute a row hash, nor find two rows that hash alike, nor two
 * multisets whose sums meet, better than by chance; and the sums a
 * fingerprint shows are sealed under a second key (BackfillSealSums), so no
 * row's hash can be read off either.  A check value of the keys
 * (BackfillKeyCheck) tells whether two databases share them, and nothing of
 * the keys themselves.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <inttypes.h>

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/tableam.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "base/compat.h"
#include "base/extension.h"
#include "hash/siphash.h"

/*
 * The database's secret keys: 32 bytes, the first 16 keying the row hash,
 * the last 16 sealing fingerprints.  They are the row of backfill_key_data
 * (in the extension's schema) that was made first: CREATE EXTENSION makes
 * one, and a restore brings back the older one of the database dumped, so
 * fingerprints recorded before a dump still compare equal after its restore.
 * Read directly, whoever calls: no role needs to read the table.
 */
static void
LoadKeys(uint64 keys[4])
{
	Oid			relid = get_relname_relid("backfill_key_data", BackfillInstalledSchema());
	Relation	rel;
	TableScanDesc scan;
	Snapshot	snap;
	HeapTuple	tuple;
	bool		found = false;
	TimestampTz best_made = 0;
	unsigned char best[32];

	if (!OidIsValid(relid))
		elog(ERROR, "the table backfill_key_data of extension backfill is missing");
	rel = table_open(relid, AccessShareLock);
	snap = RegisterSnapshot(ActiveSnapshotSet() ? GetActiveSnapshot() : GetLatestSnapshot());
	scan = table_beginscan(rel, snap, 0, NULL);
	while ((tuple = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		bool		isnull[2];
		Datum		key = heap_getattr(tuple, 1, RelationGetDescr(rel), &isnull[0]);
		Datum		made = heap_getattr(tuple, 2, RelationGetDescr(rel), &isnull[1]);
		bytea	   *k;

		if (isnull[0] || isnull[1])
			continue;
		k = DatumGetByteaPP(key);
		if (VARSIZE_ANY_EXHDR(k) != sizeof(best))
			continue;
		if (!found || DatumGetTimestampTz(made) < best_made ||
			(DatumGetTimestampTz(made) == best_made && memcmp(VARDATA_ANY(k), best, sizeof(best)) < 0))
		{
			memcpy(best, VARDATA_ANY(k), sizeof(best));
			best_made = DatumGetTimestampTz(made);
			found = true;
		}
	}
	table_endscan(scan);
	UnregisterSnapshot(snap);
	table_close(rel, AccessShareLock);

	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("backfill has no key to hash rows with: the table backfill_key_data holds no key"),
				 errhint("As its owner, run INSERT INTO backfill_key_data DEFAULT VALUES; fingerprints recorded under the lost key will no longer compare equal.")));
	memcpy(keys, best, sizeof(best));
}

/* The key row hashes are made under: the first 16 bytes of the database's keys. */
void
BackfillRowHashKey(uint64 *k0, uint64 *k1)
{
	uint64		keys[4];

	LoadKeys(keys);
	*k0 = keys[0];
	*k1 = keys[1];
}

/*
 * Seal a multiset's count and sums into the 128 bits a fingerprint shows:
 * SipHash-2-4 of the three words under the database's second key, twice
 * (told apart by a last word).  Equal multisets give equal seals; anything
 * else gives unrelated ones, from which nothing of the sums, and so of any
 * row's hash, can be read without the key.
 */
void
BackfillSealSums(uint64 rows, uint64 sum1, uint64 sum2, uint64 sealed[2])
{
	uint64		keys[4];

	LoadKeys(keys);
	for (int half = 0; half < 2; half++)
	{
		BackfillSipState s;

		uint64		words[4] = {rows, sum1, sum2, (uint64) half + 1};

		SipInit(&s, keys[2], keys[3]);
		for (int i = 0; i < 4; i++)
		{
			s.v3 ^= words[i];
			SipRound(&s);
			SipRound(&s);
			s.v0 ^= words[i];
		}
		sealed[half] = SipFinish(&s, 4);
	}
}

/*
 * A check value of the database's keys: SipHash-2-4 of a fixed word under
 * each of them, as 32 hexadecimal digits.  Two databases (two Citus nodes)
 * with the same check value hash rows alike; the value tells nothing of the
 * keys themselves.
 */
char *
BackfillKeyCheck(void)
{
	uint64		keys[4];
	uint64		check[2];

	LoadKeys(keys);
	for (int half = 0; half < 2; half++)
	{
		BackfillSipState s;
		uint64		word = UINT64CONST(0x6b6579636865636b);	/* "keycheck" */

		SipInit(&s, keys[2 * half], keys[2 * half + 1]);
		s.v3 ^= word;
		SipRound(&s);
		SipRound(&s);
		s.v0 ^= word;
		check[half] = SipFinish(&s, 4);
	}
	return psprintf("%016" PRIx64 "%016" PRIx64, check[0], check[1]);
}
