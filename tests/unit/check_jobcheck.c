/* check_jobcheck.c: jobs check's judgement (jobcheck-int.h) from a slot
 * state, recent slots and marks built by hand (no database): missed slots
 * and what excuses them (an ack, a pause, a truncated read, grace), the
 * same from the runs' flags (a gap, a catch-up, the tail, a slot run
 * twice long ago), a
 * success after them, consecutive failed slots, a slot run twice, a late
 * start, and the unscheduled judgement (expect_every, max_runtime). */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jobcheck-int.h"
#include "log.h"
#include "schedule.h"
#include "testutil.h"
#include "util.h"

#define at testutil_at

/* One job on a schedule in UTC as jobcheck_run_all hands it over. */
struct fx {
	struct schedule     *sched;
	struct conf_job      job;
	struct job_sched     sc;
	struct job_check     jc;
	struct jobcheck_plan p;
};

/* expr every minute or so, judged at now; its first run at first (-1:
 * none); grace 90 s, a day's look-back, one failed slot alerts. */
static void
fx_init(struct fx *f, const char *expr, int64_t now, int64_t first)
{
	char *err = NULL;

	log_init(LOG_ERROR, LOG_TEXT);
	memset(f, 0, sizeof *f);
	ck_assert_msg(schedule_parse(expr, &f->sched, &err) == 0, "%s", err);
	f->job.name = "report";
	f->job.lock = "cronguard:t:report";
	f->job.grace_ms = 90000;
	f->job.max_runtime_ms = 3600000;
	f->job.missed_lookback_ms = 86400000;
	f->sc.schedule = f->sched;
	f->sc.timezone = "UTC";
	f->sc.alert_after_failures = 1;
	f->sc.alert_level = CHECK_CRITICAL;
	f->jc.job = &f->job;
	f->jc.status = CHECK_OK;
	buf_init(&f->jc.msg);
	buf_adds(&f->jc.msg, "");
	f->jc.sched.acked = -1;
	f->jc.sched.st.now_us = now * 1000000;
	f->jc.sched.st.last_success = -1;
	f->jc.sched.st.first_run = first;
	f->jc.sched.st.pause_ended = -1;
	f->p.marks.acked = -1;
	f->p.rr.rows = xcalloc(64, sizeof *f->p.rr.rows);
}

/* A slot with runs, appended (rows are newest first). */
static struct runs_slot_row *
fx_row(struct fx *f, int64_t slot, long long ok, long long failed)
{
	struct runs_slot_row *r = &f->p.rr.rows[f->p.rr.n++];

	ck_assert_uint_lt(f->p.rr.n, 64);
	r->slot = slot;
	r->successes = ok;
	r->launched = ok;
	r->failures = failed;
	r->first_start = slot + 2;
	if (ok > 0 && slot > f->jc.sched.st.last_success)
		f->jc.sched.st.last_success = slot;
	return r;
}

/* Every minute from first to last (hh:mm), one success each. */
static void
fx_successes(struct fx *f, int64_t last, int64_t first)
{
	int64_t t;

	for (t = last; t >= first; t -= 60)
		fx_row(f, t, 1, 0);
}

/* Every minute, judged at 12:00:30: a success each minute from 11:50 to
 * last, nothing since. */
static void
fx_upto(struct fx *f, int64_t last)
{
	fx_init(f, "* * * * *", at(12, 0, 30), at(11, 50, 0));
	fx_successes(f, last, at(11, 50, 0));
}
#define fx_gap(f) fx_upto((f), at(11, 54, 0))

static void
fx_judge(struct fx *f)
{
	jobcheck_schedule_plan(&f->job, &f->sc, &f->jc, &f->p);
	ck_assert_msg(f->p.ready, "not ready: %s", f->jc.msg.data);
	jobcheck_window(&f->p);
	jobcheck_schedule(&f->job, &f->sc, &f->p, &f->jc);
}

