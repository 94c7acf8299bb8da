/*-------------------------------------------------------------------------
 *
 * src/hash/fingerprint.h
 *		Order-independent fingerprints of multisets of rows.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_FINGERPRINT_H
#define BACKFILL_FINGERPRINT_H

#include "postgres.h"

/*
 * A fingerprint being computed holds the sums; a finished one is sealed:
 * sum1 and sum2 then hold the 128 bits shown (see BackfillSealSums), which
 * say whether two multisets are equal and nothing else.
 */
typedef struct BackfillFingerprint
{
	uint64		rows;
	uint64		sum1;			/* sum of the row hashes */
	uint64		sum2;			/* sum of a second mix of the row hashes */
	bool		sealed;
} BackfillFingerprint;

/*
 * The second lane's term for a row hash h: a product of h with itself, which
 * is not additive, so two multisets whose first sums meet by chance still
 * differ in the second.
 */
static inline uint64
BackfillFingerprintLane2(uint64 h)
{
	return (h ^ UINT64CONST(0xa4093822299f31d0)) * (h | 1);
}

extern void BackfillFingerprintThroughParent(Oid parent, Oid part, BackfillFingerprint *fp);
extern void BackfillFingerprintRel(Oid relid, const char *scope, bool read_only,
								   BackfillFingerprint *fp);
extern bool BackfillFingerprintScan(Oid via, Oid relid, bool read_only,
									BackfillFingerprint *fp);
extern void BackfillFingerprintSeal(BackfillFingerprint *fp);
extern char *BackfillFingerprintText(const BackfillFingerprint *fp);

#endif							/* BACKFILL_FINGERPRINT_H */
