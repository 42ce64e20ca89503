/* check_lock.c: the named-lock guard against a fake database, forcing the
 * cleanup paths that never run in normal operation. */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exitcode.h"
#include "guard.h"
#include "incident.h"
#include "lock.h"
#include "log.h"
#include "runs.h"
#include "util.h"
#include "testutil.h"

/* A value the fake returns: a string, or SQL NULL. */
struct fval {
	int         null;
	const char *s;
};
#define V(x) ((struct fval){ 0, (x) })
#define VNULL ((struct fval){ 1, NULL })

struct fake_conn {
	unsigned long long id;
};

/* What the fake answers, and what it saw. */
struct fake {
	/* script */
	int                connect_fail_from; /* nth connect fails; 0 never */
	struct fval        get_lock;
	const char        *fence; /* cronguard_get_lock's token, or NULL */
	const char        *wsrep;
	enum db_status     release_st;
	struct fval        release;
	int                destroy_fail;
	enum db_status     is_used_st;
	int                is_used_self; /* IS_USED_LOCK = the lock session */
	struct fval        is_used;      /* otherwise this */
	const char        *read_only;    /* lock_check's reasons; NULL none */
	int                lock_checks;
	enum db_status     kill_st;
	enum db_status     finish_st;
	int                finish_fail_once; /* only the first finish fails */
	struct lock_holder holder;
	/* observed */
	int                connects;
	int                destroys;
	int                releases;
	int                kills;
	unsigned long long killed;
	int                holder_calls;
	int                run_starts;
	int                finishes;
	char               finish_outcome[32];
	int                finish_status;
	char               finish_error[256];
	unsigned long long lock_session;
};

static struct fake F;

#define MAX_INCIDENTS 16
static struct {
	char event[64];
	char detail[512];
} seen[MAX_INCIDENTS];
static int nseen;

static void
sink(const struct incident *in, void *arg)
{
	(void)arg;
	if (nseen == MAX_INCIDENTS)
		return;
	snprintf(seen[nseen].event, sizeof seen[nseen].event, "%s", in->event);
	snprintf(seen[nseen].detail, sizeof seen[nseen].detail, "%s",
	    in->detail != NULL ? in->detail : "");
	nseen++;
}

static int
seen_event(const char *event)
{
	int i, n = 0;

	for (i = 0; i < nseen; i++)
		if (strcmp(seen[i].event, event) == 0)
			n++;
	return (n);
}

static const char *
seen_detail(const char *event)
{
	int i;

	for (i = 0; i < nseen; i++)
		if (strcmp(seen[i].event, event) == 0)
			return (seen[i].detail);
	return ("");
}

static char *
fdup(struct fval v)
{
	return (v.null ? NULL : xstrdup(v.s));
}

static enum db_status
f_connect(void *ctx, void **conn, char **errstr)
{
	struct fake_conn *c;

	(void)ctx;
	F.connects++;
	if (F.connect_fail_from != 0 && F.connects >= F.connect_fail_from) {
		*errstr = xstrdup("cannot connect to fake: refused");
		*conn = NULL;
		return (DB_ERR_CONNECT);
	}
	c = xcalloc(1, sizeof *c);
	c->id = 100 + (unsigned long long)F.connects;
	*conn = c;
	return (DB_OK);
}

static int
f_destroy(void *conn, char **errstr)
{
	F.destroys++;
	free(conn);
	if (F.destroy_fail && errstr != NULL) {
		*errstr = xstrdup("fake: shutdown failed");
		return (-1);
	}
	return (0);
}

static enum db_status
f_get_lock(
    void *conn, const char *name, struct lock_acquire_row *row, char **errstr)
{
	struct fake_conn *c = conn;

	(void)name;
	(void)errstr;
	row->got = fdup(F.get_lock);
	row->connection_id = xasprintf("%llu", c->id);
	row->wsrep_on = F.wsrep != NULL ? xstrdup(F.wsrep) : NULL;
	row->fence = F.fence != NULL ? xstrdup(F.fence) : NULL;
	F.lock_session = c->id;
	return (DB_OK);
}

