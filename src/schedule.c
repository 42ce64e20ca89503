/*
 * schedule.c: cron(5) schedules and the time zones they are evaluated in
 * (cronguard.conf(5), "Schedules").
 *
 * A schedule is five bit sets.  Searches work on local civil time counted
 * in seconds as if it were UTC ("local seconds") and step field by field
 * (month, day, hour, minute), so a search costs a few hundred steps at
 * most, whatever the gap between slots.  A zone maps an instant to its
 * offset; the map from local seconds back to an instant (zone_instant)
 * is the one rule the whole file rests on: the first instant whose wall
 * clock reads the local time or later.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "schedule.h"
#include "util.h"

#include "schedule-int.h"

static const char *const field_names[] = { "minute", "hour", "day-of-month",
	"month", "day-of-week" };
static const int         field_min[] = { 0, 0, 1, 1, 0 };
static const int         field_max[] = { 59, 23, 31, 12, 7 };
static const char *const month_names[] = { "jan", "feb", "mar", "apr", "may",
	"jun", "jul", "aug", "sep", "oct", "nov", "dec" };
static const char *const day_names[] = { "sun", "mon", "tue", "wed", "thu",
	"fri", "sat" };

static const struct {
	const char *name;
	const char *expr;
} macros[] = {
	{ "@yearly", "0 0 1 1 *" },
	{ "@annually", "0 0 1 1 *" },
	{ "@monthly", "0 0 1 * *" },
	{ "@weekly", "0 0 * * 0" },
	{ "@daily", "0 0 * * *" },
	{ "@midnight", "0 0 * * *" },
	{ "@hourly", "0 * * * *" },
};

/* ------------------------------------------------------------------ zones */

void
zone_enter(const struct tzone *z, struct tzsave *sv)
{
	const char *cur;

	sv->old = NULL;
	sv->set = false;
	sv->changed = false;
	if (z->tzenv == NULL)
		return;
	cur = getenv("TZ");
	if (cur != NULL && strcmp(cur, z->tzenv) == 0)
		return;
	if (cur != NULL) {
		sv->old = xstrdup(cur);
		sv->set = true;
	}
	sv->changed = true;
	setenv("TZ", z->tzenv, 1);
	tzset();
}

void
zone_leave(struct tzsave *sv)
{
	if (!sv->changed)
		return;
	if (sv->set)
		setenv("TZ", sv->old, 1);
	else
		unsetenv("TZ");
	tzset();
	free(sv->old);
	sv->old = NULL;
}

struct tzone_held {
	char         *tzenv; /* the zone's TZ, in effect */
	struct tzsave sv;    /* TZ before the first */
};

struct tzone_held *
tzone_hold(struct tzone_held *h, const struct tzone *z)
{
	const char *cur;

	if (z == NULL || z->tzenv == NULL)
		return h; /* a fixed offset reads no TZ */
	if (h != NULL && strcmp(h->tzenv, z->tzenv) == 0)
		return h;
	if (h == NULL) {
		h = xcalloc(1, sizeof *h);
		zone_enter(z, &h->sv);
	} else {
		/* Another zone: TZ before the first is restored at the end,
		 * even when the first was already in effect then. */
		if (!h->sv.changed) {
			cur = getenv("TZ");
			h->sv.old = cur != NULL ? xstrdup(cur) : NULL;
			h->sv.set = cur != NULL;
			h->sv.changed = true;
		}
		setenv("TZ", z->tzenv, 1);
		tzset();
		free(h->tzenv);
	}
	h->tzenv = xstrdup(z->tzenv);
	return h;
}

void
tzone_release(struct tzone_held *h)
{
	if (h == NULL)
		return;
	zone_leave(&h->sv);
	free(h->tzenv);
	free(h);
}

/* The offset east of UTC in seconds at instant t (TZ entered). */
int64_t
zone_offset(const struct tzone *z, int64_t t)
{
	struct tm tm;
	time_t    tt = (time_t)t;

	if (z->tzenv == NULL)
		return z->offset;
	if (localtime_r(&tt, &tm) == NULL)
		return 0;
	return tm.tm_gmtoff;
}

/* The first instant in (a, b] with an offset other than off(a), given
 * that off(b) differs from off(a). */
int64_t
zone_transition(const struct tzone *z, int64_t a, int64_t b)
{
	int64_t oa = zone_offset(z, a), mid;

	while (b - a > 1) {
		mid = a + (b - a) / 2;
		if (zone_offset(z, mid) == oa)
			a = mid;
		else
			b = mid;
	}
	return b;
}

/*
 * The instant of local time lt (local seconds): the first instant whose
 * wall clock reads lt or later.  A time in a gap is the instant the gap
 * ends; a repeated time its first occurrence; and the map never
 * decreases.
 */
