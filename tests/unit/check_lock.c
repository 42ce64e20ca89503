/* check_lock.c: lock.c's named lock against a fake database
 * (fakelock.c), forcing the cleanup paths that never run in normal
 * operation: a failed or unexpected release, a lost session, a Galera
 * node, bad fencing tokens, a failed run record.  guard_run on the same
 * fake is check_guard.c. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "exitcode.h"
#include "fakelock.h"
#include "lock.h"
#include "runs.h"
#include "util.h"
#include "testutil.h"

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
	ck_assert_int_eq(fake_nseen, 0);
	ck_assert_int_eq(fake.releases, 1);
	/* done before released: the record while the lock is held */
	ck_assert_int_eq(fake.finishes, 1);
	ck_assert_int_eq(fake.releases_at_finish, 0);
	ck_assert_int_eq(fake.kills, 0);
	ck_assert_str_eq(fake.finish_outcome, "success");
	ck_assert_int_eq(fake.finish_status, 0);
	ck_assert_ptr_null(l.conn);
}
END_TEST

START_TEST(release_query_fails)
{
	struct lock      l;
	enum lock_result lr;

	fake.release_st = DB_ERR_LOST;
	fake.is_used_self = 1; /* the old session still holds it */
	take(&l);
	lr = lock_finish(&l, &ok_end);
	ck_assert_int_eq(lr, LOCK_INCIDENT);
	ck_assert_int_eq(exitcode_lock(lr), EXIT_PROTOCOL);
	ck_assert_int_eq(exitcode_lock(lr), 76);
	ck_assert_int_eq(fake_seen_event("lock_release_failed"), 1);
	ck_assert_int_eq(fake_nseen, 1);
	/* session destroyed, fresh session, verify, KILL the old id */
	ck_assert_int_ge(fake.destroys, 1);
	ck_assert_int_eq(fake.connects, 2);
	ck_assert_int_eq(fake.kills, 1);
	ck_assert_uint_eq(fake.killed, 101);
	/* the run record finished before the release, then marked an
	 * incident on the fresh session */
	ck_assert_int_eq(fake.finishes, 2);
	ck_assert_int_eq(fake.releases_at_finish, 0);
	ck_assert_str_eq(fake.finish_outcome, "incident");
	ck_assert_int_eq(fake.finish_status, 0);
}
END_TEST

START_TEST(release_query_fails_lock_already_free)
{
	struct lock l;

	fake.release_st = DB_ERR_QUERY;
	fake.is_used = VNULL; /* the session's end gave the lock back */
	take(&l);
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_INCIDENT);
	ck_assert_int_eq(fake_seen_event("lock_release_failed"), 1);
	ck_assert_int_eq(fake.kills, 0);
	ck_assert_int_eq(fake_nseen, 1);
}
END_TEST

START_TEST(release_returns_zero)
{
	struct lock      l;
	enum lock_result lr;

	fake.release = V("0");
	take(&l);
	lr = lock_finish(&l, &ok_end);
	ck_assert_int_eq(lr, LOCK_INCIDENT);
	ck_assert_int_eq(exitcode_lock(lr), 76);
	ck_assert_int_eq(fake_seen_event("lock_release_unexpected"), 1);
	ck_assert_int_eq(fake_nseen, 1);
	ck_assert_int_eq(fake.kills, 0);
	ck_assert_str_eq(fake.finish_outcome, "incident");
}
END_TEST

START_TEST(release_returns_null)
{
	struct lock      l;
	enum lock_result lr;

	fake.release = VNULL;
	take(&l);
	lr = lock_finish(&l, &ok_end);
	ck_assert_int_eq(lr, LOCK_INCIDENT);
	ck_assert_int_eq(exitcode_lock(lr), 76);
	ck_assert_int_eq(fake_seen_event("lock_release_unexpected"), 1);
	ck_assert_ptr_nonnull(
	    strstr(fake_seen_detail("lock_release_unexpected"), "NULL"));
}
END_TEST

START_TEST(release_returns_junk)
{
	struct lock l;

	fake.release = V("01");
	take(&l);
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_INCIDENT);
	ck_assert_int_eq(fake_seen_event("lock_release_unexpected"), 1);
}
END_TEST

/* The string "0" is true in any pointer test: it must never count as
 * acquired. */
