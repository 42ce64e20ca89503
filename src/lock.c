/* lock.c: the named-lock guard (cronguard(1), GUARDED JOBS). */
#include "config.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <mysqld_error.h>

#include "db.h"
#include "incident.h"
#include "lease.h"
#include "lock.h"
#include "log.h"
#include "runs.h"
#include "util.h"

/* ------------------------------------------------ the real operations */

static enum db_status
real_connect(void *ctx, void **conn, char **errstr)
{
	struct db     *db = NULL;
	enum db_status st;

	/* The guard takes a lock and writes its fence and run record: a
	 * read-only server (a replica, a demoted primary) is refused before
	 * anything runs. */
	st = db_connect_primary(ctx, &db, errstr);
	*conn = db;
	return st;
}

/* mysql_close() cannot report failure: the socket is closed whatever the
 * server thinks, which is what destroying the session means here.  The
 * fresh session's check that follows is what proves it. */
static int
real_destroy(void *conn, char **errstr)
{
	(void)errstr;
	db_close(conn);
	return 0;
}

/*
 * GET_LOCK without its fencing token, for a schema without the
 * procedure (or a user without EXECUTE).  MySQL without Galera has no
 * wsrep_on variable (error 1193, raised before anything is evaluated, so
 * GET_LOCK did not run): ask again without it.  MariaDB always has it.
 */
static enum db_status
real_get_lock_select(
    void *conn, const char *name, struct lock_acquire_row *row, char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st;
	int               wsrep = 1;

	st = db_query(conn, &r, errstr,
	    "SELECT GET_LOCK(%s, 0), CONNECTION_ID(), "
	    "@@session.wait_timeout, @@wsrep_on",
	    name);
	if (st == DB_ERR_QUERY &&
	    db_errno(conn) == ER_UNKNOWN_SYSTEM_VARIABLE) {
		free(*errstr);
		*errstr = NULL;
		wsrep = 0;
		st = db_query(conn, &r, errstr,
		    "SELECT GET_LOCK(%s, 0), CONNECTION_ID(), "
		    "@@session.wait_timeout",
		    name);
	}
	if (st != DB_OK)
		goto out;
	if ((st = db_one_row(r, wsrep ? 4 : 3, errstr)) != DB_OK)
		goto out;
	row->got = db_cell_dup(r, 0, 0);
	row->connection_id = db_cell_dup(r, 0, 1);
	row->wait_timeout = db_cell_dup(r, 0, 2);
	if (wsrep)
		row->wsrep_on = db_cell_dup(r, 0, 3);
out:
	db_result_free(r);
	return st;
}

/*
 * One round trip: cronguard_get_lock (sql/009_named_lock_fence.sql) takes
 * the lock and, when it got it off Galera, the next fencing token.
 * Before that migration, or without EXECUTE, it is GET_LOCK alone and
 * lock_acquire takes the token in a second statement; the warning says
 * how to get the single round trip back.  Failing before anything runs,
 * the CALL took no lock.
 */
static enum db_status
real_get_lock(
    void *conn, const char *name, struct lock_acquire_row *row, char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st;
	unsigned          e;

	memset(row, 0, sizeof *row);
	st = db_query(conn, &r, errstr, "CALL cronguard_get_lock(%s)", name);
	if ((st == DB_ERR_QUERY || st == DB_ERR_PRIVILEGE) &&
	    ((e = db_errno(conn)) == ER_SP_DOES_NOT_EXIST ||
	        e == ER_PROCACCESS_DENIED_ERROR)) {
		log_kv(LOG_WARN, "lock_fence_extra_statement", "lock", name,
		    "error", *errstr, "msg",
		    e == ER_SP_DOES_NOT_EXIST
		        ? "run cronguard db migrate: the fencing token costs "
		          "a second statement until then"
		        : "GRANT EXECUTE on the schema: the fencing token "
		          "costs a second statement until then");
		free(*errstr);
		*errstr = NULL;
		return real_get_lock_select(conn, name, row, errstr);
	}
	if (st != DB_OK)
		goto out;
	if ((st = db_one_row(r, 5, errstr)) != DB_OK)
		goto out;
	row->got = db_cell_dup(r, 0, 0);
	row->connection_id = db_cell_dup(r, 0, 1);
	row->wait_timeout = db_cell_dup(r, 0, 2);
	row->wsrep_on = db_cell_dup(r, 0, 3);
	row->fence = db_cell_dup(r, 0, 4);
out:
	db_result_free(r);
	return st;
}

static enum db_status
real_release_lock(void *conn, const char *name, char **value, char **errstr)
{
	return db_query_value(
	    conn, value, errstr, "SELECT RELEASE_LOCK(%s)", name);
}

static enum db_status
real_is_used_lock(void *conn, const char *name, char **value, char **errstr)
{
	return db_query_value(
	    conn, value, errstr, "SELECT IS_USED_LOCK(%s)", name);
}

static enum db_status
real_lock_check(
    void *conn, const char *name, char **value, char **read_only, char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st;

	*value = *read_only = NULL;
	st = db_query(conn, &r, errstr, "SELECT IS_USED_LOCK(%s), %R", name,
	    db_read_only_sql(conn));
	if (st == DB_OK && (st = db_one_row(r, 2, errstr)) == DB_OK) {
		*value = db_cell_dup(r, 0, 0);
		*read_only = db_cell_dup(r, 0, 1);
	}
	db_result_free(r);
	return st;
}

