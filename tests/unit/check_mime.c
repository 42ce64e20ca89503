/* check_mime.c: mail payload to envelope and header fields: RFC 2047
 * encoded-words, addresses, header injection, reserved headers, limits. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <curl/curl.h>
#include <openssl/evp.h>

#include "mime.h"
#include "util.h"
#include "testutil.h"

#define ID "0b0f6f3e-6d55-4a43-9a49-6f7e3d1c2b10"

static struct mime_msg *
build_ok(const char *payload)
{
	struct mime_opts o = { "Reservations <noreply@example.com>", ID,
		1795948318, 0 };
	struct mime_msg *m = NULL;
	char            *err = NULL;
	int              rc;

	rc = mime_build(payload, strlen(payload), &o, &m, &err);
	ck_assert_msg(rc == 0, "unexpected failure: %s", err);
	ck_assert_ptr_nonnull(m);
	return m;
}

/* The reason a payload is refused (allocated). */
static char *
build_fail(const char *payload, long long max_size)
{
	struct mime_opts o = { "noreply@example.com", ID, 0, max_size };
	struct mime_msg *m = NULL;
	char            *err = NULL;

	ck_assert_int_eq(
	    mime_build(payload, strlen(payload), &o, &m, &err), -1);
	ck_assert_ptr_null(m);
	ck_assert_ptr_nonnull(err);
	return err;
}

static void
assert_refused(const char *payload, const char *why)
{
	char *err = build_fail(payload, 0);

	ck_assert_msg(strstr(err, why) != NULL,
	    "payload %s: got \"%s\", "
	    "expected \"%s\"",
	    payload, err, why);
	free(err);
}

/* The header field called name (the whole "Name: value" line), or NULL. */
static const char *
header(const struct mime_msg *m, const char *name)
{
	const struct curl_slist *l;
	size_t                   n = strlen(name);

	for (l = m->headers; l != NULL; l = l->next) {
		if (strncasecmp(l->data, name, n) == 0 && l->data[n] == ':')
			return l->data;
	}
	return NULL;
}

/*
 * Decode a value made of RFC 2047 "B" encoded-words separated by folding
 * whitespace; check each word is at most 75 characters, each physical
 * line at most 78 with first_used characters before it, and each word
 * decodes to whole UTF-8 characters.
 */
static char *
decode_words(const char *v, size_t first_used)
{
	struct buf    out;
	const char   *p = v, *end;
	unsigned char dec[128];
	int           n, pad;
	size_t        linelen = first_used, wl;

	buf_init(&out);
	while (*p != '\0') {
		ck_assert_msg(
		    strncmp(p, "=?UTF-8?B?", 10) == 0, "not a word: %s", p);
		end = strstr(p + 10, "?=");
		ck_assert_ptr_nonnull(end);
		wl = (size_t)(end + 2 - p);
		ck_assert_uint_le(wl, 75);
		linelen += wl;
		ck_assert_uint_le(linelen, 78);
		n = EVP_DecodeBlock(
		    dec, (const unsigned char *)p + 10, (int)(end - p - 10));
		ck_assert_int_ge(n, 0);
		pad = (end[-1] == '=') + (end[-2] == '=');
		n -= pad;
		/* Whole characters: no continuation byte starts a word and
		 * the last character is complete. */
		ck_assert((dec[0] & 0xc0) != 0x80);
		buf_add(&out, dec, (size_t)n);
		p = end + 2;
		if (*p == '\0')
			break;
		ck_assert_msg(strncmp(p, "\r\n ", 3) == 0, "bad fold: %s", p);
		p += 3;
		linelen = 1;
	}
	return buf_steal(&out);
}

START_TEST(test_korean_subject)
{
	const char *subj =
	    "예약 확정 안내: 2026년 12월 1일 오후 3시 서울 강남점 "
	    "예약이 확정되었습니다 — 감사합니다 😀";
	char            *payload, *dec;
	struct mime_msg *m;
	const char      *h;

	payload = xasprintf("{\"to\": \"kim@example.com\", \"subject\": "
	                    "\"%s\", \"text\": \"x\"}",
	    subj);
	m = build_ok(payload);
	h = header(m, "Subject");
	ck_assert_ptr_nonnull(h);
	dec = decode_words(h + strlen("Subject: "), strlen("Subject: "));
	ck_assert_str_eq(dec, subj);
	free(dec);
	mime_free(m);
	free(payload);
}
END_TEST