static enum db_status
f_release_lock(void *conn, const char *name, char **value, char **errstr)
{
	(void)conn;
	(void)name;
	F.releases++;
	*value = NULL;
	if (F.release_st != DB_OK) {
		*errstr = xstrdup("query failed: Lost connection to server "
		                  "during query");
		return (F.release_st);
	}
	*value = fdup(F.release);
	return (DB_OK);
}

static enum db_status
f_is_used_lock(void *conn, const char *name, char **value, char **errstr)
{
	(void)conn;
	(void)name;
	*value = NULL;
	if (F.is_used_st != DB_OK) {
		*errstr = xstrdup("query failed: fake is_used error");
		return (F.is_used_st);
	}
	if (F.is_used_self)
		*value = xasprintf("%llu", F.lock_session);
	else
		*value = fdup(F.is_used);
	return (DB_OK);
}

/* The heartbeat's one statement: IS_USED_LOCK and the read-only flags. */
static enum db_status
f_lock_check(
    void *conn, const char *name, char **value, char **read_only, char **errstr)
{
	enum db_status st;

	F.lock_checks++;
	*read_only = NULL;
	if ((st = f_is_used_lock(conn, name, value, errstr)) == DB_OK &&
	    F.read_only != NULL)
		*read_only = xstrdup(F.read_only);
	return (st);
}

static enum db_status
f_kill(void *conn, unsigned long long id, char **errstr)
{
	(void)conn;
	F.kills++;
	F.killed = id;
	if (F.kill_st != DB_OK) {
		*errstr = xstrdup("query failed: fake kill error");
		return (F.kill_st);
	}
	return (DB_OK);
}

static enum db_status
f_holder(void *conn, const char *name, struct lock_holder *h, char **errstr)
{
	(void)conn;
	(void)name;
	(void)errstr;
	F.holder_calls++;
	*h = F.holder;
	h->run_host = F.holder.run_host ? xstrdup(F.holder.run_host) : NULL;
	h->run_job = NULL;
	h->started_at = NULL;
	h->client_host = NULL;
	h->client_user = NULL;
	return (DB_OK);
}

static enum db_status
f_run_start(void *conn, const struct run_start_info *ri, unsigned long long *id,
    char **errstr)
{
	(void)conn;
	(void)ri;
	(void)errstr;
	F.run_starts++;
	*id = 42;
	return (DB_OK);
}

static enum db_status
f_run_heartbeat(void *conn, unsigned long long id, char **errstr)
{
	(void)conn;
	(void)id;
	(void)errstr;
	return (DB_OK);
}

static enum db_status
f_run_finish(void *conn, unsigned long long id, const char *outcome,
    int exit_status, const char *error, const struct run_output *output,
    char **errstr)
{
	(void)conn;
	(void)id;
	(void)output;
	F.finishes++;
	snprintf(F.finish_outcome, sizeof F.finish_outcome, "%s", outcome);
	F.finish_status = exit_status;
	snprintf(F.finish_error, sizeof F.finish_error, "%s",
	    error != NULL ? error : "");
	if (F.finish_st != DB_OK && (!F.finish_fail_once || F.finishes == 1)) {
		*errstr = xstrdup("query failed: fake finish error");
		return (F.finish_st);
	}
	return (DB_OK);
}

static unsigned long long
f_connection_id(void *conn)
{
	return (((struct fake_conn *)conn)->id);
}

static enum db_status
f_kill_query(void *conn, unsigned long long id, char **errstr)
{
	(void)conn;
	(void)id;
	(void)errstr;
	return (DB_OK);
}

static enum db_status
f_exec_sql(void *conn, const char *sql, char **errstr)
{
	(void)conn;
	(void)sql;
	(void)errstr;
	return (DB_OK);
}

