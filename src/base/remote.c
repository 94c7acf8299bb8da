/*-------------------------------------------------------------------------
 *
 * src/base/remote.c
 *		A query read on a physical standby of this server, named by a
 *		foreign server, row by row.
 *
 * A run can compute its source on a standby: the standby has our rows and
 * our catalog (so our functions), and its CPU, buffers and disk are not
 * production's.  The standby is named as postgres_fdw names its peers: a
 * foreign server of the postgres_fdw wrapper, on which the role reading has
 * USAGE, and that role's user mapping.  The connection takes the server's
 * libpq options and the mapping's (the credentials come from the mapping
 * only, and appear in no message), and follows postgres_fdw's rule for
 * roles without superuser: the mapping gives a password and the connection
 * uses it, unless a superuser said otherwise in the mapping
 * (password_required 'false').
 *
 * Each read checks that the server is in recovery, has our system
 * identifier (pg_control_system), follows our timeline and is connected to
 * our database, waits until it has replayed the WAL this server had written
 * when the read began (the run's throttle shows the wait and pauses the run
 * after throttle_timeout_ms), then reads the query in one REPEATABLE READ
 * READ ONLY transaction there (one snapshot), through a cursor, a thousand
 * rows at a time: never the whole result in memory.  The query runs there
 * as the role reading here (SET ROLE: the mapping's user must be that role
 * or a member of it), so it has the rights it has here, row-level security
 * included.  The remote session takes this session's search_path, TimeZone,
 * DateStyle and IntervalStyle, so the query means there what it means here,
 * and its values come back as text this session reads the same way; their
 * types must be the ones the query has here.  Every wait
 * wakes for interrupts; an error here (a cancel, a statement timeout)
 * cancels the query there and closes the connection.  An error there comes
 * back with its SQLSTATE; a connection that breaks is 08006.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "catalog/namespace.h"
#include "catalog/pg_foreign_server.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "foreign/foreign.h"
#include "libpq-fe.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "storage/latch.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/pg_lsn.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "base/compat.h"
#include "base/remote.h"
#include "base/throttle.h"

/* rows a FETCH asks for */
#define REMOTE_FETCH_ROWS	1000

/* the longest a cancel sent while an error is handled may take */
#define REMOTE_CANCEL_MS	5000

/* A connection to a standby, held while one read lasts. */
typedef struct Remote
{
	const char *server;
	const char *argname;
	PGconn	   *conn;
	bool		fd_taken;		/* a file descriptor counted against max_files_per_process */
	PGresult   *res;			/* the result being read, cleared on error */
} Remote;

/* Remote notices (a RAISE NOTICE of the source) are not this session's messages. */
static void
IgnoreNotice(void *arg, const char *message)
{
}

/* The foreign server named, checked: of postgres_fdw, usable by the role reading. */
static ForeignServer *
FindServer(const char *name, const char *argname)
{
	ForeignServer *fs = GetForeignServerByName(name, true);
	ForeignDataWrapper *fdw;
	AclResult	acl;

	if (fs == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("%s: foreign server \"%s\" does not exist", argname, name),
				 errhint("CREATE SERVER %s FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '...', dbname '...'); then CREATE USER MAPPING for the role that runs.",
						 quote_identifier(name))));
	fdw = GetForeignDataWrapper(fs->fdwid);
	/* postgres_fdw's validator is what keeps password_required from roles without superuser */
	if (strcmp(fdw->fdwname, "postgres_fdw") != 0 || !OidIsValid(fdw->fdwvalidator) ||
		strcmp(get_func_name(fdw->fdwvalidator), "postgres_fdw_validator") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s: foreign server \"%s\" is of the foreign-data wrapper \"%s\", not postgres_fdw",
						argname, name, fdw->fdwname)));
	acl = BackfillForeignServerAclCheck(fs->serverid, GetUserId(), ACL_USAGE);
	if (acl != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s: permission denied for foreign server %s", argname, name)));
	return fs;
}

/* Whether libpq knows the connection option key. */
static bool
IsLibpqOption(PQconninfoOption *known, const char *key)
{
	for (PQconninfoOption *o = known; o->keyword != NULL; o++)
		if (strcmp(o->keyword, key) == 0)
			return strchr(o->dispchar, 'D') == NULL;	/* not a debug option */
	return false;
}

