/*
 * db-txn.c: transactions over db.c's connection: START TRANSACTION ...
 * COMMIT with conflicts retried, a COMMIT whose reply was lost told by
 * the caller's check, and a CALL of a procedure that commits itself
 * checked the same way (db.h, "Transactions").
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <errmsg.h>
#include <mysql.h>

#include "db.h"
#include "log.h"
#include "util.h"

#include "db-int.h"

enum db_status
db_begin(struct db *db, char **errstr)
{
	enum db_status st;

	st = db_simple(db, "START TRANSACTION", errstr);
	db->in_txn = st == DB_OK;
	return st;
}

#ifdef ENABLE_FAULT_INJECTION
/*
 * Test builds only (t0830): with CRONGUARD_FAULT=commit_lost the first
 * COMMIT of the process reaches the server but its reply is lost (the
 * socket is shut down after sending it); with commit_lost_before the
 * first COMMIT never reaches the server.  Returns 1 when it broke the
 * connection (the COMMIT's outcome is then for the caller to find out).
 */
static int
db_fault_commit(struct db *db)
{
	static bool done;
	const char *want = getenv("CRONGUARD_FAULT");
	int         fd, before;

	if (done || want == NULL)
		return 0;
	if (strcmp(want, "commit_lost") == 0)
		before = 0;
	else if (strcmp(want, "commit_lost_before") == 0)
		before = 1;
	else
		return 0;
	done = true;
	fd = (int)mysql_get_socket(db->mysql);
	if (before)
		(void)shutdown(fd, SHUT_RDWR);
	if (mysql_send_query(db->mysql, "COMMIT", 6) == 0) {
		/* Let the server read and run it before it sees the end. */
		sleep_ms(100);
		(void)shutdown(fd, SHUT_RDWR);
		(void)mysql_read_query_result(db->mysql);
	}
	return 1;
}
#else
#define db_fault_commit(db) 0
#endif

enum db_status
db_commit(struct db *db, char **errstr)
{
	db->in_txn = false;
	if (db_fault_commit(db)) {
		free(*errstr);
		*errstr = xstrdup("COMMIT failed: connection lost (fault "
		                  "injected)");
		return DB_ERR_LOST;
	}
	return db_simple(db, "COMMIT", errstr);
}

enum db_status
db_rollback(struct db *db, char **errstr)
{
	db->in_txn = false;
	return db_simple(db, "ROLLBACK", errstr);
}

/* START TRANSACTION, fn, COMMIT; *at_commit says the COMMIT failed. */
static enum db_status
db_txn_once(
    struct db *db, db_txn_fn fn, void *arg, bool *at_commit, char **errstr)
{
	enum db_status st;

	*at_commit = false;
	if ((st = db_begin(db, errstr)) != DB_OK)
		return st;
	if ((st = fn(db, arg, errstr)) != DB_OK)
		return st;
	*at_commit = true;
	return db_commit(db, errstr);
}

enum db_status
db_txn_checked(struct db *db, db_txn_fn fn, db_txn_check_fn check, void *arg,
    char **errstr)
{
	struct db_retry r;
	enum db_status  st, rst;
	char           *rberr = NULL, *tmp;
	bool            at_commit, conflict, committed;

	memset(&r, 0, sizeof r);
	for (;;) {
		st = db_txn_once(db, fn, arg, &at_commit, errstr);
		if (st == DB_OK)
			return DB_OK;
		conflict = db_conflict(db, st);
		if (st == DB_ERR_LOST) {
			/* The server rolls back a transaction whose session
			 * ends before COMMIT: it can be repeated.  A COMMIT
			 * whose reply was lost may have committed: only
			 * check can tell, on the new session. */
			db->in_txn = false;
			if (at_commit && check == NULL) {
				/* Nothing can tell: say so, on a new session
				 * when the policy reconnects. */
				if (!db->reconnect)
					return st;
				if ((rst = db_reconnect(db, errstr)) != DB_OK)
					return rst;
				*errstr = xstrdup("commit outcome unknown: "
				                  "connection lost at COMMIT");
				return DB_ERR_LOST;
			}
			if (!db_retry_again(db, &r, &st, false, errstr))
				return st;
			if (!at_commit)
				continue;
			if ((st = check(db, arg, &committed, errstr)) != DB_OK)
				return st;
			if (committed)
				return DB_OK;
			continue;
		}
		/* The server may already have rolled back (deadlock); an
		 * explicit ROLLBACK is still needed after a lock wait
		 * timeout or any error fn returned. */
		if ((rst = db_rollback(db, &rberr)) != DB_OK) {
			tmp = xasprintf("%s; %s",
			    *errstr != NULL ? *errstr : "transaction failed",
			    rberr);
			free(*errstr);
			free(rberr);
			*errstr = tmp;
			return rst;
		}
		if (!db_retry_again(db, &r, &st, conflict, errstr))
			return st;
	}
}

#ifdef ENABLE_FAULT_INJECTION
/* CRONGUARD_FAULT=call_lost: the first db_call_checked statement runs,
 * and its reply is lost (the session's socket is shut down after it). */
static int
db_fault_call(struct db *db, const struct buf *sql)
{
	static bool done;
	const char *want = getenv("CRONGUARD_FAULT");

	if (done || want == NULL || strcmp(want, "call_lost") != 0)
		return 0;
	done = true;
	if (mysql_send_query(db->mysql, sql->data, sql->len) == 0) {
		sleep_ms(100);
		(void)shutdown((int)mysql_get_socket(db->mysql), SHUT_RDWR);
		(void)mysql_read_query_result(db->mysql);
	}
	return 1;
}
#else
#define db_fault_call(db, sql) 0
#endif

enum db_status
db_call_checked(struct db *db, struct db_result **res, db_txn_check_fn check,
    void *arg, char **errstr, const char *fmt, ...)
{
	struct db_retry r;
	struct buf      sql;
	enum db_status  st;
	va_list         ap;
	bool            committed;
	int             rc;

	*res = NULL;
	buf_init(&sql);
	va_start(ap, fmt);
	rc = db_format(db, &sql, errstr, fmt, ap);
	va_end(ap);
	if (rc != 0) {
		buf_free(&sql);
		return DB_ERR_QUERY;
	}
	memset(&r, 0, sizeof r);
	for (;;) {
		if (db_fault_call(db, &sql)) {
			*errstr =
			    xstrdup("query failed: connection lost (fault "
			            "injected)");
			st = DB_ERR_LOST;
		} else
			st = db_query(db, res, errstr, "%F", &sql);
		if (st == DB_OK)
			break;
		if (st == DB_ERR_LOST) {
			/* It may have committed before the reply was lost:
			 * only check can tell, on the new session. */
			if (!db_retry_again(db, &r, &st, false, errstr))
				break;
			free(*errstr);
			*errstr = NULL;
			if ((st = check(db, arg, &committed, errstr)) != DB_OK)
				break;
			if (committed) {
				st = DB_OK;
				break;
			}
			continue;
		}
		/* It rolled back (its handler): repeat it on a conflict. */
		if (!db_retry_again(db, &r, &st, db_conflict(db, st), errstr))
			break;
	}
	buf_free(&sql);
	return st;
}

enum db_status
db_txn(struct db *db, db_txn_fn fn, void *arg, char **errstr)
{
	return db_txn_checked(db, fn, NULL, arg, errstr);
}
