/* db.h: a thin wrapper over MariaDB Connector/C. */
#ifndef CRONGUARD_DB_H
#define CRONGUARD_DB_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mysql.h>

#include "conf.h"

struct db;

/* Result codes of every db_* call that can fail. */
enum db_status {
	DB_OK = 0,
	DB_ERR_CONNECT,   /* could not connect: exit 69 */
	DB_ERR_LOST,      /* connection lost mid-session (2006, 2013) */
	DB_ERR_RETRYABLE, /* deadlock 1213 or lock wait timeout 1205 */
	DB_ERR_QUERY,     /* any other server or client error */
	DB_ERR_READ_ONLY, /* db_connect_primary: the server takes no writes */
	/* The server refused a statement for want of a privilege (1142,
	 * 1143, 1370, 1044, 1227): exit 77; the message names the privilege
	 * and the table. */
	DB_ERR_PRIVILEGE,
	/* A table or column of cronguard's is unknown (1146, 1054): the
	 * schema is behind this binary, exit 78, "run cronguard db
	 * migrate". */
	DB_ERR_SCHEMA,
};

/*
 * Connect with c's host/port or socket, option_file/option_group, the
 * three timeouts and the TLS mode.  Auto-reconnect is off, and set off
 * again after connecting (Connector/C reads option files inside
 * mysql_real_connect); the socket is close-on-exec; the session runs in
 * utf8mb4 with time_zone '+00:00'.  On failure *errstr names the host:port
 * or socket and the client library's error.
 */
enum db_status db_connect(
    const struct conf_database *c, struct db **out, char **errstr);
/*
 * db_connect retries a refused connect that passes by itself (1040 too
 * many connections, 1203, and 2002/2003/2013: the server not listening
 * yet or dropping the handshake) with jittered backoff for up to
 * c->connect_retry_ms, and logs one db_connect_retry warning when it
 * starts retrying.  db_connect_check is the same for the monitoring
 * checks, which must answer in time: DB_CONNECT_RETRY_CHECK_MS at most.
 */
#define DB_CONNECT_RETRY_CHECK_MS 5000
enum db_status db_connect_check(
    const struct conf_database *c, struct db **out, char **errstr);
/*
 * db_connect for a command that takes a lock, claims rows or writes run
 * records: the session must be on a server that accepts its writes.  The
 * check rides on the session setup statement (no round trip of its own):
 * the time zone is set from an expression that names the first reason the
 * server is read-only, so that the SET fails (1298, unknown time zone)
 * on such a server before anything was written.  Checked, because a user
 * with SUPER (or READ_ONLY ADMIN) writes through read_only:
 *	@@global.read_only (OFF or 0; any other value, such as MariaDB's
 *	NO_LOCK, counts as on), @@global.innodb_read_only, the session's
 *	@@transaction_read_only (@@tx_read_only before MariaDB 11.1), on
 *	MySQL @@global.super_read_only (MariaDB has none: the statement is
 *	built for the server the handshake named), and on MariaDB the
 *	global status Slaves_running (SQL threads of replication running:
 *	a replica left writable, or a demoted primary already replicating
 *	from the new one).  MySQL's replicas are told by super_read_only,
 *	which every failover tool sets there.
 * A reconnect (db_reconnect_enable) checks again.  DB_ERR_READ_ONLY with
 * *errstr naming the server and the reasons, and one db_read_only error
 * line logged; cronguard(1), REPLICATION AND FAILOVER.
 */
enum db_status db_connect_primary(
    const struct conf_database *c, struct db **out, char **errstr);
/* The SQL expression (constant text for %R) that is NULL while the
 * session's server accepts writes, else the reasons, comma-separated
 * ("read_only,replica_sql_running"), for a statement that rides on one
 * already sent (a heartbeat). */
const char *db_read_only_sql(const struct db *);
/* "127.0.0.1:3306", "socket /path": the server, for messages. */
const char *db_where(const struct db *);
/* 1 when the handshake named a MariaDB server, else 0 (and 0 for NULL,
 * or a db not yet connected). */
int db_is_mariadb(const struct db *);
/* The server's or client library's error number of this thread's last
 * failed connect attempt (1045 wrong password, 1049 unknown database,
 * 2002 no socket, ...), 0 after a successful one: for doctor, which
 * gives each a fix of its own. */
unsigned db_connect_errno(void);
/* db_connect_primary for a worker with a deadline (until_ms, monotonic;
 * 0: none): retrying stops at it, so the attempt in progress then
 * (bounded by connect_timeout) is the last.  A read-only server is
 * DB_ERR_READ_ONLY, as for db_connect_primary. */
enum db_status db_connect_until(const struct conf_database *c, int64_t until_ms,
    struct db **out, char **errstr);
