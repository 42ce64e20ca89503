/* check_db_live.c: db.c's connection paths against the live test server
 * (CRONGUARD_TEST_DB_PORT): session setup, reconnect off, a lost
 * connection, a refused connection, transaction retry.  Exits 77 (skip)
 * without a server, a failure under CI=true. */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "db.h"
#include "testutil.h"
#include "util.h"

/* Every socket this process holds is close-on-exec: the count of
 * sockets, or -1 if one is not. */
static int
db_test_sockets_cloexec(void)
{
	struct stat st;
	int         fd, n = 0;

	for (fd = 3; fd < 1024; fd++) {
		if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
			continue;
		if (!(fcntl(fd, F_GETFD) & FD_CLOEXEC))
			return -1;
		n++;
	}
	return n;
}

/* ------------------------------------------------ against a live server */

START_TEST(test_live_session)
{
	struct conf_database c;
	struct db           *db = NULL;
	struct db_result    *r = NULL;
	char                *errstr = NULL, *v = NULL;
	int                  flags;

	ck_assert(testutil_live_db(&c));
	ck_assert_int_eq(db_connect(&c, &db, &errstr), DB_OK);
	ck_assert_ptr_null(errstr);

	/* Session set up as db.h promises. */
	ck_assert_int_eq(db_query_value(db, &v, &errstr,
	                     "SELECT CONCAT(@@session.time_zone, ' ', "
	                     "@@character_set_client)"),
	    DB_OK);
	ck_assert_str_eq(v, "+00:00 utf8mb4");
	free(v);
	ck_assert_int_gt(flags = db_test_sockets_cloexec(), 0);
	ck_assert_uint_ne(db_connection_id(db), 0);

	/* Escaping by the server's rules round-trips every byte. */
	ck_assert_int_eq(db_query_value(db, &v, &errstr, "SELECT %s",
	                     "it's \\ \"q\" \n 예약"),
	    DB_OK);
	ck_assert_str_eq(v, "it's \\ \"q\" \n 예약");
	free(v);
	ck_assert_int_eq(
	    db_query_value(db, &v, &errstr, "SELECT HEX(%.*s)", 3, "a\0b"),
	    DB_OK);
	ck_assert_str_eq(v, "610062");
	free(v);
	ck_assert_int_eq(
	    db_query_value(db, &v, &errstr, "SELECT %s", (const char *)NULL),
	    DB_OK);
	ck_assert_ptr_null(v);

	/* %K: a derived table of (k, v) rows in the server's own form (on
	 * MariaDB a table value constructor after the first row), every
	 * row kept in order, an escaped string intact. */
	{
		static const char *const names[] = { "a", "it's", "c" };
		struct buf               b;

		buf_init(&b);
		ck_assert_int_eq(
		    db_fragment(db, &b, &errstr, "%K", (size_t)3, names), 0);
		ck_assert_int_eq(
		    strstr(b.data, "UNION ALL VALUES (1, ") != NULL,
		    db_is_mariadb(db));
		buf_free(&b);
		ck_assert_int_eq(
		    db_query_value(db, &v, &errstr,
		        "SELECT GROUP_CONCAT(k, '=', v ORDER BY k SEPARATOR ' ')"
		        " FROM %K t",
		        (size_t)3, names),
		    DB_OK);
		ck_assert_str_eq(v, "0=a 1=it's 2=c");
		free(v);
		ck_assert_int_eq(
		    db_query_value(db, &v, &errstr, "SELECT COUNT(*) FROM %K t",
		        (size_t)1, names),
		    DB_OK);
		ck_assert_str_eq(v, "1");
		free(v);
	}

	/* Results: NULL cells stay NULL, names and lengths indexed. */
	ck_assert_int_eq(
	    db_query(db, &r, &errstr,
	        "SELECT 1 AS a, NULL AS b UNION ALL SELECT 0, 'xyz'"),
	    DB_OK);
	ck_assert_uint_eq(r->nrows, 2);
	ck_assert_uint_eq(r->ncols, 2);
	ck_assert_str_eq(r->names[1], "b");
	ck_assert_int_eq(db_parse_bool(db_cell(r, 0, 0)), 1);
	ck_assert_int_eq(db_parse_bool(db_cell(r, 1, 0)), 0);
	ck_assert_ptr_null(db_cell(r, 0, 1));
	ck_assert_str_eq(db_cell(r, 1, 1), "xyz");
	ck_assert_uint_eq(r->lengths[1][1], 3);
	ck_assert_ptr_null(db_cell(r, 2, 0));
	db_result_free(r);
	r = NULL;

	/* An empty result is a result. */
	ck_assert_int_eq(db_query(db, &r, &errstr,
	                     "SELECT 1 FROM DUAL "
	                     "WHERE 1 = 0"),
	    DB_OK);
	ck_assert_uint_eq(r->nrows, 0);
	db_result_free(r);
	r = NULL;

	/* Errors are classified and described. */
	ck_assert_int_eq(db_query(db, NULL, &errstr, "SELEC 1"), DB_ERR_QUERY);
	ck_assert_ptr_nonnull(strstr(errstr, "query failed: "));
	free(errstr);
	errstr = NULL;
	/* Multi-statements are off outside scripts: no stacked queries. */
	ck_assert_int_eq(
	    db_query(db, NULL, &errstr, "SELECT 1; SELECT 2"), DB_ERR_QUERY);
	free(errstr);
	errstr = NULL;
	ck_assert_int_eq(db_exec_script(db,
	                     "SET @a = 1; SET @b = @a + 1;\n"
	                     "SELECT @b",
	                     &errstr),
	    DB_OK);
	ck_assert_int_eq(db_query_value(db, &v, &errstr, "SELECT @b"), DB_OK);
	ck_assert_str_eq(v, "2");
	free(v);
	ck_assert_int_eq(
	    db_query(db, NULL, &errstr, "SELECT 1; SELECT 2"), DB_ERR_QUERY);
	free(errstr);
	errstr = NULL;

	db_close(db);
}
END_TEST

