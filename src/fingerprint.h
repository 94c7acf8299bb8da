/*-------------------------------------------------------------------------
 *
 * src/fingerprint.h
 *		Order-independent fingerprints of multisets of rows.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_FINGERPRINT_H
#define BACKFILL_FINGERPRINT_H

#include "postgres.h"

typedef struct BackfillFingerprint
{
	uint64		rows;
	uint64		sum1;			/* sum of the row hashes */
	uint64		sum2;			/* sum of a second mix of the row hashes */
} BackfillFingerprint;

extern void BackfillFingerprintRel(Oid relid, const char *scope, bool read_only,
								   BackfillFingerprint *fp);
extern char *BackfillFingerprintText(const BackfillFingerprint *fp);

#endif							/* BACKFILL_FINGERPRINT_H */
