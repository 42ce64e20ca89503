/* check_util.c: util.c's bounded parsers, the growable buffer and its
 * quoting, UTF-8 checks, protocol line copies, signal names, UUIDs and
 * the file helpers. */
#include "config.h"

#include <sys/stat.h>

#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "testutil.h"
#include "util.h"

/* ------------------------------------------------------------ parsing */

static const struct {
	const char *s;
	long long   min, max;
	int         ok;
	long long   v;
	const char *err;
} ll_cases[] = {
	{ "0", 0, 10, 1, 0, NULL },
	{ "10", 0, 10, 1, 10, NULL },
	{ "-5", -5, 5, 1, -5, NULL },
	{ "11", 0, 10, 0, 0, "too large" },
	{ "-6", -5, 5, 0, 0, "too small" },
	{ "9223372036854775807", 0, LLONG_MAX, 1, LLONG_MAX, NULL },
	{ "9223372036854775808", 0, LLONG_MAX, 0, 0, "too large" },
	{ "-9223372036854775808", LLONG_MIN, 0, 1, LLONG_MIN, NULL },
	{ "-9223372036854775809", LLONG_MIN, 0, 0, 0, "too small" },
	/* the whole string, base 10, nothing around it */
	{ "", 0, 10, 0, 0, "invalid" },
	{ " 5", 0, 10, 0, 0, "invalid" },
	{ "5 ", 0, 10, 0, 0, "invalid" },
	{ "+5", 0, 10, 0, 0, "invalid" },
	{ "0x5", 0, 10, 0, 0, "invalid" },
	{ "5k", 0, 10, 0, 0, "invalid" },
	{ "-", -5, 5, 0, 0, "invalid" },
};

START_TEST(test_parse_ll)
{
	const char *err = NULL;
	long long   v = 42;
	int         rc;

	rc = parse_ll(
	    ll_cases[_i].s, ll_cases[_i].min, ll_cases[_i].max, &v, &err);
	if (ll_cases[_i].ok) {
		ck_assert_msg(rc == 0, "\"%s\": %s", ll_cases[_i].s, err);
		ck_assert_int_eq(v, ll_cases[_i].v);
	} else {
		ck_assert_msg(rc == -1, "\"%s\" accepted", ll_cases[_i].s);
		ck_assert_str_eq(err, ll_cases[_i].err);
		ck_assert_int_eq(v, 42); /* *out untouched on failure */
	}
}
END_TEST

START_TEST(test_parse_ull)
{
	unsigned long long v = 0;
	const char        *err = NULL;

	ck_assert_int_eq(
	    parse_ull("18446744073709551615", UINT64_MAX, &v, &err), 0);
	ck_assert(v == UINT64_MAX);
	ck_assert_int_eq(
	    parse_ull("18446744073709551616", UINT64_MAX, &v, &err), -1);
	ck_assert_str_eq(err, "too large");
	ck_assert_int_eq(parse_ull("7", 6, &v, &err), -1);
	ck_assert_str_eq(err, "too large");
	/* strtoull would read "-1" as the largest value */
	ck_assert_int_eq(parse_ull("-1", UINT64_MAX, &v, &err), -1);
	ck_assert_str_eq(err, "invalid");
	ck_assert_int_eq(parse_ull(" 1", UINT64_MAX, &v, &err), -1);
	ck_assert_int_eq(parse_ull("1 ", UINT64_MAX, &v, &err), -1);
	ck_assert_int_eq(parse_ull("", UINT64_MAX, &v, &err), -1);
}
END_TEST

START_TEST(test_parse_double)
{
	double      v = 0;
	const char *err = NULL;

	ck_assert_int_eq(parse_double("2.5", 0, 10, &v, &err), 0);
	ck_assert(v == 2.5);
	ck_assert_int_eq(parse_double("1e2", 0, 1000, &v, &err), 0);
	ck_assert(v == 100);
	ck_assert_int_eq(parse_double("10.5", 0, 10, &v, &err), -1);
	ck_assert_str_eq(err, "too large");
	ck_assert_int_eq(parse_double("-0.1", 0, 10, &v, &err), -1);
	ck_assert_str_eq(err, "too small");
	/* not finite, out of a double's range, or not all a number */
	ck_assert_int_eq(parse_double("nan", -1e9, 1e9, &v, &err), -1);
	ck_assert_str_eq(err, "invalid");
	ck_assert_int_eq(parse_double("inf", -1e9, 1e308, &v, &err), -1);
	ck_assert_int_eq(parse_double("1e400", 0, 1e308, &v, &err), -1);
	ck_assert_int_eq(parse_double(" 1", 0, 10, &v, &err), -1);
	ck_assert_int_eq(parse_double("1x", 0, 10, &v, &err), -1);
	ck_assert_int_eq(parse_double("", 0, 10, &v, &err), -1);
}
END_TEST

