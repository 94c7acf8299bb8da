/*-------------------------------------------------------------------------
 *
 * src/hash/fpscan.h
 *		Fingerprints read by table scans of their own: a whole table's, and
 *		a scope's partitions' split by the scope.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_FPSCAN_H
#define BACKFILL_FPSCAN_H

#include "postgres.h"

#include "hash/rowhash.h"

extern bool BackfillFingerprintScan(Oid via, Oid relid, bool read_only,
									BackfillFingerprint *fp);
extern bool BackfillFingerprintScanSplit(Oid via, List *parts, const char *scope,
										 BackfillFingerprint *inside,
										 BackfillFingerprint *outside);

#endif							/* BACKFILL_FPSCAN_H */
