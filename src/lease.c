/* lease.c: the lease lock and the fencing token (see lease.h). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mysqld_error.h>

#include "db.h"
#include "lease.h"
#include "util.h"

/* The lease is free: no owner, or its time is up (database clock).  Used
 * only in the first assignment, before any column it reads changes. */
#define LEASE_FREE "(owner_token IS NULL OR expires_at <= NOW(6))"
/* This statement took it: the first assignment moved the fence to
 * LAST_INSERT_ID(), which was 0 (never a fence) otherwise.  A test on the
 * owner token instead would also hold for an owner asking again. */
#define LEASE_TAKEN "fence = LAST_INSERT_ID()"

void
lease_token(char out[LEASE_TOKEN_SIZE])
{
	char   uuid[37];
	size_t i, o;

	uuid_v4(uuid);
	for (i = 0, o = 0; uuid[i] != '\0' && o < LEASE_TOKEN_SIZE - 1; i++)
		if (uuid[i] != '-')
			out[o++] = uuid[i];
	out[o] = '\0';
}

/* The fence that LAST_INSERT_ID(expr) handed back: never 0 once taken. */
static enum lease_status
lease_fence_of(
    const struct db_result *r, unsigned long long *fence, char **errstr)
{
	if (r->insert_id == 0) {
		*errstr = xstrdup("the server returned no fencing token");
		return LEASE_ERR_VALUE;
	}
	*fence = r->insert_id;
	return LEASE_OK;
}

/* A failed statement's lease status: the refusals with exit codes of
 * their own keep them. */
static enum lease_status
lease_status_of_db(enum db_status st)
{
	return st == DB_ERR_PRIVILEGE ? LEASE_ERR_PRIVILEGE
	    : st == DB_ERR_SCHEMA     ? LEASE_ERR_SCHEMA
	                              : LEASE_ERR_DB;
}

enum lease_status
lease_acquire(struct db *db, const char *name, const char *token,
    const char *host, long long pid, unsigned long long lease_us,
    unsigned long long *fence, char **errstr)
{
	struct db_result *r = NULL;
	enum lease_status ls;
	enum db_status    st;

	*fence = 0;
	st = db_query(db, &r, errstr,
	    "INSERT INTO cronguard_leases (name, owner_token, holder_host,"
	    " holder_pid, holder_conn, acquired_at, expires_at, fence)"
	    " VALUES (%s, %s, %s, %lld, CONNECTION_ID(), NOW(6),"
	    " NOW(6) + INTERVAL %llu MICROSECOND, LAST_INSERT_ID(0) + 1)"
	    " ON DUPLICATE KEY UPDATE"
	    " fence = IF(%R, LAST_INSERT_ID(fence + 1), fence),"
	    " owner_token = IF(%R, %s, owner_token),"
	    " holder_host = IF(%R, %s, holder_host),"
	    " holder_pid = IF(%R, %lld, holder_pid),"
	    " holder_conn = IF(%R, CONNECTION_ID(), holder_conn),"
	    " acquired_at = IF(%R, NOW(6), acquired_at),"
	    " expires_at = IF(%R, NOW(6) + INTERVAL %llu MICROSECOND,"
	    "  expires_at)",
	    name, token, host, pid, lease_us, LEASE_FREE, LEASE_TAKEN, token,
	    LEASE_TAKEN, host, LEASE_TAKEN, pid, LEASE_TAKEN, LEASE_TAKEN,
	    LEASE_TAKEN, lease_us);
	if (st == DB_ERR_RETRYABLE) {
		/* Galera: another node's acquire certified first.  A plain
		 * server: the row stayed locked past the wait timeout. */
		free(*errstr);
		*errstr = NULL;
		ls = LEASE_BUSY;
		goto out;
	}
	if (st != DB_OK) {
		ls = lease_status_of_db(st);
		goto out;
	}
	switch (r->affected) {
	case 0: /* the row is unchanged: someone else's */
		ls = LEASE_BUSY;
		break;
	case 1: /* a new row */
		*fence = 1;
		ls = LEASE_OK;
		break;
	default: /* 2: a free row taken */
		ls = lease_fence_of(r, fence, errstr);
		break;
	}
out:
	db_result_free(r);
	return ls;
}

enum lease_status
lease_extend(struct db *db, const char *name, const char *token,
    unsigned long long lease_us, char **errstr)
{
	struct db_result *r = NULL;
	enum lease_status ls;
	char             *why = NULL;

	/* The check is a condition of the UPDATE itself: no round trip of
	 * its own.  It reads system variables, so MIXED logs the UPDATE by
	 * row (cronguard(1), REPLICATION AND FAILOVER). */
	if (db_query(db, &r, errstr,
	        "UPDATE cronguard_leases"
	        " SET expires_at = NOW(6) + INTERVAL %llu MICROSECOND"
	        " WHERE name = %s AND owner_token = %s AND expires_at > NOW(6)"
	        " AND %R IS NULL",
	        lease_us, name, token, db_read_only_sql(db)) != DB_OK)
		ls = db_errno(db) == ER_OPTION_PREVENTS_STATEMENT
		    ? LEASE_READ_ONLY
		    : LEASE_ERR_DB;
	else if (r->affected == 1)
		ls = LEASE_OK;
	else if (db_query_value(db, &why, errstr, "SELECT %R",
	             db_read_only_sql(db)) == DB_OK &&
	    why != NULL) {
		*errstr = why;
		why = NULL;
		ls = LEASE_READ_ONLY;
	} else
		ls = LEASE_LOST;
	free(why);
	db_result_free(r);
	return ls;
}