/* KILL CONNECTION or KILL QUERY.  Gone between the check and the KILL:
 * what we wanted, not an error. */
static enum db_status
real_kill_what(
    void *conn, const char *what, unsigned long long id, char **errstr)
{
	enum db_status st;

	st = db_query(conn, NULL, errstr, "KILL %R %llu", what, id);
	if (st == DB_ERR_QUERY && db_errno(conn) == ER_NO_SUCH_THREAD) {
		free(*errstr);
		*errstr = NULL;
		st = DB_OK;
	}
	return st;
}

static enum db_status
real_kill(void *conn, unsigned long long id, char **errstr)
{
	return real_kill_what(conn, "CONNECTION", id, errstr);
}

/* One holder, row row of r from column 1. */
static void
lock_holder_row(const struct db_result *r, size_t row, struct lock_holder *h)
{
	h->connection_id = (unsigned long long)db_cell_ll(r, row, 1, 0);
	h->run_id = (unsigned long long)db_cell_ll(r, row, 2, 0);
	h->run_job = db_cell_dup(r, row, 3);
	h->run_host = db_cell_dup(r, row, 4);
	h->run_pid = db_cell_ll(r, row, 5, -1);
	h->started_at = db_cell_dup(r, row, 6);
	h->run_age_s = db_cell_ll(r, row, 7, -1);
	h->client_host = db_cell_dup(r, row, 8);
	h->client_user = db_cell_dup(r, row, 9);
	h->idle_s = db_cell_ll(r, row, 10, -1);
}

/*
 * The holders in one round trip.  PROCESSLIST shows
 * other users' sessions only with the PROCESS privilege; without it the
 * columns are NULL and the verdict says so.
 */
enum db_status
lock_holders_get(struct db *db, const char *const *names, size_t n,
    struct lock_holder *h, char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st = DB_OK;
	long long         k;
	size_t            i;

	for (i = 0; i < n; i++) {
		memset(&h[i], 0, sizeof h[i]);
		h[i].run_age_s = h[i].idle_s = -1;
	}
	if (n == 0)
		return DB_OK;
	/* For each row of the locks' table (%K) its holder and that
	 * session's running runs (ix_runs_lock: a held lock's few; MAX(),
	 * since ORDER BY id LIMIT 1 makes the server walk the primary
	 * key); the process list once. */
	st = db_query(db, &r, errstr,
	    "SELECT u.k, u.cid, r.id, r.job, r.host, r.pid, r.started_at,"
	    " TIMESTAMPDIFF(SECOND, r.started_at, NOW(6)),"
	    " p.HOST, p.USER, p.TIME"
	    " FROM (SELECT c.k, c.cid,"
	    "  (SELECT MAX(x.id) FROM cronguard_runs x"
	    "   WHERE c.cid IS NOT NULL AND x.lock_name = c.v"
	    "   AND x.outcome = 'running' AND x.connection_id = c.cid)"
	    "   AS run_id"
	    "  FROM (SELECT n.k, n.v, IS_USED_LOCK(n.v) AS cid"
	    "   FROM %K n) c) u"
	    " LEFT JOIN cronguard_runs r ON r.id = u.run_id"
	    " LEFT JOIN information_schema.PROCESSLIST p ON p.ID = u.cid",
	    n, names);
	if (st != DB_OK)
		goto out;
	if (r->nrows != n || r->ncols != 11) {
		*errstr = xasprintf("query failed: %zu rows of %zu columns for"
		                    " %zu locks",
		    r->nrows, r->ncols, n);
		st = DB_ERR_QUERY;
		goto out;
	}
	for (i = 0; i < r->nrows; i++) {
		k = db_cell_ll(r, i, 0, -1);
		if (k >= 0 && (size_t)k < n)
			lock_holder_row(r, i, &h[k]);
	}
out:
	db_result_free(r);
	return st;
}

enum db_status
lock_holder_get(
    struct db *db, const char *name, struct lock_holder *h, char **errstr)
{
	return lock_holders_get(db, &name, 1, h, errstr);
}

static enum db_status
real_holder(void *conn, const char *name, struct lock_holder *h, char **errstr)
{
	return lock_holder_get(conn, name, h, errstr);
}

/* The run records' statements (runs.c) over the lock's session. */
static enum db_status
real_run_start(void *conn, const struct run_start_info *ri,
    unsigned long long *id, char **errstr)
{
	return runs_insert(conn, ri, id, errstr);
}

static enum db_status
real_run_heartbeat(void *conn, unsigned long long id, char **errstr)
{
	return runs_heartbeat(conn, id, errstr);
}

static enum db_status
real_run_finish(void *conn, unsigned long long id, const char *outcome,
    int exit_status, const char *error, const struct run_output *output,
    char **errstr)
{
	return runs_finish(
	    conn, id, outcome, exit_status, error, output, errstr);
}

static unsigned long long
real_connection_id(void *conn)
{
	return db_connection_id(conn);
}

static int
real_socket(void *conn)
{
	return db_socket(conn);
}

static enum db_status
real_kill_query(void *conn, unsigned long long id, char **errstr)
{
	return real_kill_what(conn, "QUERY", id, errstr);
}

static enum db_status
real_exec_sql(void *conn, const char *sql, char **errstr)
{
	return db_query_statement(conn, NULL, errstr, sql);
}

static enum lease_status
real_lease_acquire(void *conn, const char *name, const char *token,
    const char *host, long long pid, unsigned long long lease_us,
    unsigned long long *fence, char **errstr)
{
	return lease_acquire(
	    conn, name, token, host, pid, lease_us, fence, errstr);
}

