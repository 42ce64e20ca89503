/*
 * schedule-int.h: what schedule.c (parsing, zones, searching) and
 * schedule-export.c (a schedule written for systemd and for cron in a
 * zone) share; no other module includes it.
 */
#ifndef CRONGUARD_SCHEDULE_INT_H
#define CRONGUARD_SCHEDULE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "schedule.h"

struct schedule {
	char    *text;
	uint64_t minute; /* bits 0-59 */
	uint32_t hour;   /* bits 0-23 */
	uint32_t dom;    /* bits 1-31 */
	uint32_t month;  /* bits 1-12 */
	uint32_t dow;    /* bits 0-6, Sunday 0 (7 folded into 0) */
	/* A day field that starts with '*' (Vixie cron's DOM_STAR and
	 * DOW_STAR): when either is set, a day matches both fields;
	 * otherwise either. */
	bool dom_star, dow_star;
	/* The extensions beyond cron(5): L in day-of-month, NL (the last
	 * weekday N of the month: bit N) and N#K (the K-th weekday N: bit
	 * K of dow_nth[N]) in day-of-week. */
	bool    dom_last;
	uint8_t dow_last;
	uint8_t dow_nth[7];
	/* An expression cron(5) reads that fires at every slot and more
	 * (L as 28-31, NL and N#K as N); NULL when text itself is one. */
	char *cron_text;
	/* Its day fields, "dom month dow" (macros expanded). */
	char *cron_days;
};

struct tzone {
	char   *name;
	char   *tzenv;  /* ":Area/City" for TZ; NULL: a fixed offset */
	int32_t offset; /* seconds east of UTC, fixed offsets only */
};

/* Instants the evaluator accepts: years 1 to 9999, where RFC 3339 can
 * write them and the civil arithmetic is exact. */
#define T_MIN ((int64_t)-62135596800)
#define T_MAX ((int64_t)253402300799)
/* How far a search looks: a date such as 29 February on a given day of
 * the week recurs within 28 years. */
#define SEARCH_YEARS 30
/* The span around an instant in which a zone is assumed to change its
 * offset at most once: more than any offset (UTC-12 to UTC+14) and any
 * transition (Samoa skipped 24 hours in 2011). */
#define ZONE_WINDOW ((int64_t)26 * 3600)

/* ------------------------------------------------------------ civil time */

struct civil {
	int64_t y;
	int     mo, d, h, mi, s; /* 1-12, 1-31, 0-23, 0-59, 0-59 */
};

static inline int64_t
floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

static inline bool
is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static inline int
month_days(int64_t y, int mo)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30,
		31 };

	return mo == 2 && is_leap(y) ? 29 : days[mo - 1];
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil). */
static inline int64_t
days_from_civil(int64_t y, int mo, int d)
{
	int64_t era, yoe, doy, doe;

	y -= mo <= 2;
	era = floor_div(y, 400);
	yoe = y - era * 400;
	doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static inline void
civil_from_days(int64_t z, struct civil *c)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = floor_div(z, 146097);
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	c->d = (int)(doy - (153 * mp + 2) / 5 + 1);
	c->mo = (int)(mp < 10 ? mp + 3 : mp - 9);
	c->y = yoe + era * 400 + (c->mo <= 2);
}

static inline void
civil_from_secs(int64_t s, struct civil *c)
{
	int64_t days = floor_div(s, 86400), rem = s - days * 86400;

	civil_from_days(days, c);
	c->h = (int)(rem / 3600);
	c->mi = (int)(rem / 60 % 60);
	c->s = (int)(rem % 60);
}

static inline int64_t
civil_to_secs(const struct civil *c)
{
	return days_from_civil(c->y, c->mo, c->d) * 86400 + c->h * 3600 +
	    c->mi * 60 + c->s;
}

/* 0 = Sunday. */
static inline int
weekday(int64_t y, int mo, int d)
{
	int64_t w = (days_from_civil(y, mo, d) + 4) % 7;

	return (int)(w < 0 ? w + 7 : w);
}

/* ------------------------------------------------------------------ zones */

/*
 * TZ is process-wide state: the offset of a named zone is read with TZ
 * set to the zone for the duration of one public call, then restored.
 * cronguard evaluates schedules from one thread only.
 */
struct tzsave {
	char *old;
	bool  set, changed;
};

void zone_enter(const struct tzone *, struct tzsave *);
void zone_leave(struct tzsave *);
/* The offset east of UTC in seconds at instant t (TZ entered). */
int64_t zone_offset(const struct tzone *, int64_t t);
/* The first instant in (a, b] with an offset other than off(a), given
 * that off(b) differs from off(a). */
int64_t zone_transition(const struct tzone *, int64_t a, int64_t b);

#endif
