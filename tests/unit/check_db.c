/* check_db.c: result parsing and the statement formatter of db.c; the
 * connection paths against a live server are check_db_live.c. */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "db.h"
#include "testutil.h"
#include "util.h"

/* ------------------------------------------------------------ parsing */

START_TEST(test_parse_bool_exact)
{
	ck_assert_int_eq(db_parse_bool("1"), 1);
	ck_assert_int_eq(db_parse_bool("0"), 0);
	ck_assert_int_eq(db_parse_bool(NULL), -1);
	ck_assert_int_eq(db_parse_bool(""), -2);
	ck_assert_int_eq(db_parse_bool("01"), -2);
	ck_assert_int_eq(db_parse_bool("10"), -2);
	ck_assert_int_eq(db_parse_bool("true"), -2);
	ck_assert_int_eq(db_parse_bool(" 1"), -2);
	ck_assert_int_eq(db_parse_bool("1 "), -2);
	ck_assert_int_eq(db_parse_bool("-1"), -2);
	ck_assert_int_eq(db_parse_bool("2"), -2);
}
END_TEST

/* --------------------------------------------------------- formatting */

/* Format with db (NULL: offline escaping); returns the statement or NULL
 * with *errstr set. */
static char *
fmt(struct db *db, char **errstr, const char *f, ...)
{
	struct buf b;
	va_list    ap;
	int        rc;

	buf_init(&b);
	*errstr = NULL;
	va_start(ap, f);
	rc = db_format(db, &b, errstr, f, ap);
	va_end(ap);
	if (rc != 0) {
		buf_free(&b);
		ck_assert_ptr_nonnull(*errstr);
		return (NULL);
	}
	ck_assert_ptr_null(*errstr);
	return (buf_steal(&b));
}

#define FMT_EQ(want, ...) \
	do { \
		char *got_, *err_; \
		got_ = fmt(NULL, &err_, __VA_ARGS__); \
		ck_assert_ptr_nonnull(got_); \
		ck_assert_str_eq(got_, (want)); \
		free(got_); \
	} while (0)

#define FMT_FAILS(...) \
	do { \
		char *got_, *err_; \
		got_ = fmt(NULL, &err_, __VA_ARGS__); \
		ck_assert_ptr_null(got_); \
		free(err_); \
	} while (0)

START_TEST(test_format_strings)
{
	FMT_EQ("SELECT 'abc'", "SELECT %s", "abc");
	FMT_EQ("SELECT NULL", "SELECT %s", (const char *)NULL);
	FMT_EQ("SELECT ''", "SELECT %s", "");
	FMT_EQ("SELECT 'it\\'s'", "SELECT %s", "it's");
	FMT_EQ("SELECT 'say \\\"hi\\\"'", "SELECT %s", "say \"hi\"");
	FMT_EQ("SELECT 'a\\\\b'", "SELECT %s", "a\\b");
	FMT_EQ("SELECT '\\\\\\''", "SELECT %s", "\\'");
	FMT_EQ("SELECT 'a\\nb\\r\\Z'", "SELECT %s", "a\nb\r\032");
	/* An injection attempt stays inside the literal. */
	FMT_EQ("SELECT '\\' OR 1=1 -- '", "SELECT %s", "' OR 1=1 -- ");
	/* UTF-8 passes through unchanged. */
	FMT_EQ("SELECT '예약 확정'", "SELECT %s", "예약 확정");
}
END_TEST

START_TEST(test_format_nul)
{
	static const char with_nul[] = { 'a', '\0', 'b' };

	FMT_EQ("SELECT 'a\\0b'", "SELECT %.*s", 3, with_nul);
	FMT_EQ("SELECT 'a'", "SELECT %.*s", 1, with_nul);
	FMT_EQ("SELECT NULL", "SELECT %.*s", 3, (const char *)NULL);
	FMT_FAILS("SELECT %.*s", -1, "x");
	FMT_FAILS("SELECT %.s", "x");
}
END_TEST