static enum lease_status
real_lease_extend(void *conn, const char *name, const char *token,
    unsigned long long lease_us, char **errstr)
{
	return lease_extend(conn, name, token, lease_us, errstr);
}

static enum lease_status
real_lease_release(
    void *conn, const char *name, const char *token, char **errstr)
{
	return lease_release(conn, name, token, errstr);
}

static enum lease_status
real_lease_holder(
    void *conn, const char *name, struct lease_holder *h, char **errstr)
{
	return lease_holder(conn, name, h, errstr);
}

static enum lease_status
real_fence_next(
    void *conn, const char *name, unsigned long long *fence, char **errstr)
{
	return lease_fence_next(conn, name, fence, errstr);
}

static enum db_status
real_run_prune(void *conn, const char *job, unsigned keep,
    unsigned long long *n, char **errstr)
{
	return runs_prune(conn, job, keep, n, errstr);
}

static enum db_status
real_run_slot(void *conn, const char *job, int64_t once_per_ms, const char *tz,
    struct run_slot *rs, char **errstr)
{
	return runs_slot(conn, job, once_per_ms, tz, NULL, rs, errstr);
}

static enum db_status
real_slot_state(
    void *conn, const char *job, struct slot_state *st, char **errstr)
{
	return runs_slot_state(conn, job, st, errstr);
}

const struct lock_db_ops lock_db_real = {
	.connect = real_connect,
	.destroy = real_destroy,
	.get_lock = real_get_lock,
	.release_lock = real_release_lock,
	.is_used_lock = real_is_used_lock,
	.lock_check = real_lock_check,
	.kill = real_kill,
	.holder = real_holder,
	.run_start = real_run_start,
	.run_heartbeat = real_run_heartbeat,
	.run_finish = real_run_finish,
	.connection_id = real_connection_id,
	.socket = real_socket,
	.kill_query = real_kill_query,
	.exec_sql = real_exec_sql,
	.lease_acquire = real_lease_acquire,
	.lease_extend = real_lease_extend,
	.lease_release = real_lease_release,
	.lease_holder = real_lease_holder,
	.fence_next = real_fence_next,
	.run_prune = real_run_prune,
	.run_slot = real_run_slot,
	.slot_state = real_slot_state,
};

/* ------------------------------------------------------- the guard */

void
lock_init(struct lock *l, const struct lock_db_ops *ops, void *ctx,
    const char *job, const char *name)
{
	memset(l, 0, sizeof *l);
	l->ops = ops;
	l->ctx = ctx;
	l->job = job;
	l->name = name;
}

void
lock_incident(struct lock *l, const char *event, const char *detail)
{
	struct incident in;

	memset(&in, 0, sizeof in);
	in.event = event;
	in.job = l->job;
	in.lock = l->name;
	in.run_id = l->run_id;
	in.connection_id = (unsigned long)l->connection_id;
	in.detail = detail;
	incident_report(&in);
	l->incidents++;
}

/* Parse a connection id as the server printed it. */
static int
parse_conn_id(const char *s, unsigned long long *id)
{
	const char *e;

	if (s == NULL)
		return -1;
	return parse_ull(s, UINT64_MAX, id, &e);
}

void
lock_use_lease(struct lock *l, unsigned long long lease_us)
{
	l->lease_us = lease_us;
}

enum lock_result
lock_result_of_db(enum db_status st)
{
	return st == DB_ERR_PRIVILEGE ? LOCK_ERR_PRIVILEGE
	    : st == DB_ERR_SCHEMA     ? LOCK_ERR_SCHEMA
	                              : LOCK_ERR_DB;
}

enum lock_result
lock_open(struct lock *l, char **errstr)
{
	if (l->ops->connect(l->ctx, &l->conn, errstr) != DB_OK) {
		l->conn = NULL;
		return LOCK_ERR_DB;
	}
	l->connection_id = l->ops->connection_id(l->conn);
	return LOCK_OK;
}

static void
acquire_row_free(struct lock_acquire_row *row)
{
	free(row->got);
	free(row->connection_id);
	free(row->wait_timeout);
	free(row->wsrep_on);
	free(row->fence);
}

/* @@wsrep_on comes back as 0/1 (or ON/OFF from some servers). */
static int
wsrep_enabled(const char *v)
{
	if (v == NULL)
		return 0;
	return db_parse_bool(v) == 1 || strcasecmp(v, "ON") == 0;
}

/* A busy lease's holder as a lock holder, for lock_holder_stuck: its
 * age is the lease's, the connection id 0 when it turns out free. */
static void
lock_holder_of_lease(struct lock_holder *holder, struct lease_holder *lh)
{
	if (lh->owner_token == NULL || lh->expired)
		return;
	holder->connection_id = lh->connection_id != 0 ? lh->connection_id : 1;
	holder->run_id = lh->run_id;
	holder->run_job = lh->run_job;
	lh->run_job = NULL;
	holder->run_host = lh->host;
	lh->host = NULL;
	holder->run_pid = lh->pid;
	holder->run_age_s = lh->held_s;
}

enum db_status
lock_lease_holder_get(
    struct db *db, const char *name, struct lock_holder *h, char **errstr)
{
	struct lease_holder lh;
	enum lease_status   ls;

