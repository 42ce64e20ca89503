/*
 * output.h: the tail of a job's output.  A job's interleaved stdout and
 * stderr go into a ring that keeps only the last max bytes, and a count
 * of every byte written, so that a job printing gigabytes costs at most
 * max bytes of memory.
 */
#ifndef CRONGUARD_OUTPUT_H
#define CRONGUARD_OUTPUT_H

#include <stddef.h>

/* What becomes of a command job's output (job key output). */
enum output_mode {
	OUTPUT_INHERIT,    /* the job writes to cronguard's stdout/stderr */
	OUTPUT_CAPTURE,    /* kept, and printed after the job */
	OUTPUT_ON_FAILURE, /* kept, and printed only when the job failed */
};

/* "inherit", "capture", "on_failure", NULL: in enum output_mode's order
 * (the job key and exec --output). */
extern const char *const output_mode_names[];

#define OUTPUT_MAX_DEFAULT ((size_t)64 * 1024)
/* The run record's MEDIUMBLOB holds at most 16 MiB - 1. */
#define OUTPUT_MAX_LIMIT (((size_t)16 << 20) - 1)

struct output {
	char              *data;  /* allocated as it fills, up to max */
	size_t             cap;   /* allocated */
	size_t             max;   /* bytes kept at most */
	size_t             start; /* of the oldest byte kept, once full */
	size_t             len;   /* bytes kept */
	unsigned long long total; /* bytes written in all */
};

/* An empty ring keeping at most max (> 0) bytes; nothing allocated yet. */
void output_init(struct output *, size_t max);
/* Append n bytes; the oldest go when more than max are kept. */
void output_add(struct output *, const void *p, size_t n);
/* The kept bytes, oldest first, made contiguous in place (*len of them;
 * NULL when none).  Valid until the next output_add or output_free. */
const char *output_tail(struct output *, size_t *len);
void        output_free(struct output *);

#endif
