/*
 * retry-after-fuzzer.c: backoff_parse_retry_after on arbitrary bytes.
 *
 * Never crashes or leaks; an accepted value is a delay in [0, one day];
 * a value of digits only is taken as that many seconds (capped at one
 * day); the answer does not depend on surrounding whitespace; and a date
 * is never later than one day, whatever "now" (the first 4 input bytes)
 * is.
 */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backoff.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define RA_FUZZ_MAX_MS ((int64_t)BACKOFF_RETRY_AFTER_MAX_S * 1000)

/* The seconds a string of digits only means, capped; -1 otherwise. */
static int64_t
retry_after_fuzz_digits(const char *s)
{
	int64_t secs = 0;

	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		if (!isdigit((unsigned char)*s))
			return -1;
		if (secs < BACKOFF_RETRY_AFTER_MAX_S)
			secs = secs * 10 + (*s - '0');
	}
	return (secs > BACKOFF_RETRY_AFTER_MAX_S ? BACKOFF_RETRY_AFTER_MAX_S
	                                         : secs) *
	    1000;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char    *s, *padded;
	time_t   now = 1700000000;
	int64_t  ms = -1, again = -1, want;
	int      rc;
	uint32_t n;

	if (size >= 4) {
		memcpy(&n, data, sizeof n);
		now = (time_t)n;
		data += 4;
		size -= 4;
	}
	/* A header value is a C string: an embedded NUL ends it. */
	s = malloc(size + 1);
	padded = malloc(size + 6); /* "  " + s + " \r\n" + NUL */
	if (s == NULL || padded == NULL)
		goto out;
	memcpy(s, data, size);
	s[size] = '\0';
	padded[0] = ' ';
	padded[1] = '\t';
	memcpy(padded + 2, s, strlen(s));
	memcpy(padded + 2 + strlen(s), " \r\n", 4);

	rc = backoff_parse_retry_after(s, now, &ms);
	if (rc == 0 && (ms < 0 || ms > RA_FUZZ_MAX_MS))
		abort();
	if (rc != 0 && rc != -1)
		abort();
	if ((want = retry_after_fuzz_digits(s)) >= 0 && (rc != 0 || ms != want))
		abort();
	/* Whitespace around the value changes nothing (s itself may already
	 * carry some: compare only when s has none at either end). */
	if (size > 0 && !isspace((unsigned char)s[0]) && strlen(s) > 0 &&
	    !isspace((unsigned char)s[strlen(s) - 1])) {
		if (backoff_parse_retry_after(padded, now, &again) != rc ||
		    (rc == 0 && again != ms))
			abort();
	}
out:
	free(s);
	free(padded);
	return 0;
}
