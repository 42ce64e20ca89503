/* db.c: a thin wrapper over MariaDB Connector/C. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <errmsg.h>
#include <mysql.h>
#include <mysqld_error.h>

#include "backoff.h"
#include "db.h"
#include "duration.h"
#include "log.h"
#include "util.h"

#include "db-int.h"

static enum db_status db_classify(unsigned);
static int db_set_options(struct db *, const struct conf_database *, char **);
static int db_check_tls(struct db *, enum tls_mode, char **);
static int db_cloexec(struct db *, char **);
static enum db_status db_run(
    struct db *, const char *, size_t, struct db_result **, bool, char **);
static enum db_status    db_drain(struct db *, char **);
static struct db_result *db_result_build(MYSQL *, MYSQL_RES *);

/* Timeouts are whole seconds in Connector/C: round up, at least 1. */
static unsigned
db_seconds(int64_t ms)
{
	int64_t s;

	if (ms <= 0)
		return 1;
	s = (ms + 999) / 1000;
	if (s > 86400 * 365)
		s = 86400 * 365;
	return (unsigned)s;
}

static enum db_status
db_classify(unsigned err)
{
	switch (err) {
	case CR_SERVER_GONE_ERROR:
	case CR_SERVER_LOST:
	case CR_SERVER_LOST_EXTENDED:
	case ER_CONNECTION_KILLED:
	case ER_SERVER_SHUTDOWN:
	case DB_ER_CLIENT_INTERACTION_TIMEOUT:
		return DB_ERR_LOST;
	case ER_LOCK_DEADLOCK:
	case ER_LOCK_WAIT_TIMEOUT:
		return DB_ERR_RETRYABLE;
	case ER_TABLEACCESS_DENIED_ERROR:
	case ER_COLUMNACCESS_DENIED_ERROR:
	case ER_PROCACCESS_DENIED_ERROR:
	case ER_DBACCESS_DENIED_ERROR:
	case ER_SPECIFIC_ACCESS_DENIED_ERROR:
		return DB_ERR_PRIVILEGE;
	default:
		return DB_ERR_QUERY;
	}
}

/* Fill *errstr from the connection's last error and classify it. */
enum db_status
db_fail(struct db *db, char **errstr, const char *what)
{
	db->last_err = mysql_errno(db->mysql);
	if (errstr != NULL) {
		free(*errstr);
		*errstr =
		    xasprintf("%s failed: %s", what, mysql_error(db->mysql));
	}
	return db_classify(mysql_errno(db->mysql));
}

/*
 * A statement of cronguard's own (db_query's constant text) that names a
 * table, column or index (FORCE INDEX) the server does not know means the
 * schema is behind the binary: DB_ERR_SCHEMA, "run cronguard db migrate".  An
 * operator's SQL job (db_query_statement) naming a missing table of its own is
 * that job's error, and stays DB_ERR_QUERY.
 */
static enum db_status
db_fail_own(struct db *db, char **errstr)
{
	unsigned e = mysql_errno(db->mysql);

	if (e != ER_NO_SUCH_TABLE && e != ER_BAD_FIELD_ERROR &&
	    e != ER_KEY_DOES_NOT_EXISTS)
		return db_fail(db, errstr, "query");
	if (errstr != NULL) {
		free(*errstr);
		*errstr = xasprintf("query failed: %s (the schema is behind "
		                    "this cronguard: run cronguard db migrate)",
		    mysql_error(db->mysql));
	}
	return DB_ERR_SCHEMA;
}

static int
db_set_options(struct db *db, const struct conf_database *c, char **errstr)
{
	MYSQL      *m = db->mysql;
	unsigned    connect_s, read_s, write_s;
	my_bool     off = 0;
	my_bool     enforce, verify;
	const char *what = NULL;

	connect_s = db_seconds(c->connect_timeout_ms);
	read_s = db_seconds(c->read_timeout_ms);
	write_s = db_seconds(c->write_timeout_ms);

	if (c->option_file != NULL &&
	    mysql_optionsv(m, MYSQL_READ_DEFAULT_FILE, c->option_file) != 0)
		what = "option_file";
	else if (c->option_group != NULL &&
	    mysql_optionsv(m, MYSQL_READ_DEFAULT_GROUP, c->option_group) != 0)
		what = "option_group";
	else if (mysql_optionsv(m, MYSQL_OPT_CONNECT_TIMEOUT, &connect_s) != 0)
		what = "connect_timeout";
	else if (mysql_optionsv(m, MYSQL_OPT_READ_TIMEOUT, &read_s) != 0)
		what = "read_timeout";
	else if (mysql_optionsv(m, MYSQL_OPT_WRITE_TIMEOUT, &write_s) != 0)
		what = "write_timeout";
	else if (mysql_optionsv(m, MYSQL_OPT_RECONNECT, &off) != 0)
		what = "reconnect";
	else if (mysql_optionsv(m, MYSQL_SET_CHARSET_NAME, "utf8mb4") != 0)
		what = "charset";
	else if (mysql_optionsv(m, MYSQL_OPT_LOCAL_INFILE, &off) != 0)
		what = "local_infile";
	if (what != NULL)
		goto fail;

	/*
	 * Connector/C 3.3 uses TLS only when asked (MYSQL_OPT_SSL_ENFORCE or
	 * any TLS file); 3.4 turns it on and verifies by default.  Set both
	 * switches explicitly so every mode means the same with either.
	 * Whether TLS is really in use is checked after connecting.
	 */
	enforce = c->tls_mode != TLS_DISABLED;
	verify = c->tls_mode == TLS_VERIFY_IDENTITY;
	if (mysql_optionsv(m, MYSQL_OPT_SSL_ENFORCE, &enforce) != 0 ||
	    mysql_optionsv(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify) != 0) {
		what = "tls mode";
		goto fail;
	}
	if (c->tls_mode != TLS_DISABLED) {
		if (c->tls_ca != NULL &&
		    mysql_optionsv(m, MYSQL_OPT_SSL_CA, c->tls_ca) != 0)
			what = "tls ca";
		else if (c->tls_cert != NULL &&
		    mysql_optionsv(m, MYSQL_OPT_SSL_CERT, c->tls_cert) != 0)
			what = "tls cert";
		else if (c->tls_key != NULL &&
		    mysql_optionsv(m, MYSQL_OPT_SSL_KEY, c->tls_key) != 0)
			what = "tls key";
		if (what != NULL)
			goto fail;
	}
	return 0;

fail:
	*errstr = xasprintf("cannot connect to %s: setting %s failed: %s",
	    db->where, what, mysql_error(m));
	return -1;
}

