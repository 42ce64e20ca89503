/* check_exitcode.c: the one map from module statuses to exit codes, and
 * the numbers themselves (cronguard(1), EXIT STATUS: never renumbered). */
#include "config.h"

#include <stdlib.h>

#include <check.h>

#include "exitcode.h"
#include "testutil.h"

/* The numbers monitoring and cron read. */
START_TEST(test_numbers)
{
	ck_assert_int_eq(EXIT_OK, 0);
	ck_assert_int_eq(EXIT_WARNING, 1);
	ck_assert_int_eq(EXIT_CRITICAL, 2);
	ck_assert_int_eq(EXIT_UNKNOWN, 3);
	ck_assert_int_eq(EXIT_USAGE, 64);
	ck_assert_int_eq(EXIT_DATAERR, 65);
	ck_assert_int_eq(EXIT_UNAVAILABLE, 69);
	ck_assert_int_eq(EXIT_SOFTWARE, 70);
	ck_assert_int_eq(EXIT_TEMPFAIL, 75);
	ck_assert_int_eq(EXIT_PROTOCOL, 76);
	ck_assert_int_eq(EXIT_NOPERM, 77);
	ck_assert_int_eq(EXIT_CONFIG, 78);
	ck_assert_int_eq(EXIT_TIMEOUT, 124);
	ck_assert_int_eq(EXIT_NOEXEC, 126);
	ck_assert_int_eq(EXIT_NOTFOUND, 127);
}
END_TEST

/* Every status of every module, and one no module returns (42). */
static const struct {
	char kind; /* 'd' db_status, 'l' lock_result, 'c' check_status */
	int  status;
	int  code;
} map[] = {
	/* A database failure is 69, unless the server refused for want of
	 * a privilege (77) or the schema is behind the binary (78). */
	{ 'd', DB_OK, 0 },
	{ 'd', DB_ERR_CONNECT, 69 },
	{ 'd', DB_ERR_LOST, 69 },
	{ 'd', DB_ERR_RETRYABLE, 69 },
	{ 'd', DB_ERR_QUERY, 69 },
	{ 'd', DB_ERR_PRIVILEGE, 77 },
	{ 'd', DB_ERR_SCHEMA, 78 },
	{ 'd', 42, 70 },
	{ 'l', LOCK_OK, 0 },
	{ 'l', LOCK_BUSY, 0 },
	{ 'l', LOCK_ERR_DB, 69 },
	{ 'l', LOCK_ERR_NULL, 69 },
	{ 'l', LOCK_ERR_GALERA, 78 },
	{ 'l', LOCK_ERR_VALUE, 70 },
	{ 'l', LOCK_INCIDENT, 76 },
	{ 'l', LOCK_ERR_PRIVILEGE, 77 },
	{ 'l', LOCK_ERR_SCHEMA, 78 },
	{ 'l', 42, 70 },
	{ 'c', CHECK_OK, 0 },
	{ 'c', CHECK_WARNING, 1 },
	{ 'c', CHECK_CRITICAL, 2 },
	{ 'c', CHECK_UNKNOWN, 3 },
	{ 'c', 42, 70 },
};

START_TEST(test_map)
{
	int code = -1;

	switch (map[_i].kind) {
	case 'd':
		code = exitcode_db((enum db_status)map[_i].status);
		break;
	case 'l':
		code = exitcode_lock((enum lock_result)map[_i].status);
		break;
	case 'c':
		code = exitcode_check((enum check_status)map[_i].status);
		break;
	}
	ck_assert_msg(code == map[_i].code, "%c status %d: exit %d, want %d",
	    map[_i].kind, map[_i].status, code, map[_i].code);
}
END_TEST

static Suite *
exitcode_suite(void)
{
	Suite *s = suite_create("exitcode");
	TCase *tc = tcase_create("exitcode");

	tcase_add_test(tc, test_numbers);
	tcase_add_loop_test(tc, test_map, 0, sizeof map / sizeof map[0]);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(exitcode_suite);
}