/* Option key of options (a List of DefElem), or NULL. */
static DefElem *
FindOption(List *options, const char *key)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *d = (DefElem *) lfirst(lc);

		if (strcmp(d->defname, key) == 0)
			return d;
	}
	return NULL;
}

/*
 * The connection's keywords and values (NULL-terminated): the server's libpq
 * options but the credentials, the mapping's libpq options, our name and
 * encoding.  *password_required: the mapping does not waive the password.
 */
static void
ConnectionOptions(ForeignServer *fs, UserMapping *um, const char ***keys, const char ***vals,
				  bool *password_required)
{
	PQconninfoOption *known = PQconndefaults();
	int			n = 0;
	int			max = list_length(fs->options) + list_length(um->options) + 3;
	DefElem    *waive = FindOption(um->options, "password_required");
	ListCell   *lc;

	if (known == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	*keys = palloc(sizeof(char *) * max);
	*vals = palloc(sizeof(char *) * max);
	foreach(lc, fs->options)
	{
		DefElem    *d = (DefElem *) lfirst(lc);

		if (!IsLibpqOption(known, d->defname) || strcmp(d->defname, "user") == 0 ||
			strcmp(d->defname, "password") == 0 || strcmp(d->defname, "replication") == 0 ||
			strcmp(d->defname, "client_encoding") == 0)
			continue;
		(*keys)[n] = d->defname;
		(*vals)[n++] = defGetString(d);
	}
	foreach(lc, um->options)
	{
		DefElem    *d = (DefElem *) lfirst(lc);

		if (!IsLibpqOption(known, d->defname) || strcmp(d->defname, "replication") == 0 ||
			strcmp(d->defname, "client_encoding") == 0)
			continue;
		(*keys)[n] = d->defname;
		(*vals)[n++] = defGetString(d);
	}
	(*keys)[n] = "fallback_application_name";
	(*vals)[n++] = "backfill";
	(*keys)[n] = "client_encoding";
	(*vals)[n++] = GetDatabaseEncodingName();
	(*keys)[n] = NULL;
	(*vals)[n] = NULL;
	PQconninfoFree(known);
	*password_required = waive == NULL || defGetBoolean(waive);
}

/*
 * A role without superuser connects with a password of its mapping, as
 * postgres_fdw requires: else it would connect as whoever this server's OS
 * user may be there (trust, peer, a .pgpass).  Before (given) and after
 * (used) the connection.
 */
static void
RefuseWithoutPassword(Remote *r, const char **keys, const char **vals, bool required, bool connected)
{
	bool		given = false;

	if (!required || superuser_arg(GetUserId()))
		return;
	for (int i = 0; keys[i] != NULL; i++)
		if (strcmp(keys[i], "password") == 0 && vals[i][0] != '\0')
			given = true;
	if (given && (!connected || PQconnectionUsedPassword(r->conn)))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
			 errmsg("%s: %s to server \"%s\" without a password", r->argname,
					given ? "the connection was made" : "a role without superuser may not connect", r->server),
			 errdetail("A role without superuser must connect with the password of its user mapping, and the server must ask for it."),
			 given ? errhint("Make the standby ask role %s's connections for its password (pg_hba.conf: scram-sha-256).",
							 PQuser(r->conn)) :
			 errhint("ALTER USER MAPPING FOR %s SERVER %s OPTIONS (ADD password '...');",
					 quote_identifier(GetUserNameFromId(GetUserId(), false)), quote_identifier(r->server))));
}