/*
 * "required" and "verify_identity" must not fall back to plain text, and
 * "disabled" must not end up encrypted because an option file said so:
 * check what the handshake actually negotiated.
 */
static int
db_check_tls(struct db *db, enum tls_mode mode, char **errstr)
{
	const char *cipher;

	cipher = mysql_get_ssl_cipher(db->mysql);
	switch (mode) {
	case TLS_REQUIRED:
	case TLS_VERIFY_IDENTITY:
		if (cipher == NULL) {
			*errstr = xasprintf(
			    "cannot connect to %s: tls is required but the connection is not encrypted (server without TLS support?)",
			    db->where);
			return -1;
		}
		break;
	case TLS_DISABLED:
		if (cipher != NULL) {
			*errstr = xasprintf(
			    "cannot connect to %s: tls is disabled but the connection is encrypted (TLS enabled in the option file?)",
			    db->where);
			return -1;
		}
		break;
	case TLS_PREFERRED:
		break;
	}
	return 0;
}

/* Children of a job must not inherit the session (and keep a named lock
 * alive after cronguard dies). */
static int
db_cloexec(struct db *db, char **errstr)
{
	my_socket fd;
	int       flags;

	fd = mysql_get_socket(db->mysql);
	if ((int)fd < 0) {
		*errstr =
		    xasprintf("cannot connect to %s: no socket", db->where);
		return -1;
	}
	if ((flags = fcntl((int)fd, F_GETFD)) == -1 ||
	    fcntl((int)fd, F_SETFD, flags | FD_CLOEXEC) == -1) {
		*errstr = xasprintf("cannot connect to %s: fcntl: %s",
		    db->where, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The reasons a server takes no writes, NULL when it does (db.h,
 * db_connect_primary).  A flag is compared as text, so that an ON, a 1
 * and an enum value other than OFF all count, and no string turns
 * into a number 0.  Slaves_running is read from information_schema, which
 * needs no privilege; read_only and a running replica together name both.
 */
#define DB_RO_FLAG(var, name) \
	"IF(CAST(" var " AS CHAR) IN ('0', 'OFF'), NULL, '" name "')"
#define DB_RO_REPLICA \
	"IF((SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS" \
	" WHERE VARIABLE_NAME = 'SLAVES_RUNNING') > 0," \
	" 'replica_sql_running', NULL)"
#define DB_RO_MARIADB(txn) \
	"NULLIF(CONCAT_WS(','," DB_RO_FLAG("@@global.read_only", \
	    "read_only") "," DB_RO_FLAG("@@global.innodb_read_only", \
	    "innodb_read_only") "," DB_RO_FLAG("@@session." txn, \
	    txn) "," DB_RO_REPLICA "), '')"
static const char db_ro_mariadb[] = DB_RO_MARIADB("tx_read_only");
static const char db_ro_mariadb_111[] = DB_RO_MARIADB("transaction_read_only");
static const char db_ro_mysql[] =
    "NULLIF(CONCAT_WS(','," DB_RO_FLAG("@@global.read_only",
        "read_only") "," DB_RO_FLAG("@@global.super_read_only",
        "super_read_only") "," DB_RO_FLAG("@@global.innodb_read_only",
        "innodb_read_only") "," DB_RO_FLAG("@@session.transaction_read_only",
        "transaction_read_only") "), '')";
/* The prefix of the time zone a read-only server is asked to take. */
#define DB_RO_MARK "cronguard-read-only:"

static const char *
db_ro_expr(MYSQL *m)
{
	const char *info = mysql_get_server_info(m);

	if (info == NULL || strstr(info, "MariaDB") == NULL)
		return db_ro_mysql;
	return mysql_get_server_version(m) >= 110100 ? db_ro_mariadb_111
	                                             : db_ro_mariadb;
}

/*
 * The session setup: time_zone '+00:00' (DATETIME values computed from
 * NOW() are then UTC), and with primary the writable check riding on the
 * same statement.  On a read-only server the SET fails with 1298 (an
 * unknown time zone: "+00:00" never is one) whose value carries the
 * reasons: DB_ERR_READ_ONLY, *errstr naming the server.
 */
static enum db_status
db_setup_session(struct db *db, bool primary, char **errstr)
{
	static const char tz[] = "SET time_zone = '+00:00'";
	struct buf        b;
	const char       *msg, *p, *q;
	char             *why;
	int               rc;

	db->read_only = db_ro_expr(db->mysql);
	if (!primary)
		rc = mysql_real_query(db->mysql, tz, sizeof tz - 1);
	else {
		buf_init(&b);
		buf_printf(&b,
		    "SET time_zone = COALESCE(CONCAT('" DB_RO_MARK "', %s),"
		    " '+00:00')",
		    db->read_only);
		rc = mysql_real_query(db->mysql, b.data, b.len);
		buf_free(&b);
	}
	if (rc == 0)
		return DB_OK;
	if (!primary || mysql_errno(db->mysql) != ER_UNKNOWN_TIME_ZONE) {
		*errstr = xasprintf("cannot set up session on %s: %s",
		    db->where, mysql_error(db->mysql));
		return DB_ERR_CONNECT;
	}
	/* The reasons, from the quoted value in the message. */
	msg = mysql_error(db->mysql);
	if ((p = strstr(msg, DB_RO_MARK)) != NULL &&
	    (q = strchr(p += sizeof DB_RO_MARK - 1, '\'')) != NULL)
		why = xstrndup(p, (size_t)(q - p));
	else
		why = xstrdup("read-only");
	log_kv(LOG_ERROR, "db_read_only", "server", db->where, "reason", why,
	    "msg",
	    "the server does not accept writes: a replica or a "
	    "demoted primary; nothing was written");
	*errstr = xasprintf("%s is read-only (%s): refusing to lock, claim or "
	                    "write there",
	    db->where, why);
	free(why);
	return DB_ERR_READ_ONLY;
}

/* The error number of this thread's last failed connect attempt, for
 * doctor's fix lines (db_connect_errno). */
static _Thread_local unsigned db_last_connect_errno;

unsigned
db_connect_errno(void)
{
	return db_last_connect_errno;
}

/* The db_where of a connection to c (allocated); *host and *port are
 * what mysql_real_connect takes (left NULL and 0 for a socket, and for
 * an option file's own). */
static char *
db_where_of(const struct conf_database *c, const char **host, unsigned *port)
{
	if (c->socket != NULL)
		return xasprintf("socket %s", c->socket);
	if (c->host == NULL && c->option_file != NULL) {
		/* Host, port and socket come from the option file; a port
		 * left at its default must not override it. */
		*port = c->port != 3306 ? c->port : 0;
		return xasprintf("the server named in %s", c->option_file);
	}
	*host = c->host != NULL ? c->host : "127.0.0.1";
	*port = c->port != 0 ? c->port : 3306;
	return xasprintf("%s:%u", *host, *port);
}

/* The message of a refused connect on db (allocated). */
static char *
db_connect_refused(struct db *db, const struct conf_database *c)
{
	char *from = NULL, *msg;

	/* Which file held the wrong password is the operator's first
	 * question; a missing database is created first. */
	if (mysql_errno(db->mysql) == ER_ACCESS_DENIED_ERROR &&
	    c->password_file != NULL)
		from = xasprintf(" (password from %s)", c->password_file);
	else if (mysql_errno(db->mysql) == ER_BAD_DB_ERROR && c->name != NULL)
		from = xasprintf(
		    " (create it first: CREATE DATABASE `%s` CHARACTER SET utf8mb4)",
		    c->name);
	msg = xasprintf("cannot connect to %s: %s%s", db->where,
	    mysql_error(db->mysql), from != NULL ? from : "");
	free(from);
	return msg;
}

/* One connection attempt.  *err is the client library's error number
 * when the server could not be reached or refused the connection, else 0. */
static enum db_status
db_connect_once(const struct conf_database *c, bool primary, struct db **out,
    unsigned *err, char **errstr)
{
	struct db     *db;
	const char    *host = NULL;
	unsigned       port = 0;
	my_bool        off = 0;
	struct stat    sb;
	enum db_status st = DB_ERR_CONNECT;

	*out = NULL;
	*err = 0;
	*errstr = NULL;
	db_last_connect_errno = 0;
	db = xcalloc(1, sizeof *db);
	db->where = db_where_of(c, &host, &port);

	if ((db->mysql = mysql_init(NULL)) == NULL) {
		*errstr =
		    xasprintf("cannot connect to %s: out of memory", db->where);
		goto fail;
	}
	if (db_set_options(db, c, errstr) != 0)
		goto fail;

	/* A socket path that does not exist does not appear by waiting:
	 * say so now instead of retrying for connect_retry. */
	if (c->socket != NULL && stat(c->socket, &sb) == -1 &&
	    errno == ENOENT) {
		db_last_connect_errno = CR_CONNECTION_ERROR;
		*errstr = xasprintf(
		    "cannot connect to %s: it does not exist (is the server running there? Debian's MariaDB listens on /run/mysqld/mysqld.sock)",
		    db->where);
		goto fail;
	}
	if (mysql_real_connect(db->mysql, host, c->user, c->password, c->name,
	        port, c->socket, 0) == NULL) {
		*err = db_last_connect_errno = mysql_errno(db->mysql);
		*errstr = db_connect_refused(db, c);
		if (*err == ER_DBACCESS_DENIED_ERROR) {
			db_close(db);
			return DB_ERR_PRIVILEGE;
		}
		goto fail;
	}
	/* An option file read inside mysql_real_connect may have turned
	 * reconnect back on: a silent reconnect is a new session without
	 * our named locks, so it must stay off. */
	if (mysql_optionsv(db->mysql, MYSQL_OPT_RECONNECT, &off) != 0) {
		*errstr = xasprintf("cannot connect to %s: cannot turn off "
		                    "reconnect: %s",
		    db->where, mysql_error(db->mysql));
		goto fail;
	}
	if (db_check_tls(db, c->tls_mode, errstr) != 0 ||
	    db_cloexec(db, errstr) != 0)
		goto fail;
	if ((st = db_setup_session(db, primary, errstr)) != DB_OK)
		goto fail;
	db->conf = c;
	db->primary = primary;
	*out = db;
	return DB_OK;

fail:
	db_close(db);
	return st;
}

/* Refusals that pass by themselves: too many connections (a fleet's
 * crontabs firing in the same second), and a server (re)starting: nothing
 * listening yet (2002, 2003) or the connection dropped in the handshake
 * (2013). */
static int
db_connect_transient(unsigned err)
{
	switch (err) {
	case ER_CON_COUNT_ERROR:
	case ER_TOO_MANY_USER_CONNECTIONS:
	case CR_CONNECTION_ERROR:
	case CR_CONN_HOST_ERROR:
	case CR_SERVER_LOST:
	case ER_SERVER_SHUTDOWN:
		return 1;
	default:
		return 0;
	}
}

/* The pauses between connect attempts: from 250 ms doubling to 4 s, each
 * spread by +-50 % so that refused clients do not come back together. */
static const struct conf_outbox db_connect_backoff = {
	.backoff_initial_ms = 250,
	.backoff_multiplier = 2.0,
	.backoff_max_ms = 4000,
	.backoff_jitter = 0.5,
};

static enum db_status
db_connect_retry(const struct conf_database *c, bool primary, int64_t retry_ms,
    struct db **out, char **errstr)
{
	enum db_status st;
	unsigned       err, attempt;
	int64_t        deadline, left, pause;
	char           limit[32], *msg;

	deadline = now_mono_ms() + retry_ms;
	for (attempt = 1;; attempt++) {
		st = db_connect_once(c, primary, out, &err, errstr);
		if (st == DB_OK || !db_connect_transient(err))
			break;
		if ((left = deadline - now_mono_ms()) <= 0)
			break;
		/* One line, however many attempts follow. */
		if (attempt == 1) {
			duration_format(retry_ms, limit, sizeof limit);
			log_kv(LOG_WARN, "db_connect_retry", "error", *errstr,
			    "retry_for", limit);
		}
		pause = backoff_delay_ms(
		    &db_connect_backoff, attempt, 0, backoff_random());
		free(*errstr);
		*errstr = NULL;
		sleep_ms(pause < left ? pause : left);
	}
	if (st != DB_OK && attempt > 1) {
		duration_format(retry_ms, limit, sizeof limit);
		msg = xasprintf(
		    "%s (%u attempts in %s)", *errstr, attempt, limit);
		free(*errstr);
		*errstr = msg;
	}
	return st;
}

enum db_status
db_connect(const struct conf_database *c, struct db **out, char **errstr)
{
	return db_connect_retry(c, false, c->connect_retry_ms, out, errstr);
}

enum db_status
db_connect_primary(
    const struct conf_database *c, struct db **out, char **errstr)
{
	return db_connect_retry(c, true, c->connect_retry_ms, out, errstr);
}

const char *
db_read_only_sql(const struct db *db)
{
	return db->read_only;
}

const char *
db_where(const struct db *db)
{
	return db->where;
}

int
db_is_mariadb(const struct db *db)
{
	return db != NULL && db->read_only != NULL &&
	    db->read_only != db_ro_mysql;
}

enum db_status
db_connect_check(const struct conf_database *c, struct db **out, char **errstr)
{
	return db_connect_retry(c, false,
	    c->connect_retry_ms < DB_CONNECT_RETRY_CHECK_MS
	        ? c->connect_retry_ms
	        : DB_CONNECT_RETRY_CHECK_MS,
	    out, errstr);
}

enum db_status
db_connect_until(const struct conf_database *c, int64_t until_ms,
    struct db **out, char **errstr)
{
	int64_t retry_ms = c->connect_retry_ms, left;

	if (until_ms != 0 && (left = until_ms - now_mono_ms()) < retry_ms)
		retry_ms = left > 0 ? left : 0;
	return db_connect_retry(c, true, retry_ms, out, errstr);
}

void
db_close(struct db *db)
{
	size_t i;

	if (db == NULL)
		return;
	if (db->mysql != NULL)
		mysql_close(db->mysql);
	for (i = 0; i < db->nsession; i++)
		free(db->session[i]);
	free(db->session);
	free(db->where);
	free(db);
}

unsigned long
db_connection_id(struct db *db)
{
	return mysql_thread_id(db->mysql);
}

int
db_socket(struct db *db)
{
	return (int)mysql_get_socket(db->mysql);
}

unsigned
db_errno(struct db *db)
{
	return mysql_errno(db->mysql);
}

/* --------------------------------------------------------- reconnects */

/* Pauses between retries of a conflict: from 10 ms doubling to 500 ms,
 * each spread by +-50 % so that the sessions that collided do not
 * collide again at once. */
static const struct conf_outbox db_conflict_backoff = {
	.backoff_initial_ms = 10,
	.backoff_multiplier = 2.0,
	.backoff_max_ms = 500,
	.backoff_jitter = 0.5,
};

void
db_reconnect_enable(struct db *db, int64_t until_ms)
{
	db->reconnect = true;
	db->reconnect_until = until_ms;
}

enum db_status
db_session_set(struct db *db, const char *sql, char **errstr)
{
	enum db_status st;

	if ((st = db_simple(db, sql, errstr)) != DB_OK)
		return st;
	db->session =
	    xreallocarray(db->session, db->nsession + 1, sizeof *db->session);
	db->session[db->nsession++] = xstrdup(sql);
	return DB_OK;
}

unsigned long long
db_conflicts(const struct db *db)
{
	return db->conflicts;
}

unsigned long long
db_reconnects(const struct db *db)
{
	return db->reconnects;
}

unsigned long long
db_statements(const struct db *db)
{
	return db != NULL ? db->statements : 0;
}

/* Until when (monotonic ms) a reconnect or a conflict that starts now may
 * be retried: the policy's deadline, but at least connect_retry. */
static int64_t
db_retry_deadline(const struct db *db)
{
	int64_t until = now_mono_ms() + db->conf->connect_retry_ms;

	return db->reconnect_until > until ? db->reconnect_until : until;
}

/*
 * A refusal that passes by itself: deadlock or lock wait timeout (a
 * Galera certification failure is reported as deadlock 1213), and a
 * Galera node not ready for clients (1047 "WSREP has not yet prepared
 * node for application use": joining, or cut off from the primary
 * component).  Read right after the failure.
 */
bool
db_conflict(struct db *db, enum db_status st)
{
	return st == DB_ERR_RETRYABLE ||
	    (st == DB_ERR_QUERY &&
	        mysql_errno(db->mysql) == ER_UNKNOWN_COM_ERROR);
}

/*
 * Replace the lost session with a new one to the same server with the
 * same settings (db_session_set), retrying while the server is away
 * (restarting: connection refused) until db_retry_deadline.  *errstr
 * holds the loss on entry; DB_OK frees it and logs one db_reconnected,
 * else *errstr says both and the status is DB_ERR_CONNECT.
 */
enum db_status
db_reconnect(struct db *db, char **errstr)
{
	struct db     *fresh = NULL;
	enum db_status st = DB_ERR_CONNECT;
	unsigned       err = 0, attempt;
	int64_t        start, deadline, left, pause;
	char          *why, *e = NULL, n[32], ms[32];
	size_t         i;

	why = *errstr != NULL ? *errstr : xstrdup("connection lost");
	*errstr = NULL;
	start = now_mono_ms();
	deadline = db_retry_deadline(db);
	for (attempt = 1;; attempt++) {
		free(e);
		e = NULL;
		st = db_connect_once(db->conf, db->primary, &fresh, &err, &e);
		if (st == DB_OK) {
			mysql_close(db->mysql);
			db->mysql = fresh->mysql;
			db->read_only = fresh->read_only;
			fresh->mysql = NULL;
			db_close(fresh);
			db->in_txn = false;
			db->wait_s = 0;
			for (i = 0; st == DB_OK && i < db->nsession; i++)
				st = db_simple(db, db->session[i], &e);
			if (st == DB_OK)
				break;
			err = st == DB_ERR_LOST ? CR_SERVER_LOST : 0;
		}
		if (!db_connect_transient(err) ||
		    (left = deadline - now_mono_ms()) <= 0)
			goto fail;
		pause = backoff_delay_ms(
		    &db_connect_backoff, attempt, 0, backoff_random());
		sleep_ms(pause < left ? pause : left);
	}
	db->reconnects++;
	snprintf(n, sizeof n, "%u", attempt);
	snprintf(ms, sizeof ms, "%lld", (long long)(now_mono_ms() - start));
	log_kv(
	    LOG_WARN, "db_reconnected", "error", why, "attempts", n, "ms", ms);
	free(why);
	return DB_OK;

fail:
	duration_format(now_mono_ms() - start, ms, sizeof ms);
	*errstr = xasprintf("%s; reconnecting failed: %s (%u attempts in %s)",
	    why, e != NULL ? e : "error", attempt, ms);
	free(why);
	free(e);
	return DB_ERR_CONNECT;
}

/*
 * After a statement or transaction failed with *st: whether to repeat
 * it.  A lost connection, with the reconnect policy on, after
 * reconnecting (at most DB_RECONNECTS times for one statement); a
 * conflict after a jittered pause, DB_RETRIES times, and with the policy
 * on for as long as db_retry_deadline allows.  false: *st and *errstr are
 * what to return.
 */
bool
db_retry_again(struct db *db, struct db_retry *r, enum db_status *st,
    bool conflict, char **errstr)
{
	enum db_status rst;
	int64_t        pause, left = INT64_MAX;

	if (*st == DB_ERR_LOST) {
		if (!db->reconnect || r->reconnects++ >= DB_RECONNECTS)
			return false;
		if ((rst = db_reconnect(db, errstr)) != DB_OK) {
			*st = rst;
			return false;
		}
		if (r->once) {
			*errstr = xstrdup("statement outcome unknown: "
			                  "connection lost");
			return false;
		}
		return true;
	}
	if (!conflict)
		return false;
	/* A lock wait that lasted until the worker's deadline
	 * (db_bound_waits) is not waited again. */
	if (db->reconnect && db->reconnect_until != 0 &&
	    db->last_err == ER_LOCK_WAIT_TIMEOUT &&
	    now_mono_ms() >= db->reconnect_until)
		return false;
	/* DB_RETRIES times in any case; with the policy on, then on until
	 * its bound. */
	if (db->reconnect) {
		if (r->deadline == 0)
			r->deadline = db_retry_deadline(db);
		if ((left = r->deadline - now_mono_ms()) <= 0) {
			if (r->attempt >= DB_RETRIES)
				return false;
			left = INT64_MAX;
		}
	} else if (r->attempt >= DB_RETRIES)
		return false;
	r->attempt++;
	db->conflicts++;
	pause = backoff_delay_ms(
	    &db_conflict_backoff, r->attempt, 0, backoff_random());
	free(*errstr);
	*errstr = NULL;
	sleep_ms(pause < left ? pause : left);
	return true;
}

/* ------------------------------------------------------------ results */

static struct db_result *
db_result_build(MYSQL *m, MYSQL_RES *res)
{
	struct db_result *r;
	MYSQL_FIELD      *fields;
	MYSQL_ROW         row;
	unsigned long    *lens, *block;
	size_t            i, j;

	r = xcalloc(1, sizeof *r);
	r->affected = mysql_affected_rows(m);
	r->insert_id = mysql_insert_id(m);
	if (res == NULL)
		return r;

	r->res = res;
	r->nrows = (size_t)mysql_num_rows(res);
	r->ncols = mysql_num_fields(res);
	fields = mysql_fetch_fields(res);
	r->names = xcalloc(r->ncols + 1, sizeof *r->names);
	for (j = 0; j < r->ncols; j++)
		r->names[j] = fields[j].name;
	r->rows = xcalloc(r->nrows + 1, sizeof *r->rows);
	r->lengths = xcalloc(r->nrows + 1, sizeof *r->lengths);
	/* One block for every length: mysql_fetch_lengths() reuses its
	 * array for each row. */
	block = xcalloc(r->nrows * r->ncols + 1, sizeof *block);
	r->lengths[0] = block;
	for (i = 0; i < r->nrows; i++) {
		if ((row = mysql_fetch_row(res)) == NULL)
			break;
		lens = mysql_fetch_lengths(res);
		r->rows[i] = row;
		r->lengths[i] = block + i * r->ncols;
		for (j = 0; j < r->ncols; j++)
			r->lengths[i][j] = lens[j];
	}
	r->nrows = i;
	return r;
}

void
db_result_free(struct db_result *r)
{
	if (r == NULL)
		return;
	if (r->lengths != NULL)
		free(r->lengths[0]); /* the block of every length */
	free(r->lengths);
	free(r->rows);
	free(r->names);
	if (r->res != NULL)
		mysql_free_result(r->res);
	free(r);
}

const char *
db_cell(const struct db_result *r, size_t row, size_t col)
{
	if (r == NULL || row >= r->nrows || col >= r->ncols)
		return NULL;
	return r->rows[row][col];
}

char *
db_cell_dup(const struct db_result *r, size_t row, size_t col)
{
	const char *cell;

	if ((cell = db_cell(r, row, col)) == NULL)
		return NULL;
	return xstrndup(cell, r->lengths[row][col]);
}

long long
db_cell_ll(const struct db_result *r, size_t row, size_t col, long long dflt)
{
	const char *cell, *e;
	long long   v;

	if ((cell = db_cell(r, row, col)) == NULL ||
	    parse_ll(cell, INT64_MIN, INT64_MAX, &v, &e) != 0)
		return dflt;
	return v;
}

enum db_status
db_one_row(const struct db_result *r, size_t ncols, char **errstr)
{
	if (r->nrows != 1 || r->ncols != ncols) {
		*errstr = xasprintf("query failed: expected one row of %zu "
		                    "columns, got %zu rows of %zu",
		    ncols, r->nrows, r->ncols);
		return DB_ERR_QUERY;
	}
	return DB_OK;
}

/* --------------------------------------------------------- formatting */

int
db_ident_valid(const char *s)
{
	size_t n;

	if (s == NULL)
		return 0;
	n = strspn(s,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$");
	return n > 0 && n <= DB_IDENT_MAX && s[n] == '\0';
}

/*
 * Without a connection: the backslash escapes of mysql_escape_string(),
 * which itself cannot be used here (Connector/C 3.3 dereferences a
 * default character set that only exists once a connection was set up).
 * Safe for UTF-8, whose multi-byte sequences never contain these bytes.
 */
static void
db_escape_offline(struct buf *b, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		switch (s[i]) {
		case '\0':
			buf_add(b, "\\0", 2);
			break;
		case '\n':
			buf_add(b, "\\n", 2);
			break;
		case '\r':
			buf_add(b, "\\r", 2);
			break;
		case '\032':
			buf_add(b, "\\Z", 2);
			break;
		case '\\':
		case '\'':
		case '"':
			buf_addc(b, '\\');
			buf_addc(b, s[i]);
			break;
		default:
			buf_addc(b, s[i]);
			break;
		}
	}
}

/* Append s (len bytes, may hold NUL) as a quoted, escaped literal.  With
 * a connection the escaping follows its character set and sql_mode. */
static void
db_add_literal(struct db *db, struct buf *b, const char *s, size_t len)
{
	char         *tmp;
	unsigned long n;

	buf_addc(b, '\'');
	if (db != NULL && db->mysql != NULL) {
		tmp = xreallocarray(NULL, 2, len + 1);
		n = mysql_real_escape_string(db->mysql, tmp, s, len);
		buf_add(b, tmp, n);
		free(tmp);
	} else
		db_escape_offline(b, s, len);
	buf_addc(b, '\'');
}

/* %s: s as a literal, NULL as NULL. */
static void
db_add_string(struct db *db, struct buf *b, const char *s)
{
	if (s == NULL)
		buf_adds(b, "NULL");
	else
		db_add_literal(db, b, s, strlen(s));
}

/* %.*s: s of len bytes as a literal, NULL as NULL; a negative len is an
 * error. */
static int
db_add_sized(
    struct db *db, struct buf *b, const char *s, int len, char **errstr)
{
	if (s == NULL)
		buf_adds(b, "NULL");
	else if (len < 0) {
		*errstr = xstrdup("query failed: negative string length");
		return -1;
	} else
		db_add_literal(db, b, s, (size_t)len);
	return 0;
}

/* %f: f with all its digits; NaN and infinities are an error. */
static int
db_add_double(struct buf *b, double f, char **errstr)
{
	if (!isfinite(f)) {
		*errstr = xstrdup("query failed: number is not finite");
		return -1;
	}
	buf_printf(b, "%.17g", f);
	return 0;
}

/* %I: s as a quoted identifier, which db_ident_valid must accept. */
static int
db_add_ident(struct buf *b, const char *s, char **errstr)
{
	if (!db_ident_valid(s)) {
		*errstr = xasprintf("query failed: invalid identifier \"%s\"",
		    s == NULL ? "(null)" : s);
		return -1;
	}
	buf_addc(b, '`');
	buf_adds(b, s);
	buf_addc(b, '`');
	return 0;
}

/* %L: the n ids as a list of numbers, NULL when empty. */
static void
db_add_ids(struct buf *b, size_t n, const unsigned long long *ids)
{
	size_t i;

	if (n == 0)
		buf_adds(b, "NULL"); /* IN (NULL): no row */
	for (i = 0; i < n; i++)
		buf_printf(b, "%s%llu", i > 0 ? "," : "", ids[i]);
}

/* %A: the n strings as a list of literals, NULL when empty. */
static void
db_add_literals(struct db *db, struct buf *b, size_t n, const char *const *strs)
{
	size_t i;

	if (n == 0)
		buf_adds(b, "NULL"); /* IN (NULL): no row */
	for (i = 0; i < n; i++) {
		if (i > 0)
			buf_addc(b, ',');
		db_add_string(db, b, strs[i]);
	}
}

/*
 * %K: the n strings as a derived table of (k, v) rows, k their index; an
 * empty table when n is 0.  The first row is a SELECT that names the
 * columns.  On MariaDB the others are one table value constructor
 * (VALUES (1, 'b'), ...): the server reads 1,000 rows of it in about a
 * fifth of the time it takes for 1,000 UNION ALL SELECTs.  MySQL writes a
 * constructor differently (VALUES ROW(...), 8.0.19 on) and gets the
 * UNION.  offline (db NULL, or not yet connected): the UNION.
 */
static void
db_add_keyed(struct db *db, struct buf *b, size_t n, const char *const *strs)
{
	int    tvc = db_is_mariadb(db);
	size_t i;

	if (n == 0) {
		buf_adds(b,
		    "(SELECT 0 AS k, NULL AS v FROM DUAL"
		    " WHERE FALSE)");
		return;
	}
	buf_adds(b, "(SELECT 0 AS k, ");
	db_add_string(db, b, strs[0]);
	buf_adds(b, " AS v");
	for (i = 1; i < n; i++) {
		if (tvc)
			buf_printf(b,
			    i == 1 ? " UNION ALL VALUES (%zu, " : ", (%zu, ",
			    i);
		else
			buf_printf(b, " UNION ALL SELECT %zu, ", i);
		db_add_string(db, b, strs[i]);
		if (tvc)
			buf_addc(b, ')');
	}
	buf_addc(b, ')');
}

/* %F: a fragment built before (db_fragment), as it is. */
static int
db_add_fragment(struct buf *b, const struct buf *frag, char **errstr)
{
	if (frag == NULL) {
		*errstr = xstrdup("query failed: NULL fragment");
		return -1;
	}
	buf_add(b, frag->data, frag->len);
	return 0;
}

/* %R: s as it is (SQL text of the program's own, never a value). */
static int
db_add_raw(struct buf *b, const char *s, char **errstr)
{
	if (s == NULL) {
		*errstr = xstrdup("query failed: NULL raw fragment");
		return -1;
	}
	buf_adds(b, s);
	return 0;
}

int
db_format(
    struct db *db, struct buf *b, char **errstr, const char *fmt, va_list ap)
{
	const char *p;
	int         len, rc = 0;
	size_t      n;

	for (p = fmt; *p != '\0'; p++) {
		if (*p != '%') {
			buf_addc(b, *p);
			continue;
		}
		switch (*++p) {
		case '%':
			buf_addc(b, '%');
			break;
		case 's':
			db_add_string(db, b, va_arg(ap, const char *));
			break;
		case '.':
			if (p[1] != '*' || p[2] != 's')
				goto bad;
			p += 2;
			len = va_arg(ap, int);
			rc = db_add_sized(
			    db, b, va_arg(ap, const char *), len, errstr);
			break;
		case 'd':
			buf_printf(b, "%d", va_arg(ap, int));
			break;
		case 'u':
			buf_printf(b, "%u", va_arg(ap, unsigned));
			break;
		case 'l':
			if (p[1] != 'l' || (p[2] != 'd' && p[2] != 'u'))
				goto bad;
			if (p[2] == 'd')
				buf_printf(b, "%lld", va_arg(ap, long long));
			else
				buf_printf(
				    b, "%llu", va_arg(ap, unsigned long long));
			p += 2;
			break;
		case 'f':
			rc = db_add_double(b, va_arg(ap, double), errstr);
			break;
		case 'I':
			rc = db_add_ident(b, va_arg(ap, const char *), errstr);
			break;
		case 'L':
			n = va_arg(ap, size_t);
			db_add_ids(
			    b, n, va_arg(ap, const unsigned long long *));
			break;
		case 'A':
			n = va_arg(ap, size_t);
			db_add_literals(
			    db, b, n, va_arg(ap, const char *const *));
			break;
		case 'K':
			n = va_arg(ap, size_t);
			db_add_keyed(db, b, n, va_arg(ap, const char *const *));
			break;
		case 'F':
			rc = db_add_fragment(
			    b, va_arg(ap, const struct buf *), errstr);
			break;
		case 'R':
			rc = db_add_raw(b, va_arg(ap, const char *), errstr);
			break;
		default:
			goto bad;
		}
		if (rc != 0)
			return -1;
	}
	return 0;

bad:
	*errstr = xasprintf("query failed: bad conversion in \"%s\"", fmt);
	return -1;
}

int
db_fragment(struct db *db, struct buf *b, char **errstr, const char *fmt, ...)
{
	va_list ap;
	int     rc;

	va_start(ap, fmt);
	rc = db_format(db, b, errstr, fmt, ap);
	va_end(ap);
	return rc;
}

/* ----------------------------------------------------------- queries */

/* Consume every further result of a multi-result statement (CALL), so
 * the connection is ready for the next one.  No extra round trip: the
 * server has already sent them. */
static enum db_status
db_drain(struct db *db, char **errstr)
{
	MYSQL_RES *res;
	int        rc;

	while ((rc = mysql_next_result(db->mysql)) == 0) {
		if ((res = mysql_store_result(db->mysql)) != NULL)
			mysql_free_result(res);
		else if (mysql_field_count(db->mysql) != 0)
			return db_fail(db, errstr, "query");
	}
	if (rc > 0)
		return db_fail(db, errstr, "query");
	return DB_OK;
}

/*
 * With a worker's deadline (db_reconnect_enable), a statement blocked
 * behind a table lock (LOCK TABLES, an ALTER) or a row lock waits no
 * longer than the time left before it, rounded up to whole seconds, not
 * read_timeout and over again after each reconnect: before a statement,
 * whenever the whole seconds left drop below the session's bound, both
 * lock wait timeouts (server variables of MySQL and MariaDB alike) are
 * lowered to them, never raised above the server's own.  At most one
 * SET a second; a statement that starts at the deadline waits 1 s.
 */
static enum db_status
db_bound_waits(struct db *db, char **errstr)
{
	char     sql[192];
	unsigned left;
	int      n;

	if (db->reconnect_until == 0)
		return DB_OK;
	left = db_seconds(db->reconnect_until - now_mono_ms());
	if (db->wait_s != 0 && left >= db->wait_s)
		return DB_OK;
	n = snprintf(sql, sizeof sql,
	    "SET SESSION lock_wait_timeout = LEAST(@@lock_wait_timeout, %u),"
	    " innodb_lock_wait_timeout = LEAST(@@innodb_lock_wait_timeout,"
	    " %u)",
	    left, left);
	if (mysql_real_query(db->mysql, sql, (unsigned long)n) != 0)
		return db_fail(db, errstr, "query");
	db->wait_s = left;
	return DB_OK;
}

static enum db_status
db_run(struct db *db, const char *sql, size_t len, struct db_result **res,
    bool own, char **errstr)
{
	MYSQL_RES        *r = NULL;
	struct db_result *out;
	enum db_status    st;

	if ((st = db_bound_waits(db, errstr)) != DB_OK)
		return st;
	db->statements++;
	if (mysql_real_query(db->mysql, sql, len) != 0)
		return own ? db_fail_own(db, errstr)
		           : db_fail(db, errstr, "query");
	r = mysql_store_result(db->mysql);
	if (r == NULL && mysql_field_count(db->mysql) != 0)
		return db_fail(db, errstr, "query");
	out = db_result_build(db->mysql, r);
	if (mysql_more_results(db->mysql) &&
	    (st = db_drain(db, errstr)) != DB_OK) {
		db_result_free(out);
		return st;
	}
	if (res != NULL)
		*res = out;
	else
		db_result_free(out);
	return DB_OK;
}

enum db_status
db_vquery(struct db *db, struct db_result **res, char **errstr, const char *fmt,
    va_list ap)
{
	struct buf     b;
	enum db_status st;

	if (res != NULL)
		*res = NULL;
	buf_init(&b);
	if (db_format(db, &b, errstr, fmt, ap) != 0) {
		st = DB_ERR_QUERY;
		goto out;
	}
	st = db_run(db, b.data, b.len, res, true, errstr);
out:
	buf_free(&b);
	return st;
}

enum db_status
db_query_statement(
    struct db *db, struct db_result **res, char **errstr, const char *sql)
{
	if (res != NULL)
		*res = NULL;
	return db_run(db, sql, strlen(sql), res, false, errstr);
}

enum db_status
db_query(
    struct db *db, struct db_result **res, char **errstr, const char *fmt, ...)
{
	va_list        ap;
	enum db_status st;

	va_start(ap, fmt);
	st = db_vquery(db, res, errstr, fmt, ap);
	va_end(ap);
	return st;
}

static enum db_status
db_vquery_retry(struct db *db, struct db_result **res, bool once, char **errstr,
    const char *fmt, va_list ap)
{
	struct buf      b;
	enum db_status  st;
	struct db_retry r;

	if (res != NULL)
		*res = NULL;
	buf_init(&b);
	if (db_format(db, &b, errstr, fmt, ap) != 0) {
		st = DB_ERR_QUERY;
		goto out;
	}
	memset(&r, 0, sizeof r);
	r.once = once;
	for (;;) {
		st = db_run(db, b.data, b.len, res, true, errstr);
		/* Inside a transaction only db_txn may repeat: all of it. */
		if (st == DB_OK || db->in_txn ||
		    !db_retry_again(db, &r, &st, db_conflict(db, st), errstr))
			break;
	}
out:
	buf_free(&b);
	return st;
}

enum db_status
db_query_retry(
    struct db *db, struct db_result **res, char **errstr, const char *fmt, ...)
{
	va_list        ap;
	enum db_status st;

	va_start(ap, fmt);
	st = db_vquery_retry(db, res, false, errstr, fmt, ap);
	va_end(ap);
	return st;
}

enum db_status
db_query_once(
    struct db *db, struct db_result **res, char **errstr, const char *fmt, ...)
{
	va_list        ap;
	enum db_status st;

	va_start(ap, fmt);
	st = db_vquery_retry(db, res, true, errstr, fmt, ap);
	va_end(ap);
	return st;
}

enum db_status
db_query_value(struct db *db, char **value, char **errstr, const char *fmt, ...)
{
	struct db_result *r = NULL;
	va_list           ap;
	enum db_status    st;

	*value = NULL;
	va_start(ap, fmt);
	st = db_vquery(db, &r, errstr, fmt, ap);
	va_end(ap);
	if (st != DB_OK)
		return st;
	/* DB_OK always comes with the (possibly empty) result (db.h). */
	assert(r != NULL);
	if (r->nrows != 1 || r->ncols != 1) {
		*errstr = xasprintf("query failed: expected one value, got "
		                    "%zu rows of %zu columns",
		    r->nrows, r->ncols);
		st = DB_ERR_QUERY;
		goto out;
	}
	*value = db_cell_dup(r, 0, 0);
out:
	db_result_free(r);
	return st;
}

/* ---------------------------------------------------------- scripts */

enum db_status
db_exec_script(struct db *db, const char *sql, char **errstr)
{
	MYSQL_RES     *res;
	enum db_status st = DB_OK;
	int            rc;

	/* Multi-statements only for the script, never for queries built
	 * from values. */
	if (mysql_set_server_option(
	        db->mysql, MYSQL_OPTION_MULTI_STATEMENTS_ON) != 0)
		return db_fail(db, errstr, "enabling multi-statements");
	if (mysql_real_query(db->mysql, sql, strlen(sql)) != 0) {
		st = db_fail(db, errstr, "script");
		goto out;
	}
	do {
		if ((res = mysql_store_result(db->mysql)) != NULL)
			mysql_free_result(res);
		else if (mysql_field_count(db->mysql) != 0) {
			st = db_fail(db, errstr, "script");
			goto out;
		}
		if ((rc = mysql_next_result(db->mysql)) > 0) {
			st = db_fail(db, errstr, "script");
			goto out;
		}
	} while (rc == 0);

out:
	if (st != DB_ERR_LOST &&
	    mysql_set_server_option(
	        db->mysql, MYSQL_OPTION_MULTI_STATEMENTS_OFF) != 0 &&
	    st == DB_OK)
		st = db_fail(db, errstr, "disabling multi-statements");
	return st;
}

/* A statement without a result, no retry (db-int.h). */
enum db_status
db_simple(struct db *db, const char *sql, char **errstr)
{
	db->statements++;
	if (mysql_real_query(db->mysql, sql, strlen(sql)) != 0)
		return db_fail(db, errstr, sql);
	return DB_OK;
}

/* ------------------------------------------------------------ parsing */

int
db_parse_bool(const char *cell)
{
	if (cell == NULL)
		return -1;
	if (strcmp(cell, "1") == 0)
		return 1;
	if (strcmp(cell, "0") == 0)
		return 0;
	return -2;
}