START_TEST(test_encode_text_boundaries)
{
	/* 3-byte characters: 15 fit in 45 bytes; 16 make a second word. */
	const char *s = "가나다라마바사아자차카타파하가나";
	char       *enc, *dec;

	enc = mime_encode_text(s);
	ck_assert_ptr_nonnull(strstr(enc, "?=\r\n =?UTF-8?B?"));
	dec = decode_words(enc, 0);
	ck_assert_str_eq(dec, s);
	free(enc);
	free(dec);

	/* Plain ASCII stays readable; "=?" or control characters do not. */
	enc = mime_encode_text("Your booking #42 is confirmed");
	ck_assert_str_eq(enc, "Your booking #42 is confirmed");
	free(enc);
	enc = mime_encode_text("=?UTF-8?B?eA==?=");
	ck_assert(strncmp(enc, "=?UTF-8?B?", 10) == 0);
	dec = decode_words(enc, 0);
	ck_assert_str_eq(dec, "=?UTF-8?B?eA==?=");
	free(dec);
	free(enc);
}
END_TEST

START_TEST(test_mailbox)
{
	char       *addr, *field;
	const char *why;
	size_t      i;
	static const struct {
		const char *in, *addr, *field;
	} ok[] = {
		{ "kim@example.com", "kim@example.com", "kim@example.com" },
		{ "  Kim Minsu <kim@example.com> ", "kim@example.com",
		    "Kim Minsu <kim@example.com>" },
		{ "\"Kim, Minsu\" <kim@example.com>", "kim@example.com",
		    "\"Kim, Minsu\" <kim@example.com>" },
		{ "Dr. Kim <kim@example.com>", "kim@example.com",
		    "\"Dr. Kim\" <kim@example.com>" },
		{ "<a.b+tag@mail.example.co.kr>", "a.b+tag@mail.example.co.kr",
		    "a.b+tag@mail.example.co.kr" },
		{ "\"say \\\"hi\\\"\" <x@y.z>", "x@y.z",
		    "\"say \\\"hi\\\"\" <x@y.z>" },
	};
	static const char *const bad[] = {
		"",
		"kim",
		"kim@",
		"@example.com",
		"kim@@example.com",
		"kim example@example.com",
		"kim..x@example.com",
		".kim@example.com",
		"kim@-example.com",
		"kim@example..com",
		"Kim <kim@example.com",
		"Kim <>",
		"kim@exa_mple.com",
		"김@example.com",
		"kim@example.com\r\nBcc: x@y.z",
		"kim@example.com\n",
		"\"Kim <kim@example.com>",
	};

	for (i = 0; i < nitems(ok); i++) {
		ck_assert_msg(
		    mime_parse_mailbox(ok[i].in, &addr, &field, &why) == 0,
		    "%s: %s", ok[i].in, why);
		ck_assert_str_eq(addr, ok[i].addr);
		ck_assert_str_eq(field, ok[i].field);
		free(addr);
		free(field);
	}
	for (i = 0; i < nitems(bad); i++) {
		ck_assert_msg(
		    mime_parse_mailbox(bad[i], &addr, &field, &why) == -1,
		    "accepted \"%s\"", bad[i]);
		ck_assert_ptr_null(addr);
		ck_assert_ptr_null(field);
	}
	ck_assert_int_eq(
	    mime_parse_mailbox("a@b.c\r\nBcc: x@y.z", &addr, &field, &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "header injection"));

	/* A Korean display name is encoded; the address stays readable. */
	ck_assert_int_eq(
	    mime_parse_mailbox("김민수 <kim@example.com>", &addr, &field, &why),
	    0);
	ck_assert(strncmp(field, "=?UTF-8?B?", 10) == 0);
	ck_assert_ptr_nonnull(strstr(field, "?= <kim@example.com>"));
	free(addr);
	free(field);

	/* A very long display name is encoded and folded: no line over 998. */
	{
		char *name = xmalloc(3001), *in;

		memset(name, 'a', 3000);
		name[3000] = '\0';
		in = xasprintf("%s <kim@example.com>", name);
		ck_assert_int_eq(
		    mime_parse_mailbox(in, &addr, &field, &why), 0);
		ck_assert(strncmp(field, "=?UTF-8?B?", 10) == 0);
		ck_assert_ptr_nonnull(strstr(field, "?=\r\n =?UTF-8?B?"));
		free(in);
		free(name);
		free(addr);
		free(field);
	}
}
END_TEST