/* Clear the owner columns of name while token owns it (and, with
 * unexpired, while it has not expired); *n rows changed. */
static enum db_status
lease_clear(struct db *db, const char *name, const char *token, int unexpired,
    unsigned long long *n, char **errstr)
{
	struct db_result *r = NULL;
	enum db_status    st;

	*n = 0;
	st = db_query(db, &r, errstr,
	    "UPDATE cronguard_leases SET owner_token = NULL,"
	    " holder_host = NULL, holder_pid = NULL, holder_conn = NULL,"
	    " acquired_at = NULL, expires_at = NULL"
	    " WHERE name = %s AND owner_token = %s%R",
	    name, token, unexpired ? " AND expires_at > NOW(6)" : "");
	if (st == DB_OK)
		*n = r->affected;
	db_result_free(r);
	return st;
}

enum lease_status
lease_release(struct db *db, const char *name, const char *token, char **errstr)
{
	unsigned long long n;

	if (lease_clear(db, name, token, 1, &n, errstr) != DB_OK)
		return LEASE_ERR_DB;
	if (n == 1)
		return LEASE_OK;
	/* Not ours, or ours but expired (nobody took it yet): give back
	 * the expired one too, and say it was lost either way. */
	if (lease_clear(db, name, token, 0, &n, errstr) != DB_OK)
		return LEASE_ERR_DB;
	return LEASE_LOST;
}

enum lease_status
lease_holder(
    struct db *db, const char *name, struct lease_holder *h, char **errstr)
{
	struct db_result *r = NULL;
	enum lease_status ls = LEASE_OK;
	const char       *cell, *e;

	memset(h, 0, sizeof *h);
	h->pid = h->held_s = -1;
	if (db_query(db, &r, errstr,
	        "SELECT l.owner_token, l.holder_host, l.holder_pid,"
	        " l.holder_conn, l.fence,"
	        " TIMESTAMPDIFF(SECOND, l.acquired_at, NOW(6)),"
	        " l.expires_at <= NOW(6), r.id, r.job"
	        " FROM cronguard_leases l"
	        " LEFT JOIN cronguard_runs r ON r.id = (SELECT MAX(x.id)"
	        "  FROM cronguard_runs x WHERE x.lock_name = l.name"
	        "  AND x.fence = l.fence AND x.outcome = 'running')"
	        " WHERE l.name = %s",
	        name) != DB_OK) {
		ls = LEASE_ERR_DB;
		goto out;
	}
	if (r->nrows == 0)
		goto out;
	h->owner_token = db_cell_dup(r, 0, 0);
	h->host = db_cell_dup(r, 0, 1);
	h->pid = db_cell_ll(r, 0, 2, -1);
	h->connection_id = (unsigned long long)db_cell_ll(r, 0, 3, 0);
	if ((cell = db_cell(r, 0, 4)) == NULL ||
	    parse_ull(cell, UINT64_MAX, &h->fence, &e) != 0) {
		*errstr = xstrdup("cronguard_leases.fence is not a number");
		ls = LEASE_ERR_VALUE;
		goto out;
	}
	h->held_s = db_cell_ll(r, 0, 5, -1);
	h->expired = db_parse_bool(db_cell(r, 0, 6)) == 1;
	h->run_id = (unsigned long long)db_cell_ll(r, 0, 7, 0);
	h->run_job = db_cell_dup(r, 0, 8);
out:
	db_result_free(r);
	return ls;
}

void
lease_holder_free(struct lease_holder *h)
{
	free(h->owner_token);
	free(h->host);
	free(h->run_job);
	memset(h, 0, sizeof *h);
}

enum lease_status
lease_fence_next(
    struct db *db, const char *name, unsigned long long *fence, char **errstr)
{
	struct db_result *r = NULL;
	enum lease_status ls;
	enum db_status    st;

	*fence = 0;
	if ((st = db_query(db, &r, errstr,
	         "INSERT INTO cronguard_leases (name, fence)"
	         " VALUES (%s, LAST_INSERT_ID(1))"
	         " ON DUPLICATE KEY UPDATE fence = LAST_INSERT_ID(fence + 1)",
	         name)) != DB_OK)
		ls = lease_status_of_db(st);
	else
		ls = lease_fence_of(r, fence, errstr);
	db_result_free(r);
	return ls;
}