static const struct lock_db_ops fake_ops = {
	.connect = f_connect,
	.destroy = f_destroy,
	.get_lock = f_get_lock,
	.release_lock = f_release_lock,
	.is_used_lock = f_is_used_lock,
	.lock_check = f_lock_check,
	.kill = f_kill,
	.holder = f_holder,
	.run_start = f_run_start,
	.run_heartbeat = f_run_heartbeat,
	.run_finish = f_run_finish,
	.connection_id = f_connection_id,
	.kill_query = f_kill_query,
	.exec_sql = f_exec_sql,
};

static char rundir[] = "/tmp/check_lock.XXXXXX";

static void
setup(void)
{
	memset(&F, 0, sizeof F);
	F.get_lock = V("1");
	F.release = V("1");
	F.wsrep = "0";
	F.is_used = VNULL;
	nseen = 0;
	log_init(LOG_ERROR, LOG_TEXT);
	incident_set_sink(sink, NULL);
	ck_assert_ptr_nonnull(mkdtemp(rundir));
}

static void
teardown(void)
{
	char cmd[128];

	incident_set_sink(NULL, NULL);
	snprintf(cmd, sizeof cmd, "rm -rf %s", rundir);
	(void)!system(cmd);
	memcpy(rundir + strlen(rundir) - 6, "XXXXXX", 6);
}

/* Open, acquire, insert the run record: a lock ready for the job. */
static void
take(struct lock *l)
{
	struct lock_holder h;
	char              *errstr = NULL;

	lock_init(l, &fake_ops, NULL, "accrual", "cronguard:app:accrual");
	ck_assert_int_eq(lock_open(l, &errstr), LOCK_OK);
	ck_assert_int_eq(lock_acquire(l, &h, &errstr), LOCK_OK);
	ck_assert_int_eq(l->held, 1);
	ck_assert_int_eq(
	    lock_run_start(l, "host1", 1234, NULL, &errstr), LOCK_OK);
	ck_assert_ptr_null(errstr);
}

static const struct run_end ok_end = { "success", 0, NULL, NULL };

START_TEST(release_ok)
{
	struct lock l;

	take(&l);
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_OK);
	ck_assert_int_eq(nseen, 0);
	ck_assert_int_eq(F.releases, 1);
	ck_assert_int_eq(F.kills, 0);
	ck_assert_str_eq(F.finish_outcome, "success");
	ck_assert_int_eq(F.finish_status, 0);
	ck_assert_ptr_null(l.conn);
}
END_TEST

START_TEST(release_query_fails)
{
	struct lock      l;
	enum lock_result lr;

	F.release_st = DB_ERR_LOST;
	F.is_used_self = 1; /* the old session still holds it */
	take(&l);
	lr = lock_finish(&l, &ok_end);
	ck_assert_int_eq(lr, LOCK_INCIDENT);
	ck_assert_int_eq(exitcode_lock(lr), EXIT_PROTOCOL);
	ck_assert_int_eq(exitcode_lock(lr), 76);
	ck_assert_int_eq(seen_event("lock_release_failed"), 1);
	ck_assert_int_eq(nseen, 1);
	/* session destroyed, fresh session, verify, KILL the old id */
	ck_assert_int_ge(F.destroys, 1);
	ck_assert_int_eq(F.connects, 2);
	ck_assert_int_eq(F.kills, 1);
	ck_assert_uint_eq(F.killed, 101);
	/* the run record still finished, on the fresh session */
	ck_assert_int_eq(F.finishes, 1);
	ck_assert_str_eq(F.finish_outcome, "incident");
	ck_assert_int_eq(F.finish_status, 0);
}
END_TEST

START_TEST(release_query_fails_lock_already_free)
{
	struct lock l;

	F.release_st = DB_ERR_QUERY;
	F.is_used = VNULL; /* the session's end gave the lock back */
	take(&l);
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_INCIDENT);
	ck_assert_int_eq(seen_event("lock_release_failed"), 1);
	ck_assert_int_eq(F.kills, 0);
	ck_assert_int_eq(nseen, 1);
}
END_TEST