	memset(h, 0, sizeof *h);
	h->run_age_s = h->idle_s = -1;
	ls = lease_holder(db, name, &lh, errstr);
	if (ls == LEASE_OK)
		lock_holder_of_lease(h, &lh);
	lease_holder_free(&lh);
	return ls == LEASE_OK ? DB_OK : DB_ERR_QUERY;
}

static enum lock_result
lock_lease_holder(struct lock *l, struct lock_holder *holder, char **errstr)
{
	struct lease_holder lh;

	if (l->ops->lease_holder(l->conn, l->name, &lh, errstr) != LEASE_OK) {
		lease_holder_free(&lh);
		return LOCK_ERR_DB;
	}
	lock_holder_of_lease(holder, &lh);
	lease_holder_free(&lh);
	return LOCK_BUSY;
}

static enum lock_result
lock_lease_acquire(struct lock *l, struct lock_holder *holder, char **errstr)
{
	enum lock_result lr;

	lease_token(l->token);
	switch (
	    l->ops->lease_acquire(l->conn, l->name, l->token, self_hostname(),
	        (long long)getpid(), l->lease_us, &l->fence, errstr)) {
	case LEASE_OK:
		l->held = 1;
		return LOCK_OK;
	case LEASE_BUSY:
		lr = lock_lease_holder(l, holder, errstr);
		break;
	case LEASE_ERR_VALUE:
		lr = LOCK_ERR_VALUE;
		break;
	case LEASE_ERR_PRIVILEGE:
		lr = LOCK_ERR_PRIVILEGE;
		break;
	case LEASE_ERR_SCHEMA:
		lr = LOCK_ERR_SCHEMA;
		break;
	default:
		lr = LOCK_ERR_DB;
		break;
	}
	if (lr != LOCK_BUSY)
		lock_close(l);
	return lr;
}

/*
 * The named lock's fencing token: the one cronguard_get_lock took with
 * the lock (row_fence), or, when it could not run, the next one from a
 * second statement on the session that holds the lock (lease_fence_next).
 * Not a multi-statement batch: that needs CLIENT_MULTI_STATEMENTS, on
 * and off per call with a round trip each, or for the whole session,
 * where the job's own SQL also runs.  Not INSERT ... SELECT GET_LOCK():
 * it has no result set for GET_LOCK's exact answer, it writes the
 * counter before the Galera check, and statement-based replication
 * cannot log it safely.  t0811 counts the statements either way.
 */
static enum lock_result
lock_take_fence(struct lock *l, const char *row_fence, char **errstr)
{
	const char *e;

	if (row_fence != NULL) {
		if (parse_ull(row_fence, ULLONG_MAX, &l->fence, &e) == 0 &&
		    l->fence > 0)
			return LOCK_OK;
		*errstr = xasprintf("cronguard_get_lock(%s) returned the "
		                    "fencing token '%s', not a positive number",
		    l->name, row_fence);
		return LOCK_ERR_VALUE;
	}
	if (l->ops->fence_next == NULL)
		return LOCK_OK;
	switch (l->ops->fence_next(l->conn, l->name, &l->fence, errstr)) {
	case LEASE_OK:
		return LOCK_OK;
	case LEASE_ERR_VALUE:
		return LOCK_ERR_VALUE;
	case LEASE_ERR_PRIVILEGE:
		return LOCK_ERR_PRIVILEGE;
	case LEASE_ERR_SCHEMA:
		return LOCK_ERR_SCHEMA;
	default:
		return LOCK_ERR_DB;
	}
}

/* @@session.wait_timeout in milliseconds; 0 when missing or not a
 * number of seconds (then only the configured heartbeat applies). */
static int64_t
lock_wait_timeout_ms(const char *v)
{
	unsigned long long s;
	const char        *e;

	if (v == NULL || parse_ull(v, 31536000, &s, &e) != 0)
		return 0;
	return (int64_t)s * 1000;
}

int64_t
lock_heartbeat_interval(const struct lock *l, int64_t heartbeat_ms)
{
	int64_t within;

	if (l == NULL || !l->held)
		return 0;
	if (l->wait_timeout_ms <= 0)
		return heartbeat_ms;
	within = l->wait_timeout_ms / 3;
	if (within < 250)
		within = 250;
	return heartbeat_ms > 0 && heartbeat_ms < within ? heartbeat_ms
	                                                 : within;
}