/* Close and free.  NULL is fine. */
void          db_close(struct db *);
unsigned long db_connection_id(struct db *);
/* The session's socket, to poll for the server closing it while no
 * statement runs (never read or written directly); -1 when none. */
int db_socket(struct db *);
/* Last Connector/C error number. */
unsigned db_errno(struct db *);

/* A fully fetched result: every cell a NUL-terminated string, or NULL for
 * SQL NULL.  Freed with db_result_free. */
struct db_result {
	size_t             nrows;
	size_t             ncols;
	char             **names;    /* column names */
	char            ***rows;     /* rows[i][j] */
	unsigned long    **lengths;  /* lengths[i][j] */
	unsigned long long affected; /* rows affected by a DML statement */
	unsigned long long insert_id;
	void              *res; /* the MYSQL_RES that owns the cells */
};
void db_result_free(struct db_result *);
/* Cell accessor; NULL for SQL NULL or out of range. */
const char *db_cell(const struct db_result *, size_t row, size_t col);
/* The cell as an allocated string (it may hold NUL bytes), or NULL. */
char *db_cell_dup(const struct db_result *, size_t row, size_t col);
/* The cell as an integer; dflt for SQL NULL or anything else. */
long long db_cell_ll(
    const struct db_result *, size_t row, size_t col, long long dflt);
/* DB_OK when r is one row of ncols columns, else DB_ERR_QUERY with
 * *errstr. */
enum db_status db_one_row(
    const struct db_result *r, size_t ncols, char **errstr);

/*
 * Run one statement built from fmt, with every value escaped by the
 * server's rules.  Conversions:
 *	%s	a string literal, quoted and escaped; NULL pointer gives NULL
 *	%d %u	int, unsigned
 *	%.*s	int length, then a string that may hold NUL bytes; NULL
 *		pointer gives NULL
 *	%lld %llu	long long, unsigned long long
 *	%f	double (finite)
 *	%I	an identifier: checked against [A-Za-z0-9_$], backquoted;
 *		anything else fails the call (identifiers never come from
 *		input unchecked)
 *	%L	an id list: size_t count, then const unsigned long long *;
 *		"1,2,3", or NULL for an empty list (IN (NULL) matches no row)
 *	%A	a list of string literals: size_t count, then
 *		const char *const *; each as %s, comma-separated, or NULL
 *		for an empty list (as %L)
 *	%K	the same strings as a derived table of two columns, k their
 *		index and v the string: "(SELECT 0 AS k, 'a' AS v UNION ALL
 *		SELECT 1, 'b')" (on MariaDB "... UNION ALL VALUES (1, 'b')",
 *		cheaper to read), no row for an empty list; a statement over
 *		many names joins it, each row's subqueries probing an index
 *		for its own v
 *	%F	a fragment: const struct buf * built by db_fragment
 *	%R	constant SQL text written in the source, never data
 *	%%	a percent sign
 * If res is not NULL the (possibly empty) result is returned in *res.
 * On failure *errstr is "query failed: <server error>" (allocated).
 */
enum db_status db_query(
    struct db *, struct db_result **res, char **errstr, const char *fmt, ...);
enum db_status db_vquery(struct db *, struct db_result **res, char **errstr,
    const char *fmt, va_list);
/* Run one statement given whole, with no conversions: a job's configured
 * SQL, which is the operator's code, not a value.  Never for text built
 * from input. */
enum db_status db_query_statement(
    struct db *, struct db_result **res, char **errstr, const char *sql);
/* Like db_query for statements that are safe to repeat: retried (with a
 * jittered pause growing from 10 ms to 500 ms) on a conflict (deadlock
 * 1213, which is also how Galera reports a certification failure, lock
 * wait timeout 1205, Galera's 1047 "WSREP has not yet prepared node"),
 * DB_RETRIES times, with the reconnect policy on also until its bound; and
 * with the policy on, repeated on a new session when the connection was
 * lost.  Only in autocommit mode: a deadlock rolls back the whole
 * transaction, so inside one return the status and let db_txn repeat all
 * of it. */
#define DB_RETRIES 5
#define DB_RECONNECTS 3
enum db_status db_query_retry(
    struct db *, struct db_result **res, char **errstr, const char *fmt, ...);
/* db_query_retry for a statement that must not run twice (it adds to a
 * counter): conflicts are retried (the server did not apply it), but
 * after a lost connection it is not repeated: with the reconnect policy
 * on, the session is replaced and DB_ERR_LOST says the statement's
 * outcome is unknown (DB_ERR_CONNECT: the server stayed away). */
enum db_status db_query_once(
    struct db *, struct db_result **res, char **errstr, const char *fmt, ...);