/* KILL db's session from a second connection. */
static void
kill_session(const struct conf_database *c, struct db *db)
{
	struct db *killer = NULL;
	char      *errstr = NULL;

	ck_assert_int_eq(db_connect(c, &killer, &errstr), DB_OK);
	ck_assert_int_eq(db_query(killer, NULL, &errstr, "KILL %llu",
	                     (unsigned long long)db_connection_id(db)),
	    DB_OK);
	db_close(killer);
}

/* Connector/C reads option files inside mysql_real_connect, after our
 * options: one that says reconnect=1 must not win. */
START_TEST(test_live_reconnect_off)
{
	struct conf_database c;
	struct db           *db = NULL;
	char                *errstr = NULL, path[] = "/tmp/check_db.XXXXXX";
	FILE                *f;
	int                  fd;

	ck_assert(testutil_live_db(&c));
	ck_assert_int_ne(fd = mkstemp(path), -1);
	ck_assert_ptr_nonnull(f = fdopen(fd, "w"));
	fputs("[cronguard]\nreconnect=1\n", f);
	fclose(f);
	c.option_file = path;
	c.option_group = (char *)"cronguard";
	ck_assert_int_eq(db_connect(&c, &db, &errstr), DB_OK);
	unlink(path);
	/* Killed, the session stays dead: no silent reconnect. */
	kill_session(&c, db);
	ck_assert_int_ne(db_query(db, NULL, &errstr, "SELECT 1"), DB_OK);
	free(errstr);
	errstr = NULL;
	ck_assert_int_ne(db_query(db, NULL, &errstr, "SELECT 1"), DB_OK);
	free(errstr);
	db_close(db);
}
END_TEST

START_TEST(test_live_lost)
{
	struct conf_database c;
	struct db           *db = NULL;
	char                *errstr = NULL;

	ck_assert(testutil_live_db(&c));
	ck_assert_int_eq(db_connect(&c, &db, &errstr), DB_OK);
	kill_session(&c, db);
	/* No reconnect: the next statement fails as lost. */
	ck_assert_int_eq(db_query(db, NULL, &errstr, "SELECT 1"), DB_ERR_LOST);
	free(errstr);
	db_close(db);
}
END_TEST

/* The reconnect policy: a lost session is replaced in place, its
 * session settings replayed, and the statement repeated by
 * db_query_retry; db_query_once reconnects but does not repeat; plain
 * db_query is never repeated. */
START_TEST(test_live_reconnect_policy)
{
	struct conf_database c;
	struct db           *db = NULL;
	char                *errstr = NULL, *v = NULL;
	unsigned long        id;

	ck_assert(testutil_live_db(&c));
	ck_assert_int_eq(db_connect(&c, &db, &errstr), DB_OK);
	db_reconnect_enable(db, 0);
	ck_assert_int_eq(db_session_set(db,
	                     "SET SESSION TRANSACTION ISOLATION LEVEL READ "
	                     "COMMITTED",
	                     &errstr),
	    DB_OK);

	id = db_connection_id(db);
	kill_session(&c, db);
	ck_assert_int_eq(db_query(db, NULL, &errstr, "SELECT 1"), DB_ERR_LOST);
	free(errstr);
	errstr = NULL;
	ck_assert_uint_eq(db_reconnects(db), 0);
	ck_assert_int_eq(db_query_retry(db, NULL, &errstr, "SELECT 1"), DB_OK);
	ck_assert_ptr_null(errstr);
	ck_assert_uint_eq(db_reconnects(db), 1);
	ck_assert_uint_ne(db_connection_id(db), id);
	ck_assert_int_eq(db_query_value(db, &v, &errstr,
	                     "SELECT CONCAT(@@session.tx_isolation, ' ', "
	                     "@@session.time_zone)"),
	    DB_OK);
	ck_assert_str_eq(v, "READ-COMMITTED +00:00");
	free(v);

	kill_session(&c, db);
	ck_assert_int_eq(
	    db_query_once(db, NULL, &errstr, "SELECT 1"), DB_ERR_LOST);
	ck_assert_ptr_nonnull(strstr(errstr, "outcome unknown"));
	free(errstr);
	errstr = NULL;
	ck_assert_uint_eq(db_reconnects(db), 2);
	ck_assert_int_eq(db_query(db, NULL, &errstr, "SELECT 1"), DB_OK);
	db_close(db);
}
END_TEST

