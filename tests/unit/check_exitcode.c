/* check_exitcode.c: the one map from module statuses to exit codes, and
 * the numbers themselves (CONTRACT section 3: never renumbered). */
#include "config.h"

#include <stdlib.h>

#include <check.h>

#include "exitcode.h"

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
	ck_assert_int_eq(EXIT_CONFIG, 78);
	ck_assert_int_eq(EXIT_TIMEOUT, 124);
	ck_assert_int_eq(EXIT_NOEXEC, 126);
	ck_assert_int_eq(EXIT_NOTFOUND, 127);
}
END_TEST

/* Every database failure is 69, however it failed. */
START_TEST(test_db)
{
	ck_assert_int_eq(exitcode_db(DB_OK), 0);
	ck_assert_int_eq(exitcode_db(DB_ERR_CONNECT), 69);
	ck_assert_int_eq(exitcode_db(DB_ERR_LOST), 69);
	ck_assert_int_eq(exitcode_db(DB_ERR_RETRYABLE), 69);
	ck_assert_int_eq(exitcode_db(DB_ERR_QUERY), 69);
	ck_assert_int_eq(exitcode_db((enum db_status)42), 70);
}
END_TEST

START_TEST(test_lock)
{
	ck_assert_int_eq(exitcode_lock(LOCK_OK), 0);
	ck_assert_int_eq(exitcode_lock(LOCK_BUSY), 0);
	ck_assert_int_eq(exitcode_lock(LOCK_ERR_DB), 69);
	ck_assert_int_eq(exitcode_lock(LOCK_ERR_NULL), 69);
	ck_assert_int_eq(exitcode_lock(LOCK_ERR_GALERA), 78);
	ck_assert_int_eq(exitcode_lock(LOCK_ERR_VALUE), 70);
	ck_assert_int_eq(exitcode_lock(LOCK_INCIDENT), 76);
	ck_assert_int_eq(exitcode_lock((enum lock_result)42), 70);
}
END_TEST

START_TEST(test_check)
{
	ck_assert_int_eq(exitcode_check(CHECK_OK), 0);
	ck_assert_int_eq(exitcode_check(CHECK_WARNING), 1);
	ck_assert_int_eq(exitcode_check(CHECK_CRITICAL), 2);
	ck_assert_int_eq(exitcode_check(CHECK_UNKNOWN), 3);
	ck_assert_int_eq(exitcode_check((enum check_status)42), 70);
}
END_TEST

/* The kinds do not bleed into each other: a status number looked up in
 * the wrong kind would give another kind's code. */
START_TEST(test_kinds_apart)
{
	ck_assert_int_eq(exitcode_db((enum db_status)CHECK_CRITICAL), 69);
	ck_assert_int_eq(exitcode_check((enum check_status)DB_ERR_LOST), 2);
	ck_assert_int_eq(exitcode_lock((enum lock_result)LOCK_INCIDENT), 76);
}
END_TEST

static Suite *
exitcode_suite(void)
{
	Suite *s = suite_create("exitcode");
	TCase *tc = tcase_create("exitcode");

	tcase_add_test(tc, test_numbers);
	tcase_add_test(tc, test_db);
	tcase_add_test(tc, test_lock);
	tcase_add_test(tc, test_check);
	tcase_add_test(tc, test_kinds_apart);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(exitcode_suite());
	int      failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