static int64_t
zone_instant(const struct tzone *z, int64_t lt)
{
	int64_t oa, ob, tr;

	if (z->tzenv == NULL)
		return lt - z->offset;
	oa = zone_offset(z, lt - ZONE_WINDOW);
	ob = zone_offset(z, lt + ZONE_WINDOW);
	if (oa == ob)
		return lt - oa;
	tr = zone_transition(z, lt - ZONE_WINDOW, lt + ZONE_WINDOW);
	ob = zone_offset(z, tr);
	if (lt < tr + oa)
		return lt - oa; /* before the change, or its first pass */
	if (lt < tr + ob)
		return tr; /* in the gap */
	return lt - ob;
}

/*
 * The latest local time whose instant is at or before t: the highest
 * wall-clock reading up to t.  That is wall(t), except in the second pass
 * through a repeated hour, where the first pass read further.
 */
static int64_t
zone_wall_high(const struct tzone *z, int64_t t)
{
	int64_t on, ob, tr;

	on = zone_offset(z, t);
	if (z->tzenv == NULL)
		return t + on;
	ob = zone_offset(z, t - ZONE_WINDOW);
	if (ob <= on)
		return t + on;
	tr = zone_transition(z, t - ZONE_WINDOW, t);
	if (tr - 1 + ob > t + on)
		return tr - 1 + ob;
	return t + on;
}

static bool
zone_name_valid(const char *name)
{
	const char *p;

	if (name[0] == '\0' || name[0] == '/' || strlen(name) > 64)
		return false;
	for (p = name; *p != '\0'; p++) {
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		        (*p >= '0' && *p <= '9') || *p == '/' || *p == '_' ||
		        *p == '-' || *p == '+'))
			return false;
		if (*p == '/' && (p[1] == '/' || p[1] == '\0'))
			return false;
	}
	return strstr(name, "..") == NULL;
}

/* "+HH:MM" or "-HH:MM": 1 and *off, else 0. */
static int
zone_parse_offset(const char *s, int32_t *off)
{
	int h, m;

	if ((s[0] != '+' && s[0] != '-') || strlen(s) != 6 || s[3] != ':')
		return 0;
	if (s[1] < '0' || s[1] > '9' || s[2] < '0' || s[2] > '9' ||
	    s[4] < '0' || s[4] > '9' || s[5] < '0' || s[5] > '9')
		return 0;
	h = (s[1] - '0') * 10 + (s[2] - '0');
	m = (s[4] - '0') * 10 + (s[5] - '0');
	if (h > 18 || m > 59 || (h == 18 && m != 0))
		return 0;
	*off = (int32_t)((h * 60 + m) * 60 * (s[0] == '-' ? -1 : 1));
	return 1;
}

/* The zone files found good so far, by path: jobs check and the status
 * page open a zone for each job, and a fleet has a handful of zones (a
 * stat, an open and a read each were half of jobs check's time in the
 * process at 1,000 jobs in one zone).  Kept for the process's life. */
static char  *zone_files_ok[16];
static size_t zone_nfiles_ok;

static int
zone_file_known(const char *path)
{
	size_t i;

	for (i = 0; i < zone_nfiles_ok; i++)
		if (strcmp(zone_files_ok[i], path) == 0)
			return 1;
	return 0;
}

/* Whether the host's tzdata has name: a TZif file under $TZDIR, else
 * /usr/share/zoneinfo (where glibc looks for ":Area/City"). */
static int
zone_file_check(const char *name, char **errstr)
{
	const char *dir = getenv("TZDIR");
	char       *path, magic[4];
	FILE       *f;
	struct stat st;
	int         ok = 0;

	if (dir == NULL || dir[0] == '\0')
		dir = "/usr/share/zoneinfo";
	path = xasprintf("%s/%s", dir, name);
	if (zone_file_known(path)) {
		free(path);
		return 0;
	}
	if (stat(path, &st) == -1 || !S_ISREG(st.st_mode)) {
		*errstr = xasprintf("unknown time zone \"%s\": no %s in the "
		                    "host's time-zone database (tzdata)",
		    name, path);
		goto out;
	}
	if ((f = fopen(path, "rb")) == NULL) {
		*errstr = xasprintf(
		    "time zone \"%s\": %s: %s", name, path, strerror(errno));
		goto out;
	}
	if (fread(magic, 1, sizeof magic, f) != sizeof magic ||
	    memcmp(magic, "TZif", 4) != 0) {
		*errstr = xasprintf(
		    "time zone \"%s\": %s is not a TZif file", name, path);
		fclose(f);
		goto out;
	}
	fclose(f);
	ok = 1;
	if (zone_nfiles_ok < nitems(zone_files_ok)) {
		zone_files_ok[zone_nfiles_ok++] = path;
		path = NULL;
	}
out:
	free(path);
	return ok ? 0 : -1;
}

