/* check_outbox.c: the watchdog verdict and the three report formats
 * (CONTRACT section 7).  Claim, finalise and recover run against the real
 * database in tests/integration/t04*. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "conf.h"
#include "outbox.h"
#include "report.h"
#include "util.h"

static struct conf_outbox
conf_thresholds(void)
{
	struct conf c;

	conf_defaults(&c);
	return c.outbox;
}

static struct outbox_counts
counts(long long pending, long long due, long long processing,
    long long stale, long long stuck, long long failed, long long oldest,
    long long unknown)
{
	struct outbox_counts k = { pending, due, processing, stale, stuck,
	    failed, oldest, unknown };

	return k;
}

START_TEST(test_nagios_contract_example)
{
	struct conf_outbox c = conf_thresholds();
	struct outbox_counts k = counts(14, 3, 2, 0, 2, 1, 12, 0);
	struct buf	 b;

	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_CRITICAL);
	buf_init(&b);
	outbox_report(&b, REPORT_NAGIOS, &k, &c, CHECK_CRITICAL, NULL);
	/* CONTRACT 7, then the unknown_channel count as extra perfdata. */
	ck_assert_str_eq(b.data, "OUTBOX CRITICAL - stuck=2 stale=0 "
	    "pending=14 due=3 failed=1 oldest_due=12s | "
	    "pending=14;1000;10000 due=3 processing=2 stale=0 stuck=2;;0 "
	    "failed=1;1;100 oldest_due=12s;300;1800 unknown_channel=0\n");
	buf_free(&b);
}
END_TEST

START_TEST(test_verdicts)
{
	struct conf_outbox c = conf_thresholds();
	struct outbox_counts k;

	k = counts(0, 0, 0, 0, 0, 0, 0, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_OK);
	k = counts(999, 0, 0, 0, 0, 0, 0, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_OK);
	k = counts(1000, 0, 0, 0, 0, 0, 0, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_WARNING);
	k = counts(10000, 0, 0, 0, 0, 0, 0, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_CRITICAL);
	k = counts(1, 1, 0, 0, 0, 0, 299, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_OK);
	k = counts(1, 1, 0, 0, 0, 0, 300, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_WARNING);
	k = counts(1, 1, 0, 0, 0, 0, 1800, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_CRITICAL);
	k = counts(0, 0, 0, 0, 0, 1, 0, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_WARNING);
	k = counts(0, 0, 0, 0, 0, 100, 0, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_CRITICAL);
	/* stale alone is the recoverer's business, not an alarm */
	k = counts(0, 0, 3, 3, 0, 0, 0, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_OK);
	k = counts(0, 0, 3, 3, 1, 0, 0, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_CRITICAL);
	k = counts(2, 0, 0, 0, 0, 0, 0, 2);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_WARNING);
	/* a zero threshold is disabled */
	c.failed_warn = 0;
	k = counts(0, 0, 0, 0, 0, 5, 0, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_OK);
}
END_TEST

START_TEST(test_json)
{
	struct conf_outbox c = conf_thresholds();
	struct outbox_counts k = counts(14, 3, 2, 0, 2, 1, 12, 4);
	struct buf	 b;

	buf_init(&b);
	outbox_report(&b, REPORT_JSON, &k, &c, CHECK_CRITICAL, NULL);
	ck_assert_str_eq(b.data, "{\"status\":\"CRITICAL\",\"pending\":14,"
	    "\"due\":3,\"processing\":2,\"stale\":0,\"stuck\":2,\"failed\":1,"
	    "\"oldest_due_age_seconds\":12,\"unknown_channel\":4}\n");
	buf_reset(&b);
	outbox_report(&b, REPORT_JSON, NULL, &c, CHECK_UNKNOWN, "db down");
	ck_assert_str_eq(b.data, "{\"status\":\"UNKNOWN\",\"error\":\"db down\"}\n");
	buf_free(&b);
}
END_TEST

START_TEST(test_prometheus)
{
	struct conf_outbox c = conf_thresholds();
	struct outbox_counts k = counts(14, 3, 2, 0, 2, 1, 12, 4);
	struct buf	 b;

	buf_init(&b);
	outbox_report(&b, REPORT_PROMETHEUS, &k, &c, CHECK_CRITICAL, NULL);
	ck_assert_ptr_nonnull(strstr(b.data,
	    "\ncronguard_outbox_messages{status=\"pending\"} 14\n"));
	ck_assert_ptr_nonnull(strstr(b.data,
	    "\ncronguard_outbox_messages{status=\"failed\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(b.data, "\ncronguard_outbox_stuck 2\n"));
	ck_assert_ptr_nonnull(strstr(b.data,
	    "\ncronguard_outbox_oldest_due_age_seconds 12\n"));
	ck_assert_ptr_nonnull(strstr(b.data,
	    "\ncronguard_outbox_unknown_channel 4\n"));
	ck_assert_ptr_nonnull(strstr(b.data, "\ncronguard_outbox_up 1\n"));
	ck_assert_ptr_nonnull(strstr(b.data,
	    "\ncronguard_outbox_check_status 2\n"));
	ck_assert_ptr_nonnull(strstr(b.data,
	    "# TYPE cronguard_outbox_stuck gauge\n"));
	buf_reset(&b);
	outbox_report(&b, REPORT_PROMETHEUS, NULL, &c, CHECK_UNKNOWN, "x");
	ck_assert_ptr_nonnull(strstr(b.data, "\ncronguard_outbox_up 0\n"));
	ck_assert_ptr_null(strstr(b.data, "cronguard_outbox_messages"));
	buf_free(&b);
}
END_TEST

START_TEST(test_nagios_unknown)
{
	struct conf_outbox c = conf_thresholds();
	struct buf	 b;

	buf_init(&b);
	outbox_report(&b, REPORT_NAGIOS, NULL, &c, CHECK_UNKNOWN,
	    "cannot connect to 127.0.0.1:1: refused");
	ck_assert_str_eq(b.data, "OUTBOX UNKNOWN - cannot connect to "
	    "127.0.0.1:1: refused\n");
	buf_free(&b);
}
END_TEST

static Suite *
outbox_suite(void)
{
	Suite	*s = suite_create("outbox");
	TCase	*tc = tcase_create("outbox");

	tcase_add_test(tc, test_nagios_contract_example);
	tcase_add_test(tc, test_verdicts);
	tcase_add_test(tc, test_json);
	tcase_add_test(tc, test_prometheus);
	tcase_add_test(tc, test_nagios_unknown);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr = srunner_create(outbox_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
