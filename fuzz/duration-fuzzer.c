/*
 * duration-fuzzer.c: duration_parse on arbitrary bytes.
 *
 * Never crashes; an accepted value lies in [0, DURATION_MAX_MS]; and
 * when duration_format writes a single number and unit ("90s", not the
 * compound "1m30s" that duration_parse does not take), parsing that gives
 * the same value back.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Whether s is digits then letters only: one number, one unit. */
static int
duration_fuzz_single(const char *s)
{
	size_t n = strspn(s, "0123456789");

	return n > 0 &&
	    strspn(s + n, "abcdefghijklmnopqrstuvwxyz") == strlen(s + n);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char       *s, out[64];
	const char *errstr = NULL;
	int64_t     ms = -1, again = -1;

	/* The parser takes C strings: an embedded NUL ends the input. */
	s = malloc(size + 1);
	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	if (duration_parse(s, &ms, &errstr) != 0) {
		if (errstr == NULL)
			abort(); /* failure without a reason */
		goto out;
	}
	if (ms < 0 || ms > DURATION_MAX_MS)
		abort();

	duration_format(ms, out, sizeof out);
	if (duration_fuzz_single(out)) {
		if (duration_parse(out, &again, &errstr) != 0 || again != ms)
			abort();
	}

out:
	free(s);
	return 0;
}
