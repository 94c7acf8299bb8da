/*-------------------------------------------------------------------------
 *
 * src/base/compat.h
 *		Shims over the server APIs that differ between PostgreSQL 15, 16, 17
 *		and 18.
 *
 * Everything version-dependent goes through here, so the rest of the code
 * reads as if there were one server version.  Each difference is a
 * BACKFILL_HAVE_<feature> macro named for the feature, defined here from the
 * server version, and the shims below test the feature.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_COMPAT_H
#define BACKFILL_COMPAT_H

#include "postgres.h"

#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "executor/executor.h"
#include "nodes/parsenodes.h"
#include "storage/lock.h"
#include "utils/acl.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#if PG_VERSION_NUM < 150000
#error "backfill needs PostgreSQL 15 or later"
#endif

/* 16: a range table's permissions live in RTEPermissionInfo nodes beside it */
#if PG_VERSION_NUM >= 160000
#define BACKFILL_HAVE_RTE_PERMISSION_INFO
#include "parser/parse_relation.h"
#endif

/* 18: ExecInitRangeTable is told which relations survived initial pruning */
#if PG_VERSION_NUM >= 180000
#define BACKFILL_HAVE_UNPRUNED_RELIDS
#endif

/*
 * 18: NOT NULL constraints are rows of pg_constraint (contype 'n') that may
 * be NOT VALID while attnotnull is set.  (18's NOT ENFORCED CHECK constraints
 * need no code: LIKE ... INCLUDING ALL copies them as they are.)
 */
#if PG_VERSION_NUM >= 180000
#define BACKFILL_HAVE_NOT_NULL_CONSTRAINTS
#include "access/htup_details.h"
#include "catalog/pg_constraint.h"
#endif

/* 18: virtual generated columns, computed when read and stored as NULL */
#if PG_VERSION_NUM >= 180000
#define BACKFILL_HAVE_VIRTUAL_GENERATED_COLUMNS
#endif

/* 16: the varlena macros live in varatt.h, no longer in postgres.h */
#if PG_VERSION_NUM >= 160000
#define BACKFILL_HAVE_VARATT_H
#include "varatt.h"
#endif

/* 16: object_ownercheck and object_aclcheck replace the per-catalog checks */
#if PG_VERSION_NUM >= 160000
#define BACKFILL_HAVE_OBJECT_ACL_CHECKS
#endif

/* 16: parsing functions take a soft-error context (escontext) */
#if PG_VERSION_NUM >= 160000
#define BACKFILL_HAVE_SOFT_ERRORS
#endif

/* 16: tuplesort_getdatum says whether to copy the value it returns */
#if PG_VERSION_NUM >= 160000
#define BACKFILL_HAVE_TUPLESORT_GETDATUM_COPY
#endif

/*
 * 16: the relation cache names a relation's storage a relfilelocator
 * (RelationAssumeNewRelfilelocator, rd_*RelfilelocatorSubid)
 */
#if PG_VERSION_NUM >= 160000
#define BACKFILL_HAVE_RELFILELOCATOR
#endif

/* 16: a table's statistics name its autovacuum count autovacuum_count */
#if PG_VERSION_NUM >= 160000
#define BackfillAutovacuumCount(tab) ((tab)->autovacuum_count)
#else
#define BackfillAutovacuumCount(tab) ((tab)->autovac_vacuum_count)
#endif

/* the subtransaction that last (first) gave a relation new storage in this transaction, or 0 */
#ifdef BACKFILL_HAVE_RELFILELOCATOR
#define BackfillRelNewStorageSubid(rel) ((rel)->rd_newRelfilelocatorSubid)
#define BackfillRelFirstStorageSubid(rel) ((rel)->rd_firstRelfilelocatorSubid)
#else
#define BackfillRelNewStorageSubid(rel) ((rel)->rd_newRelfilenodeSubid)
#define BackfillRelFirstStorageSubid(rel) ((rel)->rd_firstRelfilenodeSubid)
#endif

/* 17: a relation's smgr link survives the invalidation of its relcache entry */
#if PG_VERSION_NUM >= 170000
#define BACKFILL_HAVE_STABLE_SMGR_LINKS
#endif

/* 18: pg_class counts a table's all-frozen pages (relallfrozen) */
#if PG_VERSION_NUM >= 180000
#define BACKFILL_HAVE_RELALLFROZEN
#endif

/* 17: LockHeldByMe can also answer "this mode or a stronger one" (orstronger) */
#if PG_VERSION_NUM >= 170000
#define BACKFILL_HAVE_LOCK_HELD_OR_STRONGER
#endif

/* 15.1: SetSingleFuncCall was renamed InitMaterializedSRF */
#if PG_VERSION_NUM < 150001
#define InitMaterializedSRF(fcinfo, flags) SetSingleFuncCall((fcinfo), (flags))
#endif

/* Does this transaction hold the lock locktag in mode lockmode, exactly? */
#ifdef BACKFILL_HAVE_LOCK_HELD_OR_STRONGER
#define BackfillLockHeldByMe(locktag, lockmode) LockHeldByMe((locktag), (lockmode), false)
#else
#define BackfillLockHeldByMe(locktag, lockmode) LockHeldByMe((locktag), (lockmode))
#endif

/*
 * Does this transaction hold the lock locktag in mode lockmode or a stronger
 * one?  "Stronger" as 17's LockHeldByMe counts it: a mode of a higher number.
 */
