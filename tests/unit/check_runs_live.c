/*
 * check_runs_live.c: runs.c's once_per slot statement against the live
 * test server (CRONGUARD_TEST_DB_PORT), at fixed times: the DST days of
 * Europe/Berlin are one slot of 23 and 25 hours, slots of a day's part
 * and of whole days, which successful run counts, an unknown zone.
 * Needs the server's time-zone tables (scripts/testenv loads them).
 * Exits 77 (skip) without a server, a failure under CI=true.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "db.h"
#include "runs.h"
#include "testutil.h"
#include "util.h"

#define DAY_MS ((int64_t)24 * 3600 * 1000)

static struct db *live_db;
static char       live_name[64];

static void
live_setup(void)
{
	testutil_live_open("check_runs", &live_db, live_name, sizeof live_name);
}

static void
live_teardown(void)
{
	testutil_live_close(live_db, live_name);
	live_db = NULL;
}

/* The slot of job at at (UTC) in tz; fails the test on an error. */
static void
slot(const char *job, int64_t per_ms, const char *tz, const char *at,
    struct run_slot *rs)
{
	char *errstr = NULL;

	ck_assert_msg(
	    runs_slot(live_db, job, per_ms, tz, at, rs, &errstr) == DB_OK, "%s",
	    errstr);
	ck_assert_msg(rs->tz_tables,
	    "the server has no time-zone tables (mariadb-tzinfo-to-sql)");
	ck_assert_int_eq(rs->tz_unknown, 0);
}

static void
assert_slot(int64_t per_ms, const char *tz, const char *at, const char *start,
    const char *end)
{
	struct run_slot rs;

	slot("none", per_ms, tz, at, &rs);
	ck_assert_msg(strcmp(rs.start, start) == 0 && strcmp(rs.end, end) == 0,
	    "%s at %s: slot %s .. %s, expected %s .. %s", tz, at, rs.start,
	    rs.end, start, end);
	runs_slot_free(&rs);
}

static unsigned long long
run_at(const char *job, const char *started, const char *outcome)
{
	struct db_result  *r = NULL;
	char              *errstr = NULL;
	unsigned long long id;

	ck_assert_msg(db_query(live_db, &r, &errstr,
	                  "INSERT INTO cronguard_runs (job, host, pid,"
	                  " started_at, finished_at, outcome) VALUES (%s,"
	                  " 'check', 1, %s, %s, %s)",
	                  job, started, started, outcome) == DB_OK,
	    "%s", errstr);
	id = r->insert_id;
	db_result_free(r);
	return id;
}

static unsigned long long
done_at(const char *job, int64_t per_ms, const char *tz, const char *at)
{
	struct run_slot    rs;
	unsigned long long id;

	slot(job, per_ms, tz, at, &rs);
	id = rs.done_id;
	runs_slot_free(&rs);
	return id;
}

/* Spring forward (2026-03-29, 02:00 CET becomes 03:00 CEST): one slot
 * of 23 hours from local midnight; autumn (2026-10-25): 25 hours, also
 * in the hour that happens twice (02:30 CEST, then 02:30 CET).  UTC and
 * a fixed offset need no tables of their own. */
static const struct {
	const char *tz, *at, *start, *end;
} dst[] = {
	{ "Europe/Berlin", "2026-03-29 12:00:00", "2026-03-28 23:00:00",
	    "2026-03-29 22:00:00" },
	{ "Europe/Berlin", "2026-03-28 23:00:00", "2026-03-28 23:00:00",
	    "2026-03-29 22:00:00" },
	{ "Europe/Berlin", "2026-03-29 21:59:59", "2026-03-28 23:00:00",
	    "2026-03-29 22:00:00" },
	{ "Europe/Berlin", "2026-03-28 22:59:59", "2026-03-27 23:00:00",
	    "2026-03-28 23:00:00" },
	{ "Europe/Berlin", "2026-10-25 12:00:00", "2026-10-24 22:00:00",
	    "2026-10-25 23:00:00" },
	{ "Europe/Berlin", "2026-10-25 00:30:00", "2026-10-24 22:00:00",
	    "2026-10-25 23:00:00" },
	{ "Europe/Berlin", "2026-10-25 01:30:00", "2026-10-24 22:00:00",
	    "2026-10-25 23:00:00" },
	{ "UTC", "2026-03-29 12:00:00", "2026-03-29 00:00:00",
	    "2026-03-30 00:00:00" },
	{ "+05:30", "2026-03-29 12:00:00", "2026-03-28 18:30:00",
	    "2026-03-29 18:30:00" },
};