START_TEST(release_returns_zero)
{
	struct lock      l;
	enum lock_result lr;

	F.release = V("0");
	take(&l);
	lr = lock_finish(&l, &ok_end);
	ck_assert_int_eq(lr, LOCK_INCIDENT);
	ck_assert_int_eq(exitcode_lock(lr), 76);
	ck_assert_int_eq(seen_event("lock_release_unexpected"), 1);
	ck_assert_int_eq(nseen, 1);
	ck_assert_int_eq(F.kills, 0);
	ck_assert_str_eq(F.finish_outcome, "incident");
}
END_TEST

START_TEST(release_returns_null)
{
	struct lock      l;
	enum lock_result lr;

	F.release = VNULL;
	take(&l);
	lr = lock_finish(&l, &ok_end);
	ck_assert_int_eq(lr, LOCK_INCIDENT);
	ck_assert_int_eq(exitcode_lock(lr), 76);
	ck_assert_int_eq(seen_event("lock_release_unexpected"), 1);
	ck_assert_ptr_nonnull(
	    strstr(seen_detail("lock_release_unexpected"), "NULL"));
}
END_TEST

START_TEST(release_returns_junk)
{
	struct lock l;

	F.release = V("01");
	take(&l);
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_INCIDENT);
	ck_assert_int_eq(seen_event("lock_release_unexpected"), 1);
}
END_TEST

/* The string "0" is true in any pointer test: it must never count as
 * acquired. */
START_TEST(get_lock_string_zero_is_busy)
{
	struct lock        l;
	struct lock_holder h;
	char              *errstr = NULL;

	F.get_lock = V("0");
	F.holder.connection_id = 55;
	lock_init(&l, &fake_ops, NULL, "accrual", "cronguard:app:accrual");
	ck_assert_int_eq(lock_open(&l, &errstr), LOCK_OK);
	ck_assert_int_eq(lock_acquire(&l, &h, &errstr), LOCK_BUSY);
	ck_assert_int_eq(l.held, 0);
	ck_assert_int_eq(F.holder_calls, 1);
	ck_assert_uint_eq(h.connection_id, 55);
	lock_holder_free(&h);
	lock_close(&l);
	ck_assert_int_eq(F.releases, 0);
}
END_TEST

static const char *const junk[] = { "", "01", "1 ", "true", "2", "-1" };

START_TEST(get_lock_junk_not_acquired)
{
	struct lock        l;
	struct lock_holder h;
	char              *errstr = NULL;
	enum lock_result   lr;

	F.get_lock = V(junk[_i]);
	lock_init(&l, &fake_ops, NULL, "accrual", "cronguard:app:accrual");
	ck_assert_int_eq(lock_open(&l, &errstr), LOCK_OK);
	lr = lock_acquire(&l, &h, &errstr);
	ck_assert_int_eq(lr, LOCK_ERR_VALUE);
	ck_assert_int_eq(l.held, 0);
	ck_assert_ptr_null(l.conn); /* session closed: nothing kept */
	ck_assert_int_eq(exitcode_lock(lr), EXIT_SOFTWARE);
	free(errstr);
}
END_TEST

START_TEST(get_lock_null)
{
	struct lock        l;
	struct lock_holder h;
	char              *errstr = NULL;
	enum lock_result   lr;

	F.get_lock = VNULL;
	lock_init(&l, &fake_ops, NULL, "accrual", "cronguard:app:accrual");
	ck_assert_int_eq(lock_open(&l, &errstr), LOCK_OK);
	lr = lock_acquire(&l, &h, &errstr);
	ck_assert_int_eq(lr, LOCK_ERR_NULL);
	ck_assert_int_eq(exitcode_lock(lr), EXIT_UNAVAILABLE);
	ck_assert_int_eq(l.held, 0);
	free(errstr);
}
END_TEST

/* The token taken in GET_LOCK's round trip is the job's, exactly. */
START_TEST(get_lock_fence_taken)
{
	struct lock l;

	F.fence = "18446744073709551615";
	take(&l);
	ck_assert_uint_eq(l.fence, 18446744073709551615ULL);
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_OK);
	ck_assert_int_eq(F.releases, 1);
}
END_TEST

/* A token that is not a positive number is never handed to a job: the
 * lock is given back with its session. */
