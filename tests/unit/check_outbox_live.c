/*
 * check_outbox_live.c: outbox.c's own claim, finalise and recover
 * statements against the live test server (CRONGUARD_TEST_DB_PORT; a
 * database of its own with every migration applied; exit 77 without a
 * server, a failure under CI=true).
 *
 * The session is READ COMMITTED, as dispatch_run sets it.  Removing the
 * claim_token fence from the finalise UPDATE fails test_finalise_fenced.
 * A claim beside another claim's open transaction is t0423.
 */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "conf.h"
#include "db.h"
#include "outbox.h"
#include "testutil.h"
#include "util.h"

static struct db  *db;
static char        dbname[64];
static struct conf cf;

static void
setup(void)
{
	char *errstr = NULL;

	conf_defaults(&cf);
	testutil_live_open("check_outbox", &db, dbname, sizeof dbname);
	ck_assert_msg(db_query(db, NULL, &errstr,
	                  "SET SESSION TRANSACTION ISOLATION LEVEL READ "
	                  "COMMITTED") == DB_OK,
	    "%s", errstr);
}

static void
teardown(void)
{
	testutil_live_close(db, dbname);
	db = NULL;
}

static void
sql(struct db *on, const char *fmt, ...)
{
	char          *errstr = NULL;
	va_list        ap;
	enum db_status st;

	va_start(ap, fmt);
	st = db_vquery(on, NULL, &errstr, fmt, ap);
	va_end(ap);
	ck_assert_msg(st == DB_OK, "%s: %s", fmt, errstr);
}

/* The one value of a query, as text ("NULL" for NULL); the caller frees. */
static char *
value(const char *fmt, ...)
{
	struct db_result *res = NULL;
	char             *errstr = NULL, *v;
	va_list           ap;
	enum db_status    st;

	va_start(ap, fmt);
	st = db_vquery(db, &res, &errstr, fmt, ap);
	va_end(ap);
	ck_assert_msg(st == DB_OK, "%s: %s", fmt, errstr);
	ck_assert_uint_eq(res->nrows, 1);
	v = xstrdup(db_cell(res, 0, 0) != NULL ? db_cell(res, 0, 0) : "NULL");
	db_result_free(res);
	return v;
}

#define VALUE_EQ(want, ...) \
	do { \
		char *v_ = value(__VA_ARGS__); \
		ck_assert_str_eq(v_, want); \
		free(v_); \
	} while (0)

/* n PENDING rows of channel, due seconds ago (ids in insert order). */
static void
insert(const char *channel, const char *key, int n, int due_s_ago)
{
	char *errstr = NULL;
	int   i;

	for (i = 0; i < n; i++)
		ck_assert_msg(db_query(db, NULL, &errstr,
		                  "INSERT INTO outbox_messages (channel,"
		                  " event_type, ordering_key, payload,"
		                  " next_attempt_at) VALUES (%s, 't', %s,"
		                  " '{}', NOW(6) - INTERVAL %d SECOND)",
		                  channel, key, due_s_ago) == DB_OK,
		    "%s", errstr);
}

static void
claim(const char *channel, unsigned limit, struct claim *c)
{
	const char *names[] = { channel };
	char       *errstr = NULL;

	ck_assert_msg(outbox_claim(db, &cf.outbox, names, 1, limit, NULL, c,
	                  &errstr) == DB_OK,
	    "%s", errstr);
}

static void
finalise(struct claim *c, struct outbox_tally *t)
{
	char *errstr = NULL;

	memset(t, 0, sizeof *t);
	ck_assert_msg(outbox_finalise(db, &cf.outbox, c, t, &errstr) == DB_OK,
	    "%s", errstr);
}

/* The claim's ids, comma-joined (for comparing with GROUP_CONCAT). */
static char *
claim_ids(const struct claim *c)
{
	struct buf b;
	size_t     i;

	buf_init(&b);
	for (i = 0; i < c->n; i++)
		buf_printf(&b, "%s%llu", i ? "," : "", c->msgs[i]->id);
	return buf_steal(&b);
}