START_TEST(test_live_connect_refused)
{
	struct conf_database c;
	struct db           *db = NULL;
	char                *errstr = NULL;

	ck_assert(testutil_live_db(&c));
	c.port = 1; /* nothing listens on tcpmux */
	ck_assert_int_eq(db_connect(&c, &db, &errstr), DB_ERR_CONNECT);
	ck_assert_ptr_null(db);
	ck_assert_ptr_nonnull(
	    strstr(errstr, "cannot connect to 127.0.0.1:1: "));
	free(errstr);
}
END_TEST

/* Per process: several builds may share one test server. */
static char txn_db[32];

struct txn_arg {
	struct db *holder; /* holds the row lock fn waits for */
	int        calls;
	int        fail; /* return DB_ERR_QUERY after the update */
};

static enum db_status
txn_fn(struct db *db, void *arg, char **errstr)
{
	struct txn_arg *a = arg;
	enum db_status  st;

	/* The second attempt finds the lock released. */
	if (++a->calls == 2 && a->holder != NULL)
		ck_assert_int_eq(db_commit(a->holder, errstr), DB_OK);
	st = db_query(db, NULL, errstr,
	    "UPDATE %I.t SET v = v + 1 "
	    "WHERE id = 1",
	    txn_db);
	if (st == DB_OK && a->fail) {
		*errstr = xstrdup("fn failed");
		return (DB_ERR_QUERY);
	}
	return (st);
}

/* db_txn repeats the whole transaction after a lock wait timeout, and
 * rolls back when fn fails. */
START_TEST(test_live_txn_retry)
{
	struct conf_database c;
	struct db           *db = NULL, *holder = NULL;
	struct txn_arg       a = { NULL, 0, 0 };
	char                *errstr = NULL, *v = NULL;

	ck_assert(testutil_live_db(&c));
	ck_assert_int_eq(db_connect(&c, &db, &errstr), DB_OK);
	ck_assert_int_eq(db_connect(&c, &holder, &errstr), DB_OK);
	snprintf(txn_db, sizeof txn_db, "check_db_%ld", (long)getpid());
	ck_assert_int_eq(
	    db_query(db, NULL, &errstr, "CREATE DATABASE %I", txn_db), DB_OK);
	ck_assert_int_eq(db_query(db, NULL, &errstr,
	                     "CREATE TABLE %I.t "
	                     "(id INT PRIMARY KEY, v INT) ENGINE=InnoDB",
	                     txn_db),
	    DB_OK);
	ck_assert_int_eq(db_query(db, NULL, &errstr,
	                     "INSERT INTO %I.t "
	                     "VALUES (1, 0)",
	                     txn_db),
	    DB_OK);
	ck_assert_int_eq(db_query(db, NULL, &errstr,
	                     "SET SESSION innodb_lock_wait_timeout = 1"),
	    DB_OK);

	ck_assert_int_eq(db_begin(holder, &errstr), DB_OK);
	ck_assert_int_eq(db_query(holder, NULL, &errstr,
	                     "SELECT * FROM "
	                     "%I.t WHERE id = 1 FOR UPDATE",
	                     txn_db),
	    DB_OK);
	a.holder = holder;
	ck_assert_int_eq(db_txn(db, txn_fn, &a, &errstr), DB_OK);
	ck_assert_ptr_null(errstr);
	ck_assert_int_eq(a.calls, 2);
	ck_assert_int_eq(
	    db_query_value(db, &v, &errstr, "SELECT v FROM %I.t", txn_db),
	    DB_OK);
	ck_assert_str_eq(v, "1");
	free(v);

	/* A failing fn: not repeated, its update rolled back. */
	a.holder = NULL;
	a.calls = 0;
	a.fail = 1;
	ck_assert_int_eq(db_txn(db, txn_fn, &a, &errstr), DB_ERR_QUERY);
	ck_assert_str_eq(errstr, "fn failed");
	free(errstr);
	errstr = NULL;
	ck_assert_int_eq(a.calls, 1);
	ck_assert_int_eq(
	    db_query_value(db, &v, &errstr, "SELECT v FROM %I.t", txn_db),
	    DB_OK);
	ck_assert_str_eq(v, "1");
	free(v);

	ck_assert_int_eq(
	    db_query(db, NULL, &errstr, "DROP DATABASE %I", txn_db), DB_OK);
	db_close(holder);
	db_close(db);
}
END_TEST

static Suite *
db_live_suite(void)
{
	Suite *s;
	TCase *tc;

	s = suite_create("db live");
	tc = tcase_create("live");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_live_session);
	tcase_add_test(tc, test_live_reconnect_off);
	tcase_add_test(tc, test_live_lost);
	tcase_add_test(tc, test_live_reconnect_policy);
	tcase_add_test(tc, test_live_txn_retry);
	tcase_add_test(tc, test_live_connect_refused);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return testutil_live_main(db_live_suite);
}