int
tzone_open(const char *name, struct tzone **out, char **errstr)
{
	struct tzone *z;
	int32_t       off = 0;

	*out = NULL;
	*errstr = NULL;
	if (name == NULL || name[0] == '\0') {
		*errstr = xstrdup("time zone: empty name");
		return -1;
	}
	if (strcmp(name, "UTC") == 0 || strcmp(name, "Z") == 0 ||
	    zone_parse_offset(name, &off)) {
		z = xcalloc(1, sizeof *z);
		z->name = xstrdup(name);
		z->offset = off;
		*out = z;
		return 0;
	}
	if (name[0] == '+' || name[0] == '-') {
		*errstr = xasprintf("time zone \"%s\": an offset is +HH:MM or "
		                    "-HH:MM, at most 18:00",
		    name);
		return -1;
	}
	if (!zone_name_valid(name)) {
		*errstr = xasprintf("time zone \"%s\": not a zone name "
		                    "(Area/City, as Europe/Berlin)",
		    name);
		return -1;
	}
	if (zone_file_check(name, errstr) == -1)
		return -1;
	z = xcalloc(1, sizeof *z);
	z->name = xstrdup(name);
	z->tzenv = xasprintf(":%s", name);
	*out = z;
	return 0;
}

int
tzone_open_server(
    const char *zone, int system, struct tzone **out, char **errstr)
{
	char *err = NULL;

	*out = NULL;
	*errstr = NULL;
	if (zone == NULL || zone[0] == '\0') {
		*errstr =
		    xstrdup("the database server did not say its time "
		            "zone: set timezone = \"Area/City\" on the job");
		return -1;
	}
	if (system && strcmp(zone, "UTC") != 0 && strchr(zone, '/') == NULL) {
		*errstr = xasprintf(
		    "the database server's time_zone is SYSTEM, known only as \"%s\", an abbreviation without daylight-saving rules: set timezone = \"America/New_York\" (the server's Area/City) on the job, or the server's time_zone (SET GLOBAL time_zone = 'America/New_York' and default-time-zone in my.cnf, with its time-zone tables loaded)",
		    zone);
		return -1;
	}
	if (tzone_open(zone, out, &err) == 0)
		return 0;
	*errstr = xasprintf("the database server's time_zone: %s: set "
	                    "timezone = \"Area/City\" on the job",
	    err);
	free(err);
	return -1;
}

int
tzone_open_host(struct tzone **out, char **errstr)
{
	const char *tz = getenv("TZ");
	char        path[PATH_MAX], *p;

	*out = NULL;
	*errstr = NULL;
	if (tz != NULL && tz[0] != '\0')
		return tzone_open(tz[0] == ':' ? tz + 1 : tz, out, errstr);
	if (realpath("/etc/localtime", path) == NULL)
		return tzone_open("UTC", out, errstr); /* glibc's default */
	if ((p = strstr(path, "/zoneinfo/")) == NULL) {
		*errstr = xasprintf("the host's time zone: /etc/localtime is "
		                    "%s, not a file under a zoneinfo "
		                    "directory (set TZ)",
		    path);
		return -1;
	}
	p += strlen("/zoneinfo/");
	/* Debian's posix/ and right/ trees hold the same zones. */
	if (strncmp(p, "posix/", 6) == 0)
		p += 6;
	return tzone_open(p, out, errstr);
}

void
tzone_free(struct tzone *z)
{
	if (z == NULL)
		return;
	free(z->name);
	free(z->tzenv);
	free(z);
}

const char *
tzone_name(const struct tzone *z)
{
	return z->name;
}

/* v (0 <= v < 10^n) as n digits at p; the end. */
static char *
put_digits(char *p, int64_t v, int n)
{
	int i;

	for (i = n - 1; i >= 0; i--) {
		p[i] = (char)('0' + v % 10);
		v /= 10;
	}
	return p + n;
}

/* By hand, not snprintf: jobs check and the status page write thousands
 * (the slots missed, the strips), and snprintf was a fifth of jobs
 * check's time in the process at 1,000 jobs. */