/* Wait until conn's socket is ready for events (a socket event), waking for interrupts. */
static void
WaitSocket(PGconn *conn, int events)
{
	int			rc = WaitLatchOrSocket(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH | events,
									   PQsocket(conn), -1L, PG_WAIT_EXTENSION);

	if (rc & WL_LATCH_SET)
	{
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Connect r to its server as the current role.  False when the server
 * cannot be reached and quiet is set (else that is an error).
 */
static bool
Connect(Remote *r, bool quiet)
{
	ForeignServer *fs = FindServer(r->server, r->argname);
	UserMapping *um = GetUserMapping(GetUserId(), fs->serverid);
	const char **keys;
	const char **vals;
	bool		required;
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;

	ConnectionOptions(fs, um, &keys, &vals, &required);
	RefuseWithoutPassword(r, keys, vals, required, false);
	if (!AcquireExternalFD())
		ereport(ERROR,
				(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
				 errmsg("%s: could not connect to server \"%s\"", r->argname, r->server),
				 errdetail("There are too many open files on the local server.")));
	r->fd_taken = true;
	r->conn = PQconnectStartParams(keys, vals, false);
	if (r->conn == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	while (PQstatus(r->conn) != CONNECTION_BAD && st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED)
	{
		WaitSocket(r->conn, st == PGRES_POLLING_READING ? WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE);
		st = PQconnectPoll(r->conn);
	}
	if (PQstatus(r->conn) != CONNECTION_OK && quiet)
		return false;
	if (PQstatus(r->conn) != CONNECTION_OK)
		ereport(ERROR,
				(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
				 errmsg("%s: could not connect to server \"%s\"", r->argname, r->server),
				 errdetail_internal("%s", pchomp(PQerrorMessage(r->conn)))));
	PQsetNoticeProcessor(r->conn, IgnoreNotice, NULL);
	RefuseWithoutPassword(r, keys, vals, required, true);
	return true;
}

/* The connection broke: 08006, with what libpq says. */
static void
ConnectionLost(Remote *r)
{
	ereport(ERROR,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg("%s: lost the connection to server \"%s\"", r->argname, r->server),
			 errdetail_internal("%s", pchomp(PQerrorMessage(r->conn)))));
}

/*
 * An error result of the server, raised here with its SQLSTATE; one that
 * ended the connection is 08006: a standby shutting down says 57P01 (admin
 * shutdown), which here would mean this server's.
 */
static void
RaiseRemote(Remote *r, PGresult *res)
{
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	const char *detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);
	const char *hint = PQresultErrorField(res, PG_DIAG_MESSAGE_HINT);
	char	   *m = pstrdup(msg ? msg : pchomp(PQerrorMessage(r->conn)));
	char	   *d = detail ? pstrdup(detail) : NULL;
	char	   *h = hint ? pstrdup(hint) : NULL;
	bool		lost = state == NULL || strlen(state) != 5 || strncmp(state, "57P", 3) == 0 ||
		PQstatus(r->conn) != CONNECTION_OK;
	int			code = lost ? ERRCODE_CONNECTION_FAILURE :
		MAKE_SQLSTATE(state[0], state[1], state[2], state[3], state[4]);

	if (r->res == res)
		r->res = NULL;
	PQclear(res);
	if (lost)
		ereport(ERROR,
				(errcode(code),
				 errmsg("%s: lost the connection to server \"%s\"", r->argname, r->server),
				 errdetail_internal("%s", m)));
	ereport(ERROR,
			(errcode(code),
			 errmsg("%s", m),
			 d ? errdetail_internal("%s", d) : 0,
			 h ? errhint("%s", h) : 0,
			 errcontext("%s: read on server \"%s\"", r->argname, r->server)));
}

/*
 * Send sql with its parameters and wait for its result, which r->res holds
 * (an error is raised).  expect: the status it must have.
 */
static PGresult *
Exec(Remote *r, const char *sql, int n, const Oid *types, const char *const *values,
	 ExecStatusType expect)
{
	PGresult   *res;

	if (r->res != NULL)
	{
		PQclear(r->res);
		r->res = NULL;
	}
	if (!PQsendQueryParams(r->conn, sql, n, types, values, NULL, NULL, 0))
		ConnectionLost(r);
	for (;;)
	{
		while (PQisBusy(r->conn))
		{
			WaitSocket(r->conn, WL_SOCKET_READABLE);
			if (!PQconsumeInput(r->conn))
				ConnectionLost(r);
		}
		res = PQgetResult(r->conn);
		if (res == NULL)
			break;
		if (r->res != NULL)
			PQclear(r->res);
		r->res = res;
	}
	if (r->res == NULL)
		ConnectionLost(r);
	if (PQresultStatus(r->res) != expect)
		RaiseRemote(r, r->res);
	return r->res;
}

/*
 * Cancel what runs on r's connection, at most a few seconds, and without
 * waking for interrupts: it runs while an error is being handled.  With
 * libpq's cancel connection (17), the cancel goes as the connection's
 * sslmode says; before, PQcancel.
 */
static void
CancelRemote(Remote *r)
{
#ifdef LIBPQ_HAS_ASYNC_CANCEL
	PGcancelConn *c = PQcancelCreate(r->conn);
	TimestampTz until = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), REMOTE_CANCEL_MS);
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;

	if (c == NULL)
		return;
	if (PQcancelStart(c))
	{
		while (st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED &&
			   PQcancelStatus(c) != CONNECTION_BAD)
		{
			long		left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), until);
			int			ev = st == PGRES_POLLING_READING ? WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE;

			if (left <= 0)
				break;
			(void) WaitLatchOrSocket(NULL, WL_TIMEOUT | WL_EXIT_ON_PM_DEATH | ev, PQcancelSocket(c),
									 left, PG_WAIT_EXTENSION);
			st = PQcancelPoll(c);
		}
	}
	PQcancelFinish(c);
