/* check_schedule.c: cron expressions, zones and the slot searches. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>

#include "schedule.h"
#include "testutil.h"
#include "util.h"

/* Unix seconds of a UTC time, for readable expectations. */
static int64_t
utc(int y, int mo, int d, int h, int mi)
{
	struct tm tm;

	memset(&tm, 0, sizeof tm);
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	return (int64_t)timegm(&tm);
}

static struct schedule *
sched(const char *expr)
{
	struct schedule *s = NULL;
	char            *err = NULL;

	ck_assert_msg(schedule_parse(expr, &s, &err) == 0, "%s: %s", expr,
	    err ? err : "(null)");
	ck_assert_ptr_null(err);
	return s;
}

static struct tzone *
zone(const char *name)
{
	struct tzone *z = NULL;
	char         *err = NULL;

	ck_assert_msg(tzone_open(name, &z, &err) == 0, "%s: %s", name,
	    err ? err : "(null)");
	return z;
}

static int64_t
prev(const char *expr, const char *zname, int64_t t)
{
	struct schedule *s = sched(expr);
	struct tzone    *z = zone(zname);
	int64_t          slot = -1;

	ck_assert_msg(schedule_prev(s, z, t, &slot) == 0, "%s: no prev", expr);
	schedule_free(s);
	tzone_free(z);
	return slot;
}

static int64_t
next(const char *expr, const char *zname, int64_t t)
{
	struct schedule *s = sched(expr);
	struct tzone    *z = zone(zname);
	int64_t          slot = -1;

	ck_assert_msg(schedule_next(s, z, t, &slot) == 0, "%s: no next", expr);
	schedule_free(s);
	tzone_free(z);
	return slot;
}

static int
contains(const char *expr, const char *zname, int64_t t)
{
	struct schedule *s = sched(expr);
	struct tzone    *z = zone(zname);
	int              r = schedule_contains(s, z, t);

	schedule_free(s);
	tzone_free(z);
	return r;
}

/* ------------------------------------------------------------ parsing */

static const struct {
	const char *expr;
	int64_t     at, prev, next; /* UTC */
} good[] = {
	/* 2026-12-01 is a Tuesday. */
	{ "* * * * *", 0, 0, 60 },
	{ "*/15 * * * *", 1000, 900, 1800 },
	{ "1-30/5 * * * *", 1000, 960, 1260 },
	{ "0,30 9-17 * * *", 0, -86400 + 17 * 3600 + 1800, 9 * 3600 },
	{ "0 0 1 jan *", 0, 0, 365 * 86400 },
	{ "0 0 * * SUN", 0, -4 * 86400, 3 * 86400 },
	{ "0 0 * * 7", 0, -4 * 86400, 3 * 86400 },
	{ "0 0 * * Mon-Fri", 2 * 86400, 86400, 4 * 86400 },
	{ "0 0 * Feb-mar/1 *", 0, -276 * 86400, 31 * 86400 },
	{ "@hourly", 1000, 0, 3600 },
	{ "@daily", 1000, 0, 86400 },
	{ "@midnight", 1000, 0, 86400 },
	{ "@weekly", 1000, -4 * 86400, 3 * 86400 },
	{ "@monthly", 1000, 0, 31 * 86400 },
	{ "@yearly", 1000, 0, 365 * 86400 },
	{ "@annually", 1000, 0, 365 * 86400 },
	{ "  5 4 * * *\t", 0, -86400 + 4 * 3600 + 300, 4 * 3600 + 300 },
};

START_TEST(test_good)
{
	ck_assert_int_eq(
	    prev(good[_i].expr, "UTC", good[_i].at), good[_i].prev);
	ck_assert_int_eq(
	    next(good[_i].expr, "UTC", good[_i].at), good[_i].next);
}
END_TEST