enum lock_result
lock_acquire(struct lock *l, struct lock_holder *holder, char **errstr)
{
	struct lock_acquire_row row;
	enum lock_result        lr;
	enum db_status          st;
	int                     got;

	memset(&row, 0, sizeof row);
	memset(holder, 0, sizeof *holder);
	if (l->lease_us != 0)
		return lock_lease_acquire(l, holder, errstr);
	st = l->ops->get_lock(l->conn, l->name, &row, errstr);
	if (st != DB_OK) {
		lr = lock_result_of_db(st);
		goto fail;
	}
	if (parse_conn_id(row.connection_id, &l->connection_id) != 0) {
		*errstr = xasprintf("CONNECTION_ID() returned '%s'",
		    row.connection_id == NULL ? "NULL" : row.connection_id);
		lr = LOCK_ERR_VALUE;
		goto fail;
	}
	/* Whatever GET_LOCK answered: on a Galera node a busy (or NULL)
	 * answer says nothing about the cluster either. */
	if (wsrep_enabled(row.wsrep_on)) {
		*errstr = xasprintf(
		    "the server is a Galera node "
		    "(wsrep_on=%s): GET_LOCK is local to one node there, not "
		    "cluster-wide; refusing the named-lock guard",
		    row.wsrep_on);
		lr = LOCK_ERR_GALERA;
		goto fail;
	}
	l->wait_timeout_ms = lock_wait_timeout_ms(row.wait_timeout);
	got = db_parse_bool(row.got);
	switch (got) {
	case 1:
		l->held = 1;
		if ((lr = lock_take_fence(l, row.fence, errstr)) != LOCK_OK)
			goto fail;
		break;
	case 0:
		lr = LOCK_BUSY;
		st = l->ops->holder(l->conn, l->name, holder, errstr);
		if (st != DB_OK) {
			lock_holder_free(holder);
			lr = LOCK_ERR_DB;
			goto fail;
		}
		break;
	case -1:
		*errstr = xasprintf("GET_LOCK(%s) returned NULL", l->name);
		lr = LOCK_ERR_NULL;
		goto fail;
	default:
		*errstr = xasprintf("GET_LOCK(%s) returned '%s', neither 1, "
		                    "0 nor NULL",
		    l->name, row.got);
		lr = LOCK_ERR_VALUE;
		goto fail;
	}
	acquire_row_free(&row);
	return lr;

fail:
	/* Whatever the session holds goes with it. */
	acquire_row_free(&row);
	lock_close(l);
	return lr;
}

int
lock_holder_stuck(const struct lock_holder *h, int64_t max_runtime_ms,
    int64_t grace_ms, char **why)
{
	struct buf b;
	int        stuck;

	buf_init(&b);
	buf_printf(&b, "connection %llu", h->connection_id);
	if (h->client_host != NULL)
		buf_printf(&b, " from %s", h->client_host);
	if (h->client_user != NULL)
		buf_printf(&b, " user %s", h->client_user);
	if (h->run_id != 0) {
		buf_printf(&b,
		    ", run %llu of %s on %s pid %lld since %s (%llds)",
		    h->run_id, h->run_job != NULL ? h->run_job : "?",
		    h->run_host != NULL ? h->run_host : "?", h->run_pid,
		    h->started_at != NULL ? h->started_at : "?", h->run_age_s);
		stuck = h->run_age_s < 0 ||
		    h->run_age_s * 1000 > max_runtime_ms + grace_ms;
	} else {
		buf_adds(&b, ", no cronguard run record");
		if (h->idle_s >= 0) {
			buf_printf(
			    &b, ", in its current state for %llds", h->idle_s);
			stuck = h->idle_s * 1000 > grace_ms;
		} else {
			/* Not in the visible process list (no PROCESS
			 * privilege): no evidence that it is stuck. */
			buf_adds(&b, ", not visible in the process list");
			stuck = 0;
		}
	}
	*why = buf_steal(&b);
	return stuck;
}

void
lock_holder_free(struct lock_holder *h)
{
	free(h->run_job);
	free(h->run_host);
	free(h->started_at);
	free(h->client_host);
	free(h->client_user);
	memset(h, 0, sizeof *h);
}

static void
lock_lost(struct lock *l, const char *detail)
{
	if (l->lost)
		return;
	l->lost = 1;
	lock_incident(l, l->lease_us != 0 ? "lease_lost" : "lock_lost", detail);
}

int
lock_watch_fd(const struct lock *l)
{
	if (l == NULL || !l->held || l->dead || l->lease_us != 0 ||
	    l->conn == NULL || l->ops->socket == NULL)
		return -1;
	return l->ops->socket(l->conn);
}

void
lock_session_closed(struct lock *l)
{
	l->dead = 1;
	lock_lost(l,
	    "the server closed the lock session (a restart, a KILL, "
	    "a proxy cutting it): the lock went with it");
}

/* The lease's heartbeat: extend it.  Any failure is a lost lease: a lease
 * that cannot be extended expires, and another host may then take it. */
static void
lock_lease_heartbeat(struct lock *l)
{
	char             *errstr = NULL, *detail = NULL;
	enum lease_status ls;

	ls = l->ops->lease_extend(
	    l->conn, l->name, l->token, l->lease_us, &errstr);
	if (ls == LEASE_READ_ONLY) {
		l->read_only = 1;
		detail = xasprintf("the server turned read-only (%s), a "
		                   "demotion: lease %s (fence %llu) not "
		                   "extended there; nothing more is written to "
		                   "it, the lease expires by itself",
		    errstr, l->name, l->fence);
	} else if (ls == LEASE_LOST)
		detail = xasprintf("lease %s (fence %llu) expired or was "
		                   "taken: not extended",
		    l->name, l->fence);
	else if (ls != LEASE_OK)
		detail = xasprintf("cannot extend lease %s (fence %llu): %s",
		    l->name, l->fence, errstr != NULL ? errstr : "error");
	if (detail != NULL)
		lock_lost(l, detail);
	free(detail);
	free(errstr);
}