START_TEST(test_claim_due_oldest_first)
{
	struct claim c;
	char        *ids;
	size_t       i;

	insert("a", NULL, 2, 10);  /* ids 1, 2 */
	insert("a", NULL, 2, 20);  /* ids 3, 4: due earlier */
	insert("b", NULL, 1, 30);  /* other channel */
	insert("a", NULL, 1, -60); /* not due yet */
	sql(db,
	    "INSERT INTO outbox_messages (channel, event_type, payload,"
	    " status) VALUES ('a', 't', '{}', 'FAILED')");

	claim("a", 3, &c);
	ck_assert_uint_eq(c.n, 3);
	ids = claim_ids(&c);
	ck_assert_str_eq(ids, "3,4,1");
	for (i = 0; i < c.n; i++) {
		ck_assert_int_eq(c.msgs[i]->result, SEND_NONE);
		ck_assert_uint_eq(c.msgs[i]->attempts, 0);
		ck_assert_str_eq(c.msgs[i]->channel, "a");
		ck_assert_uint_eq(strlen(c.msgs[i]->message_id), 36);
	}
	/* Claimed with one fresh token, the rest untouched. */
	VALUE_EQ("1,3,4",
	    "SELECT GROUP_CONCAT(id ORDER BY id) FROM outbox_messages"
	    " WHERE status = 'PROCESSING' AND claim_token = %s"
	    " AND claimed_at IS NOT NULL AND claimed_by IS NOT NULL",
	    c.token);
	VALUE_EQ("2,5,6",
	    "SELECT GROUP_CONCAT(id ORDER BY id) FROM"
	    " outbox_messages WHERE status = 'PENDING'");
	free(ids);
	outbox_claim_free(&c);

	claim("a", 10, &c);
	ids = claim_ids(&c);
	ck_assert_str_eq(ids, "2");
	free(ids);
	outbox_claim_free(&c);

	claim("a", 10, &c);
	ck_assert_uint_eq(c.n, 0);
	outbox_claim_free(&c);
}
END_TEST

/* per_key: a row waits while an earlier row of its key is FAILED, or
 * open and not in the same claim; a key's due rows come as a run in id
 * order, each pointing at the one before it (4 after 3); rows without a
 * key never wait.  A run stops before a row of its key that is not due
 * (7), and what follows (8) waits too. */
START_TEST(test_claim_per_key)
{
	struct claim c;
	char        *ids;

	cf.outbox.ordering = ORDERING_PER_KEY;
	insert("a", "k1", 2, 10); /* 1, 2 */
	insert("a", "k2", 2, 10); /* 3, 4 */
	insert("a", NULL, 1, 10); /* 5 */
	insert("a", "k3", 3, 10); /* 6, 7, 8 */
	sql(db, "UPDATE outbox_messages SET status = 'FAILED' WHERE id = 1");
	sql(db,
	    "UPDATE outbox_messages SET next_attempt_at = NOW(6) +"
	    " INTERVAL 1 HOUR WHERE id = 7");

	claim("a", 10, &c);
	ids = claim_ids(&c);
	ck_assert_str_eq(ids, "3,5,6,4");
	ck_assert_ptr_null(c.msgs[0]->after);
	ck_assert_uint_eq(c.msgs[0]->run, 0);
	ck_assert_ptr_eq(c.msgs[3]->after, c.msgs[0]);
	ck_assert_uint_eq(c.msgs[3]->run, 1);
	ck_assert_uint_eq(c.dropped, 1); /* 8: after 7, not due */
	free(ids);
	outbox_claim_free(&c);

	/* 4 in flight (PROCESSING), 3 sent: the rest of k2 waits for it. */
	sql(db,
	    "UPDATE outbox_messages SET status = 'SENT' WHERE id IN (3, 5,"
	    " 6)");
	sql(db,
	    "UPDATE outbox_messages SET status = 'PENDING', claim_token ="
	    " NULL WHERE id IN (4)");
	insert("a", "k2", 1, 10); /* 9 */
	claim("a", 1, &c);        /* 4 alone: PROCESSING now */
	ids = claim_ids(&c);
	ck_assert_str_eq(ids, "4");
	free(ids);
	outbox_claim_free(&c);
	/* 9 waits behind 4 in flight: with no claim_follow, a key's last
	 * PROCESSING row is never one to follow, so the statement leaves 9
	 * out (it used to let it through for claim_runs to drop). */
	claim("a", 10, &c);
	ck_assert_uint_eq(c.n, 0);
	ck_assert_uint_eq(c.dropped, 0);
	outbox_claim_free(&c);
}
END_TEST