/* ------------------------------------------------------------- buffer */

START_TEST(test_buf_grows)
{
	struct buf b;
	char      *s;
	size_t     i;

	buf_init(&b);
	for (i = 0; i < 1000; i++)
		buf_printf(&b, "%03zu,", i);
	ck_assert_uint_eq(b.len, 4000);
	ck_assert_uint_eq(strlen(b.data), 4000); /* NUL-terminated */
	ck_assert(strncmp(b.data, "000,001,", 8) == 0);
	ck_assert_str_eq(b.data + 3996, "999,");
	/* bytes, a NUL among them, then more */
	buf_reset(&b);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_str_eq(b.data, "");
	buf_add(&b, "a\0b", 3);
	buf_addc(&b, 'c');
	buf_adds(&b, "de");
	ck_assert_uint_eq(b.len, 6);
	ck_assert_mem_eq(b.data, "a\0bcde", 7);
	s = buf_steal(&b);
	ck_assert_ptr_null(b.data);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_mem_eq(s, "a\0bcde", 7);
	free(s);
	/* nothing added: an empty string, never NULL */
	s = buf_steal(&b);
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

START_TEST(test_buf_add_quoted)
{
	struct buf b;

	buf_init(&b);
	buf_add_quoted(&b, "");
	ck_assert_str_eq(b.data, "\"\"");
	buf_reset(&b);
	buf_add_quoted(&b, "say \"no\"\\ then\n\r\tgo");
	ck_assert_str_eq(b.data, "\"say \\\"no\\\"\\\\ then\\n\\r\\tgo\"");
	buf_reset(&b);
	/* other control bytes and DEL in hex; UTF-8 as it is */
	buf_add_quoted(&b, "\x01\x1f\x7f caf\xc3\xa9");
	ck_assert_str_eq(b.data, "\"\\x01\\x1f\\x7f caf\xc3\xa9\"");
	buf_free(&b);
}
END_TEST

/* -------------------------------------------------------------- UTF-8 */

static const struct {
	const char *s;
	size_t      len; /* of the first sequence; 0: not well-formed */
} utf8_cases[] = {
	{ "a", 1 }, { "\xc3\xa9", 2 }, { "\xe2\x82\xac", 3 },
	{ "\xf0\x9f\x98\x80", 4 },
	{ "\xf4\x8f\xbf\xbf", 4 }, /* U+10FFFF, the last */
	{ "\xf4\x90\x80\x80", 0 }, /* past U+10FFFF */
	{ "\xc0\x80", 0 },         /* overlong NUL */
	{ "\xc1\xbf", 0 },         /* overlong */
	{ "\xe0\x9f\xbf", 0 },     /* overlong three-byte form */
	{ "\xf0\x8f\xbf\xbf", 0 }, /* overlong four-byte form */
	{ "\xed\xa0\x80", 0 },     /* a surrogate */
	{ "\x80", 0 },             /* a continuation byte first */
	{ "\xf5\x80\x80\x80", 0 }, { "\xe2\x82", 0 }, /* cut short by the NUL */
	{ "\xe2\x28\xa1", 0 },                        /* not a continuation */
};

START_TEST(test_utf8)
{
	const char *s = utf8_cases[_i].s;

	ck_assert_uint_eq(utf8_seq_len((const unsigned char *)s, SIZE_MAX),
	    utf8_cases[_i].len);
	ck_assert_int_eq(utf8_valid(s), utf8_cases[_i].len == strlen(s));
}
END_TEST

START_TEST(test_utf8_avail)
{
	/* A sequence longer than the bytes at hand is not one. */
	ck_assert_uint_eq(
	    utf8_seq_len((const unsigned char *)"\xe2\x82\xac", 2), 0);
	ck_assert_uint_eq(
	    utf8_seq_len((const unsigned char *)"\xe2\x82\xac", 3), 3);
	ck_assert_uint_eq(utf8_seq_len((const unsigned char *)"a", 0), 0);
	ck_assert_int_eq(utf8_valid("plain, caf\xc3\xa9, \xe2\x82\xac"), 1);
	ck_assert_int_eq(utf8_valid("ok then \xff"), 0);
	ck_assert_int_eq(utf8_valid(""), 1);
}
END_TEST

/* A peer's text: what it keeps, what it replaces, where it cuts. */
static const struct {
	const char *in;
	size_t      max;
	const char *out;
} peer_cases[] = {
	{ "550 ok", 100, "550 ok" },
	/* Latin-1 read as such, a C1 byte and a lone continuation "?" */
	{ "550 Empf\xe4nger", 100, "550 Empf\xc3\xa4nger" },
	{ "a\x85\x80"
	  "b",
	    100, "a??b" },
	/* a surrogate is not UTF-8: its bytes one by one (A0: Latin-1) */
	{ "x\xed\xa0\x80", 100, "x\xc3\xad\xc2\xa0?" },
	/* control characters (C0, DEL, C1) as spaces, trailing ones dropped */
	{ "a\r\nb\x1b[31m\x07\x7f\xc2\x9b"
	  ".\r\n",
	    100, "a  b [31m   ." },
	/* cut on a character boundary; a sequence cut at the end dropped */
	{ "ab\xe2\x82\xac", 4, "ab" },
	{ "ab\xe2\x82\xac", 5, "ab\xe2\x82\xac" },
	{ "ab\xe2\x82", 100, "ab" },
	{ "\xe4\xe4\xe4", 5, "\xc3\xa4\xc3\xa4" },
	{ "", 10, "" },
};

START_TEST(test_peer_text)
{
	char *t = peer_text(
	    peer_cases[_i].in, strlen(peer_cases[_i].in), peer_cases[_i].max);

	ck_assert_str_eq(t, peer_cases[_i].out);
	ck_assert_int_eq(utf8_valid(t), 1);
	ck_assert_uint_le(strlen(t), peer_cases[_i].max);
	free(t);
}
END_TEST

/* ------------------------------------------------- lines and signals */

START_TEST(test_line_copy)
{
	char dst[8];

	/* up to the line end */
	line_copy(dst, sizeof dst, "250 OK\r\nnext", 12);
	ck_assert_str_eq(dst, "250 OK");
	line_copy(dst, sizeof dst, "ab\ncd", 5);
	ck_assert_str_eq(dst, "ab");
	/* control characters as spaces */
	line_copy(dst, sizeof dst,
	    "a\tb\x01"
	    "c\x7f",
	    6);
	ck_assert_str_eq(dst, "a b c ");
	/* truncated to dstlen - 1, and only len bytes are read */
	line_copy(dst, sizeof dst, "0123456789", 10);
	ck_assert_str_eq(dst, "0123456");
	line_copy(dst, sizeof dst, "0123456789", 3);
	ck_assert_str_eq(dst, "012");
	line_copy(dst, 1, "abc", 3);
	ck_assert_str_eq(dst, "");
}
END_TEST

START_TEST(test_signal_name)
{
	ck_assert_str_eq(signal_name(SIGTERM), "SIGTERM");
	ck_assert_str_eq(signal_name(SIGKILL), "SIGKILL");
	ck_assert_str_eq(signal_name(SIGHUP), "SIGHUP");
	ck_assert_str_eq(signal_name(SIGSYS), "SIGSYS");
	ck_assert_str_eq(signal_name(0), "signal 0");
	ck_assert_str_eq(signal_name(64), "signal 64");
}
END_TEST

/* A row's name back to the index of the name asked for, without case
 * (as the schema's collation compares), and -1 for any other. */
START_TEST(test_name_index)
{
	const char *const names[] = { "report", "accrual", "Zeta", "a-b_9" };
	struct name_index ni;

	name_index_init(&ni, names, nitems(names));
	ck_assert_int_eq(name_index_find(&ni, "report"), 0);
	ck_assert_int_eq(name_index_find(&ni, "accrual"), 1);
	ck_assert_int_eq(name_index_find(&ni, "zeta"), 2);
	ck_assert_int_eq(name_index_find(&ni, "A-B_9"), 3);
	ck_assert_int_eq(name_index_find(&ni, "*"), -1);
	ck_assert_int_eq(name_index_find(&ni, "repor"), -1);
	ck_assert_int_eq(name_index_find(&ni, NULL), -1);
	name_index_free(&ni);
	name_index_init(&ni, names, 0);
	ck_assert_int_eq(name_index_find(&ni, "report"), -1);
	name_index_free(&ni);
}
END_TEST

START_TEST(test_uuid_v4)
{
	char   a[37], b[37];
	size_t i;

	uuid_v4(a);
	uuid_v4(b);
	ck_assert_uint_eq(strlen(a), 36);
	ck_assert_str_ne(a, b);
	for (i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23)
			ck_assert_int_eq(a[i], '-');
		else
			ck_assert_msg(strchr("0123456789abcdef", a[i]) != NULL,
			    "%s: not lower-case hex at %zu", a, i);
	}
	ck_assert_int_eq(a[14], '4');                 /* version 4 */
	ck_assert_ptr_nonnull(strchr("89ab", a[19])); /* RFC 4122 variant */
}
END_TEST