#else
	PGcancel   *c = PQgetCancel(r->conn);
	char		buf[256];

	if (c != NULL)
	{
		(void) PQcancel(c, buf, sizeof(buf));
		PQfreeCancel(c);
	}
#endif
}

/* Close r's connection, cancelling what runs there (on an error here). */
static void
Disconnect(Remote *r, bool cancel)
{
	if (r->res != NULL)
		PQclear(r->res);
	r->res = NULL;
	if (r->conn != NULL && cancel && PQtransactionStatus(r->conn) == PQTRANS_ACTIVE)
		CancelRemote(r);
	if (r->conn != NULL)
		PQfinish(r->conn);
	r->conn = NULL;
	if (r->fd_taken)
		ReleaseExternalFD();
	r->fd_taken = false;
}

/*
 * The server is a standby of this server: in recovery, with our system
 * identifier, on our timeline (the one its WAL receiver streams, when it
 * says; else that of its last restartpoint, which must not be ahead of
 * ours), connected to our database.
 */
static void
CheckStandby(Remote *r)
{
	PGresult   *res = Exec(r, "SELECT pg_catalog.pg_is_in_recovery(), s.system_identifier,"
						   " pg_catalog.current_database(),"
						   " coalesce((SELECT w.received_tli FROM pg_catalog.pg_stat_wal_receiver w), -1),"
						   " (SELECT c.timeline_id FROM pg_catalog.pg_control_checkpoint() c)"
						   " FROM pg_catalog.pg_control_system() s", 0, NULL, NULL, PGRES_TUPLES_OK);
	char		ours[32];
	const char *db = get_database_name(MyDatabaseId);
	long		streamed;
	long		checkpointed;
	TimeLineID	tli = GetWALInsertionTimeLine();

	/* pg_control_system shows the identifier as a signed bigint */
	snprintf(ours, sizeof(ours), INT64_FORMAT, (int64) GetSystemIdentifier());
	if (PQntuples(res) != 1 || PQnfields(res) != 5)
		elog(ERROR, "unexpected answer of server \"%s\" to the standby check", r->server);
	if (strcmp(PQgetvalue(res, 0, 1), ours) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: server \"%s\" is not a standby of this server", r->argname, r->server),
				 errdetail("Its system identifier is %s, this server's %s: it is another cluster.",
						   PQgetvalue(res, 0, 1), ours)));
	if (strcmp(PQgetvalue(res, 0, 0), "t") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s: server \"%s\" is not in recovery", r->argname, r->server),
				 errdetail("It is this server, or a standby of it that was promoted: its rows may differ from ours."),
				 errhint("Name a foreign server that connects to a physical standby of this server.")));
	if (strcmp(PQgetvalue(res, 0, 2), db) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: server \"%s\" connects to database \"%s\", not \"%s\"", r->argname, r->server,
						PQgetvalue(res, 0, 2), db),
				 errhint("Set the foreign server's dbname option to %s.", quote_literal_cstr(db))));
	streamed = strtol(PQgetvalue(res, 0, 3), NULL, 10);
	checkpointed = PQgetisnull(res, 0, 4) ? -1 : strtol(PQgetvalue(res, 0, 4), NULL, 10);
	if ((streamed >= 0 && streamed != (long) tli) || (streamed < 0 && checkpointed > (long) tli))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s: server \"%s\" follows timeline %ld, this server is on timeline %u",
						r->argname, r->server, streamed >= 0 ? streamed : checkpointed, tli),
				 errdetail("Its history has parted from this server's: its rows may differ from ours.")));
}

/* What the standby has replayed. */
static XLogRecPtr
Replayed(Remote *r)
{
	PGresult   *res = Exec(r, "SELECT pg_catalog.pg_last_wal_replay_lsn()", 0, NULL, NULL, PGRES_TUPLES_OK);

	if (PQntuples(res) != 1 || PQgetisnull(res, 0, 0))
		return InvalidXLogRecPtr;
	return DatumGetLSN(DirectFunctionCall1(pg_lsn_in, CStringGetDatum(PQgetvalue(res, 0, 0))));
}