START_TEST(get_lock_string_zero_is_busy)
{
	struct lock        l;
	struct lock_holder h;
	char              *errstr = NULL;

	fake.get_lock = V("0");
	fake.holder.connection_id = 55;
	lock_init(&l, &fake_ops, NULL, "accrual", "cronguard:app:accrual");
	ck_assert_int_eq(lock_open(&l, &errstr), LOCK_OK);
	ck_assert_int_eq(lock_acquire(&l, &h, &errstr), LOCK_BUSY);
	ck_assert_int_eq(l.held, 0);
	ck_assert_int_eq(fake.holder_calls, 1);
	ck_assert_uint_eq(h.connection_id, 55);
	lock_holder_free(&h);
	lock_close(&l);
	ck_assert_int_eq(fake.releases, 0);
}
END_TEST

static const char *const junk[] = { "", "01", "1 ", "true", "2", "-1" };

START_TEST(get_lock_junk_not_acquired)
{
	struct lock        l;
	struct lock_holder h;
	char              *errstr = NULL;
	enum lock_result   lr;

	fake.get_lock = V(junk[_i]);
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

	fake.get_lock = VNULL;
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

	fake.fence = "18446744073709551615";
	take(&l);
	ck_assert_uint_eq(l.fence, 18446744073709551615ULL);
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_OK);
	ck_assert_int_eq(fake.releases, 1);
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

	fake.fence = bad_fence[_i];
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

	fake.wsrep = "1";
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

	fake.wsrep = "1";
	fake.get_lock = galera_got[_i];
	fake.holder.connection_id = 55;
	lock_init(&l, &fake_ops, NULL, "accrual", "cronguard:app:accrual");
	ck_assert_int_eq(lock_open(&l, &errstr), LOCK_OK);
	lr = lock_acquire(&l, &h, &errstr);
	ck_assert_int_eq(lr, LOCK_ERR_GALERA);
	ck_assert_int_eq(exitcode_lock(lr), EXIT_CONFIG);
	ck_assert_int_eq(fake.holder_calls, 0);
	ck_assert_ptr_null(l.conn);
	free(errstr);
}
END_TEST

START_TEST(no_wsrep_variable_is_off)
{
	struct lock        l;
	struct lock_holder h;
	char              *errstr = NULL;

	fake.wsrep = NULL; /* MySQL without Galera */
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

	fake.release_st = DB_ERR_LOST;
	fake.destroy_fail = 1;
	fake.is_used_self = 1;
	take(&l);
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_INCIDENT);
	ck_assert_int_eq(fake_seen_event("lock_release_failed"), 1);
	ck_assert_int_eq(fake_seen_event("session_destroy_failed"), 1);
	ck_assert_int_eq(fake.kills, 1);
	ck_assert_int_eq(fake.finishes, 2);
}
END_TEST

START_TEST(verify_connect_fails)
{
	struct lock l;

	fake.release_st = DB_ERR_LOST;
	fake.connect_fail_from = 2; /* no fresh session at all */
	take(&l);
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_INCIDENT);
	ck_assert_int_eq(fake_seen_event("lock_release_failed"), 1);
	ck_assert_int_eq(fake_seen_event("lock_verify_failed"), 1);
	/* nor for the run record: reported too */
	ck_assert_int_eq(fake_seen_event("run_record_failed"), 1);
}
END_TEST

START_TEST(verify_kill_fails)
{
	struct lock l;

	fake.release_st = DB_ERR_LOST;
	fake.is_used_self = 1;
	fake.kill_st = DB_ERR_QUERY;
	take(&l);
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_INCIDENT);
	ck_assert_int_eq(fake_seen_event("lock_release_failed"), 1);
	ck_assert_int_eq(fake_seen_event("lock_verify_failed"), 1);
	ck_assert_ptr_nonnull(
	    strstr(fake_seen_detail("lock_verify_failed"), "KILL failed"));
}
END_TEST

START_TEST(verify_query_fails)
{
	struct lock l;

	fake.release_st = DB_ERR_LOST;
	fake.is_used_st = DB_ERR_QUERY;
	take(&l);
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_INCIDENT);
	ck_assert_int_eq(fake_seen_event("lock_verify_failed"), 1);
}
END_TEST

/* A run record that cannot be finished is an incident (76): the slot
 * ran, its record says "running", and a later launch that closes it as
 * abandoned may run the slot again.  The lock is still released. */
