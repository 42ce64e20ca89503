/* check_duration.c: the duration parser and formatter. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "duration.h"
#include "schedule.h"
#include "util.h"
#include "testutil.h"

static const struct {
	const char *in;
	int64_t     ms;
} good[] = {
	{ "0", 0 },
	{ "45", 45000 },
	{ "0s", 0 },
	{ "250ms", 250 },
	{ "30s", 30000 },
	{ "5m", 300000 },
	{ "1h", 3600000 },
	{ "7d", 7 * 86400000LL },
	{ "007s", 7000 },
	{ "3650d", 3650 * 86400000LL },
	{ "315360000", 315360000000LL },
	{ "1h30m", 5400000 },
	{ "1d1h1m1s1ms", 90061001 },
	{ "2m30s", 150000 },
	{ "1s500ms", 1500 },
	{ "0h5m", 300000 },
	{ "3660d", 3660 * 86400000LL },
};

START_TEST(test_good)
{
	const char *why = NULL;
	int64_t     ms = -1;

	ck_assert_msg(duration_parse(good[_i].in, &ms, &why) == 0,
	    "\"%s\" rejected: %s", good[_i].in, why);
	ck_assert_int_eq(ms, good[_i].ms);
}
END_TEST

static const struct {
	const char *in;
	const char *why; /* a word the reason must contain */
} bad[] = {
	{ "", "empty" },
	{ "-1", "negative" },
	{ "-5s", "negative" },
	{ "1.5s", "fraction" },
	{ "10x", "unit" },
	{ " 5s", "not a number" },
	{ "5s ", "unit" },
	{ "5 s", "unit" },
	{ "+5s", "not a number" },
	{ "s", "not a number" },
	{ "5sec", "unit" },
	{ "5S", "unit" },
	{ "5ms5", "unit" },
	{ "1h1h", "largest to smallest" },
	{ "1m1h", "largest to smallest" },
	{ "30s1m", "largest to smallest" },
	{ "1h30", "unit" },
	{ "1h 30m", "unit" },
	{ "1h30m-", "unit" },
	{ "1h1.5m", "fraction" },
	{ "3660d1ms", "too large" },
	{ "3000d99999999999h", "too large" },
	{ "1d99999999999999999999ms", "too large" },
	{ "99999999999999999999s", "too large" },
	{ "99999999999999999999", "too large" },
	{ "3661d", "too large" },
	{ "316224001", "too large" },
	{ "0x10", "unit" },
};

START_TEST(test_bad)
{
	const char *why = NULL;
	int64_t     ms = 12345;

	ck_assert_msg(duration_parse(bad[_i].in, &ms, &why) == -1,
	    "\"%s\" accepted", bad[_i].in);
	ck_assert_ptr_nonnull(why);
	ck_assert_msg(strstr(why, bad[_i].why) != NULL,
	    "\"%s\": reason \"%s\" lacks \"%s\"", bad[_i].in, why, bad[_i].why);
	ck_assert_int_eq(ms, 12345); /* untouched on failure */
}
END_TEST

START_TEST(test_null)
{
	const char *why = NULL;
	int64_t     ms;

	ck_assert_int_eq(duration_parse(NULL, &ms, &why), -1);
	ck_assert_ptr_nonnull(why);
}
END_TEST

START_TEST(test_max)
{
	const char *why = NULL;
	char        s[64];
	int64_t     ms;

	/* Exactly the maximum is fine, one millisecond more is not. */
	ck_assert_int_gt(
	    snprintf(s, sizeof s, "%lldms", (long long)DURATION_MAX_MS), 0);
	ck_assert_int_eq(duration_parse(s, &ms, &why), 0);
	ck_assert_int_eq(ms, DURATION_MAX_MS);
	ck_assert_int_gt(
	    snprintf(s, sizeof s, "%lldms", (long long)DURATION_MAX_MS + 1), 0);
	ck_assert_int_eq(duration_parse(s, &ms, &why), -1);
}
END_TEST

