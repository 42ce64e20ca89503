/* check_outbox.c: the watchdog verdict and the three report formats
 * (cronguard(1), jobs check; cronguard-outbox(7), MONITORING).  Claim, finalise
 * and recover run against the real database in tests/integration/t04*. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "conf.h"
#include "outbox-admin.h"
#include "outbox.h"
#include "report.h"
#include "util.h"
#include "testutil.h"

/* The report appended to b, as the tests compare it. */
static void
report_into(struct buf *b, enum report_format fmt,
    const struct outbox_counts *k, const struct conf_outbox *c,
    enum check_status s, const char *error)
{
	char *text = report_outbox(fmt, k, c, s, error);

	buf_adds(b, text);
	free(text);
}

static struct conf_outbox
conf_thresholds(void)
{
	struct conf c;

	conf_defaults(&c);
	return c.outbox;
}

static struct outbox_counts
counts(long long pending, long long due, long long processing, long long stale,
    long long stuck, long long failed, long long oldest, long long unknown)
{
	struct outbox_counts k;

	memset(&k, 0, sizeof k);
	k.pending = pending;
	k.due = due;
	k.processing = processing;
	k.stale = stale;
	k.stuck = stuck;
	k.failed = failed;
	k.oldest_due_age_s = oldest;
	k.unknown_channel = unknown;
	return k;
}

START_TEST(test_nagios_contract_example)
{
	struct conf_outbox   c = conf_thresholds();
	struct outbox_counts k = counts(14, 3, 2, 0, 2, 1, 12, 0);
	struct buf           b;

	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_CRITICAL);
	buf_init(&b);
	report_into(&b, REPORT_NAGIOS, &k, &c, CHECK_CRITICAL, NULL);
	/* cronguard-outbox(7), MONITORING, then the unknown_channel count as
	 * extra perfdata. */
	ck_assert_str_eq(b.data,
	    "OUTBOX CRITICAL - stuck=2 stale=0 "
	    "pending=14 due=3 failed=1 oldest_due=12s | "
	    "pending=14;1000;10000 due=3 processing=2 stale=0 stuck=2;;0 "
	    "failed=1;1;100 oldest_due=12s;300;1800 unknown_channel=0 "
	    "circuit_open=0;0\n");
	buf_free(&b);
}
END_TEST

START_TEST(test_verdicts)
{
	struct conf_outbox   c = conf_thresholds();
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
	struct conf_outbox   c = conf_thresholds();
	struct outbox_counts k = counts(14, 3, 2, 0, 2, 1, 12, 4);
	struct buf           b;

	buf_init(&b);
	report_into(&b, REPORT_JSON, &k, &c, CHECK_CRITICAL, NULL);
	ck_assert_str_eq(b.data,
	    "{\"status\":\"CRITICAL\",\"pending\":14,"
	    "\"due\":3,\"processing\":2,\"stale\":0,\"stuck\":2,\"failed\":1,"
	    "\"oldest_due_age_seconds\":12,\"unknown_channel\":4,"
	    "\"expired\":0,\"blocked\":0,\"oldest_blocked_age_seconds\":0,"
	    "\"circuit_open\":0,\"channels\":{},\"paused\":[]}\n");
	buf_reset(&b);
	report_into(&b, REPORT_JSON, NULL, &c, CHECK_UNKNOWN, "db down");
	ck_assert_str_eq(
	    b.data, "{\"status\":\"UNKNOWN\",\"error\":\"db down\"}\n");
	buf_free(&b);
}
END_TEST