static void
fx_free(struct fx *f)
{
	jobcheck_plan_free(&f->p);
	jobcheck_free(&f->jc);
	schedule_free(f->sched);
}

#define ck_msg_has(f, s) \
	ck_assert_msg(strstr((f)->jc.msg.data, (s)) != NULL, \
	    "\"%s\" not in \"%s\"", (s), (f)->jc.msg.data)

/* Successes 11:50-11:54, nothing since, judged at 12:00:30: 11:55-11:58
 * are missed (11:59 and 12:00 are within grace), CRITICAL as no success
 * followed; the newest listed first. */
START_TEST(missed_slots)
{
	struct fx f;

	fx_gap(&f);
	fx_judge(&f);
	ck_assert_int_eq(f.jc.status, CHECK_CRITICAL);
	ck_assert_int_eq(f.jc.sched.nmissed, 4);
	ck_assert(f.jc.sched.missed);
	ck_assert_uint_eq(f.jc.sched.nlisted, 4);
	ck_assert_str_eq(
	    f.jc.sched.missed_slots[0], "2026-12-06T11:58:00+00:00");
	ck_assert_str_eq(
	    f.jc.sched.missed_slots[3], "2026-12-06T11:55:00+00:00");
	ck_msg_has(&f, "slot 2026-12-06T11:58:00+00:00 missed");
	ck_msg_has(&f, "(4 missed slots)");
	fx_free(&f);
}
END_TEST

/* Nothing is missed before the job's first run, nor within grace. */
START_TEST(missed_not_before_first_run)
{
	struct fx f;

	fx_init(&f, "* * * * *", at(12, 0, 30), at(11, 58, 0));
	fx_row(&f, at(11, 58, 0), 1, 0);
	fx_judge(&f);
	ck_assert_int_eq(f.jc.status, CHECK_OK);
	ck_assert_int_eq(f.jc.sched.nmissed, 0);
	fx_free(&f);

	/* No run at all: no window, nothing missed. */
	fx_init(&f, "* * * * *", at(12, 0, 30), -1);
	fx_judge(&f);
	ck_assert_int_eq(f.jc.status, CHECK_OK);
	ck_assert_uint_eq(f.p.nwin, 0);
	fx_free(&f);
}
END_TEST

/* An ack of 11:56 covers it and the older ones: 11:57 and 11:58 left. */
START_TEST(missed_ack_covers_older)
{
	struct fx f;

	fx_gap(&f);
	f.p.marks.acked = at(11, 56, 0);
	fx_judge(&f);
	ck_assert_int_eq(f.jc.sched.nmissed, 2);
	ck_assert_int_eq(f.jc.status, CHECK_CRITICAL);
	ck_msg_has(&f, "(2 missed slots)");
	fx_free(&f);

	/* An ack of the newest: nothing left. */
	fx_gap(&f);
	f.p.marks.acked = at(11, 58, 0);
	fx_judge(&f);
	ck_assert_int_eq(f.jc.sched.nmissed, 0);
	ck_assert_int_eq(f.jc.status, CHECK_OK);
	fx_free(&f);
}
END_TEST

/* A pause (resumed since) excuses the slots it held, no others. */
START_TEST(missed_pause_excuses)
{
	struct fx f;

	fx_gap(&f);
	f.p.marks.pauses[0].from = at(11, 54, 30);
	f.p.marks.pauses[0].until = at(11, 57, 10);
	f.p.marks.npauses = 1;
	fx_judge(&f);
	ck_assert_int_eq(f.jc.sched.nmissed, 1);
	ck_assert_str_eq(
	    f.jc.sched.missed_slots[0], "2026-12-06T11:58:00+00:00");
	fx_free(&f);

	/* A pause in effect: no window at all. */
	fx_gap(&f);
	f.jc.sched.st.pause_job = xstrdup("report");
	fx_judge(&f);
	ck_assert_int_eq(f.jc.sched.nmissed, 0);
	ck_assert(f.jc.sched.paused);
	fx_free(&f);
}
END_TEST