/* What a wait for the standby's replay says. */
static char *
ReplayReason(Remote *r, XLogRecPtr at, XLogRecPtr needed)
{
	return psprintf("server \"%s\" has replayed the WAL up to %X/%X, the read needs %X/%X",
					r->server, LSN_FORMAT_ARGS(at), LSN_FORMAT_ARGS(needed));
}

/*
 * Wait until the standby has replayed up to q->replayed.  A run's throttle
 * shows the wait and pauses the run after throttle_timeout_ms (57000); a
 * call without a run waits throttle_timeout_ms's default, then fails (55000).
 */
static void
AwaitReplay(Remote *r, const BackfillRemoteQuery *q)
{
	TimestampTz start = GetCurrentTimestamp();
	bool		said = false;

	for (;;)
	{
		XLogRecPtr	at = Replayed(r);
		char	   *why;

		if (at >= q->replayed)
			break;
		why = ReplayReason(r, at, q->replayed);
		if (q->throttle != NULL)
			BackfillThrottleAwait(q->throttle, why);
		else if (!said)
		{
			ereport(NOTICE, (errmsg("%s: waiting: %s", r->argname, why)));
			said = true;
		}
		else if (TimestampDifferenceExceeds(start, GetCurrentTimestamp(), BACKFILL_THROTTLE_TIMEOUT_MS))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("%s: waited %s for the standby: %s", r->argname,
							BackfillDuration(BACKFILL_THROTTLE_TIMEOUT_MS / 1000.0), why)));
		pfree(why);
		BackfillSleep(BackfillThrottleInterval(q->throttle));
	}
	BackfillThrottleAwait(q->throttle, NULL);
}

/*
 * The remote transaction: one snapshot, read only, as the role reading here,
 * with this session's search_path and the settings that decide what values
 * mean as text.
 */
static void
BeginRead(Remote *r)
{
	const char *settings[5];

	settings[0] = GetUserNameFromId(GetUserId(), false);
	settings[1] = namespace_search_path;
	settings[2] = GetConfigOption("TimeZone", false, false);
	settings[3] = GetConfigOption("DateStyle", false, false);
	settings[4] = GetConfigOption("IntervalStyle", false, false);
	(void) Exec(r, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, NULL, NULL, PGRES_COMMAND_OK);
	/* the role first: "$user" in the search_path is then the role's name there too */
	(void) Exec(r, "SELECT pg_catalog.set_config('role', $1, true)", 1, NULL, settings, PGRES_TUPLES_OK);
	(void) Exec(r, "SELECT pg_catalog.set_config('search_path', $1, true),"
				" pg_catalog.set_config('TimeZone', $2, true),"
				" pg_catalog.set_config('DateStyle', $3, true),"
				" pg_catalog.set_config('IntervalStyle', $4, true),"
				" pg_catalog.set_config('extra_float_digits', '3', true)",
				4, NULL, settings + 1, PGRES_TUPLES_OK);
}

/*
 * The columns the standby returns are those the query returns here, of the
 * same types: the same catalog, once replayed, and the same role and
 * search_path.
 */
static void
CheckColumns(Remote *r, const BackfillRemoteQuery *q, PGresult *res)
{
	if (q->coltypes == NULL)
		return;
	if (PQnfields(res) != q->ncols)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s: the query returns %d columns on server \"%s\", %d here",
						r->argname, PQnfields(res), r->server, q->ncols)));
	for (int c = 0; c < q->ncols; c++)
		if (PQftype(res, c) != q->coltypes[c])
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("%s: column \"%s\" is of type %u on server \"%s\", %s here",
							r->argname, PQfname(res, c), PQftype(res, c), r->server,
							format_type_be(q->coltypes[c]))));
}