static const struct {
	const char *expr;
	const char *err;
} bad[] = {
	{ "", "expected 5 fields" },
	{ "* * * *",
	    "expected 5 fields (minute hour day-of-month month "
	    "day-of-week), not 4" },
	{ "* * * * * *", "not 6" },
	{ "60 * * * *", "minute: 60 is out of range 0-59" },
	{ "0 24 * * *", "hour: 24 is out of range 0-23" },
	{ "0 0 0 * *", "day-of-month: 0 is out of range 1-31" },
	{ "0 0 32 * *", "day-of-month: 32 is out of range 1-31" },
	{ "0 0 * 13 *", "month: 13 is out of range 1-12" },
	{ "0 0 * 0 *", "month: 0 is out of range 1-12" },
	{ "0 0 * * 8", "day-of-week: 8 is out of range 0-7" },
	{ "0 0 * foo *", "month: \"foo\" is not a number or a month name" },
	{ "0 0 * * funday",
	    "day-of-week: \"funday\" is not a number or a day "
	    "name" },
	{ "0 0 * * mond", "day-of-week: \"mond\"" },
	{ "0 mon * * *", "hour: \"mon\" is not a number" },
	{ "30-10 * * * *", "minute: range 30-10 runs backwards" },
	{ "*/0 * * * *", "minute: step \"0\" is not a number in 1-59" },
	{ "*/60 * * * *", "minute: step \"60\"" },
	{ "*/ * * * *", "minute: step \"\"" },
	{ "5/15 * * * *", "minute: a step needs a range or * before it" },
	{ "1,,2 * * * *", "minute: " },
	{ "1, * * * *", "minute: " },
	{ "1-2-3 * * * *", "minute: unexpected \"-3\"" },
	{ "-1 * * * *", "minute: \"-1\" is not a number" },
	/* Beyond cron(5): L, NL and N#K only, as one element each. */
	{ "0 0 15W * *", "day-of-month: unexpected \"W\" in \"15W\" (beyond" },
	{ "0 0 LW * *", "day-of-month: \"LW\" is not a number" },
	{ "0 0 L-3 * *", "day-of-month: \"L-3\" is not a number" },
	{ "0 0 L/2 * *", "day-of-month: \"L/2\" is not a number" },
	{ "0 0 ? * *", "day-of-month: \"?\" is not a number" },
	{ "0 0 * * L", "day-of-week: \"L\" is not a number or a day name" },
	{ "0 0 * * 1#6", "day-of-week: \"#6\": the week of the month" },
	{ "0 0 * * 1#0", "day-of-week: \"#0\"" },
	{ "0 0 * * 1#", "day-of-week: \"#\"" },
	{ "0 0 * * 1#2-3", "day-of-week: \"#2-3\"" },
	{ "0 0 * * 1-5L", "day-of-week: unexpected \"L\"" },
	{ "0 0 * * 8L", "day-of-week: 8 is out of range 0-7" },
	{ "0 L * * *", "hour: \"L\" is not a number" },
	{ "0 0 * L *", "month: \"L\" is not a number or a month name" },
	{ "0 0 */20 * 1#2",
	    "day-of-week: no selected weekday falls on a selected day" },
	{ "0 0 30 2 *",
	    "day-of-month: no selected day occurs in the selected "
	    "months" },
	{ "0 0 31 4,6,9,11 *", "day-of-month: no selected day" },
	{ "0 0 31 4 */2", "day-of-month: no selected day" },
	{ "@reboot", "@reboot has no slots" },
	{ "@fortnightly", "unknown macro \"@fortnightly\"" },
	{ "@Daily", "unknown macro" },
	{ "@daily 5", "unknown macro" },
};

START_TEST(test_bad)
{
	struct schedule *s = NULL;
	char            *err = NULL;

	ck_assert_int_eq(schedule_parse(bad[_i].expr, &s, &err), -1);
	ck_assert_ptr_null(s);
	ck_assert_ptr_nonnull(err);
	ck_assert_msg(strstr(err, bad[_i].err) != NULL, "\"%s\": got \"%s\"",
	    bad[_i].expr, err);
	free(err);
}
END_TEST

START_TEST(test_text)
{
	struct schedule *s = sched("  @daily ");
	char            *err = NULL;

	ck_assert_str_eq(schedule_text(s), "@daily");
	schedule_free(s);
	s = sched("0 1 * * mon-fri");
	ck_assert_str_eq(schedule_text(s), "0 1 * * mon-fri");
	schedule_free(s);
	/* NULL is "no expression", not a crash. */
	ck_assert_int_eq(schedule_parse(NULL, &s, &err), -1);
	ck_assert_ptr_nonnull(strstr(err, "expected 5 fields"));
	free(err);
}
END_TEST

/* A restricted day of month and day of week: either; a day field that
 * starts with '*' (even a step of it) combines by AND, as in Vixie
 * cron. */
START_TEST(test_day_or)
{
	/* 2026-11-13 is a Friday; 2026-11-01 a Sunday. */
	ck_assert_int_eq(next("0 0 13 * 5", "UTC", utc(2026, 11, 1, 0, 0)),
	    utc(2026, 11, 6, 0, 0)); /* the Friday before the 13th */
	ck_assert_int_eq(next("0 0 13 * 5", "UTC", utc(2026, 11, 10, 0, 0)),
	    utc(2026, 11, 13, 0, 0));
	ck_assert_int_eq(next("0 0 12 * 5", "UTC", utc(2026, 11, 10, 0, 0)),
	    utc(2026, 11, 12, 0, 0)); /* the 12th, a Thursday */
	/* "*" in one field: the other alone. */
	ck_assert_int_eq(next("0 0 * * 5", "UTC", utc(2026, 11, 10, 0, 0)),
	    utc(2026, 11, 13, 0, 0));
	ck_assert_int_eq(next("0 0 13 * *", "UTC", utc(2026, 11, 1, 0, 0)),
	    utc(2026, 11, 13, 0, 0));
	/* Odd days ("*" stepped by 2) AND Friday: 13 Nov is odd and a Friday;
	 * the 6th is even, so not before. */
	ck_assert_int_eq(next("0 0 */2 * 5", "UTC", utc(2026, 11, 1, 0, 0)),
	    utc(2026, 11, 13, 0, 0));
	/* "1-31" is restricted: OR with Friday, so every day. */
	ck_assert_int_eq(next("0 0 1-31 * 5", "UTC", utc(2026, 11, 1, 0, 0)),
	    utc(2026, 11, 2, 0, 0));
	/* 29 February on a Sunday: 2032. */
	ck_assert_int_eq(next("0 0 29 2 */7", "UTC", utc(2026, 12, 1, 0, 0)),
	    utc(2032, 2, 29, 0, 0));
	ck_assert_int_eq(prev("0 0 29 2 */7", "UTC", utc(2026, 12, 1, 0, 0)),
	    utc(2004, 2, 29, 0, 0));
	ck_assert_int_eq(next("0 0 29 2 *", "UTC", utc(2026, 12, 1, 0, 0)),
	    utc(2028, 2, 29, 0, 0));
}
END_TEST