START_TEST(test_dst_days_are_one_slot)
{
	assert_slot(DAY_MS, dst[_i].tz, dst[_i].at, dst[_i].start, dst[_i].end);
}
END_TEST

START_TEST(test_parts_and_multiples_of_a_day)
{
	struct run_slot rs;

	/* 03:07 CEST, just after the jump: the quarter from 03:00. */
	assert_slot(15 * 60 * 1000, "Europe/Berlin", "2026-03-29 01:07:00",
	    "2026-03-29 01:00:00", "2026-03-29 01:15:00");
	assert_slot(6 * 3600 * 1000, "UTC", "2026-03-29 17:59:59",
	    "2026-03-29 12:00:00", "2026-03-29 18:00:00");
	/* Seven days counted from a fixed day: the same slot all week. */
	slot("none", 7 * DAY_MS, "UTC", "2026-03-29 12:00:00", &rs);
	ck_assert_str_eq(rs.end + 11, "00:00:00");
	ck_assert_str_eq(rs.start + 11, "00:00:00");
	ck_assert_msg(strcmp(rs.start, "2026-03-29 12:00:00") <= 0 &&
	        strcmp("2026-03-29 12:00:00", rs.end) < 0,
	    "%s .. %s", rs.start, rs.end);
	assert_slot(7 * DAY_MS, "UTC", rs.start, rs.start, rs.end);
	runs_slot_free(&rs);
}
END_TEST

/* Only a success that started in the slot counts, the first one. */
START_TEST(test_success_in_the_slot)
{
	const char        *tz = "Europe/Berlin";
	unsigned long long early, first;

	/* 23:59 on the 28th in Berlin: the day before. */
	early = run_at("j", "2026-03-28 22:59:00", "success");
	ck_assert_uint_ne(early, 0);
	run_at("j", "2026-03-28 23:10:00", "failure");
	ck_assert_uint_eq(done_at("j", DAY_MS, tz, "2026-03-29 12:00:00"), 0);
	first = run_at("j", "2026-03-29 00:30:00", "success");
	run_at("j", "2026-03-29 08:00:00", "success");
	run_at("other", "2026-03-29 00:00:00", "success");
	ck_assert_uint_eq(done_at("j", DAY_MS, tz, "2026-03-29 00:29:59"), 0);
	ck_assert_uint_eq(
	    done_at("j", DAY_MS, tz, "2026-03-29 00:30:00"), first);
	ck_assert_uint_eq(
	    done_at("j", DAY_MS, tz, "2026-03-29 21:59:59"), first);
	ck_assert_uint_eq(done_at("j", DAY_MS, tz, "2026-03-29 22:00:00"), 0);
	ck_assert_uint_eq(done_at("j", DAY_MS, tz, "2026-03-28 23:00:00"), 0);
	ck_assert_uint_eq(
	    done_at("j", DAY_MS, tz, "2026-03-28 22:59:30"), early);
}
END_TEST

/* jobs check's tally of one slot: the 23-hour day of Europe/Berlin's
 * spring change is [03-28 23:00, 03-29 22:00) UTC; successes in it by
 * start, the job's runs before its end, the first success after it. */
START_TEST(test_tally_of_a_dst_day)
{
	struct run_slot       rs;
	struct run_slot_tally t;
	unsigned long long    first, last, after;
	char                 *errstr = NULL;

	run_at("j", "2026-03-27 12:00:00", "failure");
	first = run_at("j", "2026-03-28 23:00:00", "success");
	run_at("j", "2026-03-29 10:00:00", "failure");
	last = run_at("j", "2026-03-29 21:59:59", "success");
	after = run_at("j", "2026-03-29 22:00:00", "success");
	run_at("other", "2026-03-29 12:00:00", "success");
	slot("j", DAY_MS, "Europe/Berlin", "2026-03-29 12:00:00", &rs);
	ck_assert_msg(runs_slot_tally(
	                  live_db, "j", rs.start, rs.end, &t, &errstr) == DB_OK,
	    "%s", errstr);
	ck_assert_int_eq(t.successes, 2);
	ck_assert_uint_eq(t.first_id, first);
	ck_assert_uint_eq(t.last_id, last);
	ck_assert_int_eq(t.had_runs, 1);
	ck_assert_uint_eq(t.caught_up_id, after);
	ck_assert_msg(t.since_end_ms > 0, "%lld", t.since_end_ms);
	runs_slot_tally_free(&t);
	/* The day before: one failure, no success, the job existed. */
	ck_assert_msg(runs_slot_tally(live_db, "j", "2026-03-27 23:00:00",
	                  rs.start, &t, &errstr) == DB_OK,
	    "%s", errstr);
	ck_assert_int_eq(t.successes, 0);
	ck_assert_int_eq(t.had_runs, 1);
	ck_assert_uint_eq(t.caught_up_id, first);
	runs_slot_tally_free(&t);
	/* Before the first run: nothing to miss. */
	ck_assert(runs_slot_tally(live_db, "j", "2026-03-25 23:00:00",
	              "2026-03-26 23:00:00", &t, &errstr) == DB_OK);
	ck_assert_int_eq(t.had_runs, 0);
	runs_slot_tally_free(&t);
	runs_slot_free(&rs);
}
END_TEST

