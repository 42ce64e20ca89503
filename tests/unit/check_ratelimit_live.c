/*
 * check_ratelimit_live.c: ratelimit.c's shared statements against the
 * live test server (CRONGUARD_TEST_DB_PORT): quota per UTC day with
 * give-back, rate slots within the horizon, the circuit opening for every
 * instance, one half-open probe, closing on success.  Exits 77 (skip)
 * without a server, a failure under CI=true.
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

/* ------------------------------------------------ against a live server */

static struct db *live_db;
static char       live_name[64];

static void
live_setup(void)
{
	testutil_live_open(
	    "check_ratelimit", &live_db, live_name, sizeof live_name);
}

static void
live_teardown(void)
{
	testutil_live_close(live_db, live_name);
	live_db = NULL;
}

static void
live_sql(const char *sql)
{
	char *errstr = NULL;

	ck_assert_msg(
	    db_query(live_db, NULL, &errstr, "%R", sql) == DB_OK, "%s", errstr);
}

static long long
live_value(const char *sql)
{
	char       *v = NULL, *errstr = NULL;
	long long   n;
	const char *why;

	ck_assert_int_eq(
	    db_query_value(live_db, &v, &errstr, "%R", sql), DB_OK);
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(parse_ll(v, -1000000000LL, 1000000000LL, &n, &why), 0);
	free(v);
	return n;
}

static unsigned
reserve(struct ratelimit *rl, unsigned want)
{
	unsigned g = 12345;
	char    *errstr = NULL;

	ck_assert_msg(
	    ratelimit_reserve(rl, live_db, want, &g, &errstr) == DB_OK, "%s",
	    errstr);
	return g;
}

/* Settle a batch of n where the first sent messages succeeded and the
 * next failed transiently, all started through the send_ctl. */
static void
settle(struct ratelimit *rl, size_t n, size_t sent, size_t failed)
{
	struct outbox_msg m[64], *p[64];
	struct send_ctl   ctl;
	char             *errstr = NULL;
	size_t            i;

	ck_assert_uint_le(n, 64);
	testutil_msgs(m, p, n);
	memset(&ctl, 0, sizeof ctl);
	ratelimit_ctl(rl, &ctl, &stop);
	for (i = 0; i < sent + failed && i < n; i++) {
		if (ctl.before_send != NULL &&
		    ctl.before_send(&ctl, &m[i]) != 0)
			break;
		m[i].result = i < sent ? SEND_OK : SEND_RETRY;
		if (ctl.after_send != NULL)
			ctl.after_send(&ctl, &m[i]);
	}
	ck_assert_msg(ratelimit_settle(rl, live_db, p, n, &errstr) == DB_OK,
	    "%s", errstr);
}

START_TEST(test_live_quota)
{
	struct conf_channel c = testutil_channel(0, 5, 0);
	struct ratelimit   *a, *b;

	live_setup();
	a = ratelimit_new(&c);
	b = ratelimit_new(&c);
	ck_assert_uint_eq(reserve(a, 3), 3);
	ck_assert_uint_eq(reserve(b, 3), 2); /* another instance */
	settle(b, 2, 1, 0);                  /* one unused: given back */
	ck_assert_uint_eq(live_value("SELECT quota_used FROM "
	                             "cronguard_channels WHERE name = 'mail'"),
	    4);
	settle(a, 3, 3, 0);
	ck_assert_uint_eq(reserve(a, 3), 1);
	settle(a, 1, 1, 0);
	ck_assert_uint_eq(reserve(b, 3), 0);
	settle(b, 0, 0, 0);
	/* A new UTC day starts from zero. */
	live_sql("UPDATE cronguard_channels SET quota_day = UTC_DATE() - "
	         "INTERVAL 1 DAY");
	ck_assert_uint_eq(reserve(b, 4), 4);
	settle(b, 4, 4, 0);
	ck_assert_uint_eq(
	    live_value("SELECT quota_used FROM "
	               "cronguard_channels WHERE name = 'mail' AND quota_day = "
	               "UTC_DATE()"),
	    4);
	/* Reserved, but nothing was due, so no batch and no settle: the
	 * next reservation gives it back first (an idle poller must not use
	 * up the day's quota). */
	ck_assert_uint_eq(reserve(a, 1), 1);
	ck_assert_uint_eq(reserve(a, 1), 1);
	ck_assert_uint_eq(reserve(a, 1), 1);
	ck_assert_uint_eq(live_value("SELECT quota_used FROM "
	                             "cronguard_channels WHERE name = 'mail'"),
	    5);
	settle(a, 0, 0, 0);
	ck_assert_uint_eq(live_value("SELECT quota_used FROM "
	                             "cronguard_channels WHERE name = 'mail'"),
	    4);
	ratelimit_free(a);
	ratelimit_free(b);
	live_teardown();
}
END_TEST