static const char *const bad_fence[] = { "0", "", "-1", "1x", "x",
	"18446744073709551616" };

START_TEST(get_lock_fence_junk)
{
	struct lock        l;
	struct lock_holder h;
	char              *errstr = NULL;
	enum lock_result   lr;

	F.fence = bad_fence[_i];
	lock_init(&l, &fake_ops, NULL, "accrual", "cronguard:app:accrual");
	ck_assert_int_eq(lock_open(&l, &errstr), LOCK_OK);
	lr = lock_acquire(&l, &h, &errstr);
	ck_assert_int_eq(lr, LOCK_ERR_VALUE);
	ck_assert_ptr_nonnull(strstr(errstr, "fencing token"));
	ck_assert_int_eq(l.held, 0);
	ck_assert_ptr_null(l.conn);
	free(errstr);
}
END_TEST

START_TEST(galera_refused)
{
	struct lock        l;
	struct lock_holder h;
	char              *errstr = NULL;
	enum lock_result   lr;

	F.wsrep = "1";
	lock_init(&l, &fake_ops, NULL, "accrual", "cronguard:app:accrual");
	ck_assert_int_eq(lock_open(&l, &errstr), LOCK_OK);
	lr = lock_acquire(&l, &h, &errstr);
	ck_assert_int_eq(lr, LOCK_ERR_GALERA);
	ck_assert_int_eq(exitcode_lock(lr), EXIT_CONFIG);
	ck_assert_ptr_nonnull(strstr(errstr, "Galera"));
	ck_assert_ptr_null(l.conn);
	free(errstr);
}
END_TEST

/* A Galera node is refused whatever GET_LOCK answered: busy or NULL there
 * says nothing about the cluster either. */
static const struct fval galera_got[] = { { 0, "0" }, { 1, NULL } };

START_TEST(galera_refused_when_busy)
{
	struct lock        l;
	struct lock_holder h;
	char              *errstr = NULL;
	enum lock_result   lr;

	F.wsrep = "1";
	F.get_lock = galera_got[_i];
	F.holder.connection_id = 55;
	lock_init(&l, &fake_ops, NULL, "accrual", "cronguard:app:accrual");
	ck_assert_int_eq(lock_open(&l, &errstr), LOCK_OK);
	lr = lock_acquire(&l, &h, &errstr);
	ck_assert_int_eq(lr, LOCK_ERR_GALERA);
	ck_assert_int_eq(exitcode_lock(lr), EXIT_CONFIG);
	ck_assert_int_eq(F.holder_calls, 0);
	ck_assert_ptr_null(l.conn);
	free(errstr);
}
END_TEST

START_TEST(no_wsrep_variable_is_off)
{
	struct lock        l;
	struct lock_holder h;
	char              *errstr = NULL;

	F.wsrep = NULL; /* MySQL without Galera */
	lock_init(&l, &fake_ops, NULL, "accrual", "cronguard:app:accrual");
	ck_assert_int_eq(lock_open(&l, &errstr), LOCK_OK);
	ck_assert_int_eq(lock_acquire(&l, &h, &errstr), LOCK_OK);
	lock_close(&l);
}
END_TEST

/* Destroying the session fails as well: still every failure reported. */
START_TEST(release_and_destroy_fail)
{
	struct lock l;

	F.release_st = DB_ERR_LOST;
	F.destroy_fail = 1;
	F.is_used_self = 1;
	take(&l);
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_INCIDENT);
	ck_assert_int_eq(seen_event("lock_release_failed"), 1);
	ck_assert_int_eq(seen_event("session_destroy_failed"), 1);
	ck_assert_int_eq(F.kills, 1);
	ck_assert_int_eq(F.finishes, 1);
}
END_TEST

START_TEST(verify_connect_fails)
{
	struct lock l;

	F.release_st = DB_ERR_LOST;
	F.connect_fail_from = 2; /* no fresh session at all */
	take(&l);
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_INCIDENT);
	ck_assert_int_eq(seen_event("lock_release_failed"), 1);
	ck_assert_int_eq(seen_event("lock_verify_failed"), 1);
	/* nor for the run record: reported too */
	ck_assert_int_eq(seen_event("run_record_failed"), 1);
}
END_TEST

