/*-------------------------------------------------------------------------
 *
 * src/hash/fpscan.h
 *		A whole table's fingerprint, read by a table scan of its own.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_FPSCAN_H
#define BACKFILL_FPSCAN_H

#include "postgres.h"

#include "hash/rowhash.h"

extern bool BackfillFingerprintScan(Oid via, Oid relid, bool read_only,
									BackfillFingerprint *fp);

#endif							/* BACKFILL_FPSCAN_H */
