/* check_jobctl.c: the slot times of jobs ack, and the pause text. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "jobctl.h"
#include "schedule.h"
#include "testutil.h"

/* jobctl_slot_parse in zone zname, with schedule expr (NULL: none). */
static int
slot_parse(
    const char *zname, const char *expr, const char *in, char *out, char **why)
{
	struct tzone    *z = NULL;
	struct schedule *s = NULL;
	char            *err = NULL;
	int64_t          t;
	int              rc;

	ck_assert_int_eq(tzone_open(zname, &z, &err), 0);
	if (expr != NULL)
		ck_assert_int_eq(schedule_parse(expr, &s, &err), 0);
	rc = jobctl_slot_parse(z, s, in, &t, out, JOBCTL_SLOT_MAX, why);
	schedule_free(s);
	tzone_free(z);
	return rc;
}

static const struct {
	const char *in;
	const char *utc;
} good[] = {
	{ "2026-12-01 01:30", "2026-12-01 01:30:00" },
	{ "2026-12-01 01:30:59", "2026-12-01 01:30:59" },
	{ "2026-12-01T01:30:00", "2026-12-01 01:30:00" },
	{ "2026-12-01T01:30:00Z", "2026-12-01 01:30:00" },
	{ "2026-12-01T01:30:00+01:00", "2026-12-01 00:30:00" },
	{ "2026-12-01T01:30+01:00", "2026-12-01 00:30:00" },
	{ "2026-12-01T00:30:00+05:30", "2026-11-30 19:00:00" },
	{ "2026-12-31T20:00:00-05:00", "2027-01-01 01:00:00" },
	{ "2028-02-29T01:00:00+14:00", "2028-02-28 11:00:00" },
	{ "2028-02-28T23:00:00-02:00", "2028-02-29 01:00:00" },
	{ "2000-02-29 00:00", "2000-02-29 00:00:00" },
	{ "1970-01-01 00:00:00", "1970-01-01 00:00:00" },
	{ "2038-01-19 03:14:07", "2038-01-19 03:14:07" }, /* the last */
	/* tzone_parse drops a fraction of a second: slots are whole. */
	{ "2026-12-01 01:30:00.5", "2026-12-01 01:30:00" },
};

START_TEST(test_good)
{
	char  out[JOBCTL_SLOT_MAX];
	char *why = NULL;

	ck_assert_msg(slot_parse("UTC", NULL, good[_i].in, out, &why) == 0,
	    "\"%s\" rejected: %s", good[_i].in, why);
	ck_assert_str_eq(out, good[_i].utc);
}
END_TEST

static const char *const bad[] = {
	"",
	"2026-12-01",
	"2026-12-01 1:30",
	"2026-12-01  01:30",
	"2026-13-01 01:30",
	"2026-00-01 01:30",
	"2026-02-29 01:30", /* not a leap year */
	"1900-02-29 01:30",
	"2026-04-31 01:30",
	"2026-12-01 24:00",
	"2026-12-01 01:60",
	"2026-12-01 01:30:60",
	"2026-12-01 01:30 ",
	"2026-12-01T01:30:00+0100",
	"2026-12-01T01:30:00+01",
	"2026-12-01T01:30:00+24:00",
	"1970-01-01T00:30:00+01:00", /* before 1970 in UTC */
	"9999-12-31T23:00:00-02:00", /* past 9999 in UTC */
	"2038-01-19 03:14:08",       /* past TZONE_INSTANT_MAX */
	"9999-01-01T00:00:00Z",
	"tomorrow",
	"1969-12-31 23:59",
};

START_TEST(test_bad)
{
	char  out[JOBCTL_SLOT_MAX];
	char *why = NULL;

	ck_assert_msg(slot_parse("UTC", NULL, bad[_i], out, &why) == -1,
	    "\"%s\" accepted as %s", bad[_i], out);
	ck_assert_ptr_nonnull(why);
	ck_assert_msg(strstr(why, "RFC 3339") != NULL ||
	        strstr(why, "out of range") != NULL,
	    "\"%s\": %s", bad[_i], why);
	free(why);
}
END_TEST

/* The one rule for a job's slot: a local time is in the job's zone, an
 * offset says its own; jobs ack takes only a slot of the schedule. */
START_TEST(test_slot_of_schedule)
{
	char  out[JOBCTL_SLOT_MAX];
	char *why = NULL;

	ck_assert_int_eq(slot_parse("Europe/Berlin", "30 1 * * *",
	                     "2026-12-03 01:30", out, &why),
	    0);
	ck_assert_str_eq(out, "2026-12-03 00:30:00");
	ck_assert_int_eq(slot_parse("Europe/Berlin", "30 1 * * *",
	                     "2026-12-03T00:30:00Z", out, &why),
	    0);
	ck_assert_str_eq(out, "2026-12-03 00:30:00");
	ck_assert_int_eq(slot_parse("Europe/Berlin", "30 1 * * *",
	                     "2026-07-03T01:30:00+02:00", out, &why),
	    0);
	ck_assert_str_eq(out, "2026-07-02 23:30:00");
	/* 01:30 UTC is 02:30 in Berlin: no slot; nor is 07:07:07. */
	ck_assert_int_eq(slot_parse("Europe/Berlin", "30 1 * * *",
	                     "2026-12-03T01:30:00Z", out, &why),
	    -1);
	ck_assert_str_eq(why,
	    "2026-12-03T02:30:00+01:00 is no slot of \"30 1 * * *\" in "
	    "Europe/Berlin (the slots around it: 2026-12-03T01:30:00+01:00 "
	    "and 2026-12-04T01:30:00+01:00)");
	free(why);
	why = NULL;
	ck_assert_int_eq(slot_parse("Europe/Berlin", "30 1 * * *",
	                     "2026-12-03 07:07:07", out, &why),
	    -1);
	ck_assert_ptr_nonnull(strstr(why, "is no slot of"));
	free(why);
	why = NULL;
	ck_assert_int_eq(slot_parse("Europe/Berlin", "30 1 * * *",
	                     "2026-12-03 01:30:01", out, &why),
	    -1);
	free(why);
}
END_TEST

static Suite *
jobctl_suite(void)
{
	Suite *s = suite_create("jobctl");
	TCase *tc = tcase_create("jobctl");

	tcase_add_loop_test(tc, test_good, 0, sizeof good / sizeof good[0]);
	tcase_add_loop_test(tc, test_bad, 0, sizeof bad / sizeof bad[0]);
	tcase_add_test(tc, test_slot_of_schedule);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(jobctl_suite);
}