/* Missed slots before a later success: WARNING, not CRITICAL. */
START_TEST(missed_then_success)
{
	struct fx f;

	fx_init(&f, "* * * * *", at(12, 0, 30), at(11, 50, 0));
	fx_row(&f, at(11, 58, 0), 1, 0);
	fx_successes(&f, at(11, 54, 0), at(11, 50, 0));
	fx_judge(&f);
	ck_assert_int_eq(f.jc.sched.nmissed, 3);
	ck_assert(!f.jc.sched.missed);
	ck_assert_int_eq(f.jc.status, CHECK_WARNING);
	ck_msg_has(&f, "3 missed slots before the last success");
	fx_free(&f);
}
END_TEST

/* Runs read truncated: a slot older than the oldest run read may have
 * had runs, so it is never called missed. */
START_TEST(missed_truncated_read)
{
	struct fx f;

	fx_init(&f, "* * * * *", at(12, 0, 30), at(11, 0, 0));
	fx_successes(&f, at(11, 58, 0), at(11, 56, 0));
	f.p.rr.truncated = 1;
	fx_judge(&f);
	ck_assert_int_eq(f.jc.sched.nmissed, 0);
	ck_assert_int_eq(f.jc.status, CHECK_OK);
	fx_free(&f);
}
END_TEST

/* With the runs' flags (sql/016) only the latest runs are read: slot f
 * of the flagged ones, with its flags and the newest slot before it with
 * a run when it started; top the newest slot with a run. */
static void
fx_flagged(struct fx *f, int64_t top)
{
	f->p.rr.truncated = 1;
	f->p.flagged = 1;
	f->p.rf.rows = xcalloc(8, sizeof *f->p.rf.rows);
	f->p.rf.top = top;
}
static void
fx_flag(struct fx *f, int64_t slot, unsigned flags, int64_t from)
{
	struct runs_flagged_row *r = &f->p.rf.rows[f->p.rf.n++];

	ck_assert_uint_lt(f->p.rf.n, 8);
	r->slot = slot;
	r->flags = flags;
	r->gap_from = from;
	r->launched = 1;
}

/* The latest runs 11:56-11:58 read, 11:56's ending a gap begun after
 * 11:52: 11:53-11:55 are missed, the older slots had runs although none
 * was read (the truncated read alone would say nothing of them). */
START_TEST(flagged_gap)
{
	struct fx f;

	fx_init(&f, "* * * * *", at(12, 0, 30), at(11, 50, 0));
	fx_successes(&f, at(11, 58, 0), at(11, 56, 0));
	fx_flagged(&f, at(11, 58, 0));
	fx_flag(&f, at(11, 56, 0), RUNS_FLAG_GAP, at(11, 52, 0));
	fx_judge(&f);
	ck_assert_int_eq(f.jc.sched.nmissed, 3);
	ck_assert_str_eq(
	    f.jc.sched.missed_slots[0], "2026-12-06T11:55:00+00:00");
	ck_assert_str_eq(
	    f.jc.sched.missed_slots[2], "2026-12-06T11:53:00+00:00");
	ck_assert_int_eq(f.jc.status, CHECK_WARNING);
	fx_free(&f);
}
END_TEST

/* The same gap, 11:54 caught up since (flagged 4, and 1: 11:53 had no
 * run): 11:55 and 11:53 are missed; and the slots after the newest run
 * (11:58 with top 11:56) are too. */