/* ------------------------------------------------------------- searches */

START_TEST(test_prev_at_or_before)
{
	int64_t t = utc(2026, 12, 1, 1, 30);

	ck_assert_int_eq(prev("30 1 * * *", "UTC", t), t);
	ck_assert_int_eq(prev("30 1 * * *", "UTC", t + 59), t);
	ck_assert_int_eq(prev("30 1 * * *", "UTC", t - 1), t - 86400);
	ck_assert_int_eq(next("30 1 * * *", "UTC", t), t + 86400);
	ck_assert_int_eq(next("30 1 * * *", "UTC", t - 1), t);
	ck_assert_int_eq(contains("30 1 * * *", "UTC", t), 1);
	ck_assert_int_eq(contains("30 1 * * *", "UTC", t + 1), 0);
	ck_assert_int_eq(contains("30 1 * * *", "UTC", t + 60), 0);
}
END_TEST

/* Field-wise stepping: a rare schedule costs microseconds, not a scan of
 * every minute in 28 years. */
START_TEST(test_fast)
{
	struct schedule *s = sched("0 0 29 2 */7");
	struct tzone    *z = zone("Europe/Berlin");
	int64_t          slot, t = utc(2026, 12, 1, 0, 0);
	clock_t          c0 = clock();
	int              i;

	for (i = 0; i < 2000; i++) {
		ck_assert_int_eq(schedule_next(s, z, t + i, &slot), 0);
		ck_assert_int_eq(schedule_prev(s, z, t + i, &slot), 0);
	}
	ck_assert_msg((double)(clock() - c0) / CLOCKS_PER_SEC < 2.0,
	    "4000 searches took %.2f s",
	    (double)(clock() - c0) / CLOCKS_PER_SEC);
	schedule_free(s);
	tzone_free(z);
}
END_TEST

/* Walking a year of slots with next: strictly increasing, each one
 * contained, prev of each is itself, and nothing in between is. */
static void
walk_year(const char *expr, const char *zname, int64_t from)
{
	struct schedule *s = sched(expr);
	struct tzone    *z = zone(zname);
	int64_t          t = from, slot, p;

	while (t < from + 366 * 86400) {
		ck_assert_int_eq(schedule_next(s, z, t, &slot), 0);
		ck_assert_int_gt(slot, t);
		ck_assert_int_eq(schedule_contains(s, z, slot), 1);
		ck_assert_int_eq(schedule_prev(s, z, slot, &p), 0);
		ck_assert_int_eq(p, slot);
		ck_assert_int_eq(schedule_prev(s, z, slot - 1, &p), 0);
		ck_assert_int_le(p, t);
		t = slot;
	}
	schedule_free(s);
	tzone_free(z);
}

START_TEST(test_walk)
{
	walk_year("*/20 * * * *", "Europe/Berlin", utc(2026, 1, 1, 0, 0));
	walk_year("30 2 * * *", "America/New_York", utc(2026, 1, 1, 0, 0));
	walk_year("0 1-3 * * 0", "Europe/Berlin", utc(2026, 1, 1, 0, 0));
	walk_year("0 * * * *", "Australia/Lord_Howe", utc(2026, 1, 1, 0, 0));
}
END_TEST

/* -------------------------------------------------------------------- DST */

/* Europe/Berlin, 2026-03-29: 02:00 CET becomes 03:00 CEST (01:00Z). */
START_TEST(test_berlin_spring)
{
	int64_t gap_end = utc(2026, 3, 29, 1, 0);

	/* 02:30 does not exist: its slot is the first instant after. */
	ck_assert_int_eq(
	    next("30 2 * * *", "Europe/Berlin", gap_end - 3600), gap_end);
	ck_assert_int_eq(prev("30 2 * * *", "Europe/Berlin", gap_end), gap_end);
	ck_assert_int_eq(contains("30 2 * * *", "Europe/Berlin", gap_end), 1);
	ck_assert_int_eq(next("30 2 * * *", "Europe/Berlin", gap_end),
	    utc(2026, 3, 30, 0, 30));
	/* Every minute of the gap and 03:00 itself: one slot. */
	ck_assert_int_eq(
	    next("* 2,3 * * *", "Europe/Berlin", gap_end - 1), gap_end);
	ck_assert_int_eq(
	    next("* 2,3 * * *", "Europe/Berlin", gap_end), gap_end + 60);
	ck_assert_int_eq(
	    next("0 3 * * *", "Europe/Berlin", gap_end - 1), gap_end);
	/* Before and after, plain offsets. */
	ck_assert_int_eq(prev("30 1 * * *", "Europe/Berlin", gap_end),
	    utc(2026, 3, 29, 0, 30));
	ck_assert_int_eq(next("30 3 * * *", "Europe/Berlin", gap_end),
	    utc(2026, 3, 29, 1, 30));
}
END_TEST