/* -------------------------------------------------------------- files */

static char dir[] = "/tmp/check_util.XXXXXX";

static void
setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void
teardown(void)
{
	testutil_rmdir(dir);
}

START_TEST(test_write_and_read_file)
{
	struct stat st;
	char       *path, *link, *data, *err = NULL;
	size_t      len = 0;
	mode_t      old;

	path = xasprintf("%s/metrics.prom", dir);
	old = umask(022);
	ck_assert_int_eq(write_file_atomic(path, "one\0two", 7, &err), 0);
	umask(old);
	ck_assert_ptr_null(err);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0644);
	data = read_file(path, 100, &len, &err);
	ck_assert_ptr_nonnull(data);
	ck_assert_uint_eq(len, 7);
	ck_assert_mem_eq(data, "one\0two", 8); /* NUL-terminated as well */
	free(data);
	/* replaced whole */
	ck_assert_int_eq(write_file_atomic(path, "3", 1, &err), 0);
	data = read_file(path, 100, &len, &err);
	ck_assert_str_eq(data, "3");
	free(data);
	/* larger than max: refused */
	ck_assert_ptr_null(read_file(path, 0, &len, &err));
	ck_assert_ptr_nonnull(strstr(err, "larger than 0 bytes"));
	free(err);
	err = NULL;
	/* a symbolic link is not replaced, nor followed */
	link = xasprintf("%s/link.prom", dir);
	ck_assert_int_eq(symlink(path, link), 0);
	ck_assert_int_eq(write_file_atomic(link, "x", 1, &err), -1);
	ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
	free(err);
	err = NULL;
	data = read_file(path, 100, &len, &err);
	ck_assert_str_eq(data, "3");
	free(data);
	/* a missing file names itself */
	ck_assert_ptr_null(read_file("/nonexistent/x", 10, &len, &err));
	ck_assert_ptr_nonnull(strstr(err, "cannot open /nonexistent/x"));
	free(err);
	free(link);
	free(path);
}
END_TEST

