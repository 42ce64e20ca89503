/* duration.h: "250ms", "30s", "5m", "1h", "7d", "1h30m" or bare seconds. */
#ifndef CRONGUARD_DURATION_H
#define CRONGUARD_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* Largest accepted duration: 10 years, far past any sane timeout, and far
 * from int64 overflow however callers add them. */
#define DURATION_MAX_MS ((int64_t)10 * 366 * 24 * 3600 * 1000)

/*
 * Parse s into milliseconds.  Accepts an unsigned integer followed by an
 * optional unit (ms, s, m, h, d; none means seconds), or several
 * integer-unit parts from the largest unit to the smallest, each unit once
 * ("1h30m", "1d12h", "2s500ms").  Rejects negatives, fractions,
 * whitespace, trailing junk, repeated or misordered units and values over
 * DURATION_MAX_MS.
 * Returns 0, or -1 with *errstr set to a static description.
 */
int duration_parse(const char *s, int64_t *ms, const char **errstr);

/* Format ms compactly ("250ms", "30s", "5m", "1h30m") into buf: what
 * duration_parse reads back as the same value. */
void duration_format(int64_t ms, char *buf, size_t len);

#endif