/* The query read through a cursor, each row handed to fn; the rows read. */
static uint64
ReadRows(Remote *r, const BackfillRemoteQuery *q, BackfillRemoteRowFn fn, void *arg)
{
	uint64		rows = 0;
	char	  **values = NULL;
	int			ncols = 0;
	char	   *fetch = psprintf("FETCH FORWARD %d FROM backfill_source", REMOTE_FETCH_ROWS);

	(void) Exec(r, psprintf("DECLARE backfill_source NO SCROLL CURSOR FOR\n%s", q->sql),
				q->nparams, q->paramtypes, q->paramvalues, PGRES_COMMAND_OK);
	for (;;)
	{
		PGresult   *res = Exec(r, fetch, 0, NULL, NULL, PGRES_TUPLES_OK);
		int			n = PQntuples(res);

		if (values == NULL)
		{
			ncols = PQnfields(res);
			CheckColumns(r, q, res);
			values = palloc(sizeof(char *) * Max(1, ncols));
		}
		for (int i = 0; i < n; i++)
		{
			CHECK_FOR_INTERRUPTS();
			for (int c = 0; c < ncols; c++)
				values[c] = PQgetisnull(res, i, c) ? NULL : PQgetvalue(res, i, c);
			fn(arg, ncols, values);
		}
		rows += n;
		if (n < REMOTE_FETCH_ROWS)
			break;
	}
	(void) Exec(r, "COMMIT", 0, NULL, NULL, PGRES_COMMAND_OK);
	return rows;
}

/*
 * Read q on its standby, each row handed to fn (its values as text, valid
 * during the call only); the number of rows.
 */
uint64
BackfillRemoteRead(const BackfillRemoteQuery *q, BackfillRemoteRowFn fn, void *arg)
{
	Remote		r;
	uint64		rows = 0;

	memset(&r, 0, sizeof(r));
	r.server = q->server;
	r.argname = q->argname;
	PG_TRY();
	{
		(void) Connect(&r, false);
		CheckStandby(&r);
		AwaitReplay(&r, q);
		if (q->ready != NULL)
			q->ready(arg);
		BeginRead(&r);
		rows = ReadRows(&r, q, fn, arg);
	}
	PG_CATCH();
	{
		Disconnect(&r, true);
		PG_RE_THROW();
	}
	PG_END_TRY();
	Disconnect(&r, false);
	return rows;
}

/*
 * Check that server names a standby of this server the current role may
 * read on (argname: what the caller calls it); with caught_up, wait until
 * it has replayed what this server has written (a call waits there, before
 * it takes its locks, rather than under them).
 */
void
BackfillRemoteCheck(const char *server, const char *argname, bool caught_up)
{
	Remote		r;

	memset(&r, 0, sizeof(r));
	r.server = server;
	r.argname = argname;
	PG_TRY();
	{
		(void) Connect(&r, false);
		CheckStandby(&r);
		if (caught_up)
		{
			BackfillRemoteQuery q;

			memset(&q, 0, sizeof(q));
			q.replayed = BackfillRemoteWrittenUpTo();
			AwaitReplay(&r, &q);
		}
	}
	PG_CATCH();
	{
		Disconnect(&r, true);
		PG_RE_THROW();
	}
	PG_END_TRY();
	Disconnect(&r, false);
}

/*
 * Why a read on server must wait now: what it has replayed falls short of
 * what this server has written (the reason, as a wait shows it), or NULL,
 * also when it cannot be reached (the read will fail on it).  The server is
 * checked as a read checks it.
 */
char *
BackfillRemoteBehind(const char *server, const char *argname)
{
	Remote		r;
	char	   *volatile why = NULL;

	memset(&r, 0, sizeof(r));
	r.server = server;
	r.argname = argname;
	PG_TRY();
	{
		XLogRecPtr	needed;
		XLogRecPtr	at;

		/* a server that cannot be reached is the task's to fail on, and record */
		if (Connect(&r, true))
		{
			CheckStandby(&r);
			needed = BackfillRemoteWrittenUpTo();
			at = Replayed(&r);
			if (at < needed)
				why = ReplayReason(&r, at, needed);
		}
	}
	PG_CATCH();
	{
		Disconnect(&r, true);
		PG_RE_THROW();
	}
	PG_END_TRY();
	Disconnect(&r, false);
	return why;
}

/*
 * The end of the last WAL record this server wrote, flushed: a standby that
 * has replayed this far sees every transaction committed here so far
 * (asynchronous commits too).  The insert position just past a page header
 * is taken back to the page's start, where the last record ended.
 */
XLogRecPtr
BackfillRemoteWrittenUpTo(void)
{
	XLogRecPtr	at = GetXLogInsertRecPtr();

	if (XLogSegmentOffset(at, wal_segment_size) == SizeOfXLogLongPHD)
		at -= SizeOfXLogLongPHD;
	else if (at % XLOG_BLCKSZ == SizeOfXLogShortPHD)
		at -= SizeOfXLogShortPHD;
	XLogFlush(at);
	return at;
}
