/*-------------------------------------------------------------------------
 *
 * src/base/spi_util.h
 *		Checking caller-supplied SQL fragments and running SPI reads.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_SPI_UTIL_H
#define BACKFILL_SPI_UTIL_H

#include "postgres.h"

#include "executor/spi.h"
#include "nodes/parsenodes.h"
#include "portability/instr_time.h"
#include "tcop/dest.h"
#include "utils/array.h"
#include "utils/resowner.h"

extern int	BackfillTokenOf(const char *text);
extern char *BackfillCheckQuery(const char *query, const char *argname);
extern char *BackfillCheckExpr(const char *expr, const char *argname);
extern SPIPlanPtr BackfillPrepare(const char *sql, int nargs, Oid *argtypes,
								  const char *argname);
extern SPIPlanPtr BackfillPrepareCursor(const char *sql, int nargs, Oid *argtypes,
										const char *argname, int cursor_options);
extern Query *BackfillPlanQuery(SPIPlanPtr plan);
extern void BackfillCheckReadOnly(SPIPlanPtr plan, const char *argname);
extern TupleDesc BackfillPlanResultDesc(SPIPlanPtr plan);
extern double BackfillPlanRows(SPIPlanPtr plan, double min);
extern uint64 BackfillRunToDest(SPIPlanPtr plan, ParamListInfo params,
								bool read_only, DestReceiver *dest);
extern void BackfillCheckArrayLength(int n, int max, const char *argname, const char *what);
extern const char *BackfillRepeatedName(const char *const *names, int n);
extern List *BackfillColumnList(ArrayType *arr, const char *argname);
extern char *BackfillColumnListText(List *names);
extern char *BackfillQualifiedName(Oid relid);
extern int	BackfillPinSearchPath(void);
extern void BackfillUnpinSearchPath(int nest);
extern void BackfillExec(const char *sql);
extern void BackfillExecGenerated(const char *sql, Oid src, const char *a2, const char *a3);
extern char *BackfillQueryTextArgs(const char *sql, int nargs, Oid *types, Datum *values);
extern char *BackfillQueryText(const char *sql, Oid arg);
extern Datum BackfillTextArray(List *strings);
extern Datum BackfillIntArray(List *ints);
extern void BackfillInitReceiver(DestReceiver *self,
								 bool (*receive) (TupleTableSlot *slot, DestReceiver *self),
								 void (*startup) (DestReceiver *self, int operation, TupleDesc typeinfo));
extern List *BackfillKeyArg(FunctionCallInfo fcinfo, int argno);
extern int	BackfillFindColumn(TupleDesc desc, const char *name);
extern ErrorData *BackfillAbortSubtransaction(MemoryContext cxt, ResourceOwner owner);
extern void BackfillCallRolledBack(void (*fn) (void *arg), void *arg);
extern void BackfillCommitUnawaited(void);
extern const char *BackfillArgText(FunctionCallInfo fcinfo, int argno,
								   const char *argname);
extern char ***BackfillJsonbRows(const char *json, int nfields, const char *const *fields, uint64 *n);

/* Milliseconds since start. */
static inline double
BackfillMsSince(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

#endif							/* BACKFILL_SPI_UTIL_H */