/* Each result written back as cronguard-outbox(7), RETRIES, says, in one
 * finalise. */
START_TEST(test_finalise_results)
{
	struct claim        c;
	struct outbox_tally t;

	cf.outbox.keep_sent = true;
	insert("a", NULL, 4, 10);
	claim("a", 4, &c);
	ck_assert_uint_eq(c.n, 4);
	c.msgs[0]->result = SEND_OK;
	c.msgs[1]->result = SEND_RETRY;
	c.msgs[1]->error = xstrdup("503 busy");
	c.msgs[1]->retry_after_ms = 600 * 1000;
	c.msgs[2]->result = SEND_PERMANENT;
	c.msgs[2]->error = xstrdup("400 bad");
	c.msgs[3]->result = SEND_NONE;
	finalise(&c, &t);
	ck_assert_uint_eq(t.sent, 1);
	ck_assert_uint_eq(t.retried, 1);
	ck_assert_uint_eq(t.failed, 1);
	ck_assert_uint_eq(t.released, 1);
	ck_assert_uint_eq(t.lost, 0);

	VALUE_EQ("SENT 1 1 -",
	    "SELECT CONCAT_WS(' ', status, attempts,"
	    " sent_at IS NOT NULL, COALESCE(last_error, '-'))"
	    " FROM outbox_messages WHERE id = %llu",
	    c.msgs[0]->id);
	/* Retry-After beats the backoff: due no sooner than 10 minutes on. */
	VALUE_EQ("PENDING 1 503 busy 1",
	    "SELECT CONCAT_WS(' ', status, attempts, last_error,"
	    " next_attempt_at >= NOW(6) + INTERVAL 590 SECOND)"
	    " FROM outbox_messages WHERE id = %llu",
	    c.msgs[1]->id);
	VALUE_EQ("FAILED 1 400 bad",
	    "SELECT CONCAT_WS(' ', status, attempts, last_error)"
	    " FROM outbox_messages WHERE id = %llu",
	    c.msgs[2]->id);
	/* Never attempted: PENDING, due now, no attempt counted. */
	VALUE_EQ("PENDING 0 1",
	    "SELECT CONCAT_WS(' ', status, attempts,"
	    " next_attempt_at <= NOW(6)) FROM outbox_messages"
	    " WHERE id = %llu",
	    c.msgs[3]->id);
	outbox_claim_free(&c);
}
END_TEST

/* max_attempts reached by a transient failure is FAILED; without
 * keep_sent a success is deleted. */
START_TEST(test_finalise_gives_up_and_deletes)
{
	struct claim        c;
	struct outbox_tally t;

	cf.outbox.keep_sent = false;
	cf.outbox.max_attempts = 3;
	insert("a", NULL, 2, 10);
	sql(db, "UPDATE outbox_messages SET attempts = 2 WHERE id = 2");
	claim("a", 2, &c);
	ck_assert_uint_eq(c.n, 2);
	c.msgs[0]->result = SEND_OK;
	c.msgs[1]->result = SEND_RETRY;
	finalise(&c, &t);
	ck_assert_uint_eq(t.sent, 1);
	ck_assert_uint_eq(t.failed, 1);
	VALUE_EQ("2 FAILED 3",
	    "SELECT CONCAT_WS(' ', id, status, attempts)"
	    " FROM outbox_messages");
	outbox_claim_free(&c);
}
END_TEST

