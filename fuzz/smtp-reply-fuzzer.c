/*
 * smtp-reply-fuzzer.c: the SMTP channel's reading of a server's replies
 * (smtp_debug_cb: the last reply line for last_error, and which RCPT TO
 * the server refused) and its classification (smtp_classify), on an
 * arbitrary protocol trace.  The static functions are reached by
 * including src/channel-smtp.c.
 *
 * Input: a trace split at LF; a line starting with '>' is a command the
 * client sent (CURLINFO_HEADER_OUT), any other a server reply line
 * (CURLINFO_HEADER_IN), its line end kept.  Never crashes or leaks; the
 * kept reply and recipient are NUL-terminated within their buffers and
 * hold no control character; the refused list stays within SMTP_REFUSED
 * plus one entry; a refusal is counted only for a final 4xx/5xx line
 * after a RCPT TO; a transfer is marked to be aborted for want of AUTH
 * (noauth) only with credentials set, only at a MAIL FROM, and only
 * when no 235 followed the last EHLO/HELO; and a 5xx code with a failed
 * transfer is permanent, anything else that failed is transient.
 */
#include "../src/channel-smtp.c"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* NUL-terminated within n bytes and free of control characters. */
static void
smtp_fuzz_clean(const char *s, size_t n)
{
	const char *end = memchr(s, '\0', n);

	if (end == NULL)
		abort();
	for (; s < end; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct smtp_xfer x;
	const char      *p = (const char *)data, *end = p + size, *nl;
	char            *line;
	size_t           len;
	unsigned         before;
	int              rcpt_pending;
	bool             noauth, greeted, authed;
	long             code;

	memset(&x, 0, sizeof x);
	buf_init(&x.refused);
	/* Credentials set or not: the last input byte decides. */
	x.login = size > 0 && (data[size - 1] & 1) != 0;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		len = nl != NULL ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		/* libcurl hands over a copy that is not NUL-terminated:
		 * so does this, exactly len bytes on the heap. */
		line = malloc(len);
		if (line == NULL)
			break;
		before = x.nrefused;
		rcpt_pending = x.rcpt[0] != '\0';
		noauth = x.noauth;
		greeted = x.greeted;
		authed = x.authed;
		if (*p == '>') {
			memcpy(line, p + 1, len - 1);
			smtp_debug_cb(
			    NULL, CURLINFO_HEADER_OUT, line, len - 1, &x);
			if (x.noauth && !noauth &&
			    (!x.login || !greeted || authed || len - 1 < 10 ||
			        strncasecmp(line, "MAIL FROM:", 10) != 0))
				abort(); /* noauth without its reasons */
		} else {
			memcpy(line, p, len);
			smtp_debug_cb(NULL, CURLINFO_HEADER_IN, line, len, &x);
			if (x.noauth != noauth)
				abort(); /* only a command sets it */
			if (x.nrefused != before &&
			    (!rcpt_pending || len < 4 || line[3] != ' ' ||
			        (line[0] != '4' && line[0] != '5')))
				abort(); /* a refusal without a final 4xx/5xx */
		}
		free(line);
		smtp_fuzz_clean(x.reply, sizeof x.reply);
		smtp_fuzz_clean(x.rcpt, sizeof x.rcpt);
		if (x.refused.len > SMTP_REFUSED + 2 * SMTP_REPLY + 8)
			abort();
		p += len;
	}
	code = 0;
	if (size >= 3 && data[0] >= '1' && data[0] <= '9')
		code =
		    (data[0] - '0') * 100 + (data[1] % 10) * 10 + data[2] % 10;
	if (smtp_classify(CURLE_OK, code) != SEND_OK)
		abort();
	if (smtp_classify(CURLE_RECV_ERROR, code) !=
	    (code >= 500 && code <= 599 ? SEND_PERMANENT : SEND_RETRY))
		abort();
	buf_free(&x.refused);
	return 0;
}
