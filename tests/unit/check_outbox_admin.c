/* check_outbox_admin.c: what outbox-admin.c does without a server: the
 * watchdog's verdict (cronguard-outbox(7), MONITORING), freeing the counts,
 * and a change of no ids.  Its statements run against the real database
 * in tests/integration/t0430, t0470, t0471 and t1225. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "conf.h"
#include "outbox-admin.h"
#include "testutil.h"
#include "util.h"

START_TEST(test_verdicts)
{
	struct conf_outbox   c = testutil_outbox_conf();
	struct outbox_counts k;

	k = testutil_counts(0, 0, 0, 0, 0, 0, 0, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_OK);
	k = testutil_counts(999, 0, 0, 0, 0, 0, 0, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_OK);
	k = testutil_counts(1000, 0, 0, 0, 0, 0, 0, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_WARNING);
	k = testutil_counts(10000, 0, 0, 0, 0, 0, 0, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_CRITICAL);
	k = testutil_counts(1, 1, 0, 0, 0, 0, 299, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_OK);
	k = testutil_counts(1, 1, 0, 0, 0, 0, 300, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_WARNING);
	k = testutil_counts(1, 1, 0, 0, 0, 0, 1800, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_CRITICAL);
	k = testutil_counts(0, 0, 0, 0, 0, 1, 0, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_WARNING);
	k = testutil_counts(0, 0, 0, 0, 0, 100, 0, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_CRITICAL);
	/* stale alone is the recoverer's business, not an alarm */
	k = testutil_counts(0, 0, 3, 3, 0, 0, 0, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_OK);
	k = testutil_counts(0, 0, 3, 3, 1, 0, 0, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_CRITICAL);
	k = testutil_counts(2, 0, 0, 0, 0, 0, 0, 2);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_WARNING);
	/* a zero threshold is disabled */
	c.failed_warn = 0;
	k = testutil_counts(0, 0, 0, 0, 0, 5, 0, 0);
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_OK);
}
END_TEST

/* Each threshold disabled alone: the others still judge. */
START_TEST(test_zero_thresholds)
{
	struct conf_outbox   c = testutil_outbox_conf();
	struct outbox_counts k =
	    testutil_counts(20000, 20000, 0, 0, 0, 500, 4000, 0);

	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_CRITICAL);
	c.pending_crit = 0;
	c.oldest_due_crit_ms = 0;
	c.failed_crit = 0;
	/* the warnings are left */
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_WARNING);
	c.pending_warn = 0;
	c.failed_warn = 0;
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_WARNING);
	c.oldest_due_warn_ms = 0;
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_OK);
	/* stuck is never disabled */
	k.stuck = 1;
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_CRITICAL);
}
END_TEST

/* An open or half-open circuit is a WARNING, never worse: its rows wait
 * without spending an attempt. */
START_TEST(test_circuit_verdict)
{
	struct conf_outbox   c = testutil_outbox_conf();
	struct outbox_counts k = testutil_counts(5, 5, 0, 0, 0, 0, 3, 0);

	k.circuit_open = 1;
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_WARNING);
	k.circuit_open = 2;
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_WARNING);
	k.circuit_open = 0;
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_OK);
}
END_TEST

/* A used-up daily quota: a WARNING, CRITICAL when due rows wait behind
 * it until midnight UTC. */
START_TEST(test_quota_verdict)
{
	struct conf_outbox   c = testutil_outbox_conf();
	struct outbox_counts k = testutil_counts(0, 0, 0, 0, 0, 0, 0, 0);

	k.quota_exhausted = 1;
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_WARNING);
	k.quota_blocked = 1;
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_CRITICAL);
	/* the worst of all wins, whatever the order of the checks */
	k.quota_blocked = 0;
	k.stuck = 1;
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_CRITICAL);
}
END_TEST

/* What outbox_count and outbox_count_channels allocate goes, the counts
 * stay (ASan reports a leak or a double free). */
START_TEST(test_counts_free)
{
	struct outbox_counts k = testutil_counts(7, 1, 0, 0, 0, 2, 0, 0);

	k.channels = xcalloc(2, sizeof *k.channels);
	k.channels[0].channel = xstrdup("mail");
	k.channels[0].error = xstrdup("refused");
	k.channels[1].channel = xstrdup("hook");
	k.channels[1].quota_resets_at = xstrdup("2026-12-02T00:00:00Z");
	k.nchannels = 2;
	k.quota = xcalloc(2, sizeof *k.quota);
	k.circuit_open = 1;
	k.quota_exhausted = k.quota_blocked = 1;
	k.paused = xcalloc(1, sizeof *k.paused);
	k.paused[0].channel = xstrdup("mail");
	k.paused[0].paused_at = xstrdup("2026-12-01 21:00:00");
	k.paused[0].paused_by = xstrdup("kim@web1:42");
	k.paused[0].reason = xstrdup("template fix");
	k.npaused = 1;
	outbox_counts_free(&k);
	ck_assert_ptr_null(k.channels);
	ck_assert_ptr_null(k.quota);
	ck_assert_ptr_null(k.paused);
	ck_assert_uint_eq(k.nchannels, 0);
	ck_assert_uint_eq(k.npaused, 0);
	ck_assert_int_eq(k.circuit_open, 0);
	ck_assert_int_eq(k.quota_exhausted, 0);
	ck_assert_int_eq(k.quota_blocked, 0);
	ck_assert_int_eq(k.pending, 7);
	ck_assert_int_eq(k.failed, 2);
	/* twice is harmless */
	outbox_counts_free(&k);
}
END_TEST

/* No ids: no statement (the connection is not touched), nothing
 * changed. */
START_TEST(test_no_ids)
{
	unsigned long long n = 99;
	char              *errstr = NULL;

	ck_assert_int_eq(
	    outbox_ids(NULL, OUTBOX_IDS_PURGE, NULL, 0, NULL, &n, &errstr),
	    DB_OK);
	ck_assert(n == 0);
	ck_assert_ptr_null(errstr);
}
END_TEST

static Suite *
outbox_admin_suite(void)
{
	Suite *s = suite_create("outbox-admin");
	TCase *tc = tcase_create("outbox-admin");

	tcase_add_test(tc, test_verdicts);
	tcase_add_test(tc, test_zero_thresholds);
	tcase_add_test(tc, test_circuit_verdict);
	tcase_add_test(tc, test_quota_verdict);
	tcase_add_test(tc, test_counts_free);
	tcase_add_test(tc, test_no_ids);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(outbox_admin_suite);
}
