/*-------------------------------------------------------------------------
 *
 * src/hash/citus_fingerprint.h
 *		Fingerprints of Citus distributed tables, computed shard by shard.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_CITUS_FINGERPRINT_H
#define BACKFILL_CITUS_FINGERPRINT_H

#include "postgres.h"

#include "hash/rowhash.h"

extern bool BackfillCitusFingerprint(Oid relid, const char *scope, bool read_only,
									 BackfillFingerprint *fp);
extern bool BackfillCitusShardsMayHash(const char *fn);
extern char *BackfillCitusQuotedSchema(void);

#endif							/* BACKFILL_CITUS_FINGERPRINT_H */
