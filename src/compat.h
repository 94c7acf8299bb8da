/*-------------------------------------------------------------------------
 *
 * src/compat.h
 *		Shims over the server APIs that differ between PostgreSQL 15, 16 and 17
 *		only in their names.
 *
 * Everything version-dependent goes through here, so the rest of the code
 * reads as if there were one server version.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_COMPAT_H
#define BACKFILL_COMPAT_H

#include "postgres.h"

#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "utils/acl.h"

#if PG_VERSION_NUM < 150000
#error "backfill needs PostgreSQL 15 or later"
#endif

/* 16 moved the varlena macros out of postgres.h */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/* 15.0 named InitMaterializedSRF SetSingleFuncCall */
#if PG_VERSION_NUM < 150001
#define InitMaterializedSRF(fcinfo, flags) SetSingleFuncCall((fcinfo), (flags))
#endif

/* Does roleid own relation relid? */
#if PG_VERSION_NUM >= 160000
#define BackfillRelOwnerCheck(relid, roleid) \
	object_ownercheck(RelationRelationId, (relid), (roleid))
#else
#define BackfillRelOwnerCheck(relid, roleid) \
	pg_class_ownercheck((relid), (roleid))
#endif

/* 16 added the permission infos to ExecInitRangeTable */
#if PG_VERSION_NUM >= 160000
#define BackfillExecInitRangeTable(estate, rtable) ExecInitRangeTable((estate), (rtable), NIL)
#else
#define BackfillExecInitRangeTable(estate, rtable) ExecInitRangeTable((estate), (rtable))
#endif

/* 16 replaced the per-catalog ACL checks by object_aclcheck */
#if PG_VERSION_NUM >= 160000
#define BackfillSchemaAclCheck(nspid, roleid, mode) \
	object_aclcheck(NamespaceRelationId, (nspid), (roleid), (mode))
#else
#define BackfillSchemaAclCheck(nspid, roleid, mode) \
	pg_namespace_aclcheck((nspid), (roleid), (mode))
#endif

/* 16 added an error-saving context to stringToQualifiedNameList */
#if PG_VERSION_NUM >= 160000
#define BackfillQualifiedNameList(s) stringToQualifiedNameList((s), NULL)
#else
#define BackfillQualifiedNameList(s) stringToQualifiedNameList(s)
#endif

#endif							/* BACKFILL_COMPAT_H */
