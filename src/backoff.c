/* backoff.c: retry delays and Retry-After parsing. */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#ifndef HAVE_ARC4RANDOM
#include <openssl/rand.h>
#endif

#include "backoff.h"
#include "util.h"

int64_t
backoff_delay_ms(const struct conf_outbox *c, unsigned attempts,
    int64_t retry_after_ms, double rnd)
{
	double d, max = (double)c->backoff_max_ms, j = c->backoff_jitter;

	if (attempts < 1)
		attempts = 1;
	/* pow() of a large exponent is inf, which the cap below absorbs. */
	d = (double)c->backoff_initial_ms *
	    pow(c->backoff_multiplier, (double)(attempts - 1));
	if (!isfinite(d) || d > max)
		d = max;
	if (rnd < 0.0 || rnd >= 1.0)
		rnd = 0.5;
	if (j < 0.0)
		j = 0.0;
	if (j > 1.0)
		j = 1.0;
	d *= 1.0 + j * (2.0 * rnd - 1.0);
	if (d > max)
		d = max;
	if (d < 0.0)
		d = 0.0;
	if ((int64_t)d < retry_after_ms)
		return retry_after_ms;
	return (int64_t)d;
}

double
backoff_random(void)
{
	uint32_t r;

#ifdef HAVE_ARC4RANDOM
	r = arc4random();
#else
	/* glibc < 2.36: OpenSSL's generator (0 on failure). */
	if (RAND_bytes((unsigned char *)&r, sizeof r) != 1)
		r = 0;
#endif
	return (double)(r >> 8) / (double)(1U << 24);
}

int
backoff_parse_retry_after(const char *value, time_t now, int64_t *ms)
{
	char       *v = NULL;
	size_t      len;
	long long   secs;
	const char *errstr;
	time_t      t;
	int         rc = -1;

	while (isspace((unsigned char)*value))
		value++;
	len = strlen(value);
	while (len > 0 && isspace((unsigned char)value[len - 1]))
		len--;
	if (len == 0)
		goto out;
	v = xstrndup(value, len);

	if (isdigit((unsigned char)v[0])) {
		if (parse_ll(v, 0, LLONG_MAX, &secs, &errstr) != 0) {
			if (strcmp(errstr, "too large") != 0)
				goto out;
			secs = BACKOFF_RETRY_AFTER_MAX_S;
		}
		if (secs > BACKOFF_RETRY_AFTER_MAX_S)
			secs = BACKOFF_RETRY_AFTER_MAX_S;
		*ms = secs * 1000;
		rc = 0;
		goto out;
	}

	/* curl_getdate() parses the three HTTP date forms of RFC 9110. */
	t = curl_getdate(v, NULL);
	if (t == (time_t)-1)
		goto out;
	if (t <= now)
		*ms = 0;
	else if (t - now > BACKOFF_RETRY_AFTER_MAX_S)
		*ms = (int64_t)BACKOFF_RETRY_AFTER_MAX_S * 1000;
	else
		*ms = (int64_t)(t - now) * 1000;
	rc = 0;
out:
	free(v);
	return rc;
}