START_TEST(flagged_catch_up_and_tail)
{
	struct fx f;

	fx_init(&f, "* * * * *", at(12, 0, 30), at(11, 50, 0));
	fx_successes(&f, at(11, 56, 0), at(11, 56, 0));
	fx_flagged(&f, at(11, 56, 0));
	fx_flag(&f, at(11, 56, 0), RUNS_FLAG_GAP, at(11, 52, 0));
	fx_flag(
	    &f, at(11, 54, 0), RUNS_FLAG_GAP | RUNS_FLAG_FILL, at(11, 52, 0));
	fx_judge(&f);
	ck_assert_int_eq(f.jc.sched.nmissed, 4);
	ck_assert_str_eq(
	    f.jc.sched.missed_slots[0], "2026-12-06T11:58:00+00:00");
	ck_assert_str_eq(
	    f.jc.sched.missed_slots[1], "2026-12-06T11:57:00+00:00");
	ck_assert_str_eq(
	    f.jc.sched.missed_slots[2], "2026-12-06T11:55:00+00:00");
	ck_assert_str_eq(
	    f.jc.sched.missed_slots[3], "2026-12-06T11:53:00+00:00");
	fx_free(&f);
}
END_TEST

/* Successes 11:56-11:58 read, 11:51 run twice long before (flag 2),
 * acknowledged or not, judged. */
static void
fx_twice_long_ago(struct fx *f, int acked)
{
	fx_init(f, "* * * * *", at(12, 0, 30), at(11, 50, 0));
	fx_successes(f, at(11, 58, 0), at(11, 56, 0));
	fx_flagged(f, at(11, 58, 0));
	fx_flag(f, at(11, 51, 0), RUNS_FLAG_TWICE, at(11, 50, 0));
	f->p.rf.rows[0].launched = 2;
	f->p.rf.rows[0].acked = acked;
	fx_judge(f);
}

/* A slot run twice older than the latest runs read is found among the
 * flagged ones (flag 2), unless acknowledged. */
START_TEST(flagged_ran_twice)
{
	struct fx f;

	fx_twice_long_ago(&f, 0);
	ck_assert(f.jc.sched.ran_twice);
	ck_msg_has(&f,
	    "ran twice: 2 successful runs for slot "
	    "2026-12-06T11:51:00+00:00");
	fx_free(&f);
	fx_twice_long_ago(&f, 1);
	ck_assert(!f.jc.sched.ran_twice);
	ck_assert_int_eq(f.jc.status, CHECK_OK);
	fx_free(&f);
}
END_TEST

/* A failed slot is a failure, never also missed; alert_after_failures
 * consecutive failed slots alert at alert_level; an ack ends the count. */
START_TEST(failed_slots)
{
	struct fx f;

	fx_init(&f, "* * * * *", at(12, 0, 30), at(11, 50, 0));
	f.sc.alert_after_failures = 3;
	fx_row(&f, at(11, 58, 0), 0, 1);
	fx_row(&f, at(11, 57, 0), 0, 2);
	fx_successes(&f, at(11, 56, 0), at(11, 50, 0));
	fx_judge(&f);
	ck_assert_int_eq(f.jc.sched.nmissed, 0);
	ck_assert_int_eq(f.jc.sched.failed_slots, 2);
	ck_assert_int_eq(f.jc.status, CHECK_OK); /* 2 < 3 */
	fx_free(&f);

	fx_init(&f, "* * * * *", at(12, 0, 30), at(11, 50, 0));
	f.sc.alert_after_failures = 3;
	f.sc.alert_level = CHECK_WARNING;
	fx_row(&f, at(11, 58, 0), 0, 1);
	fx_row(&f, at(11, 57, 0), 0, 1);
	fx_row(&f, at(11, 56, 0), 0, 1);
	fx_successes(&f, at(11, 55, 0), at(11, 50, 0));
	fx_judge(&f);
	ck_assert_int_eq(f.jc.sched.failed_slots, 3);
	ck_assert_int_eq(f.jc.status, CHECK_WARNING);
	ck_msg_has(&f,
	    "3 consecutive failed slots, the last 2026-12-06T11:58:00+00:00");
	fx_free(&f);

	fx_init(&f, "* * * * *", at(12, 0, 30), at(11, 50, 0));
	fx_row(&f, at(11, 58, 0), 0, 1);
	fx_row(&f, at(11, 57, 0), 0, 1)->acked = 1;
	fx_row(&f, at(11, 56, 0), 0, 1);
	fx_successes(&f, at(11, 55, 0), at(11, 50, 0));
	fx_judge(&f);
	ck_assert_int_eq(f.jc.sched.failed_slots, 1);
	ck_assert_int_eq(f.jc.status, CHECK_CRITICAL);
	fx_free(&f);
}
END_TEST