START_TEST(test_envelope_and_headers)
{
	struct mime_msg         *m;
	const struct curl_slist *l;
	size_t                   n = 0;

	m = build_ok(
	    "{\"to\": [\"Kim <kim@example.com>\", \"lee@example.com\"],"
	    " \"cc\": \"park@example.com\", \"bcc\": [\"audit@example.com\"],"
	    " \"reply_to\": \"help@example.com\", \"subject\": \"Hi\","
	    " \"text\": \"a\\nb\", \"html\": \"<p>a</p>\","
	    " \"headers\": {\"X-Campaign\": \"spring\", \"List-Unsubscribe\":"
	    " \"<mailto:u@example.com>\"}}");
	ck_assert_str_eq(m->from, "noreply@example.com");
	for (l = m->rcpt; l != NULL; l = l->next)
		n++;
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(m->nrcpt, 4);
	ck_assert_str_eq(
	    m->rcpt->next->next->next->data, "<audit@example.com>");
	ck_assert_str_eq(
	    header(m, "To"), "To: Kim <kim@example.com>, lee@example.com");
	ck_assert_str_eq(header(m, "Cc"), "Cc: park@example.com");
	ck_assert_str_eq(header(m, "Reply-To"), "Reply-To: help@example.com");
	ck_assert_str_eq(
	    header(m, "From"), "From: Reservations <noreply@example.com>");
	ck_assert_str_eq(
	    header(m, "Message-ID"), "Message-ID: <" ID "@cronguard>");
	ck_assert_str_eq(
	    header(m, "Date"), "Date: Sun, 29 Nov 2026 10:31:58 +0000");
	ck_assert_str_eq(header(m, "MIME-Version"), "MIME-Version: 1.0");
	ck_assert_str_eq(
	    header(m, "Content-Type"), "Content-Type: multipart/alternative");
	ck_assert_str_eq(header(m, "X-Campaign"), "X-Campaign: spring");
	ck_assert_ptr_nonnull(header(m, "List-Unsubscribe"));
	/* Bcc only in the envelope; no header carries its address. */
	ck_assert_ptr_null(header(m, "Bcc"));
	for (l = m->headers; l != NULL; l = l->next)
		ck_assert_ptr_null(strstr(l->data, "audit@"));
	/* Text bodies in canonical CRLF form. */
	ck_assert_str_eq(m->text, "a\r\nb");
	ck_assert_str_eq(m->html, "<p>a</p>");
	mime_free(m);

	/* One body: no top-level Content-Type of ours (libcurl's default
	 * multipart/mixed holds the single part). */
	m = build_ok("{\"to\": \"kim@example.com\", \"html\": \"<p>x</p>\"}");
	ck_assert_ptr_null(header(m, "Content-Type"));
	ck_assert_ptr_null(m->text);
	ck_assert_ptr_null(header(m, "Subject"));
	mime_free(m);
}
END_TEST

START_TEST(test_long_address_list_folds)
{
	struct buf       p;
	struct mime_msg *m;
	const char      *h, *s;
	int              i;
	size_t           line;

	buf_init(&p);
	buf_adds(&p, "{\"text\": \"x\", \"to\": [");
	for (i = 0; i < 30; i++)
		buf_printf(&p, "%s\"Person Number %d <person%d@example.com>\"",
		    i > 0 ? ", " : "", i, i);
	buf_adds(&p, "]}");
	m = build_ok(p.data);
	h = header(m, "To");
	for (s = h, line = 0; *s != '\0'; s++) {
		if (*s == '\r') {
			ck_assert_int_eq(s[1], '\n');
			ck_assert_int_eq(s[2], ' ');
			s++;
			line = 0;
			continue;
		}
		ck_assert_uint_le(++line, 78);
	}
	ck_assert_uint_eq(m->nrcpt, 30);
	mime_free(m);
	buf_free(&p);
}
END_TEST

START_TEST(test_refused)
{
	assert_refused("[1, 2]", "not a JSON object");
	assert_refused("\"x\"", "not a JSON object");
	assert_refused("{\"to\": ", "invalid JSON");
	assert_refused("{\"text\": \"x\"}", "to: missing recipient");
	assert_refused("{\"to\": [], \"text\": \"x\"}", "missing recipient");
	assert_refused("{\"to\": 5, \"text\": \"x\"}", "to: not a string");
	assert_refused(
	    "{\"to\": \"nobody\", \"text\": \"x\"}", "to: malformed address");
	assert_refused("{\"to\": [\"a@b.c\", \"bad\"], \"text\": \"x\"}",
	    "to[1]: malformed address");
	assert_refused("{\"to\": \"a@b.c\", \"cc\": \"x@y.z\\r\\nBcc: e@v.il\","
	               " \"text\": \"x\"}",
	    "cc: CR or LF in address (header injection)");
	assert_refused("{\"to\": \"a@b.c\", \"subject\": \"Hi\\r\\nBcc: "
	               "e@v.il\", \"text\": \"x\"}",
	    "subject: CR or LF (header injection)");
	assert_refused("{\"to\": \"a@b.c\", \"subject\": \"Hi\\nthere\","
	               " \"text\": \"x\"}",
	    "header injection");
	assert_refused("{\"to\": \"a@b.c\", \"text\": \"x\", \"headers\":"
	               " {\"X-A\": \"1\\r\\nBcc: e@v.il\"}}",
	    "X-A: CR or LF in value (header injection)");
	assert_refused("{\"to\": \"a@b.c\", \"text\": \"x\", \"headers\":"
	               " {\"bcc\": \"e@v.il\"}}",
	    "\"bcc\" is reserved");
	assert_refused("{\"to\": \"a@b.c\", \"text\": \"x\", \"headers\":"
	               " {\"Content-Type\": \"text/html\"}}",
	    "reserved");
	assert_refused("{\"to\": \"a@b.c\", \"text\": \"x\", \"headers\":"
	               " {\"Message-Id\": \"<x@y>\"}}",
	    "reserved");
	assert_refused("{\"to\": \"a@b.c\", \"text\": \"x\", \"headers\":"
	               " {\"Bad Name\": \"v\"}}",
	    "invalid field name");
	assert_refused("{\"to\": \"a@b.c\", \"text\": \"x\", \"headers\":"
	               " {\"X-Colon:\": \"v\"}}",
	    "invalid field name");
	assert_refused("{\"to\": \"a@b.c\", \"text\": \"x\", \"headers\":"
	               " {\"X-N\": 1}}",
	    "not a string");
	assert_refused("{\"to\": \"a@b.c\", \"text\": \"x\", \"headers\": []}",
	    "headers: not an object");
	assert_refused("{\"to\": \"a@b.c\"}", "text or html required");
	assert_refused(
	    "{\"to\": \"a@b.c\", \"text\": 1}", "text: not a string");
	assert_refused(
	    "{\"to\": \"a@b.c\", \"txt\": \"x\"}", "unknown key \"txt\"");
	assert_refused(
	    "{\"to\": \"a@b.c\", \"to\": \"d@e.f\", \"text\": \"x\"}",
	    "invalid JSON");
}
END_TEST

