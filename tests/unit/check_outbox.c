/* check_outbox.c: what outbox.c decides without a server: which claimed
 * rows a fenced finalise lost, and a finalise's tally.  Claim, finalise
 * and recover run against the live test server in check_outbox_live.c
 * and tests/integration/t04*; the watchdog's verdict is
 * check_outbox_admin.c's, its formats check_report.c's. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "conf.h"
#include "outbox.h"
#include "testutil.h"

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
	struct conf_outbox  conf = testutil_outbox_conf();
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
