/*
 * schedule-export.c: a schedule written for other tools: as systemd.time(7)
 * OnCalendar= expressions, and as crontab lines for a cron(8) running in
 * another zone (cronguard(1), jobs crontab; cronguard.conf(5),
 * "Schedules").
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedule.h"
#include "util.h"

#include "schedule-int.h"

/* ------------------------------------------------------- systemd.time(7) */

/* One field of a calendar event: "*", "a/b" (a, a+b, ... to the end of
 * the field), or values and "a..b" runs. */
static void
calendar_field(
    struct buf *b, uint64_t bits, int lo, int hi, const char *const *names)
{
	int v, w, first = -1, step = 0, n = 0, ok = 1;

	for (v = lo; v <= hi; v++)
		if (bits & ((uint64_t)1 << v))
			n++;
	if (n == hi - lo + 1) {
		buf_addc(b, '*');
		return;
	}
	/* An arithmetic progression that runs to the end of the field. */
	for (v = lo, w = -1; v <= hi; v++) {
		if (!(bits & ((uint64_t)1 << v)))
			continue;
		if (first == -1)
			first = v;
		else if (step == 0)
			step = v - first;
		else if (v - w != step)
			ok = 0;
		w = v;
	}
	if (names == NULL && n >= 3 && ok && w + step > hi) {
		buf_printf(b, "%d/%d", first, step);
		return;
	}
	n = 0;
	for (v = lo; v <= hi; v++) {
		if (!(bits & ((uint64_t)1 << v)))
			continue;
		for (w = v; w + 1 <= hi && (bits & ((uint64_t)1 << (w + 1)));)
			w++;
		if (n++ > 0)
			buf_addc(b, ',');
		if (names != NULL)
			buf_adds(b, names[v]);
		else
			buf_printf(b, "%d", v);
		if (w >= v + 2) {
			buf_adds(b, "..");
			if (names != NULL)
				buf_adds(b, names[w]);
			else
				buf_printf(b, "%d", w);
			v = w;
		}
	}
}

static char *
calendar_event(
    const struct schedule *s, uint32_t dom, uint32_t dow, const char *zone)
{
	static const char *const days[] = { "Sun", "Mon", "Tue", "Wed", "Thu",
		"Fri", "Sat" };
	struct buf               b;

	buf_init(&b);
	if ((dow & 0x7f) != 0x7f) {
		calendar_field(&b, dow, 0, 6, days);
		buf_addc(&b, ' ');
	}
	buf_adds(&b, "*-");
	calendar_field(&b, s->month, 1, 12, NULL);
	buf_addc(&b, '-');
	calendar_field(&b, dom, 1, 31, NULL);
	buf_addc(&b, ' ');
	calendar_field(&b, s->hour, 0, 23, NULL);
	buf_addc(&b, ':');
	calendar_field(&b, s->minute, 0, 59, NULL);
	buf_adds(&b, ":00");
	if (zone != NULL)
		buf_printf(&b, " %s", zone);
	return buf_steal(&b);
}

int
schedule_calendar(
    const struct schedule *s, const char *zone, char *out[2], const char **why)
{
	const uint32_t all_dom = 0xfffffffe, all_dow = 0x7f;
	uint32_t       dom = s->dom, dow = s->dow | s->dow_last;
	int            wd;

	/* The extensions as the days they pick from: the events cover the
	 * slots, and the slot check decides (as for jobs crontab). */
	if (s->dom_last)
		dom |= 0xf0000000; /* 28-31 */
	for (wd = 0; wd < 7; wd++)
		if (s->dow_nth[wd] != 0)
			dow |= 1u << wd;
	out[0] = out[1] = NULL;
	if (zone != NULL && strcmp(zone, "Z") == 0)
		zone = "UTC";
	if (zone != NULL && (zone[0] == '+' || zone[0] == '-')) {
		*why = "systemd names no fixed offset but UTC";
		return 0;
	}
	if (s->dom_star || s->dow_star) {
		out[0] = calendar_event(s, dom, dow, zone);
		return 1;
	}
	out[0] = calendar_event(s, dom, all_dow, zone);
	out[1] = calendar_event(s, all_dom, dow, zone);
	return 2;
}

/* ------------------------------------------------- cron lines in a zone */

/* A zone's offsets over a span: the offset at its start and each change. */
struct zone_changes {
	int64_t t[64], before[64], after[64];
	size_t  n;
	int64_t first;
};

/* The changes of z's offset in [from, to): sampled every 6 hours (no
 * zone changes twice that fast), each found to the second. */
static void
zone_changes(
    const struct tzone *z, int64_t from, int64_t to, struct zone_changes *zc)
{
	struct tzsave sv;
	int64_t       t, o, prev;

	zone_enter(z, &sv);
	zc->n = 0;
	zc->first = prev = zone_offset(z, from);
	for (t = from; t < to && zc->n < nitems(zc->t); t += 6 * 3600) {
		o = zone_offset(z, t + 6 * 3600);
		if (o == prev)
			continue;
		zc->t[zc->n] = zone_transition(z, t, t + 6 * 3600);
		zc->before[zc->n] = prev;
		zc->after[zc->n] = o;
		zc->n++;
		prev = o;
	}
	zone_leave(&sv);
}

static int64_t
zone_changes_at(const struct zone_changes *zc, int64_t t)
{
	int64_t o = zc->first;
	size_t  i;

	for (i = 0; i < zc->n && zc->t[i] <= t; i++)
		o = zc->after[i];
	return o;
}