/*
 * Fencing: A's claim goes stale, is recovered and claimed again by B,
 * who delivers.  A's late finalise (a transient failure, as when its
 * requests timed out while it was frozen) must change nothing and count
 * every row as lost.
 */
START_TEST(test_finalise_fenced)
{
	struct claim        a, b;
	struct outbox_tally t;
	unsigned long long  n = 0;
	char               *errstr = NULL, *q, *before;
	size_t              i;

	cf.outbox.keep_sent = true;
	insert("a", NULL, 3, 10);
	claim("a", 10, &a);
	ck_assert_uint_eq(a.n, 3);
	sql(db,
	    "UPDATE outbox_messages SET claimed_at = NOW(6) - INTERVAL 1"
	    " HOUR");
	ck_assert_msg(
	    outbox_recover(db, &cf.outbox, &n, &errstr) == DB_OK, "%s", errstr);
	ck_assert_uint_eq(n, 3);
	claim("a", 10, &b);
	ck_assert_uint_eq(b.n, 3);
	ck_assert_str_ne(a.token, b.token);
	for (i = 0; i < b.n; i++)
		b.msgs[i]->result = SEND_OK;
	finalise(&b, &t);
	ck_assert_uint_eq(t.sent, 3);

	before = value("SELECT GROUP_CONCAT(CONCAT_WS(' ', id, status,"
	               " attempts, claim_token, sent_at, next_attempt_at,"
	               " COALESCE(last_error, '-')) ORDER BY id)"
	               " FROM outbox_messages");
	for (i = 0; i < a.n; i++) {
		a.msgs[i]->result = SEND_RETRY;
		a.msgs[i]->error = xstrdup("timeout");
	}
	finalise(&a, &t);
	ck_assert_uint_eq(t.lost, 3);
	ck_assert_uint_eq(t.sent + t.retried + t.failed + t.released, 0);
	q = value("SELECT GROUP_CONCAT(CONCAT_WS(' ', id, status, attempts,"
	          " claim_token, sent_at, next_attempt_at,"
	          " COALESCE(last_error, '-')) ORDER BY id)"
	          " FROM outbox_messages");
	ck_assert_str_eq(q, before);
	free(q);
	VALUE_EQ("3",
	    "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT'"
	    " AND attempts = 2 AND claim_token = %s",
	    b.token);
	free(before);
	outbox_claim_free(&a);
	outbox_claim_free(&b);
}
END_TEST

/* A stale claim goes back to PENDING with the attempt counted, or to
 * FAILED at max_attempts; a fresh claim is left alone. */
START_TEST(test_recover)
{
	struct claim       c;
	unsigned long long n = 0;
	char              *errstr = NULL;

	cf.outbox.max_attempts = 3;
	insert("a", NULL, 3, 10);
	claim("a", 10, &c);
	sql(db,
	    "UPDATE outbox_messages SET claimed_at = NOW(6) - INTERVAL 1"
	    " HOUR WHERE id IN (1, 2)");
	sql(db, "UPDATE outbox_messages SET attempts = 2 WHERE id = 2");
	ck_assert_msg(
	    outbox_recover(db, &cf.outbox, &n, &errstr) == DB_OK, "%s", errstr);
	ck_assert_uint_eq(n, 2);
	VALUE_EQ("1 PENDING 1 lease expired,2 FAILED 3 lease expired,"
	         "3 PROCESSING 0 -",
	    "SELECT GROUP_CONCAT(CONCAT_WS(' ', id, status, attempts,"
	    " COALESCE(last_error, '-')) ORDER BY id) FROM outbox_messages");
	outbox_claim_free(&c);
}
END_TEST

static Suite *
outbox_live_suite(void)
{
	Suite *s = suite_create("outbox live");
	TCase *tc = tcase_create("live");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_claim_due_oldest_first);
	tcase_add_test(tc, test_claim_per_key);
	tcase_add_test(tc, test_finalise_results);
	tcase_add_test(tc, test_finalise_gives_up_and_deletes);
	tcase_add_test(tc, test_finalise_fenced);
	tcase_add_test(tc, test_recover);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_live_main(outbox_live_suite);
}
