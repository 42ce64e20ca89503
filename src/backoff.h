/* backoff.h: retry delays with exponential growth, jitter, a cap, and the
 * server's Retry-After as a floor. */
#ifndef CRONGUARD_BACKOFF_H
#define CRONGUARD_BACKOFF_H

#include <stdint.h>
#include <time.h>

#include "conf.h"

/*
 * The delay before the next attempt of a message that has now failed
 * attempts times (attempts >= 1): initial * multiplier^(attempts - 1),
 * capped at max, then spread by +-jitter (a fraction) with rnd in [0, 1)
 * and capped at max again so the cap holds.  The result is at least
 * retry_after_ms, even past the cap: the server asked for it.
 */
int64_t backoff_delay_ms(const struct conf_outbox *, unsigned attempts,
    int64_t retry_after_ms, double rnd);

/* A uniform random number in [0, 1) for backoff_delay_ms. */
double backoff_random(void);

/*
 * Parse a Retry-After header value (RFC 9110 10.2.3): delay-seconds or an
 * HTTP-date, relative to now (unix seconds).  Surrounding whitespace is
 * allowed.  A date in the past gives 0.  Returns 0 with *ms set, or -1 when
 * the value is neither.  Seconds are capped at one day: a server asking
 * for more is misconfigured, and the backoff cap still applies to later
 * attempts.
 */
#define BACKOFF_RETRY_AFTER_MAX_S (24 * 3600)
int backoff_parse_retry_after(const char *value, time_t now, int64_t *ms);

#endif
