/* output.c: the tail of a job's output in a bounded ring. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "util.h"

const char *const output_mode_names[] = { "inherit", "capture", "on_failure",
	NULL };

void
output_init(struct output *o, size_t max)
{
	memset(o, 0, sizeof *o);
	o->max = max > 0 ? max : 1;
}

/* Grow towards max while the ring has not wrapped: a job that prints a
 * line does not cost output_max bytes. */
static void
output_grow(struct output *o, size_t need)
{
	size_t cap = o->cap > 0 ? o->cap : 4096;

	while (cap < need && cap < o->max)
		cap = cap > o->max / 2 ? o->max : cap * 2;
	if (cap > o->max)
		cap = o->max;
	if (cap > o->cap) {
		o->data = xrealloc(o->data, cap);
		o->cap = cap;
	}
}

void
output_add(struct output *o, const void *p, size_t n)
{
	const char *s = p;
	size_t      end, k;

	o->total += n;
	/* Of a write longer than the ring, only its end can be kept. */
	if (n >= o->max) {
		output_grow(o, o->max);
		memcpy(o->data, s + (n - o->max), o->max);
		o->start = 0;
		o->len = o->max;
		return;
	}
	if (o->len + n <= o->max && o->start == 0) {
		output_grow(o, o->len + n);
		memcpy(o->data + o->len, s, n);
		o->len += n;
		return;
	}
	/* Full (cap == max from here on): overwrite the oldest bytes. */
	output_grow(o, o->max);
	end = (o->start + o->len) % o->max;
	k = o->max - end < n ? o->max - end : n;
	memcpy(o->data + end, s, k);
	memcpy(o->data, s + k, n - k);
	if (o->len + n > o->max) {
		o->start = (o->start + o->len + n - o->max) % o->max;
		o->len = o->max;
	} else
		o->len += n;
}

/* Rotate left by k in place: three reversals, no second buffer. */
static void
output_reverse(char *p, size_t n)
{
	char   c;
	size_t i;

	for (i = 0; i < n / 2; i++) {
		c = p[i];
		p[i] = p[n - 1 - i];
		p[n - 1 - i] = c;
	}
}

const char *
output_tail(struct output *o, size_t *len)
{
	*len = o->len;
	if (o->len == 0)
		return NULL;
	if (o->start != 0) {
		/* start != 0 only once full: len == max == cap. */
		output_reverse(o->data, o->start);
		output_reverse(o->data + o->start, o->len - o->start);
		output_reverse(o->data, o->len);
		o->start = 0;
	}
	return o->data;
}

void
output_free(struct output *o)
{
	free(o->data);
	memset(o, 0, sizeof *o);
}