static void
format_rfc3339(int64_t t, int64_t off, char *buf, size_t len)
{
	struct civil c;
	int64_t      a = off < 0 ? -off : off;
	char         out[TZONE_RFC3339_MAX], *p = out;

	civil_from_secs(t + off, &c);
	if (c.y < 0 || c.y > 9999 || a >= 100 * 3600) {
		snprintf(buf, len, "%04lld-%02d-%02dT%02d:%02d:%02d%c%02d:%02d",
		    (long long)c.y, c.mo, c.d, c.h, c.mi, c.s,
		    off < 0 ? '-' : '+', (int)(a / 3600), (int)(a / 60 % 60));
		return;
	}
	p = put_digits(p, c.y, 4);
	*p++ = '-';
	p = put_digits(p, c.mo, 2);
	*p++ = '-';
	p = put_digits(p, c.d, 2);
	*p++ = 'T';
	p = put_digits(p, c.h, 2);
	*p++ = ':';
	p = put_digits(p, c.mi, 2);
	*p++ = ':';
	p = put_digits(p, c.s, 2);
	*p++ = off < 0 ? '-' : '+';
	p = put_digits(p, a / 3600, 2);
	*p++ = ':';
	p = put_digits(p, a / 60 % 60, 2);
	if (len == 0)
		return;
	if ((size_t)(p - out) > len - 1)
		p = out + (len - 1); /* cut, as snprintf would */
	memcpy(buf, out, (size_t)(p - out));
	buf[p - out] = '\0';
}

void
tzone_format(const struct tzone *z, int64_t t, char *buf, size_t len)
{
	struct tzsave sv;
	int64_t       off;

	if (t < T_MIN || t > T_MAX) {
		snprintf(buf, len, "(out of range)");
		return;
	}
	zone_enter(z, &sv);
	off = zone_offset(z, t);
	zone_leave(&sv);
	format_rfc3339(t, off, buf, len);
}