/* Two launched successes in one slot ran twice, unless the slot is
 * acked; a success by run --slot (manual) is not a second launch. */
START_TEST(ran_twice)
{
	struct fx f;

	fx_upto(&f, at(11, 58, 0));
	f.p.rr.rows[2].launched = 2;
	f.p.rr.rows[2].successes = 2;
	fx_judge(&f);
	ck_assert(f.jc.sched.ran_twice);
	ck_assert_int_eq(f.jc.status, CHECK_CRITICAL);
	ck_msg_has(&f,
	    "ran twice: 2 successful runs for slot 2026-12-06T11:56:00+00:00");
	fx_free(&f);

	fx_upto(&f, at(11, 58, 0));
	f.p.rr.rows[2].launched = 2;
	f.p.rr.rows[2].acked = 1;
	fx_judge(&f);
	ck_assert(!f.jc.sched.ran_twice);
	ck_assert_int_eq(f.jc.status, CHECK_OK);
	fx_free(&f);

	fx_upto(&f, at(11, 58, 0));
	f.p.rr.rows[2].successes = 2; /* one by run --slot */
	fx_judge(&f);
	ck_assert(!f.jc.sched.ran_twice);
	ck_assert_int_eq(f.jc.status, CHECK_OK);
	fx_free(&f);
}
END_TEST

/* The latest slot's first run started more than grace after it: late. */
START_TEST(late_start)
{
	struct fx f;

	fx_init(&f, "*/5 * * * *", at(12, 3, 0), at(11, 0, 0));
	f.job.grace_ms = 10000;
	fx_row(&f, at(12, 0, 0), 1, 0)->first_start = at(12, 0, 40);
	fx_row(&f, at(11, 55, 0), 1, 0);
	fx_judge(&f);
	ck_assert(f.jc.sched.late);
	ck_assert_int_eq(f.jc.status, CHECK_WARNING);
	ck_msg_has(&f, "started late, 40s after its time");
	fx_free(&f);

	fx_init(&f, "*/5 * * * *", at(12, 3, 0), at(11, 0, 0));
	f.job.grace_ms = 60000;
	fx_row(&f, at(12, 0, 0), 1, 0)->first_start = at(12, 0, 40);
	fx_judge(&f);
	ck_assert(!f.jc.sched.late);
	fx_free(&f);
}
END_TEST

/* Without a schedule: expect_every + grace past the last success is
 * CRITICAL, none recorded a WARNING; a run past max_runtime + grace is
 * CRITICAL, past max_runtime a WARNING; a failed last run a WARNING, a
 * lock incident CRITICAL. */
