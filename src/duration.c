/* duration.c: "250ms", "30s", "5m", "1h", "7d", "1h30m" or bare seconds. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "duration.h"

/* Largest first: the formatter walks it in order, and the parser requires
 * the parts of a compound duration in this order. */
static const struct {
	const char *name;
	int64_t     ms;
} duration_units[] = {
	{ "d", 24 * 3600 * 1000 },
	{ "h", 3600 * 1000 },
	{ "m", 60 * 1000 },
	{ "s", 1000 },
	{ "ms", 1 },
};
#define DURATION_NUNITS (sizeof duration_units / sizeof duration_units[0])

/* The unit at *p (longest match: "ms" before "m"), or DURATION_NUNITS. */
static size_t
duration_unit(const char *p, size_t *len)
{
	size_t i, best = DURATION_NUNITS, n;

	*len = 0;
	for (i = 0; i < DURATION_NUNITS; i++) {
		n = strlen(duration_units[i].name);
		if (n > *len && strncmp(p, duration_units[i].name, n) == 0) {
			best = i;
			*len = n;
		}
	}
	return best;
}

int
duration_parse(const char *s, int64_t *ms, const char **errstr)
{
	const char *p;
	int64_t     v, total = 0;
	size_t      u, last = 0, len;
	int         parts = 0;

	if (s == NULL || *s == '\0') {
		*errstr = "empty";
		return -1;
	}
	if (*s == '-') {
		*errstr = "negative";
		return -1;
	}
	for (p = s; *p != '\0'; p += len) {
		if (*p < '0' || *p > '9') {
			*errstr = parts == 0
			    ? "not a number"
			    : "unknown unit (use ms, s, m, h or d)";
			return -1;
		}
		for (v = 0; *p >= '0' && *p <= '9'; p++) {
			/* Any value past the maximum is rejected, so stop
			 * there rather than risk overflow. */
			if (v > DURATION_MAX_MS / 10) {
				*errstr = "too large";
				return -1;
			}
			v = v * 10 + (*p - '0');
		}
		if (*p == '.' || *p == ',') {
			*errstr = "fractions are not allowed (use a smaller "
			          "unit)";
			return -1;
		}
		if (*p == '\0' && parts == 0) {
			u = 3; /* bare seconds */
			len = 0;
		} else if ((u = duration_unit(p, &len)) == DURATION_NUNITS) {
			*errstr = "unknown unit (use ms, s, m, h or d)";
			return -1;
		}
		if (parts > 0 && u <= last) {
			*errstr = "units of a compound duration must go from "
			          "largest to smallest, each once (1h30m)";
			return -1;
		}
		if (v > (DURATION_MAX_MS - total) / duration_units[u].ms) {
			*errstr = "too large";
			return -1;
		}
		total += v * duration_units[u].ms;
		last = u;
		parts++;
	}
	*ms = total;
	return 0;
}

void
duration_format(int64_t ms, char *buf, size_t len)
{
	size_t   i, off = 0;
	uint64_t rest;
	int      n;

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
	/* Every unit's ms is > 0; once rest is 0 each unit is skipped (no
	 * early exit on rest: cppcheck took that test for a zero divisor). */
	for (i = 0; i < DURATION_NUNITS; i++) {
		if (rest < (uint64_t)duration_units[i].ms)
			continue;
		if (off >= len)
			break;
		n = snprintf(buf + off, len - off, "%llu%s",
		    (unsigned long long)(rest / (uint64_t)duration_units[i].ms),
		    duration_units[i].name);
		if (n < 0)
			break;
		off += (size_t)n;
		rest %= (uint64_t)duration_units[i].ms;
	}
}