#ifdef BACKFILL_HAVE_LOCK_HELD_OR_STRONGER
#define BackfillLockHeldOrStronger(locktag, lockmode) LockHeldByMe((locktag), (lockmode), true)
#else
static inline bool
BackfillLockHeldOrStronger(const LOCKTAG *locktag, LOCKMODE lockmode)
{
	for (LOCKMODE mode = lockmode; mode <= MaxLockMode; mode++)
		if (LockHeldByMe(locktag, mode))
			return true;
	return false;
}
#endif

/* Does roleid own relation relid? */
#ifdef BACKFILL_HAVE_OBJECT_ACL_CHECKS
#define BackfillRelOwnerCheck(relid, roleid) \
	object_ownercheck(RelationRelationId, (relid), (roleid))
#else
#define BackfillRelOwnerCheck(relid, roleid) \
	pg_class_ownercheck((relid), (roleid))
#endif

/*
 * An executor range table of the one relation rte, with the permission info
 * it needs from 16 (without it, ExecConstraints fails with "invalid
 * perminfoindex 0" instead of reporting the violated constraint).
 */
static inline void
BackfillExecInitOneRelation(EState *estate, RangeTblEntry *rte)
{
#ifdef BACKFILL_HAVE_RTE_PERMISSION_INFO
	List	   *perminfos = NIL;

	addRTEPermissionInfo(&perminfos, rte);
#ifdef BACKFILL_HAVE_UNPRUNED_RELIDS
	ExecInitRangeTable(estate, list_make1(rte), perminfos, bms_make_singleton(1));
#else
	ExecInitRangeTable(estate, list_make1(rte), perminfos);
#endif
#else
	ExecInitRangeTable(estate, list_make1(rte));
#endif
}

/*
 * Is column attnum of relid NOT NULL for every row it holds?  attnotnull
 * says so up to 17; from 18 it is also set by a NOT VALID constraint, which
 * only new rows obey, so the constraint must be validated.
 */
static inline bool
BackfillAttNotNullProven(Oid relid, AttrNumber attnum, bool attnotnull)
{
#ifdef BACKFILL_HAVE_NOT_NULL_CONSTRAINTS
	HeapTuple	con;
	bool		valid;

	if (!attnotnull)
		return false;
	con = findNotNullConstraintAttnum(relid, attnum);
	if (con == NULL)
		return false;
	valid = ((Form_pg_constraint) GETSTRUCT(con))->convalidated;
	heap_freetuple(con);
	return valid;
#else
	return attnotnull;
#endif
}

/* May roleid use schema nspid in mode? */
#ifdef BACKFILL_HAVE_OBJECT_ACL_CHECKS
#define BackfillSchemaAclCheck(nspid, roleid, mode) \
	object_aclcheck(NamespaceRelationId, (nspid), (roleid), (mode))
#else
#define BackfillSchemaAclCheck(nspid, roleid, mode) \
	pg_namespace_aclcheck((nspid), (roleid), (mode))
#endif

/* May roleid use foreign server serverid in mode? */
#ifdef BACKFILL_HAVE_OBJECT_ACL_CHECKS
#define BackfillForeignServerAclCheck(serverid, roleid, mode) \
	object_aclcheck(ForeignServerRelationId, (serverid), (roleid), (mode))
#else
#define BackfillForeignServerAclCheck(serverid, roleid, mode) \
	pg_foreign_server_aclcheck((serverid), (roleid), (mode))
#endif

/* The next datum of a datum tuplesort, a copy the caller owns */
#ifdef BACKFILL_HAVE_TUPLESORT_GETDATUM_COPY
#define BackfillTuplesortGetDatum(state, val, isnull) \
	tuplesort_getdatum((state), true, true, (val), (isnull), NULL)
#else
#define BackfillTuplesortGetDatum(state, val, isnull) \
	tuplesort_getdatum((state), true, (val), (isnull), NULL)
#endif

/* A qualified name's list of parts, raising on a bad one */
#ifdef BACKFILL_HAVE_SOFT_ERRORS
#define BackfillQualifiedNameList(s) stringToQualifiedNameList((s), NULL)
#else
#define BackfillQualifiedNameList(s) stringToQualifiedNameList(s)
#endif

/*
 * After trading the files of gotnew and gotold in pg_class, as CLUSTER does:
 * gotold takes over what gotnew's relcache entry knew of its old files
 * (created or given new files in which subtransaction), and gotnew's files
 * count as new in this subtransaction (for wal_level = minimal).
 */
static inline void
BackfillTakeOverStorage(Relation gotnew, Relation gotold)
{
	gotold->rd_createSubid = gotnew->rd_createSubid;
#ifdef BACKFILL_HAVE_RELFILELOCATOR
	gotold->rd_newRelfilelocatorSubid = gotnew->rd_newRelfilelocatorSubid;
	gotold->rd_firstRelfilelocatorSubid = gotnew->rd_firstRelfilelocatorSubid;
	RelationAssumeNewRelfilelocator(gotnew);
#else
	gotold->rd_newRelfilenodeSubid = gotnew->rd_newRelfilenodeSubid;
	gotold->rd_firstRelfilenodeSubid = gotnew->rd_firstRelfilenodeSubid;
	RelationAssumeNewRelfilenode(gotnew);
#endif
}

/*
 * Before 17, the smgr links of two relations that traded files must be
 * closed before their relcache entries are rebuilt, or one would keep the
 * other's.
 */
#ifdef BACKFILL_HAVE_STABLE_SMGR_LINKS
#define BackfillCloseSmgrLinks(r1, r2) ((void) 0)
#else
#define BackfillCloseSmgrLinks(r1, r2) (RelationCloseSmgrByOid(r1), RelationCloseSmgrByOid(r2))
#endif

#endif							/* BACKFILL_COMPAT_H */