START_TEST(judge_unscheduled)
{
	struct fx f;

	fx_init(&f, "* * * * *", at(12, 0, 0), -1);
	f.sc.schedule = NULL;
	f.job.expect_every_ms = 3600000;
	f.job.grace_ms = 600000;
	f.jc.js.last_success_ts = -1;
	jobcheck_judge(&f.job, &f.sc, &f.jc);
	ck_assert_int_eq(f.jc.status, CHECK_WARNING);
	ck_msg_has(&f, "no successful run recorded");
	fx_free(&f);

	fx_init(&f, "* * * * *", at(12, 0, 0), -1);
	f.sc.schedule = NULL;
	f.job.expect_every_ms = 3600000;
	f.job.grace_ms = 600000;
	f.jc.js.last_success_ts = 1;
	f.jc.js.last_success_age_s = 3600 + 601;
	jobcheck_judge(&f.job, &f.sc, &f.jc);
	ck_assert_int_eq(f.jc.status, CHECK_CRITICAL);
	ck_msg_has(&f, "last success 1h10m1s ago");
	fx_free(&f);

	fx_init(&f, "* * * * *", at(12, 0, 0), -1);
	f.sc.schedule = NULL;
	f.job.expect_every_ms = 3600000;
	f.job.grace_ms = 600000;
	f.jc.js.last_success_ts = 1;
	f.jc.js.last_success_age_s = 3600 + 599;
	jobcheck_judge(&f.job, &f.sc, &f.jc);
	ck_assert_int_eq(f.jc.status, CHECK_OK);
	fx_free(&f);

	fx_init(&f, "* * * * *", at(12, 0, 0), -1);
	f.jc.js.last_outcome = xstrdup("running");
	f.jc.js.last_id = 7;
	f.jc.js.last_session_alive = 1;
	f.jc.js.last_age_s = 3600 + 30;
	jobcheck_judge(&f.job, &f.sc, &f.jc);
	ck_assert_int_eq(f.jc.status, CHECK_WARNING);
	ck_assert(f.jc.running);
	f.jc.js.last_age_s = 3600 + 91;
	jobcheck_judge(&f.job, &f.sc, &f.jc);
	ck_assert_int_eq(f.jc.status, CHECK_CRITICAL);
	ck_msg_has(&f, "past max_runtime 1h + grace");
	fx_free(&f);

	/* A run whose session is gone died without finishing. */
	fx_init(&f, "* * * * *", at(12, 0, 0), -1);
	f.jc.js.last_outcome = xstrdup("running");
	f.jc.js.last_id = 7;
	f.jc.js.last_connection_id = 42;
	f.jc.js.last_session_alive = 0;
	jobcheck_judge(&f.job, &f.sc, &f.jc);
	ck_assert_int_eq(f.jc.status, CHECK_WARNING);
	ck_assert(!f.jc.running);
	ck_msg_has(&f, "its session 42 is gone");
	fx_free(&f);

	fx_init(&f, "* * * * *", at(12, 0, 0), -1);
	f.sc.schedule = NULL;
	f.jc.js.done_outcome = xstrdup("failure");
	jobcheck_judge(&f.job, &f.sc, &f.jc);
	ck_assert_int_eq(f.jc.status, CHECK_WARNING);
	fx_free(&f);

	/* With a schedule only a lock incident is said of the last run. */
	fx_init(&f, "* * * * *", at(12, 0, 0), -1);
	f.jc.js.done_outcome = xstrdup("failure");
	jobcheck_judge(&f.job, &f.sc, &f.jc);
	ck_assert_int_eq(f.jc.status, CHECK_OK);
	free(f.jc.js.done_outcome);
	f.jc.js.done_outcome = xstrdup("lock_lost");
	jobcheck_judge(&f.job, &f.sc, &f.jc);
	ck_assert_int_eq(f.jc.status, CHECK_CRITICAL);
	fx_free(&f);
}
END_TEST

static Suite *
jobcheck_suite(void)
{
	Suite *s = suite_create("jobcheck");
	TCase *tc = tcase_create("judge");

	tcase_add_test(tc, missed_slots);
	tcase_add_test(tc, missed_not_before_first_run);
	tcase_add_test(tc, missed_ack_covers_older);
	tcase_add_test(tc, missed_pause_excuses);
	tcase_add_test(tc, missed_then_success);
	tcase_add_test(tc, missed_truncated_read);
	tcase_add_test(tc, flagged_gap);
	tcase_add_test(tc, flagged_catch_up_and_tail);
	tcase_add_test(tc, flagged_ran_twice);
	tcase_add_test(tc, failed_slots);
	tcase_add_test(tc, ran_twice);
	tcase_add_test(tc, late_start);
	tcase_add_test(tc, judge_unscheduled);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(jobcheck_suite);
}