enum lock_result
lock_heartbeat(struct lock *l)
{
	char              *value = NULL, *errstr = NULL, *detail = NULL;
	char              *read_only = NULL;
	unsigned long long id;
	enum db_status     st;

	if (l->lost || l->dead || l->conn == NULL)
		return l->lost ? LOCK_INCIDENT : LOCK_OK;
	if (l->held && l->lease_us != 0) {
		lock_lease_heartbeat(l);
		if (l->lost)
			goto out;
	} else if (l->held) {
		if (l->ops->lock_check != NULL)
			st = l->ops->lock_check(
			    l->conn, l->name, &value, &read_only, &errstr);
		else
			st = l->ops->is_used_lock(
			    l->conn, l->name, &value, &errstr);
		if (st != DB_OK) {
			/* A session whose query failed may be gone, and
			 * with it the lock: the server can no longer prove
			 * it holds it. */
			if (st == DB_ERR_LOST)
				l->dead = 1;
			detail = xasprintf("heartbeat failed: %s", errstr);
			lock_lost(l, detail);
			goto out;
		}
		if (read_only != NULL) {
			/* The lock is on a server that is no longer the
			 * primary: another host may now hold it on the new
			 * one. */
			l->read_only = 1;
			detail = xasprintf(
			    "the server turned read-only (%s), a demotion: the "
			    "lock there guards nothing; the run record is left "
			    "running (nothing more is written to it)",
			    read_only);
			lock_lost(l, detail);
			goto out;
		}
		if (parse_conn_id(value, &id) != 0 || id != l->connection_id) {
			detail = xasprintf("IS_USED_LOCK returned %s, not our "
			                   "connection %llu",
			    value == NULL ? "NULL" : value, l->connection_id);
			lock_lost(l, detail);
			goto out;
		}
	}
	if (l->run_id != 0 &&
	    l->ops->run_heartbeat(l->conn, l->run_id, &errstr) != DB_OK) {
		/* Only bookkeeping: the lock check above decides. */
		log_kv(LOG_WARN, "run_heartbeat_failed", "job", l->job, "error",
		    errstr);
	}
out:
	free(value);
	free(read_only);
	free(errstr);
	free(detail);
	return l->lost ? LOCK_INCIDENT : LOCK_OK;
}

int
lock_exec_sql(struct lock *l, const char *sql, char **errstr)
{
	enum db_status st;
	char          *detail = NULL;

	st = l->ops->exec_sql(l->conn, sql, errstr);
	if (st == DB_OK)
		return 0;
	if (st == DB_ERR_LOST) {
		l->dead = 1;
		if (l->held) {
			detail = xasprintf(
			    "session lost during the SQL job: %s", *errstr);
			lock_lost(l, detail);
			free(detail);
		}
	}
	return -1;
}

/* "job exited 3", for every incident's detail: the job's status is never
 * masked by a cleanup failure. */
static char *
job_status_text(const struct run_end *end)
{
	if (end->error != NULL && end->exit_status >= 0)
		return xasprintf("job %s, status %d: %s", end->outcome,
		    end->exit_status, end->error);
	if (end->error != NULL)
		return xasprintf("job %s: %s", end->outcome, end->error);
	if (end->exit_status >= 0)
		return xasprintf(
		    "job %s, status %d", end->outcome, end->exit_status);
	return xasprintf("job %s", end->outcome);
}

/*
 * After a failed release: the session is in an unknown state.  Destroy it,
 * then prove from a fresh session that the old connection no longer holds
 * the lock, killing it if it still does.  The fresh session stays open in
 * l->conn for the run record.
 */
static void
lock_verify(struct lock *l, const char *jobtext)
{
	char              *errstr = NULL, *value = NULL, *detail = NULL;
	unsigned long long holder;
	enum db_status     st;

	if (l->conn != NULL && l->ops->destroy(l->conn, &errstr) != 0) {
		detail = xasprintf("destroying session %llu failed: %s (%s)",
		    l->connection_id, errstr != NULL ? errstr : "unknown error",
		    jobtext);
		lock_incident(l, "session_destroy_failed", detail);
		free(detail);
		detail = NULL;
		free(errstr);
		errstr = NULL;
	}
	l->conn = NULL;
	l->dead = 0;

	if (l->ops->connect(l->ctx, &l->conn, &errstr) != DB_OK) {
		l->conn = NULL;
		detail = xasprintf(
		    "cannot connect to verify that connection %llu no longer holds the lock: %s (%s)",
		    l->connection_id, errstr, jobtext);
		goto fail;
	}
	st = l->ops->is_used_lock(l->conn, l->name, &value, &errstr);
	if (st != DB_OK) {
		detail =
		    xasprintf("IS_USED_LOCK failed: %s (%s)", errstr, jobtext);
		goto fail;
	}
	if (value == NULL)
		goto out; /* free: the old session is gone */
	if (parse_conn_id(value, &holder) != 0) {
		detail = xasprintf(
		    "IS_USED_LOCK returned '%s' (%s)", value, jobtext);
		goto fail;
	}
	if (holder != l->connection_id)
		goto out; /* another session's now, not ours */
	if (l->ops->kill(l->conn, holder, &errstr) != DB_OK) {
		detail = xasprintf("connection %llu still holds the lock and "
		                   "KILL failed: %s (%s)",
		    holder, errstr, jobtext);
		goto fail;
	}
	log_kv(LOG_WARN, "lock_session_killed", "job", l->job, "lock", l->name,
	    "msg", "old lock session still held the lock: killed");
	goto out;

fail:
	lock_incident(l, "lock_verify_failed", detail);
out:
	free(detail);
	free(value);
	free(errstr);
}

/* The lock was gone at the release: an incident, unless the heartbeat
 * already reported it lost. */
static void
lock_release_unexpected(struct lock *l, const char *detail)
{
	if (l->lost)
		log_kv(LOG_WARN, "lock_release_unexpected", "job", l->job,
		    "lock", l->name, "msg", detail);
	else
		lock_incident(l, "lock_release_unexpected", detail);
}