START_TEST(test_live_rate)
{
	struct conf_channel c = testutil_channel(20.0, 0, 0); /* 50 ms slots */
	struct ratelimit   *a, *b;
	struct outbox_msg   m[30], *p[30];
	unsigned            g1, g2;
	size_t              i;
	char               *errstr = NULL;

	live_setup();
	a = ratelimit_new(&c);
	b = ratelimit_new(&c);
	/* Slots due within the one-second horizon: 21 (0 .. 1000 ms). */
	g1 = reserve(a, 30);
	ck_assert_uint_eq(g1, 21);
	testutil_msgs(m, p, 30);
	ratelimit_pace(a, p, g1);
	for (i = 1; i < g1; i++)
		ck_assert_int_eq(
		    m[i].not_before_ms - m[i - 1].not_before_ms, 50);
	ck_assert_int_eq(m[g1].not_before_ms, 0);
	/* The next free slot is over a second away: nothing now. */
	g2 = reserve(b, 30);
	ck_assert_uint_le(g2, 1);
	ck_assert_int_eq(ratelimit_settle(a, live_db, p, g1, &errstr), DB_OK);
	ratelimit_free(a);
	ratelimit_free(b);
	live_teardown();
}
END_TEST

START_TEST(test_live_circuit)
{
	struct conf_channel     c = testutil_channel(0, 0, 3);
	struct ratelimit       *a, *b;
	struct ratelimit_state *states;
	size_t                  nstates;
	char                   *errstr = NULL;

	live_setup();
	a = ratelimit_new(&c);
	b = ratelimit_new(&c);
	/* Failures add up across instances. */
	ck_assert_uint_eq(reserve(a, 10), 10);
	settle(a, 10, 0, 2);
	ck_assert_uint_eq(live_value("SELECT circuit_failures FROM "
	                             "cronguard_channels"),
	    2);
	ck_assert_uint_eq(reserve(b, 10), 10);
	settle(b, 10, 0, 5); /* trips after one more */
	ck_assert_uint_eq(live_value("SELECT circuit_failures FROM "
	                             "cronguard_channels"),
	    3);
	ck_assert_uint_eq(live_value("SELECT circuit_open_until > NOW(6) "
	                             "FROM cronguard_channels"),
	    1);
	/* What `outbox check` and an operator see. */
	states = NULL;
	ck_assert_int_eq(
	    ratelimit_states(live_db, &states, &nstates, &errstr), DB_OK);
	ck_assert_uint_eq(nstates, 1);
	ck_assert_str_eq(states[0].channel, "mail");
	ck_assert_int_eq(states[0].circuit, CIRCUIT_OPEN);
	ck_assert_uint_eq(states[0].failures, 3);
	ck_assert_int_gt(states[0].open_for_ms, 50000);
	ck_assert_int_le(states[0].open_for_ms, 60000);
	ck_assert_str_eq(states[0].error, "transient failure");
	ratelimit_states_free(states, nstates);
	/* Open: nothing for anyone. */
	ck_assert_uint_eq(reserve(a, 10), 0);
	ck_assert_uint_eq(reserve(b, 10), 0);
	/* Cooldown over: one probe for one instance. */
	live_sql("UPDATE cronguard_channels SET circuit_open_until = NOW(6) - "
	         "INTERVAL 1 SECOND");
	ck_assert_uint_eq(reserve(a, 10), 1);
	ck_assert_uint_eq(reserve(b, 10), 0);
	/* The probe fails: open again. */
	settle(a, 1, 0, 1);
	ck_assert_uint_eq(live_value("SELECT circuit_open_until > NOW(6) "
	                             "FROM cronguard_channels"),
	    1);
	settle(b, 0, 0, 0);
	live_sql("UPDATE cronguard_channels SET circuit_open_until = NOW(6) - "
	         "INTERVAL 1 SECOND");
	ck_assert_uint_eq(reserve(b, 10), 1);
	ck_assert_int_eq(
	    ratelimit_states(live_db, &states, &nstates, &errstr), DB_OK);
	ck_assert_int_eq(states[0].circuit, CIRCUIT_HALF_OPEN);
	ratelimit_states_free(states, nstates);
	settle(b, 1, 1, 0); /* probe succeeds: closed */
	ck_assert_uint_eq(
	    live_value("SELECT circuit_open_until IS NULL AND "
	               "circuit_failures = 0 FROM cronguard_channels"),
	    1);
	ck_assert_uint_eq(reserve(a, 10), 10);
	settle(a, 10, 10, 0);
	ratelimit_free(a);
	ratelimit_free(b);
	live_teardown();
}
END_TEST

static Suite *
ratelimit_live_suite(void)
{
	Suite *s;
	TCase *tc;

	s = suite_create("ratelimit live");
	tc = tcase_create("live");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_live_quota);
	tcase_add_test(tc, test_live_rate);
	tcase_add_test(tc, test_live_circuit);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_live_main(ratelimit_live_suite);
}