/* Europe/Berlin, 2026-10-25: 03:00 CEST becomes 02:00 CET (01:00Z). */
START_TEST(test_berlin_fall)
{
	int64_t back = utc(2026, 10, 25, 1, 0);

	/* 02:30 occurs at 00:30Z and 01:30Z: one slot, the first. */
	ck_assert_int_eq(
	    next("30 2 * * *", "Europe/Berlin", back - 7200), back - 1800);
	ck_assert_int_eq(next("30 2 * * *", "Europe/Berlin", back - 1800),
	    utc(2026, 10, 26, 1, 30));
	ck_assert_int_eq(
	    contains("30 2 * * *", "Europe/Berlin", back - 1800), 1);
	ck_assert_int_eq(
	    contains("30 2 * * *", "Europe/Berlin", back + 1800), 0);
	/* In the second pass, prev is the first pass's slot, though wall
	 * time (02:40) reads earlier than 02:50 of the first pass. */
	ck_assert_int_eq(
	    prev("50 2 * * *", "Europe/Berlin", back + 2400), back - 600);
	ck_assert_int_eq(
	    prev("*/15 * * * *", "Europe/Berlin", back + 300), back - 900);
	ck_assert_int_eq(
	    next("*/15 * * * *", "Europe/Berlin", back + 300), back + 3600);
	ck_assert_int_eq(
	    next("*/15 * * * *", "Europe/Berlin", back - 900), back + 3600);
	ck_assert_int_eq(contains("*/15 * * * *", "Europe/Berlin", back), 0);
	ck_assert_int_eq(
	    contains("*/15 * * * *", "Europe/Berlin", back + 900), 0);
	/* 03:00 CET exists once. */
	ck_assert_int_eq(
	    contains("0 3 * * *", "Europe/Berlin", back + 3600), 1);
}
END_TEST

/* America/New_York, 2026-03-08 02:00 EST -> 03:00 EDT (07:00Z) and
 * 2026-11-01 02:00 EDT -> 01:00 EST (06:00Z). */
START_TEST(test_new_york)
{
	int64_t spring = utc(2026, 3, 8, 7, 0), fall = utc(2026, 11, 1, 6, 0);

	ck_assert_int_eq(
	    next("30 2 * * *", "America/New_York", spring - 3600), spring);
	ck_assert_int_eq(next("30 2 * * *", "America/New_York", spring),
	    utc(2026, 3, 9, 6, 30));
	ck_assert_int_eq(
	    next("30 1 * * *", "America/New_York", fall - 7200), fall - 1800);
	ck_assert_int_eq(next("30 1 * * *", "America/New_York", fall - 1800),
	    utc(2026, 11, 2, 6, 30));
	ck_assert_int_eq(
	    prev("30 1 * * *", "America/New_York", fall + 3000), fall - 1800);
	ck_assert_int_eq(
	    contains("30 1 * * *", "America/New_York", fall + 1800), 0);
	ck_assert_int_eq(next("0 * * * *", "America/New_York", fall - 3600),
	    fall + 3600); /* 02:00 EST; 01:00 EST is the repeat */
	/* A weekly job at midnight is unaffected. */
	ck_assert_int_eq(next("@weekly", "America/New_York", fall - 7200),
	    utc(2026, 11, 8, 5, 0));
}
END_TEST

START_TEST(test_fixed_offsets)
{
	int64_t t = utc(2026, 12, 1, 0, 0);

	ck_assert_int_eq(
	    next("30 1 * * *", "+09:00", t), utc(2026, 12, 1, 16, 30));
	ck_assert_int_eq(
	    prev("30 1 * * *", "+09:00", t), utc(2026, 11, 30, 16, 30));
	ck_assert_int_eq(
	    next("30 1 * * *", "-05:30", t), utc(2026, 12, 1, 7, 0));
	ck_assert_int_eq(next("@daily", "Z", t), t + 86400);
	ck_assert_int_eq(next("@daily", "UTC", t), t + 86400);
	ck_assert_int_eq(next("@daily", "+00:00", t), t + 86400);
}
END_TEST

/* ------------------------------------------------------------------ zones */

START_TEST(test_tzone_open_bad)
{
	static const struct {
		const char *name, *err;
	} cases[] = {
		{ "", "empty" },
		{ "Mars/Olympus_Mons",
		    "unknown time zone \"Mars/Olympus_Mons\"" },
		{ "Europe/Berlinn", "unknown time zone" },
		{ "Europe", "unknown time zone" }, /* a directory */
		{ "../etc/passwd", "not a zone name" },
		{ "/etc/localtime", "not a zone name" },
		{ "Europe//Berlin", "not a zone name" },
		{ "Europe/Berlin ", "not a zone name" },
		{ "+25:00", "an offset is +HH:MM" },
		{ "+09:60", "an offset is +HH:MM" },
		{ "+0900", "an offset is +HH:MM" },
		{ "-5", "an offset is +HH:MM" },
		{ "zone.tab", "not a zone name" },
	};
	struct tzone *z = NULL;
	char         *err = NULL;
	size_t        i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ck_assert_int_eq(tzone_open(cases[i].name, &z, &err), -1);
		ck_assert_ptr_null(z);
		ck_assert_msg(strstr(err, cases[i].err) != NULL,
		    "%s: got \"%s\"", cases[i].name, err);
		free(err);
		err = NULL;
	}
}
END_TEST