/*
 * Give the lease back, on a fresh session when the lock session failed:
 * the lease is a row, not a session, so any session can release it.  A
 * lease that expired or was taken is an incident (another host may have
 * run meanwhile), like RELEASE_LOCK returning 0.
 */
static void
lock_lease_release(struct lock *l, const char *jobtext)
{
	char             *errstr = NULL, *detail = NULL;
	enum lease_status ls = LEASE_ERR_DB;
	int               attempt;

	for (attempt = 0; attempt < 2; attempt++) {
		if (l->conn == NULL || l->dead || attempt > 0) {
			if (l->conn != NULL)
				l->ops->destroy(l->conn, NULL);
			l->dead = 0;
			free(errstr);
			errstr = NULL;
			if (l->ops->connect(l->ctx, &l->conn, &errstr) !=
			    DB_OK) {
				l->conn = NULL;
				continue;
			}
		}
		free(errstr);
		errstr = NULL;
		ls = l->ops->lease_release(l->conn, l->name, l->token, &errstr);
		if (ls != LEASE_ERR_DB)
			break;
	}
	switch (ls) {
	case LEASE_OK:
		break;
	case LEASE_LOST:
		detail = xasprintf("lease %s (fence %llu) had expired or was "
		                   "taken when the job ended (%s)",
		    l->name, l->fence, jobtext);
		lock_release_unexpected(l, detail);
		break;
	default:
		detail = xasprintf("releasing lease %s failed: %s; it expires "
		                   "by itself (%s)",
		    l->name, errstr != NULL ? errstr : "error", jobtext);
		lock_incident(l, "lock_release_failed", detail);
		break;
	}
	free(detail);
	free(errstr);
}

static void
lock_release(struct lock *l, const char *jobtext)
{
	char          *value = NULL, *errstr = NULL, *detail = NULL;
	enum db_status st;

	l->held = 0;
	if (l->lease_us != 0 && l->read_only)
		return; /* a write; the lease expires by itself */
	if (l->lease_us != 0) {
		lock_lease_release(l, jobtext);
		return;
	}
	if (l->dead) {
		/* Known gone (reported as lock_lost): nothing to release,
		 * but prove it from a fresh session. */
		lock_verify(l, jobtext);
		return;
	}
	st = l->ops->release_lock(l->conn, l->name, &value, &errstr);
	if (st != DB_OK) {
		detail =
		    xasprintf("RELEASE_LOCK failed: %s (%s)", errstr, jobtext);
		lock_incident(l, "lock_release_failed", detail);
		lock_verify(l, jobtext);
		goto out;
	}
	switch (db_parse_bool(value)) {
	case 1:
		break;
	case 0:
	case -1:
		detail = xasprintf("RELEASE_LOCK returned %s: the lock was "
		                   "%s during the job (%s)",
		    value == NULL ? "NULL" : "0",
		    value == NULL ? "released" : "taken by another session",
		    jobtext);
		lock_release_unexpected(l, detail);
		break;
	default:
		detail = xasprintf("RELEASE_LOCK returned '%s', neither 1, 0 "
		                   "nor NULL (%s)",
		    value, jobtext);
		lock_incident(l, "lock_release_unexpected", detail);
		break;
	}
out:
	free(detail);
	free(value);
	free(errstr);
}

enum lock_result
lock_run_start(
    struct lock *l, const char *host, long pid, const char *uuid, char **errstr)
{
	struct run_start_info ri;
	enum db_status        st;

	memset(&ri, 0, sizeof ri);
	ri.job = l->job;
	ri.lock = l->name;
	ri.host = host;
	ri.pid = pid;
	ri.connection_id = l->held && l->lease_us == 0 ? l->connection_id : 0;
	ri.fence = l->fence;
	ri.uuid = uuid;
	ri.slot = l->slot;
	ri.slot_prev = l->slot_prev;
	ri.slot_kind = l->slot_kind;
	if ((st = l->ops->run_start(l->conn, &ri, &l->run_id, errstr)) !=
	    DB_OK) {
		l->run_id = 0;
		return lock_result_of_db(st);
	}
	return l->run_id == 0 ? LOCK_SLOT_DONE : LOCK_OK;
}

/* keep_runs after a run: housekeeping, so a failure (a deadlock with
 * another host's prune, say) is logged and left to the next run. */
static void
lock_prune_quietly(struct lock *l)
{
	unsigned long long n = 0;
	char              *errstr = NULL, count[32];

	if (l->keep_runs == 0 || l->ops->run_prune == NULL || l->conn == NULL)
		return;
	if (l->ops->run_prune(l->conn, l->job, l->keep_runs, &n, &errstr) !=
	    DB_OK)
		log_kv(LOG_WARN, "runs_prune_failed", "job", l->job, "error",
		    errstr);
	else if (n > 0) {
		snprintf(count, sizeof count, "%llu", n);
		log_kv(LOG_DEBUG, "runs_pruned", "job", l->job, "runs", count);
	}
	free(errstr);
}

/*
 * Finish the run record: on the lock session when it is usable, else on a
 * fresh one; when that fails for any reason, once more on a fresh one,
 * and a last time there without the output (what failed may be its size:
 * the job's outcome matters more).  The lock session is never closed
 * while it holds the lock, as that would give the lock away: it is kept
 * aside meanwhile.  *first the first failure's text (allocated), if any;
 * *bare set when only the write without the output went through.
 */