START_TEST(test_prometheus)
{
	struct conf_outbox   c = conf_thresholds();
	struct outbox_counts k = counts(14, 3, 2, 0, 2, 1, 12, 4);
	struct buf           b;

	buf_init(&b);
	report_into(&b, REPORT_PROMETHEUS, &k, &c, CHECK_CRITICAL, NULL);
	ck_assert_ptr_nonnull(strstr(
	    b.data, "\ncronguard_outbox_messages{status=\"pending\"} 14\n"));
	ck_assert_ptr_nonnull(strstr(
	    b.data, "\ncronguard_outbox_messages{status=\"failed\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(b.data, "\ncronguard_outbox_stuck 2\n"));
	ck_assert_ptr_nonnull(
	    strstr(b.data, "\ncronguard_outbox_oldest_due_age_seconds 12\n"));
	ck_assert_ptr_nonnull(
	    strstr(b.data, "\ncronguard_outbox_unknown_channel 4\n"));
	ck_assert_ptr_nonnull(strstr(b.data, "\ncronguard_outbox_up 1\n"));
	ck_assert_ptr_nonnull(
	    strstr(b.data, "\ncronguard_outbox_check_status 2\n"));
	ck_assert_ptr_nonnull(
	    strstr(b.data, "# TYPE cronguard_outbox_stuck gauge\n"));
	buf_reset(&b);
	report_into(&b, REPORT_PROMETHEUS, NULL, &c, CHECK_UNKNOWN, "x");
	ck_assert_ptr_nonnull(strstr(b.data, "\ncronguard_outbox_up 0\n"));
	ck_assert_ptr_null(strstr(b.data, "cronguard_outbox_messages"));
	buf_free(&b);
}
END_TEST

START_TEST(test_nagios_unknown)
{
	struct conf_outbox c = conf_thresholds();
	struct buf         b;

	buf_init(&b);
	report_into(&b, REPORT_NAGIOS, NULL, &c, CHECK_UNKNOWN,
	    "cannot connect to 127.0.0.1:1: refused");
	ck_assert_str_eq(b.data,
	    "OUTBOX UNKNOWN - cannot connect to "
	    "127.0.0.1:1: refused\n");
	buf_free(&b);
}
END_TEST

/* Two configured channels' limiter states: mail open, hook closed. */
START_TEST(test_circuit_report)
{
	struct conf_outbox     c = conf_thresholds();
	struct outbox_counts   k = counts(5, 5, 0, 0, 0, 0, 3, 0);
	struct ratelimit_state st[2];
	struct outbox_quota    q[2]; /* parallel to st: none used up */
	char                   mail[] = "mail", hook[] = "hook";
	char                   err[] = "connect failed: refused";
	struct buf             b;

	memset(st, 0, sizeof st);
	st[0].channel = hook;
	st[0].circuit = CIRCUIT_CLOSED;
	st[0].quota_used = 17;
	st[1].channel = mail;
	st[1].circuit = CIRCUIT_OPEN;
	st[1].failures = 3;
	st[1].open_for_ms = 41200;
	st[1].error = err;
	k.channels = st;
	k.nchannels = 2;
	memset(q, 0, sizeof q);
	k.quota = q;
	k.circuit_open = 1;

	/* an open circuit alone is a WARNING, and so is a half-open one */
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_WARNING);
	buf_init(&b);
	report_into(&b, REPORT_NAGIOS, &k, &c, CHECK_WARNING, NULL);
	ck_assert_str_eq(b.data,
	    "OUTBOX WARNING - stuck=0 stale=0 "
	    "pending=5 due=5 failed=0 oldest_due=3s circuit_open=mail | "
	    "pending=5;1000;10000 due=5 processing=0 stale=0 stuck=0;;0 "
	    "failed=0;1;100 oldest_due=3s;300;1800 unknown_channel=0 "
	    "circuit_open=1;0 quota_used_hook=17 quota_used_mail=0\n");
	buf_reset(&b);
	report_into(&b, REPORT_JSON, &k, &c, CHECK_WARNING, NULL);
	ck_assert_ptr_nonnull(strstr(b.data,
	    "\"circuit_open\":1,"
	    "\"channels\":{\"hook\":{\"circuit\":\"closed\","
	    "\"failures\":0,\"open_for_seconds\":0,\"quota_used\":17,"
	    "\"quota_exhausted\":false},"
	    "\"mail\":{\"circuit\":\"open\",\"failures\":3,"
	    "\"open_for_seconds\":42,\"quota_used\":0,"
	    "\"error\":\"connect failed: refused\","
	    "\"quota_exhausted\":false}},\"paused\":[]}\n"));
	buf_reset(&b);
	report_into(&b, REPORT_PROMETHEUS, &k, &c, CHECK_WARNING, NULL);
	ck_assert_ptr_nonnull(strstr(
	    b.data, "\ncronguard_outbox_circuit_open{channel=\"mail\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(
	    b.data, "\ncronguard_outbox_circuit_open{channel=\"hook\"} 0\n"));
	ck_assert_ptr_nonnull(strstr(
	    b.data, "\ncronguard_outbox_quota_used{channel=\"hook\"} 17\n"));
	ck_assert_ptr_nonnull(strstr(b.data,
	    "\ncronguard_outbox_circuit_failures{channel=\"mail\"} 3\n"));
	ck_assert_ptr_nonnull(
	    strstr(b.data, "# TYPE cronguard_outbox_circuit_open gauge\n"));

	st[1].circuit = CIRCUIT_HALF_OPEN;
	buf_reset(&b);
	report_into(&b, REPORT_JSON, &k, &c, CHECK_WARNING, NULL);
	ck_assert_ptr_nonnull(strstr(b.data, "\"circuit\":\"half-open\""));
	k.circuit_open = 0;
	ck_assert_int_eq(outbox_verdict(&k, &c), CHECK_OK);
	buf_free(&b);
}
END_TEST

/*
 * The finalise's lease-lost accounting, from what a fenced finalise found
 * afterwards: rows (id, claim_token <=> ours).  Row 1 still ours; 2 taken
 * by another claim; 3 gone (purged) though it was to be updated; 4 to be
 * deleted and gone (our DELETE, or someone else's: not lost); 5 to be
 * deleted but present with another token; 6 ours, the bool written as the
 * string "0" must not read as true; 7 a NULL bool.
 */
START_TEST(test_lost_ids)
{
	struct outbox_msg  m[7];
	struct outbox_msg *pm[7];
	struct claim       c;
	unsigned char      deleted[7] = { 0, 0, 0, 1, 1, 0, 0 };
	char              *r1[] = { "1", "1" }, *r2[] = { "2", "0" };
	char              *r5[] = { "5", "0" }, *r6[] = { "6", "0" };
	char              *r7[] = { "7", NULL };
	char              *r3[] = { "3", "1" };
	char             **rows[] = { r1, r2, r5, r6, r7 }, **all[6];
	struct db_result   found;
	unsigned long long lost[7];
	size_t             i, n;

	memset(&c, 0, sizeof c);
	memset(m, 0, sizeof m);
	for (i = 0; i < 7; i++) {
		m[i].id = i + 1;
		pm[i] = &m[i];
	}
	c.msgs = pm;
	c.n = 7;
	memset(&found, 0, sizeof found);
	found.ncols = 2;
	found.rows = rows;
	found.nrows = 5;

	n = outbox_lost_ids(&c, deleted, &found, lost);
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(lost[0], 2);
	ck_assert_uint_eq(lost[1], 3);
	ck_assert_uint_eq(lost[2], 5);
	ck_assert_uint_eq(lost[3], 6);
	ck_assert_uint_eq(lost[4], 7);

	/* everything still ours (5 now to be updated): nothing lost */
	r2[1] = r5[1] = r6[1] = r7[1] = "1";
	deleted[4] = 0;
	all[0] = r1;
	all[1] = r2;
	all[2] = r3;
	all[3] = r5;
	all[4] = r6;
	all[5] = r7;
	found.rows = all;
	found.nrows = 6;
	n = outbox_lost_ids(&c, deleted, &found, lost);
	ck_assert_uint_eq(n, 0);
}
END_TEST

/* A finalise's tally: each row by its result, a lost row as lost only
 * (it was once counted twice: as retried and as lost). */
START_TEST(test_tally_claim)
{
	struct conf_outbox  conf = conf_thresholds();
	struct outbox_msg   m[6];
	struct outbox_msg  *pm[6];
	struct claim        c;
	struct outbox_tally t;
	unsigned long long  lost[] = { 2, 5 };
	enum send_result    r[6] = { SEND_OK, SEND_RETRY, SEND_RETRY,
		   SEND_PERMANENT, SEND_NONE, SEND_NONE };
	size_t              i;

	memset(&c, 0, sizeof c);
	memset(m, 0, sizeof m);
	for (i = 0; i < 6; i++) {
		m[i].id = i + 1;
		m[i].result = r[i];
		pm[i] = &m[i];
	}
	m[2].attempts = conf.max_attempts - 1; /* its last attempt */
	c.msgs = pm;
	c.n = 6;

	memset(&t, 0, sizeof t);
	outbox_tally_claim(&conf, &c, NULL, 0, &t);
	ck_assert_uint_eq(t.sent, 1);
	ck_assert_uint_eq(t.retried, 1);
	ck_assert_uint_eq(t.failed, 2);
	ck_assert_uint_eq(t.released, 2);
	ck_assert_uint_eq(t.lost, 0);

	memset(&t, 0, sizeof t);
	outbox_tally_claim(&conf, &c, lost, 2, &t);
	ck_assert_uint_eq(t.sent, 1);
	ck_assert_uint_eq(t.retried, 0);
	ck_assert_uint_eq(t.failed, 2);
	ck_assert_uint_eq(t.released, 1);
	ck_assert_uint_eq(t.lost, 2);

	/* every row lost: nothing else counted; adds to what t holds */
	for (i = 0; i < 6; i++)
		m[i].result = SEND_RETRY;
	{
		unsigned long long all[] = { 6, 5, 4, 3, 2, 1 };

		outbox_tally_claim(&conf, &c, all, 6, &t);
	}
	ck_assert_uint_eq(t.lost, 8);
	ck_assert_uint_eq(t.retried, 0);
	ck_assert_uint_eq(t.sent, 1);
}
END_TEST

static Suite *
outbox_suite(void)
{
	Suite *s = suite_create("outbox");
	TCase *tc = tcase_create("outbox");

	tcase_add_test(tc, test_nagios_contract_example);
	tcase_add_test(tc, test_verdicts);
	tcase_add_test(tc, test_json);
	tcase_add_test(tc, test_prometheus);
	tcase_add_test(tc, test_nagios_unknown);
	tcase_add_test(tc, test_circuit_report);
	tcase_add_test(tc, test_lost_ids);
	tcase_add_test(tc, test_tally_claim);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(outbox_suite);
}