START_TEST(test_limits)
{
	struct buf p;
	char      *err, *big;
	int        i;

	buf_init(&p);
	buf_adds(&p, "{\"text\": \"x\", \"to\": [");
	for (i = 0; i <= MIME_MAX_RCPT; i++)
		buf_printf(&p, "%s\"p%d@example.com\"", i > 0 ? ", " : "", i);
	buf_adds(&p, "]}");
	err = build_fail(p.data, 0);
	ck_assert_ptr_nonnull(strstr(err, "more than 100 recipients"));
	free(err);
	buf_free(&p);

	big = xmalloc(200001);
	memset(big, 'a', 200000);
	big[200000] = '\0';
	buf_init(&p);
	buf_printf(&p, "{\"to\": \"a@b.c\", \"text\": \"%s\"}", big);
	err = build_fail(p.data, 100000);
	ck_assert_ptr_nonnull(strstr(err, "message too large"));
	free(err);
	buf_free(&p);
	free(big);
}
END_TEST

START_TEST(test_message_id_and_date)
{
	struct mime_opts o = { "a@b.c", "not a uuid<>", 0, 0 };
	struct mime_msg *m = NULL;
	char            *err = NULL, date[64];
	const char      *pl = "{\"to\": \"x@y.z\", \"text\": \"t\"}";

	ck_assert_int_eq(mime_build(pl, strlen(pl), &o, &m, &err), -1);
	ck_assert_ptr_nonnull(strstr(err, "message_id"));
	free(err);
	err = NULL;
	o.message_id = ID;
	o.from = "bad from";
	ck_assert_int_eq(mime_build(pl, strlen(pl), &o, &m, &err), -1);
	ck_assert_ptr_nonnull(strstr(err, "channel from"));
	free(err);

	mime_date(0, date, sizeof date);
	ck_assert_str_eq(date, "Thu, 01 Jan 1970 00:00:00 +0000");
	mime_date(951782400, date, sizeof date); /* leap day */
	ck_assert_str_eq(date, "Tue, 29 Feb 2000 00:00:00 +0000");
}
END_TEST

START_TEST(test_field_names)
{
	ck_assert(mime_field_name_valid("X-Foo"));
	ck_assert(mime_field_name_valid("List-Unsubscribe-Post"));
	ck_assert(!mime_field_name_valid(""));
	ck_assert(!mime_field_name_valid("X Foo"));
	ck_assert(!mime_field_name_valid("X:Foo"));
	ck_assert(!mime_field_name_valid("X-\xc3\xa9"));
	ck_assert(!mime_field_name_valid("X-\n"));
}
END_TEST

static Suite *
mime_suite(void)
{
	Suite *s;
	TCase *tc;

	s = suite_create("mime");
	tc = tcase_create("encode");
	tcase_add_test(tc, test_korean_subject);
	tcase_add_test(tc, test_encode_text_boundaries);
	tcase_add_test(tc, test_field_names);
	suite_add_tcase(s, tc);
	tc = tcase_create("build");
	tcase_add_test(tc, test_mailbox);
	tcase_add_test(tc, test_envelope_and_headers);
	tcase_add_test(tc, test_long_address_list_folds);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_message_id_and_date);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(mime_suite);
}
