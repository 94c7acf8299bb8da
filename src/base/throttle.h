/*-------------------------------------------------------------------------
 *
 * src/base/throttle.h
 *		A run that yields to production: replica and slot lag, the user's
 *		load queries, an I/O budget.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BACKFILL_THROTTLE_H
#define BACKFILL_THROTTLE_H

#include "postgres.h"

#include "nodes/pg_list.h"

/* The throttle options of a run (a part of its options); 0 or NULL: off. */
typedef struct BackfillThrottle
{
	int			max_replica_lag_ms;
	List	   *replicas;		/* application_names (char *); NIL: every physical standby */
	int64		max_slot_lag_bytes;
	char	   *throttle_query;	/* a boolean query: wait while it returns true */
	char	   *critical_query;	/* a boolean query: pause the run when it returns true */
	int			cost_limit;		/* the I/O budget of a task's fill, as vacuum_cost_limit */
	int			cost_delay_ms;	/* as vacuum_cost_delay */
	int			throttle_timeout_ms;	/* a longer wait pauses the run */
	int			throttle_interval_ms;	/* how often the conditions are looked at */
} BackfillThrottle;

#define BACKFILL_THROTTLE_TIMEOUT_MS	(30 * 60 * 1000)
#define BACKFILL_THROTTLE_INTERVAL_MS	250

/*
 * FROM and WHERE of a query over the physical standbys' walsenders (s) in
 * pg_stat_replication: a logical walsender streams from a logical slot.
 */
#define BACKFILL_PHYSICAL_WALSENDERS \
	" FROM pg_catalog.pg_stat_replication s" \
	" WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_replication_slots l" \
	"   WHERE l.active_pid OPERATOR(pg_catalog.=) s.pid" \
	"   AND l.slot_type OPERATOR(pg_catalog.=) 'logical')"

/* A call's throttle, armed with its run's options (NULL: none, every function a no-op). */
typedef struct BackfillThrottleState BackfillThrottleState;

/* What one look at the conditions says. */
typedef enum BackfillThrottleVerdict
{
	BACKFILL_THROTTLE_GO,
	BACKFILL_THROTTLE_WAIT,		/* look again after BackfillThrottleSleep */
	BACKFILL_THROTTLE_PAUSE		/* BackfillThrottlePaused says why */
} BackfillThrottleVerdict;

extern bool BackfillThrottleWanted(const BackfillThrottle *t);
extern void BackfillThrottleCheck(const BackfillThrottle *t, Oid owner, const char *search_path,
								  Oid extschema);
extern BackfillThrottleState *BackfillThrottleArm(const BackfillThrottle *opts, int64 runid,
												  Oid extschema, Oid owner,
												  const char *search_path, MemoryContext cxt);
extern void BackfillThrottleDisarm(BackfillThrottleState *t);
extern BackfillThrottleVerdict BackfillThrottleLook(BackfillThrottleState *t);
extern BackfillThrottleVerdict BackfillThrottleLookWith(BackfillThrottleState *t, const char *also);
extern void BackfillThrottleSleep(BackfillThrottleState *t);
extern bool BackfillThrottleWait(BackfillThrottleState *t);
extern void BackfillThrottleStoppedElsewhere(BackfillThrottleState *t, const char *status);
extern bool BackfillThrottleWasStoppedElsewhere(BackfillThrottleState *t);
extern void BackfillThrottleFillPoint(BackfillThrottleState *t);
extern void BackfillThrottleAwait(BackfillThrottleState *t, const char *why);
extern int	BackfillThrottleInterval(BackfillThrottleState *t);
extern const char *BackfillThrottlePaused(BackfillThrottleState *t);
extern const char *BackfillThrottleWaitingFor(BackfillThrottleState *t);
extern double BackfillThrottleTake(BackfillThrottleState *t, char **reason);
extern void BackfillSleep(double ms);
extern char *BackfillDuration(double s);

#endif							/* BACKFILL_THROTTLE_H */
