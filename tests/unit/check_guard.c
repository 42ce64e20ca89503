/* check_guard.c: guard_run, a job under its named lock, against the
 * fake database of fakelock.c: the job's status passed through, a busy
 * lock, a lost lock that stops the job, a failed release with a failed
 * job, signals a parent left blocked, an SQL job without a database. */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "exitcode.h"
#include "fakelock.h"
#include "guard.h"
#include "util.h"
#include "testutil.h"

static void
guard_setup_job(struct guard_job *gj, char **argv)
{
	memset(gj, 0, sizeof *gj);
	gj->job = "accrual";
	gj->argv = argv;
	gj->guard = GUARD_NAMED_LOCK;
	gj->lock = "cronguard:app:accrual";
	gj->runtime_dir = fake_rundir;
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

	fake.release_st = DB_ERR_LOST;
	fake.is_used_self = 1;
	guard_setup_job(&gj, argv);
	ck_assert_int_eq(guard_run(&gj, &fake_ops, NULL, NULL), 76);
	ck_assert_int_eq(fake_seen_event("lock_release_failed"), 1);
	ck_assert_ptr_nonnull(
	    strstr(fake_seen_detail("lock_release_failed"), "status 3"));
	ck_assert_int_eq(fake.kills, 1);
	/* the record before the release, then marked an incident */
	ck_assert_int_eq(fake.finishes, 2);
	ck_assert_int_eq(fake.releases_at_finish, 0);
	ck_assert_str_eq(fake.finish_outcome, "incident");
	ck_assert_int_eq(fake.finish_status, 3);
	ck_assert_ptr_nonnull(
	    strstr(fake.finish_error, "exited with status 3"));
}
END_TEST

START_TEST(guard_status_passthrough)
{
	char            *argv[] = { "sh", "-c", "exit 5", NULL };
	struct guard_job gj;

	guard_setup_job(&gj, argv);
	ck_assert_int_eq(guard_run(&gj, &fake_ops, NULL, NULL), 5);
	ck_assert_int_eq(fake_nseen, 0);
	ck_assert_str_eq(fake.finish_outcome, "failure");
	ck_assert_int_eq(fake.finish_status, 5);
}
END_TEST

START_TEST(guard_busy_skips)
{
	char            *argv[] = { "sh", "-c", "exit 5", NULL };
	struct guard_job gj;

	fake.get_lock = V("0");
	fake.holder.connection_id = 55;
	fake.holder.run_id = 9;
	fake.holder.run_age_s = 10;
	guard_setup_job(&gj, argv);
	gj.busy_exit = 3;
	ck_assert_int_eq(guard_run(&gj, &fake_ops, NULL, NULL), 3);
	ck_assert_int_eq(fake.run_starts, 0);
	fake.holder.run_age_s = 7200;
	ck_assert_int_eq(guard_run(&gj, &fake_ops, NULL, NULL), EXIT_TEMPFAIL);
	ck_assert_int_eq(fake.run_starts, 0);
}
END_TEST

/* The lock is lost mid-job: incident, the job terminated, 76. */
START_TEST(guard_lost_terminates)
{
	char            *argv[] = { "sleep", "30", NULL };
	struct guard_job gj;
	int64_t          t0;

	fake.is_used = V("999");
	fake.release = VNULL;
	guard_setup_job(&gj, argv);
	gj.heartbeat_ms = 100;
	t0 = now_mono_ms();
	ck_assert_int_eq(guard_run(&gj, &fake_ops, NULL, NULL), 76);
	ck_assert_int_lt(now_mono_ms() - t0, 5000);
	ck_assert_int_eq(fake_seen_event("lock_lost"), 1);
	ck_assert_str_eq(fake.finish_outcome, "lock_lost");
	ck_assert_int_eq(fake.finish_status, 128 + 15);
}
END_TEST

/*
 * cronguard started with SIGCHLD and SIGTERM blocked (a parent's mask is
 * inherited): the job's end must still wake the guard, and a SIGTERM must
 * still reach the job.  The job signals the guard at once.
 */
START_TEST(guard_signals_blocked_by_parent)
{
	/* The job's parent is its reaper; the guard is the reaper's. */
	char            *argv[] = { "sh", "-c",
		           "kill -TERM $(cut -d' ' -f4 /proc/$PPID/stat); sleep 5", NULL };
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
	ck_assert_str_eq(fake.finish_outcome, "killed");
	ck_assert_int_eq(fake_nseen, 0);
}
END_TEST

/* An SQL job runs on the lock's database session: without a database
 * (NULL ops) it is a configuration error, whatever its guard. */
START_TEST(guard_sql_job_without_database)
{
	struct guard_job gj;

	guard_setup_job(&gj, NULL);
	gj.sql = "DO 1";
	gj.guard = GUARD_NONE;
	ck_assert_int_eq(guard_run(&gj, NULL, NULL, NULL), EXIT_CONFIG);
	gj.guard = GUARD_LOCAL;
	ck_assert_int_eq(guard_run(&gj, NULL, NULL, NULL), EXIT_CONFIG);
}
END_TEST

static Suite *
guard_suite(void)
{
	Suite *s = suite_create("guard");
	TCase *tc = tcase_create("fake database");

	tcase_add_checked_fixture(tc, fake_setup, fake_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, guard_failing_job_and_release);
	tcase_add_test(tc, guard_status_passthrough);
	tcase_add_test(tc, guard_busy_skips);
	tcase_add_test(tc, guard_lost_terminates);
	tcase_add_test(tc, guard_signals_blocked_by_parent);
	tcase_add_test(tc, guard_sql_job_without_database);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(guard_suite);
}
