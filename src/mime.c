/*
 * mime.c: mail payload JSON to SMTP envelope and MIME message.
 *
 * libcurl builds the body (parts, boundary, base64 and quoted-printable
 * encoders, "MIME-Version") but sends header fields as given and has no
 * RFC 2047 encoder, so the header fields are built here: addresses
 * checked, display names and the subject encoded, long lists folded, and
 * every value refused that carries CR or LF.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>
#include <openssl/evp.h>

#include "mime.h"
#include "util.h"

/* RFC 2047: an encoded-word is at most 75 characters; "=?UTF-8?B?" and
 * "?=" leave 63, so 60 base64 characters carry 45 bytes. */
#define MIME_WORD_BYTES 45
/* Fold address lists before a line passes this (RFC 5322 "SHOULD" 78). */
#define MIME_LINE 78
/* Printable ASCII text longer than this is encoded so that it folds. */
#define MIME_RAW_MAX 900
/* Bytes per part for part headers and boundaries, in the size estimate. */
#define MIME_PART_OVERHEAD 200

/* Header fields the payload's "headers" may not set: the message and
 * its MIME structure are built from the other keys. */
static const char *const mime_reserved[] = {
	"Bcc",
	"Cc",
	"Content-Transfer-Encoding",
	"Content-Type",
	"Date",
	"From",
	"Message-ID",
	"MIME-Version",
	"Received",
	"Reply-To",
	"Return-Path",
	"Sender",
	"Subject",
	"To",
};

static const char *const mime_keys[] = {
	"bcc",
	"cc",
	"headers",
	"html",
	"reply_to",
	"subject",
	"text",
	"to",
};

static int
mime_is_atext(int c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return 1;
	return c != '\0' && strchr("!#$%&'*+-/=?^_`{|}~", c) != NULL;
}

static int
mime_has_crlf(const char *s)
{
	return strpbrk(s, "\r\n") != NULL;
}

/* Any control character but tab (CR and LF are checked first, with their
 * own message). */
static int
mime_has_ctl(const char *s)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
			return 1;
	}
	return 0;
}

static int
mime_is_printable_ascii(const char *s)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p < 0x20 || *p > 0x7e)
			return 0;
	}
	return 1;
}

static void
mime_add_word(struct buf *b, const unsigned char *s, size_t len)
{
	unsigned char out[4 * ((MIME_WORD_BYTES + 2) / 3) + 1];

	EVP_EncodeBlock(out, s, (int)len);
	buf_adds(b, "=?UTF-8?B?");
	buf_adds(b, (const char *)out);
	buf_adds(b, "?=");
}

/* As mime_encode_text, with used characters already on the first line
 * ("Subject: "): its first word is shortened to keep that line within
 * MIME_LINE. */
static char *
mime_encode_after(const char *s, size_t used)
{
	const unsigned char *p = (const unsigned char *)s, *start;
	struct buf           b;
	size_t               n, len, max = MIME_WORD_BYTES;

	if (mime_is_printable_ascii(s) && strstr(s, "=?") == NULL &&
	    strlen(s) <= MIME_RAW_MAX)
		return xstrdup(s);

	/* 12 characters of "=?UTF-8?B?" and "?=", 4 of base64 per 3 bytes;
	 * at least one 4-byte character fits. */
	if (used + 12 + 4 * (MIME_WORD_BYTES / 3) > MIME_LINE)
		max = used + 12 + 8 <= MIME_LINE
		    ? 3 * ((MIME_LINE - used - 12) / 4)
		    : 6;
	buf_init(&b);
	while (*p != '\0') {
		start = p;
		len = 0;
		while (*p != '\0') {
			if ((n = utf8_seq_len(p, SIZE_MAX)) == 0)
				n = 1; /* callers pass valid UTF-8 */
			if (len + n > max)
				break;
			len += n;
			p += n;
		}
		if (start != (const unsigned char *)s)
			buf_adds(&b, "\r\n ");
		mime_add_word(&b, start, len);
		max = MIME_WORD_BYTES;
	}
	return buf_steal(&b);
}

char *
mime_encode_text(const char *s)
{
	return mime_encode_after(s, 0);
}

int
mime_field_name_valid(const char *name)
{
	const unsigned char *p;

	if (*name == '\0' || strlen(name) > 76)
		return 0;
	for (p = (const unsigned char *)name; *p != '\0'; p++) {
		if (*p < 33 || *p > 126 || *p == ':')
			return 0;
	}
	return 1;
}