START_TEST(run_record_fails)
{
	struct lock l;

	fake.finish_st = DB_ERR_QUERY;
	take(&l);
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_INCIDENT);
	ck_assert_int_eq(fake_seen_event("run_record_failed"), 1);
	ck_assert_ptr_nonnull(
	    strstr(fake_seen_detail("run_record_failed"), "run it again"));
	ck_assert_int_eq(fake.releases, 1);
	/* the lock session, then a fresh one without the output */
	ck_assert_int_eq(fake.finishes, 3);
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

	fake.finish_st = DB_ERR_QUERY;
	fake.finish_fail_once = 1;
	take(&l);
	ck_assert_int_eq(lock_finish(&l, &failed), LOCK_OK);
	ck_assert_int_eq(fake.finishes, 2);
	ck_assert_int_eq(fake.connects, 2);
	ck_assert_str_eq(fake.finish_outcome, "failure");
	ck_assert_int_eq(fake.finish_status, 1);
	ck_assert_int_eq(fake_seen_event("run_record_retried"), 1);
	ck_assert_int_eq(fake_seen_event("run_record_failed"), 0);
	ck_assert_ptr_nonnull(strstr(
	    fake_seen_detail("run_record_retried"), "job failure, status 1"));
}
END_TEST

/* A record whose output the server will not take (too large for its
 * max_allowed_packet: the session is lost) is finished without it, on a
 * fresh session, before the release: the slot stays done. */
START_TEST(run_record_without_output)
{
	static const struct run_output big = { "xxxx", 4, 4 };
	struct run_end                 e = { "success", 0, NULL, &big };
	struct lock                    l;

	fake.finish_fail_output = 1;
	take(&l);
	ck_assert_int_eq(lock_finish(&l, &e), LOCK_OK);
	ck_assert_int_eq(fake.finishes, 3);
	ck_assert_int_eq(fake.finish_had_output, 0);
	ck_assert_str_eq(fake.finish_outcome, "success");
	ck_assert_int_eq(fake.releases_at_finish, 0);
	ck_assert_int_eq(fake_seen_event("run_record_retried"), 1);
	ck_assert_ptr_nonnull(strstr(
	    fake_seen_detail("run_record_retried"), "without its output"));
	ck_assert_int_eq(fake_seen_event("run_record_failed"), 0);
}
END_TEST

START_TEST(heartbeat_lost)
{
	struct lock l;

	take(&l);
	fake.is_used = V("999");
	ck_assert_int_eq(lock_heartbeat(&l), LOCK_INCIDENT);
	ck_assert_int_eq(lock_heartbeat(&l), LOCK_INCIDENT);
	ck_assert_int_eq(fake_seen_event("lock_lost"), 1); /* once */
	fake.release = V("0");
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_INCIDENT);
	/* 0 after a reported loss: expected, not a second incident */
	ck_assert_int_eq(fake_nseen, 1);
	ck_assert_str_eq(fake.finish_outcome, "lock_lost");
}
END_TEST

START_TEST(heartbeat_ok)
{
	struct lock l;

	take(&l);
	fake.is_used_self = 1;
	ck_assert_int_eq(lock_heartbeat(&l), LOCK_OK);
	fake.is_used_self = 0;
	fake.is_used = VNULL;
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
	fake.is_used_self = 1;
	fake.read_only = "read_only,replica_sql_running";
	ck_assert_int_eq(lock_heartbeat(&l), LOCK_INCIDENT);
	ck_assert_int_eq(fake.lock_checks, 1);
	ck_assert_int_eq(l.read_only, 1);
	ck_assert_int_eq(fake_seen_event("lock_lost"), 1);
	ck_assert_ptr_nonnull(strstr(fake_seen_detail("lock_lost"),
	    "turned read-only (read_only,replica_sql_running)"));
	ck_assert_int_eq(lock_finish(&l, &ok_end), LOCK_INCIDENT);
	ck_assert_int_eq(fake.finishes, 0);
	ck_assert_int_eq(fake_nseen, 1);
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

static Suite *
lock_suite(void)
{
	Suite *s = suite_create("lock");
	TCase *tc = tcase_create("fake database");

	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
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
	tcase_add_test(tc, run_record_without_output);
	tcase_add_test(tc, heartbeat_lost);
	tcase_add_test(tc, heartbeat_ok);
	tcase_add_test(tc, heartbeat_read_only);
	tcase_add_test(tc, holder_verdicts);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return testutil_main(lock_suite);
}