START_TEST(verify_kill_fails)
{
	struct lock l;

	F.release_st = DB_ERR_LOST;
	F.is_used_self = 1;
	F.kill_st = DB_ERR_QUERY;
	take(&l);
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_INCIDENT);
	ck_assert_int_eq(seen_event("lock_release_failed"), 1);
	ck_assert_int_eq(seen_event("lock_verify_failed"), 1);
	ck_assert_ptr_nonnull(
	    strstr(seen_detail("lock_verify_failed"), "KILL failed"));
}
END_TEST

START_TEST(verify_query_fails)
{
	struct lock l;

	F.release_st = DB_ERR_LOST;
	F.is_used_st = DB_ERR_QUERY;
	take(&l);
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_INCIDENT);
	ck_assert_int_eq(seen_event("lock_verify_failed"), 1);
}
END_TEST

/* A failing run record is reported but is no lock incident: the job's
 * status stands. */
START_TEST(run_record_fails)
{
	struct lock l;

	F.finish_st = DB_ERR_QUERY;
	take(&l);
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_OK);
	ck_assert_int_eq(seen_event("run_record_failed"), 1);
}
END_TEST

/* A finish that fails on the lock session for any reason (here not a
 * lost session: a KILL QUERY, a lock wait timeout) is written again on a
 * new session with the job's own outcome, and reported. */
START_TEST(run_record_retried)
{
	static const struct run_end failed = { "failure", 1,
		"exited with status 1", NULL };
	struct lock                 l;

	F.finish_st = DB_ERR_QUERY;
	F.finish_fail_once = 1;
	take(&l);
	ck_assert_int_eq(lock_finish(&l, &failed), LOCK_OK);
	ck_assert_int_eq(F.finishes, 2);
	ck_assert_int_eq(F.connects, 2);
	ck_assert_str_eq(F.finish_outcome, "failure");
	ck_assert_int_eq(F.finish_status, 1);
	ck_assert_int_eq(seen_event("run_record_retried"), 1);
	ck_assert_int_eq(seen_event("run_record_failed"), 0);
	ck_assert_ptr_nonnull(
	    strstr(seen_detail("run_record_retried"), "job failure, status 1"));
}
END_TEST

START_TEST(heartbeat_lost)
{
	struct lock l;

	take(&l);
	F.is_used = V("999");
	ck_assert_int_eq(lock_heartbeat(&l), LOCK_INCIDENT);
	ck_assert_int_eq(lock_heartbeat(&l), LOCK_INCIDENT);
	ck_assert_int_eq(seen_event("lock_lost"), 1); /* once */
	F.release = V("0");
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_INCIDENT);
	/* 0 after a reported loss: expected, not a second incident */
	ck_assert_int_eq(nseen, 1);
	ck_assert_str_eq(F.finish_outcome, "lock_lost");
}
END_TEST

START_TEST(heartbeat_ok)
{
	struct lock l;

	take(&l);
	F.is_used_self = 1;
	ck_assert_int_eq(lock_heartbeat(&l), LOCK_OK);
	F.is_used_self = 0;
	F.is_used = VNULL;
	ck_assert_int_eq(lock_heartbeat(&l), LOCK_INCIDENT);
	lock_close(&l);
}
END_TEST

/* A demotion: the server turned read-only under a held lock.  One
 * lock_lost naming why, and nothing more written there: no run record
 * end (a user with SUPER would write it, an errant transaction). */
START_TEST(heartbeat_read_only)
{
	struct lock l;

	take(&l);
	F.is_used_self = 1;
	F.read_only = "read_only,replica_sql_running";
	ck_assert_int_eq(lock_heartbeat(&l), LOCK_INCIDENT);
	ck_assert_int_eq(F.lock_checks, 1);
	ck_assert_int_eq(l.read_only, 1);
	ck_assert_int_eq(seen_event("lock_lost"), 1);
	ck_assert_ptr_nonnull(strstr(seen_detail("lock_lost"),
	    "turned read-only (read_only,replica_sql_running)"));
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_INCIDENT);
	ck_assert_int_eq(F.finishes, 0);
	ck_assert_int_eq(nseen, 1);
}
END_TEST