/* $TZDIR is where the zone must be, as for glibc. */
START_TEST(test_tzone_tzdir)
{
	struct tzone *z = NULL;
	char         *err = NULL;

	setenv("TZDIR", "/nonexistent", 1);
	ck_assert_int_eq(tzone_open("Europe/Berlin", &z, &err), -1);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/Europe/Berlin"));
	free(err);
	/* Fixed offsets need no tables. */
	ck_assert_int_eq(tzone_open("+09:00", &z, &err), 0);
	tzone_free(z);
	unsetenv("TZDIR");
	ck_assert_int_eq(tzone_open("Europe/Berlin", &z, &err), 0);
	ck_assert_str_eq(tzone_name(z), "Europe/Berlin");
	tzone_free(z);
}
END_TEST

/* The server's zone is taken by name, or as UTC; SYSTEM's abbreviation
 * ("EST" from TZ=America/New_York) is refused, never read as tzdata's
 * fixed EST (an hour off all summer). */
START_TEST(test_tzone_open_server)
{
	static const struct {
		const char *zone;
		int         system, ok;
	} cases[] = {
		{ "UTC", 1, 1 },
		{ "America/New_York", 1, 1 },
		{ "EST", 1, 0 },
		{ "EDT", 1, 0 },
		{ "GMT", 1, 0 },
		{ "CET", 1, 0 },
		{ NULL, 1, 0 },
		/* @@global.time_zone: the server's own tables define it. */
		{ "EST", 0, 1 },
		{ "Europe/Berlin", 0, 1 },
		{ "+01:00", 0, 1 },
		{ NULL, 0, 0 },
	};
	struct tzone *z = NULL;
	char         *err = NULL;
	size_t        i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ck_assert_int_eq(
		    tzone_open_server(cases[i].zone, cases[i].system, &z, &err),
		    cases[i].ok ? 0 : -1);
		if (cases[i].ok) {
			ck_assert_ptr_nonnull(z);
			ck_assert_ptr_null(err);
			tzone_free(z);
			z = NULL;
			continue;
		}
		ck_assert_ptr_null(z);
		ck_assert_msg(strstr(err, "timezone = \"") != NULL,
		    "case %zu: %s", i, err);
		free(err);
		err = NULL;
	}
}
END_TEST

/* TZ is the process's: each call leaves it as it found it. */
START_TEST(test_tz_restored)
{
	struct tzone *z = zone("Europe/Berlin");
	char          buf[TZONE_RFC3339_MAX];
	struct tm     tm;
	time_t        t = 1700000000;

	unsetenv("TZ");
	tzset();
	tzone_format(z, 0, buf, sizeof buf);
	ck_assert_ptr_null(getenv("TZ"));
	setenv("TZ", ":America/New_York", 1);
	tzset();
	tzone_format(z, 0, buf, sizeof buf);
	ck_assert_str_eq(getenv("TZ"), ":America/New_York");
	localtime_r(&t, &tm);
	ck_assert_int_eq(tm.tm_gmtoff, -5 * 3600);
	unsetenv("TZ");
	tzset();
	tzone_free(z);
}
END_TEST

/* A held zone is in effect until released, a switch keeps what TZ was
 * before the first, and the formats under a hold are the same. */
START_TEST(test_tzone_hold)
{
	struct tzone *b = zone("Europe/Berlin"), *n = zone("America/New_York"),
	             *f = zone("-05:30");
	struct tzone_held *h = NULL;
	char               buf[TZONE_RFC3339_MAX];

	unsetenv("TZ");
	tzset();
	h = tzone_hold(h, b);
	ck_assert_str_eq(getenv("TZ"), ":Europe/Berlin");
	tzone_format(b, utc(2026, 7, 1, 0, 30), buf, sizeof buf);
	ck_assert_str_eq(buf, "2026-07-01T02:30:00+02:00");
	ck_assert_ptr_eq(tzone_hold(h, b), h);
	ck_assert_ptr_eq(tzone_hold(h, f), h); /* a fixed offset: no TZ */
	h = tzone_hold(h, n);
	ck_assert_str_eq(getenv("TZ"), ":America/New_York");
	tzone_format(n, utc(2026, 7, 1, 0, 30), buf, sizeof buf);
	ck_assert_str_eq(buf, "2026-06-30T20:30:00-04:00");
	tzone_format(b, utc(2026, 7, 1, 0, 30), buf, sizeof buf);
	ck_assert_str_eq(buf, "2026-07-01T02:30:00+02:00");
	tzone_release(h);
	ck_assert_ptr_null(getenv("TZ"));
	/* TZ already the first zone's: the same TZ afterwards. */
	setenv("TZ", ":America/New_York", 1);
	tzset();
	h = tzone_hold(NULL, n);
	h = tzone_hold(h, b);
	ck_assert_str_eq(getenv("TZ"), ":Europe/Berlin");
	tzone_release(h);
	ck_assert_str_eq(getenv("TZ"), ":America/New_York");
	tzone_release(tzone_hold(NULL, f));
	ck_assert_str_eq(getenv("TZ"), ":America/New_York");
	unsetenv("TZ");
	tzset();
	tzone_free(b);
	tzone_free(n);
	tzone_free(f);
}
END_TEST

