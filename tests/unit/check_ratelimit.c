/*
 * check_ratelimit.c: the send_ctl hooks without a database (an unlimited
 * channel never touches it: the tests pass a NULL connection).  The
 * shared statements against a live server are check_ratelimit_live.c.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "db.h"
#include "ratelimit.h"
#include "testutil.h"
#include "util.h"

static volatile sig_atomic_t stop;

/* A before_send of the caller's, which an unlimited channel leaves. */
static int
pass(struct send_ctl *ctl, struct outbox_msg *msg)
{
	(void)ctl;
	(void)msg;
	return 0;
}

START_TEST(test_unlimited_no_database)
{
	struct conf_channel c = testutil_channel(0, 0, 0);
	struct ratelimit   *rl = ratelimit_new(&c);
	struct outbox_msg   m[3], *p[3];
	struct send_ctl     ctl;
	unsigned            g = 0;
	char               *err = NULL;

	testutil_msgs(m, p, 3);
	/* A NULL connection: any query would crash. */
	ck_assert_int_eq(ratelimit_reserve(rl, NULL, 50, &g, &err), DB_OK);
	ck_assert_uint_eq(g, 50);
	memset(&ctl, 0, sizeof ctl);
	ctl.before_send = pass;
	ratelimit_ctl(rl, &ctl, &stop);
	ck_assert(ctl.before_send == pass);
	ck_assert(ctl.stop == &stop);
	ratelimit_pace(rl, p, 3);
	ck_assert_int_eq(m[0].not_before_ms, 0);
	m[0].result = SEND_RETRY;
	ck_assert_int_eq(ratelimit_settle(rl, NULL, p, 3, &err), DB_OK);
	ratelimit_free(rl);
}
END_TEST

/* Mid-batch: once the batch's own consecutive transient failures reach
 * `failures`, nothing more starts; a payload refused before sending (no
 * before_send) does not count as the channel answering. */
START_TEST(test_circuit_trips_mid_batch)
{
	struct conf_channel c = testutil_channel(0, 0, 3);
	struct ratelimit   *rl = ratelimit_new(&c);
	struct outbox_msg   m[6], *p[6];
	struct send_ctl     ctl;
	int                 i;

	testutil_msgs(m, p, 6);
	memset(&ctl, 0, sizeof ctl);
	ratelimit_ctl(rl, &ctl, &stop);
	ck_assert_ptr_nonnull(ctl.before_send);

	/* Refused payload: after_send without before_send. */
	m[0].result = SEND_PERMANENT;
	ctl.after_send(&ctl, &m[0]);
	for (i = 1; i <= 2; i++) {
		ck_assert_int_eq(ctl.before_send(&ctl, &m[i]), 0);
		m[i].result = SEND_RETRY;
		ctl.after_send(&ctl, &m[i]);
	}
	/* A success resets the count. */
	ck_assert_int_eq(ctl.before_send(&ctl, &m[3]), 0);
	m[3].result = SEND_OK;
	ctl.after_send(&ctl, &m[3]);
	for (i = 4; i <= 5; i++) {
		ck_assert_int_eq(ctl.before_send(&ctl, &m[i]), 0);
		m[i].result = SEND_RETRY;
		ctl.after_send(&ctl, &m[i]);
	}
	ck_assert_int_eq(ctl.before_send(&ctl, &m[0]), 0);
	m[0].result = SEND_RETRY;
	m[0].error = (char *)"smtp: connection refused";
	ctl.after_send(&ctl, &m[0]);
	/* Three in a row now: the next one is not started. */
	ck_assert_int_ne(ctl.before_send(&ctl, &m[1]), 0);
	m[0].error = NULL;
	ratelimit_free(rl);
}
END_TEST

START_TEST(test_stop_refuses)
{
	struct conf_channel c = testutil_channel(0, 0, 5);
	struct ratelimit   *rl = ratelimit_new(&c);
	struct outbox_msg   m[1], *p[1];
	struct send_ctl     ctl;

	testutil_msgs(m, p, 1);
	memset(&ctl, 0, sizeof ctl);
	ratelimit_ctl(rl, &ctl, &stop);
	stop = 1;
	ck_assert_int_ne(ctl.before_send(&ctl, &m[0]), 0);
	stop = 0;
	ratelimit_free(rl);
}
END_TEST

static Suite *
ratelimit_suite(void)
{
	Suite *s;
	TCase *tc;

	s = suite_create("ratelimit");
	tc = tcase_create("ctl");
	tcase_add_test(tc, test_unlimited_no_database);
	tcase_add_test(tc, test_circuit_trips_mid_batch);
	tcase_add_test(tc, test_stop_refuses);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(ratelimit_suite);
}