START_TEST(holder_verdicts)
{
	struct lock_holder h;
	char              *why = NULL;

	memset(&h, 0, sizeof h);
	h.connection_id = 7;
	h.run_id = 3;
	h.run_age_s = 100;
	h.idle_s = -1;
	/* live cronguard run within max_runtime + grace */
	ck_assert_int_eq(lock_holder_stuck(&h, 60000, 60000, &why), 0);
	ck_assert_ptr_nonnull(strstr(why, "run 3"));
	free(why);
	/* past max_runtime + grace */
	ck_assert_int_eq(lock_holder_stuck(&h, 30000, 60000, &why), 1);
	ck_assert_ptr_nonnull(strstr(why, "connection 7"));
	free(why);
	/* no run record: grace decides */
	h.run_id = 0;
	h.idle_s = 5;
	ck_assert_int_eq(lock_holder_stuck(&h, 3600000, 10000, &why), 0);
	free(why);
	h.idle_s = 11;
	ck_assert_int_eq(lock_holder_stuck(&h, 3600000, 10000, &why), 1);
	ck_assert_ptr_nonnull(strstr(why, "no cronguard run record"));
	free(why);
}
END_TEST

static void
guard_setup_job(struct guard_job *gj, char **argv)
{
	memset(gj, 0, sizeof *gj);
	gj->job = "accrual";
	gj->argv = argv;
	gj->guard = GUARD_NAMED_LOCK;
	gj->lock = "cronguard:app:accrual";
	gj->runtime_dir = rundir;
	gj->max_runtime_ms = 3600000;
	gj->grace_ms = 600000;
	gj->heartbeat_ms = 30000;
	gj->kill_after_ms = 2000;
	gj->on_lock_lost = LOCK_LOST_TERMINATE;
}

/* A failing job plus a failing release: both reported, the job's own
 * error kept in the run record, exit 76. */
START_TEST(guard_failing_job_and_release)
{
	char            *argv[] = { "sh", "-c", "exit 3", NULL };
	struct guard_job gj;

	F.release_st = DB_ERR_LOST;
	F.is_used_self = 1;
	guard_setup_job(&gj, argv);
	ck_assert_int_eq(guard_run(&gj, &fake_ops, NULL, NULL), 76);
	ck_assert_int_eq(seen_event("lock_release_failed"), 1);
	ck_assert_ptr_nonnull(
	    strstr(seen_detail("lock_release_failed"), "status 3"));
	ck_assert_int_eq(F.kills, 1);
	ck_assert_int_eq(F.finishes, 1);
	ck_assert_int_eq(F.finish_status, 3);
	ck_assert_ptr_nonnull(strstr(F.finish_error, "exited with status 3"));
}
END_TEST

START_TEST(guard_status_passthrough)
{
	char            *argv[] = { "sh", "-c", "exit 5", NULL };
	struct guard_job gj;

	guard_setup_job(&gj, argv);
	ck_assert_int_eq(guard_run(&gj, &fake_ops, NULL, NULL), 5);
	ck_assert_int_eq(nseen, 0);
	ck_assert_str_eq(F.finish_outcome, "failure");
	ck_assert_int_eq(F.finish_status, 5);
}
END_TEST

START_TEST(guard_busy_skips)
{
	char            *argv[] = { "sh", "-c", "exit 5", NULL };
	struct guard_job gj;

	F.get_lock = V("0");
	F.holder.connection_id = 55;
	F.holder.run_id = 9;
	F.holder.run_age_s = 10;
	guard_setup_job(&gj, argv);
	gj.busy_exit = 3;
	ck_assert_int_eq(guard_run(&gj, &fake_ops, NULL, NULL), 3);
	ck_assert_int_eq(F.run_starts, 0);
	F.holder.run_age_s = 7200;
	ck_assert_int_eq(guard_run(&gj, &fake_ops, NULL, NULL), EXIT_TEMPFAIL);
	ck_assert_int_eq(F.run_starts, 0);
}
END_TEST