START_TEST(test_tzone_format)
{
	struct tzone *b = zone("Europe/Berlin"), *f = zone("-05:30"),
	             *u = zone("UTC");
	char buf[TZONE_RFC3339_MAX];

	tzone_format(b, utc(2026, 12, 1, 0, 30), buf, sizeof buf);
	ck_assert_str_eq(buf, "2026-12-01T01:30:00+01:00");
	tzone_format(b, utc(2026, 7, 1, 0, 30) + 5, buf, sizeof buf);
	ck_assert_str_eq(buf, "2026-07-01T02:30:05+02:00");
	/* Both passes of the repeated hour, told apart by the offset. */
	tzone_format(b, utc(2026, 10, 25, 0, 30), buf, sizeof buf);
	ck_assert_str_eq(buf, "2026-10-25T02:30:00+02:00");
	tzone_format(b, utc(2026, 10, 25, 1, 30), buf, sizeof buf);
	ck_assert_str_eq(buf, "2026-10-25T02:30:00+01:00");
	tzone_format(f, utc(2026, 12, 1, 0, 0), buf, sizeof buf);
	ck_assert_str_eq(buf, "2026-11-30T18:30:00-05:30");
	tzone_format(u, 0, buf, sizeof buf);
	ck_assert_str_eq(buf, "1970-01-01T00:00:00+00:00");
	tzone_format(u, -1, buf, sizeof buf);
	ck_assert_str_eq(buf, "1969-12-31T23:59:59+00:00");
	/* The first and last instants, and a buffer too short: cut. */
	tzone_format(u, -62135596800, buf, sizeof buf);
	ck_assert_str_eq(buf, "0001-01-01T00:00:00+00:00");
	tzone_format(u, 253402300799, buf, sizeof buf);
	ck_assert_str_eq(buf, "9999-12-31T23:59:59+00:00");
	tzone_format(u, 253402300800, buf, sizeof buf);
	ck_assert_str_eq(buf, "(out of range)");
	tzone_format(u, 0, buf, 8);
	ck_assert_str_eq(buf, "1970-01");
	tzone_free(b);
	tzone_free(f);
	tzone_free(u);
}
END_TEST

START_TEST(test_tzone_parse)
{
	struct tzone *b = zone("Europe/Berlin"), *n = zone("America/New_York");
	char          buf[TZONE_RFC3339_MAX], *err = NULL;
	int64_t       t;

	ck_assert_int_eq(
	    tzone_parse(b, "2026-12-01T01:30:00+01:00", &t, &err), 0);
	ck_assert_int_eq(t, utc(2026, 12, 1, 0, 30));
	ck_assert_int_eq(tzone_parse(b, "2026-12-01T00:30:00Z", &t, &err), 0);
	ck_assert_int_eq(t, utc(2026, 12, 1, 0, 30));
	ck_assert_int_eq(tzone_parse(n, "2026-12-01t00:30:00z", &t, &err), 0);
	ck_assert_int_eq(t, utc(2026, 12, 1, 0, 30));
	ck_assert_int_eq(
	    tzone_parse(b, "2026-12-01T01:30:00-05:30", &t, &err), 0);
	ck_assert_int_eq(t, utc(2026, 12, 1, 7, 0));
	/* Local times in the zone. */
	ck_assert_int_eq(tzone_parse(b, "2026-12-01 01:30", &t, &err), 0);
	ck_assert_int_eq(t, utc(2026, 12, 1, 0, 30));
	ck_assert_int_eq(tzone_parse(n, "2026-12-01T01:30:15", &t, &err), 0);
	ck_assert_int_eq(t, utc(2026, 12, 1, 6, 30) + 15);
	/* In the gap: the first instant after it; repeated: the first. */
	ck_assert_int_eq(tzone_parse(b, "2026-03-29 02:30", &t, &err), 0);
	ck_assert_int_eq(t, utc(2026, 3, 29, 1, 0));
	ck_assert_int_eq(tzone_parse(b, "2026-10-25 02:30", &t, &err), 0);
	ck_assert_int_eq(t, utc(2026, 10, 25, 0, 30));
	ck_assert_int_eq(tzone_parse(n, "2026-11-01 01:30", &t, &err), 0);
	ck_assert_int_eq(t, utc(2026, 11, 1, 5, 30));
	/* The second pass is reachable with its offset. */
	ck_assert_int_eq(
	    tzone_parse(b, "2026-10-25T02:30:00+01:00", &t, &err), 0);
	ck_assert_int_eq(t, utc(2026, 10, 25, 1, 30));
	/* What tzone_format writes, tzone_parse reads back. */
	for (t = utc(2026, 10, 24, 23, 0); t < utc(2026, 10, 25, 3, 0);
	     t += 600) {
		int64_t back;

		tzone_format(b, t, buf, sizeof buf);
		ck_assert_int_eq(tzone_parse(b, buf, &back, &err), 0);
		ck_assert_int_eq(back, t);
	}
	tzone_free(b);
	tzone_free(n);
}
END_TEST

START_TEST(test_tzone_parse_bad)
{
	static const char *const cases[] = { "", "2026-12-01",
		"2026-12-01T1:30", "2026-13-01T01:30", "2026-02-29T01:30",
		"2026-12-01T24:00", "2026-12-01T01:60", "2026-12-01T01:30:60",
		"2026-12-01T01:30+1", "2026-12-01T01:30:00+01:00x",
		"2026-12-01T01:30:00.Z", "yesterday", "2026/12/01 01:30",
		" 2026-12-01 01:30" };
	struct tzone            *z = zone("Europe/Berlin");
	char                    *err = NULL;
	int64_t                  t;
	size_t                   i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ck_assert_msg(tzone_parse(z, cases[i], &t, &err) == -1,
		    "accepted \"%s\"", cases[i]);
		ck_assert_msg(strstr(err, "expected RFC 3339") != NULL &&
		        strstr(err, "Europe/Berlin") != NULL,
		    "%s", err);
		free(err);
		err = NULL;
	}
	tzone_free(z);
}
END_TEST