static int
mime_dot_atom_valid(const char *s, size_t len, int domain)
{
	size_t i, label = 0;

	if (len == 0 || s[0] == '.' || s[len - 1] == '.')
		return 0;
	for (i = 0; i < len; i++) {
		if (s[i] == '.') {
			if (s[i - 1] == '.' || (domain && s[i - 1] == '-'))
				return 0;
			label = 0;
			continue;
		}
		if (domain) {
			if (!((s[i] >= 'a' && s[i] <= 'z') ||
			        (s[i] >= 'A' && s[i] <= 'Z') ||
			        (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
				return 0;
			if (s[i] == '-' && label == 0)
				return 0;
			if (++label > 63)
				return 0;
		} else if (!mime_is_atext((unsigned char)s[i]))
			return 0;
	}
	return !(domain && s[len - 1] == '-');
}

/* An addr-spec with a dot-atom local part and a host name domain (no
 * quoted local parts, no address literals, no SMTPUTF8). */
static int
mime_addr_valid(const char *s, size_t len)
{
	const char *at;

	if (len > 254 || (at = memrchr(s, '@', len)) == NULL)
		return 0;
	if (at - s > 64)
		return 0;
	return mime_dot_atom_valid(s, (size_t)(at - s), 0) &&
	    mime_dot_atom_valid(at + 1, len - (size_t)(at - s) - 1, 1);
}

static int
mime_is_phrase(const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s != ' ' && !mime_is_atext((unsigned char)*s))
			return 0;
	}
	return 1;
}

static void
mime_add_display(struct buf *b, const char *name)
{
	char *enc;

	/* A long name is encoded, which folds, so no line passes 998. */
	if (strlen(name) > MIME_RAW_MAX / 4)
		goto encode;
	if (mime_is_phrase(name)) {
		buf_adds(b, name);
		return;
	}
	if (mime_is_printable_ascii(name) && strstr(name, "=?") == NULL) {
		buf_addc(b, '"');
		for (; *name != '\0'; name++) {
			if (*name == '"' || *name == '\\')
				buf_addc(b, '\\');
			buf_addc(b, *name);
		}
		buf_addc(b, '"');
		return;
	}
encode:
	enc = mime_encode_text(name);
	buf_adds(b, enc);
	free(enc);
}

/* The display name of "Name <addr>" without quotes and escapes: 0 with
 * *out allocated, or -1 with *why set. */
static int
mime_unquote(const char *s, size_t len, char **out, const char **why)
{
	struct buf b;
	size_t     i;

	if (len > 0 && (s[0] == '"') != (len >= 2 && s[len - 1] == '"')) {
		*why = "unbalanced quotes in display name";
		return -1;
	}
	if (len < 2 || s[0] != '"') {
		*out = xstrndup(s, len);
		return 0;
	}
	buf_init(&b);
	for (i = 1; i < len - 1; i++) {
		if (s[i] == '\\' && i + 1 < len - 1)
			i++;
		else if (s[i] == '"') {
			*why = "unbalanced quotes in display name";
			buf_free(&b);
			return -1;
		}
		buf_addc(&b, s[i]);
	}
	*out = buf_steal(&b);
	return 0;
}

int
mime_parse_mailbox(const char *s, char **addr, char **field, const char **why)
{
	const char *lt, *start, *end;
	char       *name = NULL;
	size_t      len;
	struct buf  b;

	*addr = *field = NULL;
	if (mime_has_crlf(s)) {
		*why = "CR or LF in address (header injection)";
		return -1;
	}
	if (mime_has_ctl(s) || !utf8_valid(s)) {
		*why = "control character or invalid UTF-8 in address";
		return -1;
	}
	start = s;
	while (*start == ' ' || *start == '\t')
		start++;
	end = start + strlen(start);
	while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (end == start) {
		*why = "empty address";
		return -1;
	}

	if (end[-1] == '>') {
		if ((lt = memrchr(start, '<', (size_t)(end - start))) == NULL) {
			*why = "malformed address";
			return -1;
		}
		len = (size_t)(end - lt - 2);
		if (!mime_addr_valid(lt + 1, len)) {
			*why = "malformed address";
			return -1;
		}
		*addr = xstrndup(lt + 1, len);
		end = lt;
		while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		if (mime_unquote(start, (size_t)(end - start), &name, why) !=
		    0) {
			free(*addr);
			*addr = NULL;
			return -1;
		}
	} else {
		len = (size_t)(end - start);
		if (!mime_addr_valid(start, len)) {
			*why = "malformed address";
			return -1;
		}
		*addr = xstrndup(start, len);
	}

	buf_init(&b);
	if (name != NULL && *name != '\0') {
		mime_add_display(&b, name);
		buf_printf(&b, " <%s>", *addr);
	} else
		buf_adds(&b, *addr);
	free(name);
	*field = buf_steal(&b);
	return 0;
}

void
mime_date(int64_t t, char *out, size_t outlen)
{
	static const char *const days[] = {
		"Sun",
		"Mon",
		"Tue",
		"Wed",
		"Thu",
		"Fri",
		"Sat",
	};
	static const char *const months[] = {
		"Jan",
		"Feb",
		"Mar",
		"Apr",
		"May",
		"Jun",
		"Jul",
		"Aug",
		"Sep",
		"Oct",
		"Nov",
		"Dec",
	};
	struct tm tm;
	time_t    tt = (time_t)t;

	gmtime_r(&tt, &tm);
	snprintf(out, outlen, "%s, %02d %s %04d %02d:%02d:%02d +0000",
	    days[tm.tm_wday], tm.tm_mday, months[tm.tm_mon], tm.tm_year + 1900,
	    tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* The state of one message being built. */
struct mime_build {
	struct mime_msg *msg;
	char            *err;
};

static void mime_fail(struct mime_build *mb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
mime_fail(struct mime_build *mb, const char *fmt, ...)
{
	va_list ap;

	if (mb->err != NULL)
		return;
	va_start(ap, fmt);
	mb->err = xvasprintf(fmt, ap);
	va_end(ap);
}

static void
mime_add_header(struct mime_build *mb, const char *line)
{
	struct curl_slist *l;

	if ((l = curl_slist_append(mb->msg->headers, line)) == NULL)
		abort(); /* out of memory, as xmalloc */
	mb->msg->headers = l;
}

static void
mime_add_rcpt(struct mime_build *mb, const char *addr)
{
	struct curl_slist *l;
	char              *s;

	s = xasprintf("<%s>", addr);
	if ((l = curl_slist_append(mb->msg->rcpt, s)) == NULL)
		abort();
	free(s);
	mb->msg->rcpt = l;
	mb->msg->nrcpt++;
}

/* One mailbox of key (index i of an array, or -1): into the header line
 * b (unless NULL) and the envelope (if rcpt). */
static int
mime_add_mailbox(struct mime_build *mb, const char *key, int i, json_t *v,
    struct buf *b, size_t *linelen, int rcpt)
{
	char        where[64], *addr = NULL, *field = NULL;
	const char *why;
	size_t      flen;

	if (i >= 0)
		snprintf(where, sizeof where, "%s[%d]", key, i);
	else
		snprintf(where, sizeof where, "%s", key);
	if (!json_is_string(v)) {
		mime_fail(mb, "payload: %s: not a string", where);
		return -1;
	}
	if (mime_parse_mailbox(json_string_value(v), &addr, &field, &why) !=
	    0) {
		mime_fail(mb, "payload: %s: %s", where, why);
		return -1;
	}
	if (b != NULL) {
		flen = strlen(field);
		if (b->len > 0 && b->data[b->len - 1] != ' ') {
			/* Room for the comma that ends a folded line. */
			if (*linelen + flen + 2 >= MIME_LINE) {
				buf_adds(b, ",\r\n ");
				*linelen = 1;
			} else {
				buf_adds(b, ", ");
				*linelen += 2;
			}
		}
		buf_adds(b, field);
		*linelen += flen;
	}
	if (rcpt) {
		if (mb->msg->nrcpt >= MIME_MAX_RCPT) {
			mime_fail(mb, "payload: more than %d recipients",
			    MIME_MAX_RCPT);
			free(addr);
			free(field);
			return -1;
		}
		mime_add_rcpt(mb, addr);
	}
	free(addr);
	free(field);
	return 0;
}

/* to, cc, bcc, reply_to: a string or an array of strings.  The header
 * field is added unless name is NULL (bcc). */
static int
mime_add_list(struct mime_build *mb, json_t *obj, const char *key,
    const char *name, int rcpt, int required)
{
	json_t    *v, *e;
	struct buf b;
	size_t     i, linelen;
	int        rc = -1;

	v = json_object_get(obj, key);
	if (v == NULL || json_is_null(v)) {
		if (required)
			mime_fail(mb, "payload: %s: missing recipient", key);
		return required ? -1 : 0;
	}
	buf_init(&b);
	if (name != NULL)
		buf_printf(&b, "%s: ", name);
	linelen = b.len;
	if (json_is_array(v)) {
		if (json_array_size(v) == 0) {
			if (required)
				mime_fail(
				    mb, "payload: %s: missing recipient", key);
			rc = required ? -1 : 0;
			goto out;
		}
		json_array_foreach(v, i, e)
		{
			if (mime_add_mailbox(mb, key, (int)i, e,
			        name != NULL ? &b : NULL, &linelen, rcpt) != 0)
				goto out;
		}
	} else if (mime_add_mailbox(mb, key, -1, v, name != NULL ? &b : NULL,
	               &linelen, rcpt) != 0)
		goto out;
	if (name != NULL)
		mime_add_header(mb, b.data);
	rc = 0;
out:
	buf_free(&b);
	return rc;
}

static int
mime_reserved_name(const char *name)
{
	size_t i;

	if (strncasecmp(name, "Content-", 8) == 0)
		return 1;
	for (i = 0; i < nitems(mime_reserved); i++) {
		if (strcasecmp(name, mime_reserved[i]) == 0)
			return 1;
	}
	return 0;
}

static int
mime_add_extra(struct mime_build *mb, json_t *obj)
{
	json_t     *v, *hv;
	const char *name, *value;
	char       *enc, *line;

	if ((v = json_object_get(obj, "headers")) == NULL || json_is_null(v))
		return 0;
	if (!json_is_object(v)) {
		mime_fail(mb, "payload: headers: not an object");
		return -1;
	}
	json_object_foreach(v, name, hv)
	{
		if (!mime_field_name_valid(name)) {
			mime_fail(mb,
			    "payload: headers: invalid field name \"%.40s\"",
			    name);
			return -1;
		}
		if (mime_reserved_name(name)) {
			mime_fail(
			    mb, "payload: headers: \"%s\" is reserved", name);
			return -1;
		}
		if (!json_is_string(hv)) {
			mime_fail(
			    mb, "payload: headers: %s: not a string", name);
			return -1;
		}
		value = json_string_value(hv);
		if (mime_has_crlf(value)) {
			mime_fail(mb,
			    "payload: headers: %s: CR or LF in value (header injection)",
			    name);
			return -1;
		}
		if (mime_has_ctl(value)) {
			mime_fail(mb,
			    "payload: headers: %s: control character in value",
			    name);
			return -1;
		}
		enc = mime_encode_after(value, strlen(name) + 2);
		line = xasprintf("%s: %s", name, enc);
		mime_add_header(mb, line);
		free(line);
		free(enc);
	}
	return 0;
}

static int
mime_add_subject(struct mime_build *mb, json_t *obj)
{
	json_t     *v;
	const char *s;
	char       *enc, *line;

	if ((v = json_object_get(obj, "subject")) == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		mime_fail(mb, "payload: subject: not a string");
		return -1;
	}
	s = json_string_value(v);
	if (mime_has_crlf(s)) {
		mime_fail(mb, "payload: subject: CR or LF (header injection)");
		return -1;
	}
	if (mime_has_ctl(s)) {
		mime_fail(mb, "payload: subject: control character");
		return -1;
	}
	enc = mime_encode_after(s, strlen("Subject: "));
	line = xasprintf("Subject: %s", enc);
	mime_add_header(mb, line);
	free(line);
	free(enc);
	return 0;
}

/* A body with every line end made CRLF (text/plain canonical form). */
static char *
mime_crlf(const char *s, size_t len, size_t *outlen)
{
	struct buf b;
	size_t     i;

	buf_init(&b);
	for (i = 0; i < len; i++) {
		if (s[i] == '\r') {
			buf_adds(&b, "\r\n");
			if (i + 1 < len && s[i + 1] == '\n')
				i++;
		} else if (s[i] == '\n')
			buf_adds(&b, "\r\n");
		else
			buf_addc(&b, s[i]);
	}
	*outlen = b.len;
	if (b.data == NULL)
		return xstrdup("");
	return buf_steal(&b);
}

static int
mime_is_ascii(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if ((unsigned char)s[i] >= 0x80)
			return 0;
	}
	return 1;
}

/* The transfer encoding of a body: quoted-printable keeps ASCII text
 * readable; base64 is smaller for anything else (Korean is 3 bytes a
 * character, 9 in quoted-printable). */
static const char *
mime_encoding(const char *s, size_t len)
{
	return mime_is_ascii(s, len) ? "quoted-printable" : "base64";
}

/* Upper bound of a body's encoded size. */
static size_t
mime_encoded_size(const char *s, size_t len)
{
	size_t i, n = 0;

	if (!mime_is_ascii(s, len)) {
		n = 4 * ((len + 2) / 3);
		return n + 2 * (n / 76 + 1);
	}
	for (i = 0; i < len; i++)
		n += (s[i] == '=' || s[i] == '\t' ||
		         (s[i] < 0x20 && s[i] != '\r' && s[i] != '\n'))
		    ? 3
		    : 1;
	return n + 3 * (n / 73 + 1); /* soft line breaks "=\r\n" */
}

static int
mime_add_body(struct mime_build *mb, json_t *obj, const char *key, char **out,
    size_t *outlen)
{
	json_t *v;

	if ((v = json_object_get(obj, key)) == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		mime_fail(mb, "payload: %s: not a string", key);
		return -1;
	}
	*out = mime_crlf(json_string_value(v), json_string_length(v), outlen);
	return 0;
}

static int
mime_check_keys(struct mime_build *mb, json_t *obj)
{
	const char *key;
	json_t     *v;
	size_t      i;

	json_object_foreach(obj, key, v)
	{
		for (i = 0; i < nitems(mime_keys); i++) {
			if (strcmp(key, mime_keys[i]) == 0)
				break;
		}
		if (i == nitems(mime_keys)) {
			mime_fail(mb, "payload: unknown key \"%.40s\"", key);
			return -1;
		}
	}
	return 0;
}

static int
mime_message_id_valid(const char *id)
{
	size_t len = strlen(id);

	return len > 0 && len <= 64 &&
	    strspn(id, "0123456789abcdefABCDEF-") == len;
}

static size_t
mime_size(const struct mime_msg *msg)
{
	const struct curl_slist *l;
	size_t                   n = 0;

	for (l = msg->headers; l != NULL; l = l->next)
		n += strlen(l->data) + 2;
	if (msg->text != NULL)
		n += MIME_PART_OVERHEAD +
		    mime_encoded_size(msg->text, msg->text_len);
	if (msg->html != NULL)
		n += MIME_PART_OVERHEAD +
		    mime_encoded_size(msg->html, msg->html_len);
	return n + MIME_PART_OVERHEAD;
}

/* The message's headers, in their order: Date, From (from_field), the
 * payload's recipients and subject, Message-ID, MIME-Version and the
 * payload's extra headers.  0, or -1 with mb->err. */
static int
mime_add_headers(struct mime_build *mb, json_t *obj, const struct mime_opts *o,
    const char *from_field)
{
	char *line, date[64];

	mime_date(o->date, date, sizeof date);
	line = xasprintf("Date: %s", date);
	mime_add_header(mb, line);
	free(line);
	line = xasprintf("From: %s", from_field);
	mime_add_header(mb, line);
	free(line);
	if (mime_add_list(mb, obj, "to", "To", 1, 1) != 0 ||
	    mime_add_list(mb, obj, "cc", "Cc", 1, 0) != 0 ||
	    mime_add_list(mb, obj, "bcc", NULL, 1, 0) != 0 ||
	    mime_add_list(mb, obj, "reply_to", "Reply-To", 0, 0) != 0 ||
	    mime_add_subject(mb, obj) != 0)
		return -1;
	line = xasprintf("Message-ID: <%s@cronguard>", o->message_id);
	mime_add_header(mb, line);
	free(line);
	mime_add_header(mb, "MIME-Version: 1.0");
	return mime_add_extra(mb, obj);
}

/* The payload's text and html parts, at least one of them.  0, or -1
 * with mb->err. */
static int
mime_add_bodies(struct mime_build *mb, json_t *obj)
{
	if (mime_add_body(
	        mb, obj, "text", &mb->msg->text, &mb->msg->text_len) != 0 ||
	    mime_add_body(
	        mb, obj, "html", &mb->msg->html, &mb->msg->html_len) != 0)
		return -1;
	if (mb->msg->text == NULL && mb->msg->html == NULL) {
		mime_fail(mb, "payload: text or html required");
		return -1;
	}
	/* libcurl puts its boundary on a Content-Type of the top level. */
	if (mb->msg->text != NULL && mb->msg->html != NULL)
		mime_add_header(mb, "Content-Type: multipart/alternative");
	return 0;
}

int
mime_build(const char *payload, size_t len, const struct mime_opts *o,
    struct mime_msg **out, char **errstr)
{
	struct mime_build mb;
	json_t           *obj = NULL;
	json_error_t      jerr;
	const char       *why;
	char             *from_field = NULL;

	memset(&mb, 0, sizeof mb);
	mb.msg = xcalloc(1, sizeof *mb.msg);
	*out = NULL;

	if ((obj = json_loadb(payload, len,
	         JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr)) == NULL) {
		mime_fail(&mb, "payload: invalid JSON: %s", jerr.text);
		goto fail;
	}
	if (!json_is_object(obj)) {
		mime_fail(&mb, "payload: not a JSON object");
		goto fail;
	}
	if (mime_check_keys(&mb, obj) != 0)
		goto fail;
	if (!mime_message_id_valid(o->message_id)) {
		mime_fail(&mb, "message_id is not a UUID");
		goto fail;
	}
	if (mime_parse_mailbox(o->from, &mb.msg->from, &from_field, &why) !=
	    0) {
		mime_fail(&mb, "channel from: %s", why);
		goto fail;
	}

	if (mime_add_headers(&mb, obj, o, from_field) != 0 ||
	    mime_add_bodies(&mb, obj) != 0)
		goto fail;

	mb.msg->size = mime_size(mb.msg);
	if (o->max_size > 0 && mb.msg->size > (unsigned long long)o->max_size) {
		mime_fail(&mb,
		    "message too large: about %zu bytes, max_size %lld",
		    mb.msg->size, o->max_size);
		goto fail;
	}

	json_decref(obj);
	free(from_field);
	*out = mb.msg;
	return 0;

fail:
	json_decref(obj);
	free(from_field);
	mime_free(mb.msg);
	*errstr = mb.err != NULL ? mb.err : xstrdup("payload: invalid");
	return -1;
}

void
mime_free(struct mime_msg *msg)
{
	if (msg == NULL)
		return;
	free(msg->from);
	curl_slist_free_all(msg->rcpt);
	curl_slist_free_all(msg->headers);
	free(msg->text);
	free(msg->html);
	free(msg);
}

static int
mime_curl_part(curl_mime *mime, const char *type, const char *data, size_t len)
{
	curl_mimepart *part;

	if ((part = curl_mime_addpart(mime)) == NULL ||
	    curl_mime_data(part, data, len) != CURLE_OK ||
	    curl_mime_type(part, type) != CURLE_OK ||
	    curl_mime_encoder(part, mime_encoding(data, len)) != CURLE_OK)
		return -1;
	return 0;
}

curl_mime *
mime_curl(const struct mime_msg *msg, CURL *easy, char **errstr)
{
	curl_mime *mime;

	/* Both bodies go straight into the top level, whose Content-Type
	 * header (multipart/alternative) mime_build set; one body alone is
	 * the single part of libcurl's default multipart/mixed.  That is
	 * the best the API allows: CURLOPT_MIMEPOST always makes the top
	 * level a multipart (setopt.c, Curl_mime_set_subparts), and a
	 * Content-Type of text/plain there would only get a boundary
	 * parameter.  A one-part multipart/mixed is valid MIME; encoding a
	 * lone body by hand instead would redo libcurl's encoders. */
	if ((mime = curl_mime_init(easy)) == NULL)
		goto fail;
	if (msg->text != NULL &&
	    mime_curl_part(mime, "text/plain; charset=UTF-8", msg->text,
	        msg->text_len) != 0)
		goto fail;
	if (msg->html != NULL &&
	    mime_curl_part(mime, "text/html; charset=UTF-8", msg->html,
	        msg->html_len) != 0)
		goto fail;
	if (curl_easy_setopt(easy, CURLOPT_MAIL_FROM, msg->from) != CURLE_OK ||
	    curl_easy_setopt(easy, CURLOPT_MAIL_RCPT, msg->rcpt) != CURLE_OK ||
	    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, msg->headers) !=
	        CURLE_OK ||
	    curl_easy_setopt(easy, CURLOPT_MIMEPOST, mime) != CURLE_OK)
		goto fail;
	return mime;

fail:
	curl_mime_free(mime);
	*errstr = xstrdup("smtp: building the MIME message failed");
	return NULL;
}
