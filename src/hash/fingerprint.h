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

#include "hash/rowhash.h"

extern void BackfillFingerprintThroughParent(Oid parent, Oid part, BackfillFingerprint *fp);
extern void BackfillFingerprintRel(Oid relid, const char *scope, bool read_only,
								   BackfillFingerprint *fp);
extern void BackfillFingerprintSums(Oid relid, const char *scope, BackfillFingerprint *fp);
extern void BackfillFingerprintSplit(Oid target, const char *where, const char *scope,
									 BackfillFingerprint *inside, BackfillFingerprint *outside);
extern void BackfillFingerprintSeal(BackfillFingerprint *fp);
extern char *BackfillFingerprintText(const BackfillFingerprint *fp);

#endif							/* BACKFILL_FINGERPRINT_H */