const char *
tzone_utc(int64_t t, char *buf, size_t len)
{
	time_t    tt = (time_t)t;
	struct tm tm;

	if (gmtime_r(&tt, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(buf, len, "(out of range)");
	return buf;
}

/* n digits at *p into *v; advances *p. */
static int
parse_digits(const char **p, int n, int *v)
{
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if ((*p)[i] < '0' || (*p)[i] > '9')
			return 0;
		*v = *v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return 1;
}

/* The parts of "YYYY-MM-DD[T ]HH:MM[:SS][Z|+HH:MM|-HH:MM]": 1, else 0. */
static int
parse_time_text(const char *s, struct civil *c, bool *has_off, int32_t *off)
{
	const char *p = s;
	int         y;

	c->s = 0;
	*has_off = false;
	*off = 0;
	if (!parse_digits(&p, 4, &y) || *p++ != '-' ||
	    !parse_digits(&p, 2, &c->mo) || *p++ != '-' ||
	    !parse_digits(&p, 2, &c->d))
		return 0;
	if (*p != 'T' && *p != 't' && *p != ' ')
		return 0;
	p++;
	if (!parse_digits(&p, 2, &c->h) || *p++ != ':' ||
	    !parse_digits(&p, 2, &c->mi))
		return 0;
	if (*p == ':') {
		p++;
		if (!parse_digits(&p, 2, &c->s))
			return 0;
		/* Fractions of a second are read and dropped. */
		if (*p == '.') {
			if (p[1] < '0' || p[1] > '9')
				return 0;
			for (p++; *p >= '0' && *p <= '9'; p++)
				;
		}
	}
	c->y = y;
	if (y < 1 || c->mo < 1 || c->mo > 12 || c->d < 1 ||
	    c->d > month_days(c->y, c->mo) || c->h > 23 || c->mi > 59 ||
	    c->s > 59)
		return 0;
	if (*p == '\0')
		return 1;
	*has_off = true;
	if ((*p == 'Z' || *p == 'z') && p[1] == '\0')
		return 1;
	return zone_parse_offset(p, off);
}

int
tzone_parse(const struct tzone *z, const char *text, int64_t *t, char **errstr)
{
	struct civil  c;
	struct tzsave sv;
	bool          has_off;
	int32_t       off;

	*errstr = NULL;
	if (text == NULL || !parse_time_text(text, &c, &has_off, &off)) {
		*errstr =
		    xasprintf("bad time \"%s\": expected RFC 3339 with "
		              "an offset (2026-12-01T01:30:00+01:00) or a "
		              "local time YYYY-MM-DD HH:MM[:SS] in %s",
		        text == NULL ? "" : text, z->name);
		return -1;
	}
	if (has_off) {
		*t = civil_to_secs(&c) - off;
		return 0;
	}
	zone_enter(z, &sv);
	*t = zone_instant(z, civil_to_secs(&c));
	zone_leave(&sv);
	return 0;
}

int
tzone_parse_instant(
    const struct tzone *z, const char *text, int64_t *t, char **errstr)
{
	if (tzone_parse(z, text, t, errstr) != 0)
		return -1;
	if (*t < TZONE_INSTANT_MIN || *t > TZONE_INSTANT_MAX) {
		*errstr = xasprintf("bad time \"%s\": out of range "
		                    "(1970-01-01T00:00:00Z to "
		                    "2038-01-19T03:14:07Z)",
		    text);
		return -1;
	}
	return 0;
}

/* --------------------------------------------------------------- parsing */

static int
parse_name(const char **p, int field, int *v)
{
	const char *const *names;
	size_t             n, i;

	if (field == 3) {
		names = month_names;
		n = nitems(month_names);
	} else if (field == 4) {
		names = day_names;
		n = nitems(day_names);
	} else
		return 0;
	for (i = 0; i < n; i++) {
		if (strncasecmp(*p, names[i], 3) == 0) {
			*p += 3;
			*v = (int)i + (field == 3 ? 1 : 0);
			return 1;
		}
	}
	return 0;
}

/* What a day field holds beyond cron(5), and the field as cron(5) reads
 * it to cover that (cover: the extensions widened to what they pick
 * from). */
struct field_ext {
	bool       last;   /* day-of-month: L */
	uint8_t    lastwd; /* day-of-week: NL, bit N */
	uint8_t    nth[7]; /* day-of-week: N#K, bit K of nth[N] */
	bool       any;    /* one of them is there */
	struct buf cover;
};

/* Beyond cron(5), what the error messages of the day fields add. */
#define EXT_HINT \
	" (beyond cron(5), cronguard knows only L in day-of-month and NL " \
	"and N#K in day-of-week)"

/* The end of a list element at p. */
static bool
element_end(const char *p)
{
	return *p == ',' || *p == '\0';
}

/* A number or (month, day of week) a name at *p, bounded; advances *p.
 * 0 and *v, or -1 with *errstr. */
static int
parse_value(const char **p, int field, int *v, char **errstr)
{
	const char *start = *p;
	long        n = 0;

	if (**p >= '0' && **p <= '9') {
		while (**p >= '0' && **p <= '9') {
			if (n < 100000)
				n = n * 10 + (**p - '0');
			(*p)++;
		}
		if (n < field_min[field] || n > field_max[field]) {
			*errstr = xasprintf("%s: %.*s is out of range %d-%d",
			    field_names[field], (int)(*p - start), start,
			    field_min[field], field_max[field]);
			return -1;
		}
		*v = (int)n;
		return 0;
	}
	if (parse_name(p, field, v) &&
	    (!((**p >= 'a' && **p <= 'z') || (**p >= 'A' && **p <= 'Z')) ||
	        (field == 4 && (**p == 'L' || **p == 'l') &&
	            element_end(*p + 1))))
		return 0;
	/* The whole element, so that "-1" and "L-3" are named as given. */
	*p = start;
	while (!element_end(*p))
		(*p)++;
	if (field == 3 || field == 4)
		*errstr = xasprintf(
		    "%s: \"%.*s\" is not a number or a %s name%s",
		    field_names[field], (int)(*p - start), start,
		    field == 3 ? "month" : "day", field == 4 ? EXT_HINT : "");
	else
		*errstr = xasprintf("%s: \"%.*s\" is not a number%s",
		    field_names[field], (int)(*p - start), start,
		    field == 2 ? EXT_HINT : "");
	return -1;
}

/*
 * An extension at *p after the weekday wd of day-of-week: "L" (the last
 * wd of the month) or "#K" (the K-th).  1 when there is one (into *x,
 * advancing *p), 0 when there is none, -1 with *errstr.
 */
static int
parse_dow_ext(const char **p, int wd, struct field_ext *x, char **errstr)
{
	const char *s;
	int         k;

	wd %= 7; /* 7 = Sunday */
	if ((**p == 'L' || **p == 'l') && element_end(*p + 1)) {
		x->lastwd |= (uint8_t)(1u << wd);
		(*p)++;
		return 1;
	}
	if (**p != '#')
		return 0;
	s = ++(*p);
	if (*s < '1' || *s > '5' || !element_end(s + 1)) {
		while (!element_end(*p))
			(*p)++;
		*errstr = xasprintf("day-of-week: \"#%.*s\": the week of the "
		                    "month after # is 1-5",
		    (int)(*p - s), s);
		return -1;
	}
	k = *s - '0';
	x->nth[wd] |= (uint8_t)(1u << k);
	(*p)++;
	return 1;
}

/* Add element [b, e) to the cover of x, with its extension widened. */
static void
cover_add(struct field_ext *x, const char *b, const char *e, const char *as)
{
	if (x->cover.len > 0)
		buf_addc(&x->cover, ',');
	if (as != NULL)
		buf_adds(&x->cover, as);
	else
		buf_printf(&x->cover, "%.*s", (int)(e - b), b);
}

/* The step "/N" at *p of a field's element into *step (1 to the field's
 * maximum), *p after it: 0, or -1 with *errstr. */
static int
parse_step(const char **p, int field, int *step, char **errstr)
{
	const char *s = ++(*p);
	long        n = 0;

	while (**p >= '0' && **p <= '9') {
		if (n < 100000)
			n = n * 10 + (**p - '0');
		(*p)++;
	}
	if (*p == s || n < 1 || n > field_max[field]) {
		*errstr = xasprintf("%s: step \"%.*s\" is not a number in 1-%d",
		    field_names[field], (int)(*p - s), s, field_max[field]);
		return -1;
	}
	*step = (int)n;
	return 0;
}

/* One field of an expression into *bits (and a day field's extensions
 * into *x): 0, or -1 with *errstr. */
static int
parse_field(const char *text, int field, uint64_t *bits, bool *star,
    struct field_ext *x, char **errstr)
{
	const char *p = text, *b, *vend;
	int         lo, hi, step, v, ext;

	*bits = 0;
	*star = text[0] == '*';
	for (;;) {
		step = 1;
		b = p;
		if (field == 2 && (*p == 'L' || *p == 'l') &&
		    element_end(p + 1)) {
			/* The day is the month's: day_matches knows it. */
			x->last = x->any = true;
			p++;
			cover_add(x, b, p, "28-31");
			goto next;
		}
		if (*p == '*') {
			lo = field_min[field];
			hi = field_max[field];
			p++;
		} else {
			if (parse_value(&p, field, &lo, errstr) == -1)
				return -1;
			hi = lo;
			vend = p;
			if (field == 4 &&
			    (ext = parse_dow_ext(&p, lo, x, errstr)) != 0) {
				if (ext == -1)
					return -1;
				x->any = true;
				cover_add(x, b, vend, NULL);
				goto next;
			}
			if (*p == '-') {
				p++;
				if (parse_value(&p, field, &hi, errstr) == -1)
					return -1;
				if (hi < lo) {
					*errstr = xasprintf("%s: range %d-%d "
					                    "runs backwards",
					    field_names[field], lo, hi);
					return -1;
				}
			} else if (*p == '/') {
				/* cron(5) steps a range or *, not a single
				 * value ("5/15" is an error in cron). */
				*errstr = xasprintf(
				    "%s: a step needs a range "
				    "or * before it (%d-%d/...)",
				    field_names[field], lo, field_max[field]);
				return -1;
			}
		}
		if (*p == '/' && parse_step(&p, field, &step, errstr) == -1)
			return -1;
		for (v = lo; v <= hi; v += step)
			*bits |= (uint64_t)1 << v;
		cover_add(x, b, p, NULL);
next:
		if (*p == '\0')
			break;
		if (*p != ',' || p[1] == '\0') {
			*errstr = xasprintf("%s: unexpected \"%s\" in \"%s\"%s",
			    field_names[field], p, text,
			    field == 2 || field == 4 ? EXT_HINT : "");
			return -1;
		}
		p++;
	}
	if (field == 4 && (*bits & ((uint64_t)1 << 7)) != 0)
		*bits = (*bits & ~((uint64_t)1 << 7)) | 1; /* 7 = Sunday */
	return 0;
}

static bool day_matches(const struct schedule *, int64_t y, int mo, int d);

/*
 * Whether the fields can match at all: some selected day of 2000 to 2027
 * matches, a whole cycle of the Gregorian calendar's weekdays and leap
 * years (the searches look as far).  The field named is the one to fix:
 * day-of-week when it picks the days (a stepped "*" for days 1 and 21
 * with "1#2"), else day-of-month ("0 0 30 2 *").
 */
static int
schedule_check_days(const struct schedule *s, char **errstr)
{
	int y, mo, d;

	for (y = 2000; y < 2028; y++)
		for (mo = 1; mo <= 12; mo++) {
			if ((s->month & (1u << mo)) == 0)
				continue;
			for (d = 1; d <= month_days(y, mo); d++)
				if (day_matches(s, y, mo, d))
					return 0;
		}
	if (s->dom_star && !s->dow_star)
		*errstr = xstrdup("day-of-week: no selected weekday falls on a "
		                  "selected day in the selected months, the "
		                  "schedule never matches");
	else
		*errstr = xstrdup("day-of-month: no selected day occurs in "
		                  "the selected months, the schedule never "
		                  "matches");
	return -1;
}

/* text with its macro (@daily) replaced by the expression it stands
 * for: NULL with *errstr for a macro there is none of. */
static const char *
schedule_expand(const char *text, char **errstr)
{
	size_t i;

	if (text[0] != '@')
		return text;
	for (i = 0; i < nitems(macros); i++)
		if (strcmp(text, macros[i].name) == 0)
			return macros[i].expr;
	*errstr = strcmp(text, "@reboot") == 0
	    ? xstrdup("@reboot has no slots: cronguard "
	              "schedules need times")
	    : xasprintf("unknown macro \"%s\" (use @yearly, "
	                "@annually, @monthly, @weekly, @daily, "
	                "@midnight or @hourly)",
	          text);
	return NULL;
}

/* The blank-separated fields of text, the first five into fields
 * (allocated): how many there are. */
static size_t
schedule_split(const char *text, char *fields[5])
{
	const char *p, *b;
	size_t      n = 0;

	for (p = text; *p != '\0';) {
		b = p;
		if (*p == ' ' || *p == '\t') {
			p++;
			continue;
		}
		while (*p != '\0' && *p != ' ' && *p != '\t')
			p++;
		if (n < 5)
			fields[n] = xstrndup(b, (size_t)(p - b));
		n++;
	}
	return n;
}

int
schedule_parse(const char *expr, struct schedule **out, char **errstr)
{
	struct schedule *s = NULL;
	const char      *text;
	char            *fields[5] = { NULL }, *trimmed = NULL;
	uint64_t         bits[5];
	bool             star[5];
	struct field_ext ext[5];
	size_t           i, n = 0, len;
	int              rc = -1;

	memset(ext, 0, sizeof ext);
	for (i = 0; i < 5; i++)
		buf_init(&ext[i].cover);

	*out = NULL;
	*errstr = NULL;
	if (expr == NULL)
		expr = "";
	while (*expr == ' ' || *expr == '\t')
		expr++;
	len = strlen(expr);
	while (len > 0 && (expr[len - 1] == ' ' || expr[len - 1] == '\t'))
		len--;
	trimmed = xstrndup(expr, len);
	if ((text = schedule_expand(trimmed, errstr)) == NULL)
		goto out;
	n = schedule_split(text, fields);
	if (n != 5) {
		*errstr = xasprintf("expected 5 fields (minute hour "
		                    "day-of-month month day-of-week), not %zu",
		    n);
		goto out;
	}
	for (i = 0; i < 5; i++)
		if (parse_field(fields[i], (int)i, &bits[i], &star[i], &ext[i],
		        errstr) == -1)
			goto out;
	s = xcalloc(1, sizeof *s);
	s->text = xstrdup(trimmed);
	s->minute = bits[0];
	s->hour = (uint32_t)bits[1];
	s->dom = (uint32_t)bits[2];
	s->month = (uint32_t)bits[3];
	s->dow = (uint32_t)bits[4];
	s->dom_star = star[2];
	s->dow_star = star[4];
	s->dom_last = ext[2].last;
	s->dow_last = ext[4].lastwd;
	memcpy(s->dow_nth, ext[4].nth, sizeof s->dow_nth);
	if (ext[2].any || ext[4].any)
		s->cron_text = xasprintf("%s %s %s %s %s", fields[0], fields[1],
		    buf_str(&ext[2].cover), fields[3], buf_str(&ext[4].cover));
	s->cron_days = xasprintf("%s %s %s", buf_str(&ext[2].cover), fields[3],
	    buf_str(&ext[4].cover));
	if (schedule_check_days(s, errstr) == -1)
		goto out;
	*out = s;
	s = NULL;
	rc = 0;
out:
	for (i = 0; i < 5; i++) {
		free(fields[i]);
		buf_free(&ext[i].cover);
	}
	free(trimmed);
	schedule_free(s);
	return rc;
}

void
schedule_free(struct schedule *s)
{
	if (s == NULL)
		return;
	free(s->text);
	free(s->cron_text);
	free(s->cron_days);
	free(s);
}

const char *
schedule_text(const struct schedule *s)
{
	return s->text;
}

const char *
schedule_cron_text(const struct schedule *s)
{
	return s->cron_text != NULL ? s->cron_text : s->text;
}

/* -------------------------------------------------------------- searching */

static bool
day_matches(const struct schedule *s, int64_t y, int mo, int d)
{
	int  wd = weekday(y, mo, d), mdays = month_days(y, mo);
	bool dom = (s->dom & (1u << d)) != 0 || (s->dom_last && d == mdays);
	bool dow = (s->dow & (1u << wd)) != 0 ||
	    ((s->dow_last & (1u << wd)) != 0 && d + 7 > mdays) ||
	    (s->dow_nth[wd] & (1u << ((d - 1) / 7 + 1))) != 0;

	if (s->dom_star || s->dow_star)
		return dom && dow;
	return dom || dow;
}

/* The lowest set bit at or above v, or -1. */
static int
bit_at_or_above(uint64_t bits, int v, int max)
{
	for (; v <= max; v++)
		if (bits & ((uint64_t)1 << v))
			return v;
	return -1;
}

static int
bit_at_or_below(uint64_t bits, int v)
{
	for (; v >= 0; v--)
		if (bits & ((uint64_t)1 << v))
			return v;
	return -1;
}

static void
civil_next_day(struct civil *c)
{
	c->h = 0;
	c->mi = 0;
	if (++c->d > month_days(c->y, c->mo)) {
		c->d = 1;
		if (++c->mo > 12) {
			c->mo = 1;
			c->y++;
		}
	}
}

static void
civil_prev_day(struct civil *c)
{
	c->h = 23;
	c->mi = 59;
	if (--c->d < 1) {
		if (--c->mo < 1) {
			c->mo = 12;
			c->y--;
		}
		c->d = month_days(c->y, c->mo);
	}
}

/* The earliest matching local minute at or after lt: 0 and *out, or -1. */
static int
match_at_or_after(const struct schedule *s, int64_t lt, int64_t *out)
{
	struct civil c;
	int64_t      y0;
	int          v;

	civil_from_secs(lt, &c);
	if (c.s != 0) {
		c.s = 0;
		if (++c.mi == 60) {
			c.mi = 0;
			if (++c.h == 24)
				civil_next_day(&c);
		}
	}
	y0 = c.y;
	while (c.y <= y0 + SEARCH_YEARS) {
		if ((s->month & (1u << c.mo)) == 0) {
			c.d = month_days(c.y, c.mo);
			civil_next_day(&c);
			continue;
		}
		if (!day_matches(s, c.y, c.mo, c.d)) {
			civil_next_day(&c);
			continue;
		}
		if ((v = bit_at_or_above(s->hour, c.h, 23)) == -1) {
			civil_next_day(&c);
			continue;
		}
		if (v != c.h) {
			c.h = v;
			c.mi = 0;
		}
		if ((v = bit_at_or_above(s->minute, c.mi, 59)) == -1) {
			c.mi = 0;
			if (++c.h == 24)
				civil_next_day(&c);
			continue;
		}
		c.mi = v;
		*out = civil_to_secs(&c);
		return 0;
	}
	return -1;
}

/* The latest matching local minute at or before lt: 0 and *out, or -1. */
static int
match_at_or_before(const struct schedule *s, int64_t lt, int64_t *out)
{
	struct civil c;
	int64_t      y0;
	int          v;

	civil_from_secs(lt, &c);
	c.s = 0;
	y0 = c.y;
	while (c.y >= y0 - SEARCH_YEARS) {
		if ((s->month & (1u << c.mo)) == 0) {
			c.d = 1;
			civil_prev_day(&c);
			continue;
		}
		if (!day_matches(s, c.y, c.mo, c.d)) {
			civil_prev_day(&c);
			continue;
		}
		if ((v = bit_at_or_below(s->hour, c.h)) == -1) {
			civil_prev_day(&c);
			continue;
		}
		if (v != c.h) {
			c.h = v;
			c.mi = 59;
		}
		if ((v = bit_at_or_below(s->minute, c.mi)) == -1) {
			c.mi = 59;
			if (--c.h < 0)
				civil_prev_day(&c);
			continue;
		}
		c.mi = v;
		*out = civil_to_secs(&c);
		return 0;
	}
	return -1;
}

/*
 * The slots are the instants of the matching local minutes.  The map is
 * non-decreasing, so the local times whose instant is at or before t are
 * exactly those up to zone_wall_high(t): prev is the instant of the
 * latest match up to there, next that of the earliest match after it.
 */
int
schedule_prev(
    const struct schedule *s, const struct tzone *z, int64_t t, int64_t *slot)
{
	struct tzsave sv;
	int64_t       lt;
	int           rc = -1;

	if (t < T_MIN + (int64_t)(SEARCH_YEARS + 1) * 366 * 86400 || t > T_MAX)
		return -1;
	zone_enter(z, &sv);
	if (match_at_or_before(s, zone_wall_high(z, t), &lt) == 0) {
		*slot = zone_instant(z, lt);
		rc = 0;
	}
	zone_leave(&sv);
	return rc;
}

int
schedule_next(
    const struct schedule *s, const struct tzone *z, int64_t t, int64_t *slot)
{
	struct tzsave sv;
	int64_t       lt;
	int           rc = -1;

	if (t < T_MIN || t > T_MAX - (int64_t)(SEARCH_YEARS + 1) * 366 * 86400)
		return -1;
	zone_enter(z, &sv);
	if (match_at_or_after(s, zone_wall_high(z, t) + 1, &lt) == 0) {
		*slot = zone_instant(z, lt);
		rc = 0;
	}
	zone_leave(&sv);
	return rc;
}

size_t
schedule_upcoming(const struct schedule *s, const struct tzone *z, int64_t t,
    int64_t *slots, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (schedule_next(s, z, t, &slots[i]) == -1)
			break;
		t = slots[i];
	}
	return i;
}

int
schedule_contains(const struct schedule *s, const struct tzone *z, int64_t t)
{
	int64_t slot;

	return schedule_prev(s, z, t, &slot) == 0 && slot == t;
}