static const struct {
	int64_t     ms;
	const char *out;
} fmt[] = {
	{ 0, "0s" },
	{ 250, "250ms" },
	{ 1000, "1s" },
	{ 1500, "1s500ms" },
	{ 30000, "30s" },
	{ 300000, "5m" },
	{ 5400000, "1h30m" },
	{ 86400000, "1d" },
	{ 90061001, "1d1h1m1s1ms" },
	{ -2000, "-2s" },
};

START_TEST(test_format)
{
	char buf[64];

	duration_format(fmt[_i].ms, buf, sizeof buf);
	ck_assert_str_eq(buf, fmt[_i].out);
}
END_TEST

START_TEST(test_format_truncates)
{
	char buf[4];

	duration_format(90061001, buf, sizeof buf);
	ck_assert_uint_lt(strlen(buf), sizeof buf);
	duration_format(90061001, buf, 0); /* must not write at all */
}
END_TEST

/* What duration_format writes reads back the same, compound forms too. */
START_TEST(test_roundtrip)
{
	static const int64_t v[] = { 250, 1000, 60000, 3600000, 86400000, 1500,
		5400000, 90061001, DURATION_MAX_MS };
	const char          *why;
	char                 buf[64];
	int64_t              ms;
	size_t               i;

	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		duration_format(v[i], buf, sizeof buf);
		ck_assert_int_eq(duration_parse(buf, &ms, &why), 0);
		ck_assert_int_eq(ms, v[i]);
	}
}
END_TEST

/* outbox enqueue --at: RFC 3339 with its offset, exactly. */
START_TEST(test_rfc3339)
{
	static const struct {
		const char *s;
		int64_t     v; /* -1: refused */
	} t[] = {
		{ "1970-01-01T00:00:00Z", 0 },
		{ "2026-12-01T18:00:00Z", 1796148000 },
		{ "2026-12-01t18:00:00z", 1796148000 },
		{ "2026-12-01 19:00:00+01:00", 1796148000 },
		{ "2026-12-01T13:30:00.999-04:30", 1796148000 },
		{ "2024-02-29T00:00:00Z", 1709164800 },
		{ "2026-02-29T00:00:00Z", -1 },
		{ "2026-12-01T24:00:00Z", -1 },
		{ "2026-13-01T00:00:00Z", -1 },
		{ "2026-12-01T18:00:00+0100", -1 },
		{ "2026-12-01T18:00:00.Z", -1 },
		{ "2026-12-01T18:00:00Zx", -1 },
		{ "tomorrow", -1 },
		{ "", -1 },
	};
	struct tzone *utc = NULL;
	char         *e = NULL;
	int64_t       v;
	size_t        i;

	/* outbox enqueue --at reads its time with tzone_parse in UTC. */
	ck_assert_int_eq(tzone_open("+00:00", &utc, &e), 0);
	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		v = -7;
		if (t[i].v < 0) {
			ck_assert_msg(tzone_parse(utc, t[i].s, &v, &e) == -1,
			    "%s accepted", t[i].s);
			ck_assert_ptr_nonnull(e);
		} else {
			ck_assert_msg(tzone_parse(utc, t[i].s, &v, &e) == 0,
			    "%s refused", t[i].s);
			ck_assert_int_eq(v, t[i].v);
		}
		free(e);
		e = NULL;
	}
	tzone_free(utc);
}
END_TEST

static Suite *
duration_suite(void)
{
	Suite *s = suite_create("duration");
	TCase *tc = tcase_create("duration");

	tcase_add_loop_test(tc, test_good, 0, sizeof good / sizeof good[0]);
	tcase_add_loop_test(tc, test_bad, 0, sizeof bad / sizeof bad[0]);
	tcase_add_test(tc, test_null);
	tcase_add_test(tc, test_max);
	tcase_add_loop_test(tc, test_format, 0, sizeof fmt / sizeof fmt[0]);
	tcase_add_test(tc, test_format_truncates);
	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_rfc3339);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(duration_suite);
}
