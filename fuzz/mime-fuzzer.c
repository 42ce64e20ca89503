/*
 * mime-fuzzer.c: mime_build on arbitrary payload bytes, fixed options.
 *
 * Never crashes or leaks, and a message it builds cannot smuggle header
 * fields: the header lines (curl_slist entries, to which libcurl appends
 * CRLF) hold CR only as the CRLF of a fold, always followed by a space or
 * tab; no bare LF; no line over RFC 5322's 998 characters; every field
 * starts with a valid "Name:"; and the envelope carries no CR or LF.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "mime.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define MIME_FUZZ_ID "0b0f6f3e-6d55-4a43-9a49-6f7e3d1c2b10"

/* One header field as libcurl sends it ("...\r\n" appended): 0 if every
 * line ends in CRLF, continuation lines are folds and none is too long. */
static int
mime_fuzz_field(const char *f)
{
	const char *colon, *p, *line = f;

	if ((colon = strchr(f, ':')) == NULL || colon == f)
		return -1;
	for (p = f; p < colon; p++) {
		if (*p < 33 || *p > 126)
			return -1;
	}
	for (p = f; *p != '\0'; p++) {
		if (*p == '\n')
			return -1; /* LF not after CR */
		if (*p != '\r')
			continue;
		if (p[1] != '\n' || (p[2] != ' ' && p[2] != '\t'))
			return -1; /* lone CR, or CRLF not a fold */
		if (p - line > 998)
			return -1;
		p++;
		line = p + 1;
	}
	if (p - line > 998)
		return -1;
	return 0;
}

static int
mime_fuzz_check(const struct mime_msg *m)
{
	const struct curl_slist *l;

	if (m->from == NULL || strpbrk(m->from, "\r\n") != NULL)
		return -1;
	if (m->nrcpt == 0 || m->nrcpt > MIME_MAX_RCPT)
		return -1;
	for (l = m->rcpt; l != NULL; l = l->next) {
		if (strpbrk(l->data, "\r\n") != NULL)
			return -1;
	}
	for (l = m->headers; l != NULL; l = l->next) {
		if (mime_fuzz_field(l->data) != 0)
			return -1;
	}
	if (m->text == NULL && m->html == NULL)
		return -1;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct mime_opts o = {
		.from = "Reservations <noreply@example.com>",
		.message_id = MIME_FUZZ_ID,
		.date = 1795948318,
		.max_size = 10 * 1024 * 1024,
	};
	struct mime_msg *m = NULL;
	char            *errstr = NULL;

	if (mime_build((const char *)data, size, &o, &m, &errstr) != 0) {
		if (errstr == NULL || m != NULL)
			abort();
		free(errstr);
		return 0;
	}
	if (m == NULL || mime_fuzz_check(m) != 0)
		abort();
	mime_free(m);
	return 0;
}