static enum db_status
lock_run_write(struct lock *l, const struct run_end *end, const char *outcome,
    const char *error, char **first, int *bare, char **errstr)
{
	void          *kept = NULL;
	enum db_status st = DB_ERR_CONNECT;
	int            attempt, gone = 0;

	for (attempt = 0; attempt < 3; attempt++) {
		if (attempt > 0 || l->conn == NULL || l->dead) {
			if (l->conn != NULL && l->held && !l->dead &&
			    kept == NULL)
				kept = l->conn;
			else if (l->conn != NULL) {
				gone |= l->held && kept == NULL;
				l->ops->destroy(l->conn, NULL);
			}
			l->conn = NULL;
			l->dead = 0;
			free(*errstr);
			*errstr = NULL;
			if ((st = l->ops->connect(l->ctx, &l->conn, errstr)) !=
			    DB_OK) {
				l->conn = NULL;
				break;
			}
		}
		free(*errstr);
		*errstr = NULL;
		st = l->ops->run_finish(l->conn, l->run_id, outcome,
		    end->exit_status, error, attempt < 2 ? end->output : NULL,
		    errstr);
		if (st == DB_OK) {
			*bare = attempt == 2 && end->output != NULL;
			break;
		}
		if (st == DB_ERR_LOST)
			l->dead = 1;
		if (*first == NULL)
			*first = xstrdup(
			    *errstr != NULL ? *errstr : "unknown error");
	}
	if (kept != NULL) {
		if (l->conn != NULL)
			l->ops->destroy(l->conn, NULL);
		l->conn = kept;
		l->dead = 0;
	}
	/* The release must still prove from a fresh session that the lost
	 * lock session no longer holds the lock (lock_verify). */
	if (gone)
		l->dead = 1;
	return st;
}

void
lock_run_end(struct lock *l, const struct run_end *end, int incident,
    const char *jobtext)
{
	char          *errstr = NULL, *detail = NULL, *error = NULL;
	char          *first = NULL;
	const char    *outcome = end->outcome;
	enum db_status st;
	int            bare = 0;

	if (incident)
		outcome = l->lost ? "lock_lost" : "incident";
	if (incident && end->error != NULL)
		error = xasprintf("%s; lock incident, see the log", end->error);
	else if (incident)
		error = xstrdup("lock incident, see the log");
	else if (end->error != NULL)
		error = xstrdup(end->error);

	st = lock_run_write(l, end, outcome, error, &first, &bare, &errstr);
	if (st == DB_OK)
		lock_prune_quietly(l);
	if (st == DB_OK && first != NULL) {
		detail = xasprintf("finishing run record %llu failed: %s; "
		                   "finished on a new session%s (%s)",
		    l->run_id, first, bare ? " without its output" : "",
		    jobtext);
		lock_incident(l, "run_record_retried", detail);
	} else if (st != DB_OK) {
		/* Said as it is: the slot ran, and its record does not show
		 * it; the next launch closes the record as abandoned and,
		 * finding no success, may run the slot again. */
		detail = xasprintf("finishing run record %llu failed: %s%s%s; "
		                   "the slot ran but its record stays "
		                   "'running': a later launch may run it "
		                   "again unless it is acknowledged (jobs ack) "
		                   "(%s)",
		    l->run_id, first != NULL ? first : "",
		    first != NULL ? "; at the last try: " : "",
		    errstr != NULL ? errstr : "unknown error", jobtext);
		lock_incident(l, "run_record_failed", detail);
		l->record_failed = 1;
	}
	free(first);
	free(detail);
	free(error);
	free(errstr);
}

/* The release was an incident after the record said otherwise: correct
 * its outcome, leaving its output as written. */
static void
lock_run_mark_incident(
    struct lock *l, const struct run_end *end, const char *jobtext)
{
	struct run_end e = *end;

	e.output = NULL;
	lock_run_end(l, &e, 1, jobtext);
}

/*
 * The record first, then the release (doc/architecture.md, "Done before
 * released"): while the lock is held no other host can start the slot,
 * and once it is free the slot's success is already durable.  A release
 * that turns out to be an incident corrects the record's outcome after.
 */
enum lock_result
lock_finish(struct lock *l, const struct run_end *end)
{
	char *jobtext;
	int   recorded_incident, after_record, incidents;
	int   record = l->run_id != 0;

	jobtext = job_status_text(end);
	recorded_incident = l->lost;
	/* After a demotion, finishing the run record would be an errant
	 * write on the old primary (a user with SUPER gets through). */
	if (record && !l->read_only)
		lock_run_end(l, end, recorded_incident, jobtext);
	after_record = l->incidents;
	if (l->held)
		lock_release(l, jobtext);
	incidents = l->lost || l->incidents > after_record || l->record_failed;
	if (record && !l->read_only && !l->record_failed &&
	    !recorded_incident && (l->lost || l->incidents > after_record))
		lock_run_mark_incident(l, end, jobtext);
	lock_close(l);
	free(jobtext);
	return incidents ? LOCK_INCIDENT : LOCK_OK;
}

enum lock_result
lock_give_back(struct lock *l)
{
	int incidents = l->incidents;

	if (l->held)
		lock_release(l, "the slot was done: nothing ran");
	lock_close(l);
	return l->incidents > incidents ? LOCK_INCIDENT : LOCK_OK;
}

void
lock_close(struct lock *l)
{
	if (l->conn != NULL)
		l->ops->destroy(l->conn, NULL);
	l->conn = NULL;
	l->held = 0;
}
