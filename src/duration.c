/* duration.c: "250ms", "30s", "5m", "1h", "7d" or bare seconds. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "duration.h"

static const struct {
	const char *name;
	int64_t     ms;
} duration_units[] = {
	{ "ms", 1 },
	{ "s", 1000 },
	{ "m", 60 * 1000 },
	{ "h", 3600 * 1000 },
	{ "d", 24 * 3600 * 1000 },
};

int
duration_parse(const char *s, int64_t *ms, const char **errstr)
{
	const char *p;
	int64_t     v = 0, mult = 0;
	size_t      i;

	if (s == NULL || *s == '\0') {
		*errstr = "empty";
		return -1;
	}
	if (*s == '-') {
		*errstr = "negative";
		return -1;
	}
	if (*s < '0' || *s > '9') {
		*errstr = "not a number";
		return -1;
	}
	for (p = s; *p >= '0' && *p <= '9'; p++) {
		/* Any value past the maximum is rejected, so stop there
		 * rather than risk overflow on long digit strings. */
		if (v > DURATION_MAX_MS / 10) {
			*errstr = "too large";
			return -1;
		}
		v = v * 10 + (*p - '0');
	}
	if (*p == '.' || *p == ',') {
		*errstr = "fractions are not allowed (use a smaller unit)";
		return -1;
	}
	if (*p == '\0')
		mult = 1000;
	for (i = 0; mult == 0 &&
	     i < sizeof(duration_units) / sizeof(duration_units[0]);
	     i++) {
		if (strcmp(p, duration_units[i].name) == 0)
			mult = duration_units[i].ms;
	}
	if (mult == 0) {
		*errstr = "unknown unit (use ms, s, m, h or d)";
		return -1;
	}
	if (v > DURATION_MAX_MS / mult) {
		*errstr = "too large";
		return -1;
	}
	*ms = v * mult;
	return 0;
}

void
duration_format(int64_t ms, char *buf, size_t len)
{
	static const int64_t     unit_ms[] = { 24 * 3600 * 1000, 3600 * 1000,
		    60 * 1000, 1000, 1 };
	static const char *const unit_name[] = { "d", "h", "m", "s", "ms" };
	size_t                   i, off = 0;
	uint64_t                 rest;
	int                      n;

	if (len == 0)
		return;
	buf[0] = '\0';
	if (ms == 0) {
		snprintf(buf, len, "0s");
		return;
	}
	if (ms < 0) {
		n = snprintf(buf, len, "-");
		off = (n < 0) ? 0 : (size_t)n;
		rest = (uint64_t)0 - (uint64_t)ms;
	} else
		rest = (uint64_t)ms;
	for (i = 0; i < sizeof(unit_ms) / sizeof(unit_ms[0]) && rest != 0;
	     i++) {
		if (rest < (uint64_t)unit_ms[i])
			continue;
		if (off >= len)
			break;
		n = snprintf(buf + off, len - off, "%llu%s",
		    (unsigned long long)(rest / (uint64_t)unit_ms[i]),
		    unit_name[i]);
		if (n < 0)
			break;
		off += (size_t)n;
		rest %= (uint64_t)unit_ms[i];
	}
}