/* Run a multi-statement script (a migration): multi-statements are on
 * for this call only; every result is consumed and discarded.  Stops at
 * the first failing statement (*errstr "script failed: ..."); earlier
 * statements stay applied.  No DELIMITER lines: that is a mysql(1)
 * client command, the server splits compound statements itself. */
enum db_status db_exec_script(struct db *, const char *sql, char **errstr);

/* Transactions.  db_txn runs fn inside START TRANSACTION ... COMMIT and
 * retries the whole of it on a conflict as db_query_retry (fn must be
 * safe to repeat); fn returns a db_status; anything but DB_OK rolls back.
 * With the reconnect policy on, a transaction whose connection was lost
 * before COMMIT is repeated on a new session (the server rolled it back).
 * A COMMIT whose reply was lost may or may not have committed: db_txn
 * then reconnects and returns DB_ERR_LOST ("commit outcome unknown");
 * db_txn_checked asks check, on the new session, whether it committed
 * (*committed): if so it returns DB_OK, else it repeats the transaction.
 * check must look for something only this transaction writes (a claim
 * token). */
enum db_status db_begin(struct db *, char **errstr);
enum db_status db_commit(struct db *, char **errstr);
enum db_status db_rollback(struct db *, char **errstr);
typedef enum db_status (*db_txn_fn)(struct db *, void *arg, char **errstr);
typedef enum db_status (*db_txn_check_fn)(
    struct db *, void *arg, bool *committed, char **errstr);
enum db_status db_txn(struct db *, db_txn_fn, void *arg, char **errstr);
/*
 * One statement that commits on its own (a procedure with a transaction
 * of its own, which rolls back and raises any error): its result in *res
 * (may be NULL when check found it committed).  Repeated on a conflict
 * as db_query_retry does.  When the connection is lost its reply may
 * have been lost after its COMMIT: with the reconnect policy on, check
 * looks on the new session and it runs again only if it did not commit.
 */
enum db_status db_call_checked(struct db *, struct db_result **res,
    db_txn_check_fn check, void *arg, char **errstr, const char *fmt, ...);
enum db_status db_txn_checked(
    struct db *, db_txn_fn, db_txn_check_fn check, void *arg, char **errstr);

/*
 * The reconnect policy, for a long-lived worker (outbox dispatch) whose
 * statements are safe to repeat; never for a named lock's session, whose
 * lock a new session would not hold.  When the connection is lost (the
 * server restarted, 2006, 2013, 1053, 1927), db_query_retry and db_txn
 * open a new session in place with the same configuration, replay every
 * db_session_set statement, log one db_reconnected warning and carry on.
 * While the server refuses connections they retry with jittered backoff
 * (250 ms doubling to 4 s, +-50 %) until until_ms (monotonic ms: the
 * worker's deadline) or database.connect_retry from the loss, whichever
 * is later; then DB_ERR_CONNECT.  Conflicts are retried within the same
 * bound.  Plain db_query, db_query_value and db_query_statement are
 * never repeated.
 */
void db_reconnect_enable(struct db *, int64_t until_ms);
/* Run a session setting (SET SESSION ...) now and after every
 * reconnect.  sql is constant text, never data. */
enum db_status db_session_set(struct db *, const char *sql, char **errstr);
/* Conflicts retried (as above) and reconnects made on this handle. */
unsigned long long db_conflicts(const struct db *);
unsigned long long db_reconnects(const struct db *);
/* Statements sent on this handle by its queries and transactions (the
 * session setup and the fault points aside): what a command costs, for
 * its debug line (cronguard status). 0 for a NULL handle. */
unsigned long long db_statements(const struct db *);

/* Single-value helpers: run a query that yields one row and one column
 * (anything else is DB_ERR_QUERY). */
enum db_status db_query_value(struct db *, char **value, char **errstr,
    const char *fmt, ...); /* *value allocated, NULL for SQL NULL */

/* Parse an exact "0"/"1"/NULL result: 1, 0, or -1 for NULL.  Anything
 * else (including "" and "01") is -2.  Never a truthiness test. */
int db_parse_bool(const char *cell);

/* 1 if s is a valid identifier for %I: 1 to 64 of [A-Za-z0-9_$]. */
int db_ident_valid(const char *s);

/*
 * Append the statement built from fmt (conversions as db_query) to b.
 * With db NULL, literals are escaped without a connection (as
 * mysql_escape_string: backslash escapes), for tests and dry runs.
 * Returns 0, or -1 with *errstr allocated (bad conversion, invalid
 * identifier, non-finite number).
 */
struct buf;
int db_format(
    struct db *, struct buf *, char **errstr, const char *fmt, va_list);
/* db_format with the values as arguments: append a fragment (a WHERE
 * condition, an IN list of strings) to b, for a %F of a later query. */
int db_fragment(struct db *, struct buf *, char **errstr, const char *fmt, ...);

#endif