START_TEST(test_read_secret_file)
{
	char *path, *s, *err = NULL;

	path = xasprintf("%s/secret", dir);
	ck_assert_int_eq(write_file_atomic(path, "hunter2\r\n\n", 10, &err), 0);
	s = read_secret_file(path, &err);
	ck_assert_str_eq(s, "hunter2"); /* trailing line ends stripped */
	free(s);
	ck_assert_int_eq(write_file_atomic(path, "a\nb\n", 4, &err), 0);
	s = read_secret_file(path, &err);
	ck_assert_str_eq(s, "a\nb"); /* only trailing ones */
	free(s);
	free(path);
}
END_TEST

static Suite *
util_suite(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("util");
	TCase *files = tcase_create("files");

	tcase_add_loop_test(tc, test_parse_ll, 0, (int)nitems(ll_cases));
	tcase_add_test(tc, test_parse_ull);
	tcase_add_test(tc, test_parse_double);
	tcase_add_test(tc, test_buf_grows);
	tcase_add_test(tc, test_buf_add_quoted);
	tcase_add_loop_test(tc, test_utf8, 0, (int)nitems(utf8_cases));
	tcase_add_test(tc, test_utf8_avail);
	tcase_add_loop_test(tc, test_peer_text, 0, (int)nitems(peer_cases));
	tcase_add_test(tc, test_line_copy);
	tcase_add_test(tc, test_signal_name);
	tcase_add_test(tc, test_uuid_v4);
	tcase_add_test(tc, test_name_index);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(files, setup, teardown);
	tcase_add_test(files, test_write_and_read_file);
	tcase_add_test(files, test_read_secret_file);
	suite_add_tcase(s, files);
	return s;
}

int
main(void)
{
	return testutil_main(util_suite);
}