/* ------------------------------------------------------------- extensions */

/* The last day of month mo of year y, at h:00 UTC, by the C library. */
static int64_t
utc_last_day(int y, int mo, int h)
{
	return utc(y + (mo == 12), mo == 12 ? 1 : mo + 1, 1, h, 0) - 86400;
}

/* The K-th (k > 0) or last (k == 0) weekday wd of y-mo at h:00 UTC, by
 * the C library's weekday (gmtime), independent of schedule.c. */
static int64_t
utc_weekday_of_month(int y, int mo, int wd, int k, int h)
{
	struct tm tm;
	time_t    t;
	int       step = k > 0 ? 86400 : -86400;

	t = (time_t)(k > 0 ? utc(y, mo, 1, h, 0) : utc_last_day(y, mo, h));
	for (;;) {
		gmtime_r(&t, &tm);
		if (tm.tm_wday == wd)
			break;
		t += step;
	}
	return (int64_t)t + (k > 1 ? (int64_t)(k - 1) * 7 * 86400 : 0);
}

/* n slots of expr in zname after t. */
static void
upcoming(const char *expr, const char *zname, int64_t t, int64_t *out, size_t n)
{
	struct schedule *s = sched(expr);
	struct tzone    *z = zone(zname);

	ck_assert_uint_eq(schedule_upcoming(s, z, t, out, n), n);
	schedule_free(s);
	tzone_free(z);
}

START_TEST(test_ext_last_day)
{
	int64_t slots[24];
	int     i;

	upcoming("0 0 L * *", "UTC", utc(2027, 1, 1, 0, 0), slots, 24);
	for (i = 0; i < 24; i++)
		ck_assert_int_eq(
		    slots[i], utc_last_day(2027 + i / 12, i % 12 + 1, 0));
	/* February across a leap year, both ways. */
	upcoming("0 0 L 2 *", "UTC", utc(2027, 1, 1, 0, 0), slots, 3);
	ck_assert_int_eq(slots[0], utc(2027, 2, 28, 0, 0));
	ck_assert_int_eq(slots[1], utc(2028, 2, 29, 0, 0));
	ck_assert_int_eq(slots[2], utc(2029, 2, 28, 0, 0));
	ck_assert_int_eq(prev("0 0 L 2 *", "UTC", utc(2028, 12, 31, 0, 0)),
	    utc(2028, 2, 29, 0, 0));
	ck_assert_int_eq(prev("0 0 L 2 *", "UTC", utc(2100, 12, 31, 0, 0)),
	    utc(2100, 2, 28, 0, 0)); /* 2100 is no leap year */
	ck_assert_int_eq(
	    contains("0 0 L 2 *", "UTC", utc(2028, 2, 28, 0, 0)), 0);
	/* A list: the 1st and the last. */
	upcoming("0 0 1,L * *", "UTC", utc(2027, 1, 1, 0, 0), slots, 3);
	ck_assert_int_eq(slots[0], utc(2027, 1, 31, 0, 0));
	ck_assert_int_eq(slots[1], utc(2027, 2, 1, 0, 0));
	ck_assert_int_eq(slots[2], utc(2027, 2, 28, 0, 0));
}
END_TEST

START_TEST(test_ext_weekdays)
{
	int64_t slots[24];
	int     i;

	upcoming("0 18 * * 5L", "UTC", utc(2027, 1, 1, 0, 0), slots, 24);
	for (i = 0; i < 24; i++)
		ck_assert_int_eq(slots[i],
		    utc_weekday_of_month(2027 + i / 12, i % 12 + 1, 5, 0, 18));
	upcoming("0 9 * * 1#2", "UTC", utc(2027, 1, 1, 0, 0), slots, 24);
	for (i = 0; i < 24; i++)
		ck_assert_int_eq(slots[i],
		    utc_weekday_of_month(2027 + i / 12, i % 12 + 1, 1, 2, 9));
	/* Names, 7 as Sunday, and a fifth week that some months lack. */
	ck_assert_int_eq(next("0 0 * * friL", "UTC", utc(2027, 1, 1, 0, 0)),
	    utc(2027, 1, 29, 0, 0));
	ck_assert_int_eq(next("0 0 * * 7#1", "UTC", utc(2027, 1, 1, 0, 0)),
	    utc(2027, 1, 3, 0, 0));
	ck_assert_int_eq(next("0 0 * * 1#5", "UTC", utc(2027, 1, 1, 0, 0)),
	    utc(2027, 3, 29, 0, 0));
	/* Both day fields restricted: either, as in cron. */
	upcoming("0 0 15 * 5L", "UTC", utc(2027, 1, 1, 0, 0), slots, 3);
	ck_assert_int_eq(slots[0], utc(2027, 1, 15, 0, 0));
	ck_assert_int_eq(slots[1], utc(2027, 1, 29, 0, 0));
	ck_assert_int_eq(slots[2], utc(2027, 2, 15, 0, 0));
	/* A stepped "*" in day-of-month: both. */
	ck_assert_int_eq(next("0 0 */2 * 1#2", "UTC", utc(2027, 1, 1, 0, 0)),
	    utc(2027, 1, 11, 0, 0));
}
END_TEST