START_TEST(test_format_numbers)
{
	FMT_EQ("LIMIT -5, 7", "LIMIT %d, %u", -5, 7u);
	FMT_EQ(
	    "id = 18446744073709551615", "id = %llu", 18446744073709551615ULL);
	FMT_EQ("n = -9223372036854775807", "n = %lld", -9223372036854775807LL);
	FMT_EQ("x = 0.25", "x = %f", 0.25);
	FMT_EQ("100%", "100%%");
	FMT_FAILS("x = %f", 1.0 / 0.0);
	FMT_FAILS("x = %ld", 1L);
	FMT_FAILS("x = %x", 1);
	FMT_FAILS("x = %");
}
END_TEST

START_TEST(test_format_identifiers)
{
	char long_ok[65], long_bad[66];

	memset(long_ok, 'a', 64);
	long_ok[64] = '\0';
	memset(long_bad, 'a', 65);
	long_bad[65] = '\0';

	FMT_EQ("SELECT * FROM `outbox_messages`", "SELECT * FROM %I",
	    "outbox_messages");
	FMT_EQ("USE `test_$1`", "USE %I", "test_$1");
	FMT_FAILS("SELECT * FROM %I", "a`b");
	FMT_FAILS("SELECT * FROM %I", "a b");
	FMT_FAILS("SELECT * FROM %I", "x; DROP TABLE y");
	FMT_FAILS("SELECT * FROM %I", "a.b");
	FMT_FAILS("SELECT * FROM %I", "");
	FMT_FAILS("SELECT * FROM %I", (const char *)NULL);
	FMT_FAILS("SELECT * FROM %I", "caf\xc3\xa9");
	FMT_FAILS("SELECT * FROM %I", long_bad);
	ck_assert_int_eq(db_ident_valid(long_ok), 1);
	ck_assert_int_eq(db_ident_valid(long_bad), 0);
}
END_TEST

START_TEST(test_format_raw)
{
	FMT_EQ("WHERE id IN (1,2,3)", "WHERE id IN (%R)", "1,2,3");
	FMT_FAILS("WHERE id IN (%R)", (const char *)NULL);
	FMT_EQ("a='x' b=`t` c=3", "a=%s b=%I c=%d", "x", "t", 3);
}
END_TEST

START_TEST(test_format_lists)
{
	static const char *const        names[] = { "a", "it's", NULL };
	static const unsigned long long ids[] = { 1, 22 };

	FMT_EQ("IN ('a','it\\'s',NULL)", "IN (%A)", (size_t)3, names);
	FMT_EQ("IN ('a')", "IN (%A)", (size_t)1, names);
	FMT_EQ("IN (NULL) 'x'", "IN (%A) %s", (size_t)0, names, "x");
	FMT_EQ("(SELECT 0 AS k, 'a' AS v UNION ALL SELECT 1, 'it\\'s')", "%K",
	    (size_t)2, names);
	FMT_EQ("(SELECT 0 AS k, NULL AS v FROM DUAL WHERE FALSE)", "%K",
	    (size_t)0, names);
	FMT_EQ("IN (1,22)", "IN (%L)", (size_t)2, ids);
	FMT_EQ("IN (NULL)", "IN (%L)", (size_t)0, ids);
}
END_TEST

static Suite *
db_suite(void)
{
	Suite *s;
	TCase *tc;

	s = suite_create("db");
	tc = tcase_create("parse");
	tcase_add_test(tc, test_parse_bool_exact);
	suite_add_tcase(s, tc);
	tc = tcase_create("format");
	tcase_add_test(tc, test_format_strings);
	tcase_add_test(tc, test_format_nul);
	tcase_add_test(tc, test_format_numbers);
	tcase_add_test(tc, test_format_identifiers);
	tcase_add_test(tc, test_format_raw);
	tcase_add_test(tc, test_format_lists);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return testutil_main(db_suite);
}