/* A cron(5) field of bits in lo..hi: "*", else values and "a-b" runs. */
static void
cron_field(struct buf *b, uint64_t bits, int lo, int hi)
{
	int v, w, n = 0;

	for (v = lo; v <= hi && (bits & ((uint64_t)1 << v)); v++)
		;
	if (v > hi) {
		buf_addc(b, '*');
		return;
	}
	for (v = lo; v <= hi; v++) {
		if (!(bits & ((uint64_t)1 << v)))
			continue;
		for (w = v; w + 1 <= hi && (bits & ((uint64_t)1 << (w + 1)));)
			w++;
		buf_printf(b, n++ > 0 ? ",%d" : "%d", v);
		if (w > v)
			buf_printf(b, "-%d", w);
		v = w;
	}
}

/* The weekdays the day-of-week field picks from, extensions widened. */
static uint32_t
schedule_dow_cover(const struct schedule *s)
{
	uint32_t dow = s->dow | s->dow_last;
	int      wd;

	for (wd = 0; wd < 7; wd++)
		if (s->dow_nth[wd] != 0)
			dow |= 1u << wd;
	return dow;
}

/* The line that launches s's local times on a host clock dm minutes
 * behind the zone (the zone's offset less the host's): "m h dom mon dow". */
static char *
cron_line_shifted(const struct schedule *s, int64_t dm)
{
	struct buf b;
	uint64_t   mins = 0;
	uint32_t   hours = 0, dow = 0, wd_in = schedule_dow_cover(s);
	int        h, m, sh, shifts = 0, wd;
	int64_t    t;

	for (h = 0; h < 24; h++)
		for (m = 0; m < 60; m++) {
			if (!(s->hour & (1u << h)) ||
			    !(s->minute & ((uint64_t)1 << m)))
				continue;
			t = h * 60 + m - dm;
			sh = (int)floor_div(t, 1440);
			t -= (int64_t)sh * 1440;
			mins |= (uint64_t)1 << (t % 60);
			hours |= 1u << (t / 60);
			shifts |= 1 << (sh + 1); /* -1, 0, +1: bits 0-2 */
			for (wd = 0; wd < 7; wd++)
				if (wd_in & (1u << wd))
					dow |= 1u << (((wd + sh) % 7 + 7) % 7);
		}
	buf_init(&b);
	cron_field(&b, mins, 0, 59);
	buf_addc(&b, ' ');
	cron_field(&b, hours, 0, 23);
	buf_addc(&b, ' ');
	if (shifts == 2 || strcmp(s->cron_days, "* * *") == 0)
		buf_adds(&b, s->cron_days); /* the same day, or every day */
	else if (strncmp(s->cron_days, "* * ", 4) == 0) {
		/* Only weekdays: the days before or after them. */
		buf_adds(&b, "* * ");
		cron_field(&b, dow, 0, 6);
	} else
		buf_adds(&b, "* * *"); /* every day: the slot check decides */
	return buf_steal(&b);
}

/* Whether s has a time of day in local [a, b) minutes of the day. */
static bool
schedule_has_time_in(const struct schedule *s, int a, int b)
{
	int t;

	for (t = a; t < b; t++)
		if ((s->hour & (1u << (t / 60 % 24))) &&
		    (s->minute & ((uint64_t)1 << (t % 60))))
			return true;
	return false;
}

size_t
schedule_cron_lines(const struct schedule *s, const struct tzone *z,
    const struct tzone *host, int64_t from, char **lines, size_t max,
    int *covered)
{
	struct zone_changes zc, hc;
	/* Only d[0..nd) is read; zeroed so that cppcheck sees it too. */
	int64_t      d[130] = { 0 }, pts[130], dm;
	struct civil c;
	size_t       nd = 0, np = 0, i, k, n = 0;
	char        *line;
	int64_t      to = from + (int64_t)366 * 86400;

	*covered = 0;
	zone_changes(z, from, to, &zc);
	zone_changes(host, from, to, &hc);
	pts[np++] = from;
	for (i = 0; i < zc.n; i++)
		pts[np++] = zc.t[i];
	for (i = 0; i < hc.n; i++)
		pts[np++] = hc.t[i];
	/* The differences the zones take, in the order they come. */
	for (i = 0; i < np; i++) {
		dm = (zone_changes_at(&zc, pts[i]) -
		         zone_changes_at(&hc, pts[i])) /
		    60;
		for (k = 0; k < nd && d[k] != dm; k++)
			;
		if (k == nd)
			d[nd++] = dm;
	}
	if (nd == 1 && d[0] == 0)
		return 0; /* the host's clock is the zone's all year */
	for (k = 0; k < nd && n < max; k++) {
		line = cron_line_shifted(s, d[k]);
		for (i = 0; i < n && strcmp(lines[i], line) != 0; i++)
			;
		if (i < n) {
			free(line);
			continue;
		}
		if (strcmp(line + strlen(line) - 5, "* * *") == 0 &&
		    strcmp(s->cron_days, "* * *") != 0)
			*covered = 1;
		lines[n++] = line;
	}
	/* A local time in a gap is the instant the gap ends (zone_instant):
	 * launch then, on the transition's weekday of its month. */
	for (i = 0; i < zc.n && n < max; i++) {
		int a, b;

		if (zc.after[i] <= zc.before[i])
			continue;
		civil_from_secs(zc.t[i] + zc.before[i], &c);
		a = c.h * 60 + c.mi;
		b = a + (int)((zc.after[i] - zc.before[i]) / 60);
		if (!schedule_has_time_in(s, a, b))
			continue;
		civil_from_secs(zc.t[i] + zone_changes_at(&hc, zc.t[i]), &c);
		lines[n++] = xasprintf(
		    "%d %d * %d %d", c.mi, c.h, c.mo, weekday(c.y, c.mo, c.d));
		*covered = 1;
	}
	return n;
}