/* The lock is lost mid-job: incident, the job terminated, 76. */
START_TEST(guard_lost_terminates)
{
	char            *argv[] = { "sleep", "30", NULL };
	struct guard_job gj;
	int64_t          t0;

	F.is_used = V("999");
	F.release = VNULL;
	guard_setup_job(&gj, argv);
	gj.heartbeat_ms = 100;
	t0 = now_mono_ms();
	ck_assert_int_eq(guard_run(&gj, &fake_ops, NULL, NULL), 76);
	ck_assert_int_lt(now_mono_ms() - t0, 5000);
	ck_assert_int_eq(seen_event("lock_lost"), 1);
	ck_assert_str_eq(F.finish_outcome, "lock_lost");
	ck_assert_int_eq(F.finish_status, 128 + 15);
}
END_TEST

/*
 * cronguard started with SIGCHLD and SIGTERM blocked (a parent's mask is
 * inherited): the job's end must still wake the guard, and a SIGTERM must
 * still reach the job.  The job signals its parent, the guard, at once.
 */
START_TEST(guard_signals_blocked_by_parent)
{
	char *argv[] = { "sh", "-c", "kill -TERM $PPID; sleep 5", NULL };
	struct guard_job gj;
	sigset_t         set;
	int64_t          t0;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	ck_assert_int_eq(sigprocmask(SIG_BLOCK, &set, NULL), 0);
	guard_setup_job(&gj, argv);
	t0 = now_mono_ms();
	ck_assert_int_eq(guard_run(&gj, &fake_ops, NULL, NULL), 128 + SIGTERM);
	ck_assert_int_lt(now_mono_ms() - t0, 4000);
	ck_assert_str_eq(F.finish_outcome, "killed");
	ck_assert_int_eq(nseen, 0);
}
END_TEST

static Suite *
lock_suite(void)
{
	Suite *s = suite_create("lock");
	TCase *tc = tcase_create("fake database");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, release_ok);
	tcase_add_test(tc, release_query_fails);
	tcase_add_test(tc, release_query_fails_lock_already_free);
	tcase_add_test(tc, release_returns_zero);
	tcase_add_test(tc, release_returns_null);
	tcase_add_test(tc, release_returns_junk);
	tcase_add_test(tc, get_lock_string_zero_is_busy);
	tcase_add_loop_test(
	    tc, get_lock_junk_not_acquired, 0, (int)nitems(junk));
	tcase_add_test(tc, get_lock_null);
	tcase_add_test(tc, get_lock_fence_taken);
	tcase_add_loop_test(
	    tc, get_lock_fence_junk, 0, sizeof bad_fence / sizeof bad_fence[0]);
	tcase_add_test(tc, galera_refused);
	tcase_add_loop_test(
	    tc, galera_refused_when_busy, 0, (int)nitems(galera_got));
	tcase_add_test(tc, no_wsrep_variable_is_off);
	tcase_add_test(tc, release_and_destroy_fail);
	tcase_add_test(tc, verify_connect_fails);
	tcase_add_test(tc, verify_kill_fails);
	tcase_add_test(tc, verify_query_fails);
	tcase_add_test(tc, run_record_fails);
	tcase_add_test(tc, run_record_retried);
	tcase_add_test(tc, heartbeat_lost);
	tcase_add_test(tc, heartbeat_ok);
	tcase_add_test(tc, heartbeat_read_only);
	tcase_add_test(tc, holder_verdicts);
	tcase_add_test(tc, guard_failing_job_and_release);
	tcase_add_test(tc, guard_status_passthrough);
	tcase_add_test(tc, guard_busy_skips);
	tcase_add_test(tc, guard_lost_terminates);
	tcase_add_test(tc, guard_signals_blocked_by_parent);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return testutil_main(lock_suite);
}
