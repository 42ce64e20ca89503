/*
 * check_ratelimit.c: the send_ctl hooks without a database (an unlimited
 * channel never touches it: the tests pass a NULL connection), and the
 * shared statements against a live server when CRONGUARD_TEST_DB_PORT
 * names one: quota per UTC day with give-back, rate slots within the
 * horizon, the circuit opening for every instance, one half-open probe,
 * closing on success.
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

static struct conf_channel
channel(double rate, long long quota, unsigned failures)
{
	struct conf_channel c;

	memset(&c, 0, sizeof c);
	c.name = (char *)"mail";
	c.type = CHANNEL_SMTP;
	c.timeout_ms = 1000;
	c.rate = rate;
	c.daily_quota = quota;
	c.circuit_failures = failures;
	c.circuit_cooldown_ms = 60000;
	return c;
}

static void
msgs_init(struct outbox_msg *m, struct outbox_msg **p, size_t n)
{
	size_t i;

	memset(m, 0, n * sizeof *m);
	for (i = 0; i < n; i++) {
		m[i].id = i + 1;
		p[i] = &m[i];
	}
}

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
	struct conf_channel c = channel(0, 0, 0);
	struct ratelimit   *rl = ratelimit_new(&c);
	struct outbox_msg   m[3], *p[3];
	struct send_ctl     ctl;
	unsigned            g = 0;
	char               *err = NULL;

	msgs_init(m, p, 3);
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
	struct conf_channel c = channel(0, 0, 3);
	struct ratelimit   *rl = ratelimit_new(&c);
	struct outbox_msg   m[6], *p[6];
	struct send_ctl     ctl;
	int                 i;

	msgs_init(m, p, 6);
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
	struct conf_channel c = channel(0, 0, 5);
	struct ratelimit   *rl = ratelimit_new(&c);
	struct outbox_msg   m[1], *p[1];
	struct send_ctl     ctl;

	msgs_init(m, p, 1);
	memset(&ctl, 0, sizeof ctl);
	ratelimit_ctl(rl, &ctl, &stop);
	stop = 1;
	ck_assert_int_ne(ctl.before_send(&ctl, &m[0]), 0);
	stop = 0;
	ratelimit_free(rl);
}
END_TEST

/* ------------------------------------------------ against a live server */

static struct db *live_db;
static char       live_name[64];

static int
live_setup(void)
{
	struct conf_database c;
	const char          *dir;
	char                *errstr = NULL, *sql, *path;
	size_t               len;
	struct db           *admin = NULL;

	if (!testutil_live_db(&c))
		return 0;
	ck_assert_int_eq(db_connect(&c, &admin, &errstr), DB_OK);
	snprintf(
	    live_name, sizeof live_name, "check_ratelimit_%ld", (long)getpid());
	ck_assert_int_eq(db_query(admin, NULL, &errstr,
	                     "DROP DATABASE IF EXISTS %I", live_name),
	    DB_OK);
	ck_assert_int_eq(
	    db_query(admin, NULL, &errstr, "CREATE DATABASE %I", live_name),
	    DB_OK);
	db_close(admin);

	c.name = live_name;
	ck_assert_int_eq(db_connect(&c, &live_db, &errstr), DB_OK);
	if ((dir = getenv("CRONGUARD_SQLDIR")) == NULL)
		dir = "sql"; /* make check sets CRONGUARD_SQLDIR */
	path = xasprintf("%s/004_channels.sql", dir);
	sql = read_file(path, 1 << 20, &len, &errstr);
	ck_assert_msg(sql != NULL, "%s", errstr);
	ck_assert_int_eq(db_exec_script(live_db, sql, &errstr), DB_OK);
	free(sql);
	free(path);
	return 1;
}

static void
live_teardown(void)
{
	char *errstr = NULL;

	ck_assert_int_eq(
	    db_query(live_db, NULL, &errstr, "DROP DATABASE %I", live_name),
	    DB_OK);
	db_close(live_db);
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
	msgs_init(m, p, n);
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
	struct conf_channel c = channel(0, 5, 0);
	struct ratelimit   *a, *b;

	if (!live_setup())
		return;
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
	struct conf_channel c = channel(20.0, 0, 0); /* 50 ms slots */
	struct ratelimit   *a, *b;
	struct outbox_msg   m[30], *p[30];
	unsigned            g1, g2;
	size_t              i;
	char               *errstr = NULL;

	if (!live_setup())
		return;
	a = ratelimit_new(&c);
	b = ratelimit_new(&c);
	/* Slots due within the one-second horizon: 21 (0 .. 1000 ms). */
	g1 = reserve(a, 30);
	ck_assert_uint_eq(g1, 21);
	msgs_init(m, p, 30);
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
	struct conf_channel     c = channel(0, 0, 3);
	struct ratelimit       *a, *b;
	struct ratelimit_state *states;
	size_t                  nstates;
	char                   *errstr = NULL;

	if (!live_setup())
		return;
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
	SRunner *sr;
	int      failed;

	sr = srunner_create(ratelimit_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