START_TEST(test_unknown_zone)
{
	struct run_slot rs;
	char           *errstr = NULL;

	ck_assert_int_eq(runs_slot(live_db, "j", DAY_MS, "Mars/Olympus",
	                     "2026-03-29 12:00:00", &rs, &errstr),
	    DB_OK);
	ck_assert_int_eq(rs.tz_unknown, 1);
	ck_assert_int_eq(rs.tz_tables, 1);
	ck_assert_ptr_null(rs.start);
	runs_slot_free(&rs);
}
END_TEST

static void
sql(const char *text)
{
	char *errstr = NULL;

	ck_assert_msg(db_query(live_db, NULL, &errstr, "%R", text) == DB_OK,
	    "%s", errstr);
}

/* The pause in effect of each job (the own row or "*", whichever holds
 * longer, as jobctl_pause_get picks) and the end of its ended ones, from
 * the pause rows the slot states read by name. */
START_TEST(test_slot_states_pauses)
{
	const char *const jobs[] = { "a", "b", "c" };
	struct slot_state st[3];
	char             *errstr = NULL;
	size_t            i;

	sql("INSERT INTO cronguard_job_pauses (job, paused_by, until_at)"
	    " VALUES ('a', 'own', NULL), ('*', 'all', NOW(6) + INTERVAL 1 HOUR)");
	ck_assert_msg(runs_slot_states(live_db, jobs, 3, st, &errstr) == DB_OK,
	    "%s", errstr);
	ck_assert_str_eq(st[0].pause_job, "a");
	ck_assert_str_eq(st[0].paused_by, "own");
	ck_assert_ptr_null(st[0].until);
	ck_assert_str_eq(st[1].pause_job, "*");
	ck_assert_ptr_nonnull(st[1].until);
	ck_assert_str_eq(st[2].pause_job, "*");
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(st[i].pause_ended, -1);
		ck_assert_int_gt(st[i].now_us, 0);
		runs_slot_state_free(&st[i]);
	}
	/* The other way round: every job's holds longer. */
	sql("UPDATE cronguard_job_pauses SET until_at = IF(job = '*', NULL,"
	    " NOW(6) + INTERVAL 1 HOUR)");
	ck_assert(runs_slot_states(live_db, jobs, 3, st, &errstr) == DB_OK);
	ck_assert_str_eq(st[0].pause_job, "*");
	for (i = 0; i < 3; i++)
		runs_slot_state_free(&st[i]);
	/* Ended: no pause, the latest end (own or "*") kept. */
	sql("UPDATE cronguard_job_pauses SET until_at = IF(job = '*',"
	    " NOW(6) - INTERVAL 2 HOUR, NOW(6) - INTERVAL 1 HOUR)");
	sql("INSERT INTO cronguard_job_pauses (job, paused_by, until_at)"
	    " VALUES ('b', 'own', NOW(6) - INTERVAL 3 HOUR)");
	ck_assert(runs_slot_states(live_db, jobs, 3, st, &errstr) == DB_OK);
	for (i = 0; i < 3; i++)
		ck_assert_ptr_null(st[i].pause_job);
	ck_assert_int_eq(st[0].pause_ended - st[2].pause_ended, 3600);
	ck_assert_int_eq(st[1].pause_ended, st[2].pause_ended);
	ck_assert_int_gt(st[2].pause_ended, 0);
	for (i = 0; i < 3; i++)
		runs_slot_state_free(&st[i]);
	sql("DELETE FROM cronguard_job_pauses");
}
END_TEST

static Suite *
runs_live_suite(void)
{
	Suite *s = suite_create("runs_live");
	TCase *tc = tcase_create("slot");

	tcase_add_checked_fixture(tc, live_setup, live_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_dst_days_are_one_slot, 0, nitems(dst));
	tcase_add_test(tc, test_parts_and_multiples_of_a_day);
	tcase_add_test(tc, test_success_in_the_slot);
	tcase_add_test(tc, test_tally_of_a_dst_day);
	tcase_add_test(tc, test_unknown_zone);
	tcase_add_test(tc, test_slot_states_pauses);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_live_main(runs_live_suite);
}