/* Europe/Berlin: the last Sunday of March 2026 at 02:30 is in the gap,
 * and of October 2026 in the repeated hour. */
START_TEST(test_ext_berlin)
{
	int64_t slots[3];

	upcoming(
	    "30 2 * * 0L", "Europe/Berlin", utc(2026, 3, 1, 0, 0), slots, 3);
	ck_assert_int_eq(slots[0], utc(2026, 3, 29, 1, 0)); /* 03:00 CEST */
	ck_assert_int_eq(slots[1], utc(2026, 4, 26, 0, 30));
	ck_assert_int_eq(slots[2], utc(2026, 5, 31, 0, 30));
	ck_assert_int_eq(
	    next("30 2 * * sunL", "Europe/Berlin", utc(2026, 10, 1, 0, 0)),
	    utc(2026, 10, 25, 0, 30)); /* the first 02:30, CEST */
	upcoming(
	    "0 9 * * 1#2", "Europe/Berlin", utc(2026, 3, 1, 0, 0), slots, 2);
	ck_assert_int_eq(slots[0], utc(2026, 3, 9, 8, 0));
	ck_assert_int_eq(slots[1], utc(2026, 4, 13, 7, 0));
	ck_assert_int_eq(
	    next("0 0 L * *", "Europe/Berlin", utc(2026, 3, 1, 0, 0)),
	    utc(2026, 3, 30, 22, 0));
}
END_TEST

/* The cron(5) line of an extended schedule: its text widened, and it
 * matches every slot of the schedule for two years. */
START_TEST(test_ext_cron_text)
{
	static const struct {
		const char *expr, *cron;
	} cases[] = {
		{ "0 0 L * *", "0 0 28-31 * *" },
		{ "0 0 1,L 2 *", "0 0 1,28-31 2 *" },
		{ "0 18 * * 5L", "0 18 * * 5" },
		{ "0 9 * * 1#2,fri", "0 9 * * 1,fri" },
		{ "0 9 15 * friL,7#1", "0 9 15 * fri,7" },
		{ "0 9 * * 1-5", "0 9 * * 1-5" },
		{ "@daily", "@daily" },
	};
	struct schedule *s, *c;
	int64_t          slot[1];
	int64_t          t;
	size_t           i;

	for (i = 0; i < nitems(cases); i++) {
		s = sched(cases[i].expr);
		ck_assert_str_eq(schedule_cron_text(s), cases[i].cron);
		ck_assert_str_eq(schedule_text(s), cases[i].expr);
		c = sched(schedule_cron_text(s));
		t = utc(2027, 1, 1, 0, 0);
		while (t < utc(2029, 1, 1, 0, 0)) {
			struct tzone *z = zone("UTC");

			ck_assert_uint_eq(
			    schedule_upcoming(s, z, t, slot, 1), 1);
			ck_assert_msg(schedule_contains(c, z, slot[0]),
			    "%s: %s misses %lld", cases[i].expr, cases[i].cron,
			    (long long)slot[0]);
			t = slot[0];
			tzone_free(z);
		}
		schedule_free(c);
		schedule_free(s);
	}
}
END_TEST

START_TEST(test_ext_calendar)
{
	struct schedule *s = sched("0 0 L * *");
	const char      *why = NULL;
	char            *ev[2];

	ck_assert_int_eq(schedule_calendar(s, "UTC", ev, &why), 1);
	ck_assert_str_eq(ev[0], "*-*-28/1 0:0:00 UTC");
	free(ev[0]);
	schedule_free(s);
	s = sched("0 18 * * 5L");
	ck_assert_int_eq(schedule_calendar(s, NULL, ev, &why), 1);
	ck_assert_str_eq(ev[0], "Fri *-*-* 18:0:00");
	free(ev[0]);
	schedule_free(s);
}
END_TEST

static Suite *
schedule_suite(void)
{
	Suite *s = suite_create("schedule");
	TCase *tc = tcase_create("schedule");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_good, 0, sizeof good / sizeof good[0]);
	tcase_add_loop_test(tc, test_bad, 0, sizeof bad / sizeof bad[0]);
	tcase_add_test(tc, test_text);
	tcase_add_test(tc, test_day_or);
	tcase_add_test(tc, test_prev_at_or_before);
	tcase_add_test(tc, test_fast);
	tcase_add_test(tc, test_walk);
	tcase_add_test(tc, test_berlin_spring);
	tcase_add_test(tc, test_berlin_fall);
	tcase_add_test(tc, test_new_york);
	tcase_add_test(tc, test_fixed_offsets);
	tcase_add_test(tc, test_tzone_open_bad);
	tcase_add_test(tc, test_tzone_tzdir);
	tcase_add_test(tc, test_tzone_open_server);
	tcase_add_test(tc, test_tz_restored);
	tcase_add_test(tc, test_tzone_format);
	tcase_add_test(tc, test_tzone_hold);
	tcase_add_test(tc, test_tzone_parse);
	tcase_add_test(tc, test_tzone_parse_bad);
	tcase_add_test(tc, test_ext_last_day);
	tcase_add_test(tc, test_ext_weekdays);
	tcase_add_test(tc, test_ext_berlin);
	tcase_add_test(tc, test_ext_cron_text);
	tcase_add_test(tc, test_ext_calendar);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(schedule_suite);
}
