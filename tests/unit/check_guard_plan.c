/* check_guard_plan.c: guard_plan, the slots a launch of a scheduled job
 * runs, from a slot state built by hand (no database): the latest slot,
 * one already done, catch_up "none" past its deadline, catch_up "all" with
 * backfill_limit and a pause's end, run --slot, and no slot before now. */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <string.h>

#include "exitcode.h"
#include "guard-int.h"
#include "log.h"
#include "schedule.h"
#include "testutil.h"

static struct schedule *plan_sched;
static struct tzone    *plan_zone;

/* Unix seconds of 2026-12-06 hh:mm UTC. */
#define at(hh, mm) testutil_at((hh), (mm), 0)

/* A job on expr in UTC, a launch at now with nothing recorded. */
static void
plan_init(
    struct guard_job *gj, struct slot_state *st, const char *expr, int64_t now)
{
	char *err = NULL;

	log_init(LOG_ERROR, LOG_TEXT);
	ck_assert_msg(schedule_parse(expr, &plan_sched, &err) == 0, "%s", err);
	ck_assert_int_eq(tzone_open("UTC", &plan_zone, &err), 0);
	memset(gj, 0, sizeof *gj);
	gj->job = "report";
	gj->schedule = plan_sched;
	gj->catch_up = CATCH_UP_LATEST;
	gj->backfill_limit = 10;
	gj->starting_deadline_ms = 60000;
	memset(st, 0, sizeof *st);
	st->now_us = now * 1000000;
	st->last_success = -1;
	st->first_run = -1;
	st->pause_ended = -1;
}

static void
plan_teardown(void)
{
	schedule_free(plan_sched);
	tzone_free(plan_zone);
	plan_sched = NULL;
	plan_zone = NULL;
}

static int
plan(const struct guard_job *gj, const struct slot_state *st,
    struct guard_slot *p, size_t *n)
{
	return guard_plan(gj, st, plan_zone, p, n);
}

START_TEST(plan_latest_slot)
{
	struct guard_job  gj;
	struct slot_state st;
	struct guard_slot p[10];
	size_t            n;

	plan_init(&gj, &st, "*/5 * * * *", at(12, 7));
	ck_assert_int_eq(plan(&gj, &st, p, &n), -1);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(p[0].t, at(12, 5));
	ck_assert_str_eq(p[0].kind, "schedule");
	/* Its success recorded: nothing is due. */
	st.last_success = at(12, 5);
	ck_assert_int_eq(plan(&gj, &st, p, &n), EXIT_OK);
	ck_assert_uint_eq(n, 0);
	/* An older success: the latest slot is due again. */
	st.last_success = at(12, 0);
	ck_assert_int_eq(plan(&gj, &st, p, &n), -1);
	ck_assert_int_eq(p[0].t, at(12, 5));
	plan_teardown();
}
END_TEST

/* catch_up "none": a launch later than starting_deadline after the slot
 * runs nothing; one within it runs the slot. */
START_TEST(plan_none_past_deadline)
{
	struct guard_job  gj;
	struct slot_state st;
	struct guard_slot p[10];
	size_t            n;

	plan_init(&gj, &st, "0 * * * *", at(12, 2));
	gj.catch_up = CATCH_UP_NONE;
	ck_assert_int_eq(plan(&gj, &st, p, &n), EXIT_OK);
	ck_assert_uint_eq(n, 0);
	st.now_us = (at(12, 0) + 59) * 1000000;
	ck_assert_int_eq(plan(&gj, &st, p, &n), -1);
	ck_assert_int_eq(p[0].t, at(12, 0));
	plan_teardown();
}
END_TEST

/* catch_up "all": every slot since the last success, oldest first, the
 * newest backfill_limit of them, never one before the first run or the
 * end of a pause. */
START_TEST(plan_all_backfill)
{
	struct guard_job  gj;
	struct slot_state st;
	struct guard_slot p[10];
	size_t            n;

	plan_init(&gj, &st, "*/5 * * * *", at(12, 7));
	gj.catch_up = CATCH_UP_ALL;
	st.first_run = at(11, 0);
	st.last_success = at(11, 50);
	ck_assert_int_eq(plan(&gj, &st, p, &n), -1);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(p[0].t, at(11, 55));
	ck_assert_str_eq(p[0].kind, "catch_up");
	ck_assert_int_eq(p[1].t, at(12, 0));
	ck_assert_int_eq(p[2].t, at(12, 5));
	ck_assert_str_eq(p[2].kind, "schedule");

	gj.backfill_limit = 2;
	ck_assert_int_eq(plan(&gj, &st, p, &n), -1);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(p[0].t, at(12, 0));
	ck_assert_int_eq(p[1].t, at(12, 5));

	/* Jobs resumed at 12:01: the slots of the pause are not run. */
	gj.backfill_limit = 10;
	st.pause_ended = at(12, 1);
	ck_assert_int_eq(plan(&gj, &st, p, &n), -1);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(p[0].t, at(12, 5));

	/* No success yet: back to the first run's slot, not before. */
	st.pause_ended = -1;
	st.last_success = -1;
	st.first_run = at(11, 55);
	ck_assert_int_eq(plan(&gj, &st, p, &n), -1);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(p[0].t, at(11, 55));
	plan_teardown();
}
END_TEST

/* run --slot: that slot only, done or not; a time that is no slot, one
 * in the future or one that does not parse is a usage error (64). */
START_TEST(plan_manual_slot)
{
	struct guard_job  gj;
	struct slot_state st;
	struct guard_slot p[10];
	size_t            n;

	plan_init(&gj, &st, "*/5 * * * *", at(12, 7));
	st.last_success = at(12, 5);
	gj.slot_arg = "2026-12-06T11:30:00Z";
	ck_assert_int_eq(plan(&gj, &st, p, &n), -1);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(p[0].t, at(11, 30));
	ck_assert_str_eq(p[0].kind, "manual");
	gj.slot_arg = "2026-12-06T11:31:00Z";
	ck_assert_int_eq(plan(&gj, &st, p, &n), EXIT_USAGE);
	gj.slot_arg = "2026-12-06T12:10:00Z";
	ck_assert_int_eq(plan(&gj, &st, p, &n), EXIT_USAGE);
	gj.slot_arg = "yesterday";
	ck_assert_int_eq(plan(&gj, &st, p, &n), EXIT_USAGE);
	plan_teardown();
}
END_TEST

/* No slot before now within the search (a clock in the year 11, nearer
 * than the search reaches to the calendar's start): 78. */
START_TEST(plan_no_slot_before_now)
{
	struct guard_job  gj;
	struct slot_state st;
	struct guard_slot p[10];
	size_t            n;

	plan_init(&gj, &st, "0 0 29 2 *", at(12, 7));
	st.now_us = (INT64_C(-62135596800) + 10 * 366 * 86400) * 1000000;
	ck_assert_int_eq(plan(&gj, &st, p, &n), EXIT_CONFIG);
	ck_assert_uint_eq(n, 0);
	plan_teardown();
}
END_TEST

static Suite *
guard_plan_suite(void)
{
	Suite *s = suite_create("guard_plan");
	TCase *tc = tcase_create("plan");

	tcase_add_test(tc, plan_latest_slot);
	tcase_add_test(tc, plan_none_past_deadline);
	tcase_add_test(tc, plan_all_backfill);
	tcase_add_test(tc, plan_manual_slot);
	tcase_add_test(tc, plan_no_slot_before_now);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(guard_plan_suite);
}
