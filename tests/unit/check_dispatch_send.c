/* check_dispatch_send.c: dispatch_send (dispatch-send.c), what both
 * dispatch passes use, against a recording channel behind channel_ops (no
 * database, no server): only the channel's rows go to it; a key's rows go
 * in rounds, a row after one not sent stays SEND_NONE; nothing starts past
 * the deadline or the claim's lease; an expired row is marked and never
 * started; --bench-no-send counts every row sent. */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch-int.h"
#include "log.h"
#include "testutil.h"
#include "util.h"

/* The recording channel: the order rows were started in, and each row's
 * result from its event_type ("ok", "retry", "fail"). */
static char   sent[64][16];
static size_t nsent, nsends;

static void
rec_send(struct channel *ch, struct outbox_msg **msgs, size_t n,
    struct send_ctl *ctl)
{
	size_t i;

	(void)ch;
	nsends++;
	for (i = 0; i < n; i++) {
		if (ctl->before_send(ctl, msgs[i]) != 0)
			continue;
		ck_assert_uint_lt(nsent, 64);
		snprintf(sent[nsent++], sizeof sent[0], "%s", msgs[i]->payload);
		if (strcmp(msgs[i]->event_type, "ok") == 0)
			msgs[i]->result = SEND_OK;
		else if (strcmp(msgs[i]->event_type, "retry") == 0)
			msgs[i]->result = SEND_RETRY;
		else
			msgs[i]->result = SEND_PERMANENT;
		ctl->after_send(ctl, msgs[i]);
	}
}

static const struct channel_ops rec_ops = { .send = rec_send };

struct fx {
	struct conf         conf;
	struct conf_channel cc;
	struct dispatch     dp;
	struct dchan        d;
	struct claim        c;
	struct outbox_msg   m[16];
	struct outbox_msg  *pm[16];
};

static void
fx_init(struct fx *f)
{
	log_init(LOG_ERROR, LOG_TEXT);
	memset(f, 0, sizeof *f);
	nsent = nsends = 0;
	f->conf.outbox.lease_ms = 300000;
	f->cc.name = "hook";
	f->cc.timeout_ms = 10000;
	f->dp.conf = &f->conf;
	f->dp.stop = &f->dp.never;
	f->d.conf = &f->cc;
	f->d.ops = &rec_ops;
	f->c.msgs = f->pm;
}

/* A claimed row: its payload names it; result from event_type. */
static struct outbox_msg *
fx_msg(struct fx *f, const char *name, const char *channel, const char *how)
{
	struct outbox_msg *m = &f->m[f->c.n];

	m->id = f->c.n + 1;
	m->channel = (char *)channel;
	m->event_type = (char *)how;
	m->payload = (char *)name;
	m->payload_len = strlen(name);
	f->pm[f->c.n++] = m;
	return m;
}

/* A row that follows prev in its key's run. */
static struct outbox_msg *
fx_after(
    struct fx *f, const char *name, const char *how, struct outbox_msg *prev)
{
	struct outbox_msg *m = fx_msg(f, name, "hook", how);

	m->after = prev;
	m->run = prev->run + 1;
	return m;
}

static enum db_status
fx_send(struct fx *f, int64_t claimed_ms)
{
	char          *err = NULL;
	enum db_status st;

	st = dispatch_send(&f->dp, &f->d, &f->c, claimed_ms, &err);
	ck_assert_msg(st == DB_OK, "%s", err != NULL ? err : "?");
	return st;
}

static const char *
fx_sent(size_t i)
{
	return i < nsent ? sent[i] : "(none)";
}

/* Rows of other channels stay untouched; the channel's go in one send. */
START_TEST(only_its_rows)
{
	struct fx f;

	fx_init(&f);
	fx_msg(&f, "a", "hook", "ok");
	fx_msg(&f, "b", "mail", "ok");
	fx_msg(&f, "c", "hook", "retry");
	fx_send(&f, now_mono_ms());
	ck_assert_uint_eq(nsends, 1);
	ck_assert_uint_eq(nsent, 2);
	ck_assert_str_eq(fx_sent(0), "a");
	ck_assert_str_eq(fx_sent(1), "c");
	ck_assert_int_eq(f.m[0].result, SEND_OK);
	ck_assert_int_eq(f.m[1].result, SEND_NONE);
	ck_assert_int_eq(f.m[2].result, SEND_RETRY);
	ck_assert(
	    f.m[0].started_ms > 0 && f.m[0].ended_ms >= f.m[0].started_ms);
}
END_TEST

/* A key's rows in rounds: k1 then k2 after it, k2 then k3; x unkeyed
 * goes in the first round.  A row whose predecessor was not sent OK is
 * never started, nor any after it. */
START_TEST(runs_in_rounds)
{
	struct fx          f;
	struct outbox_msg *k1, *k2, *j1;

	fx_init(&f);
	k1 = fx_msg(&f, "k1", "hook", "ok");
	j1 = fx_msg(&f, "j1", "hook", "retry");
	fx_msg(&f, "x", "hook", "ok");
	k2 = fx_after(&f, "k2", "ok", k1);
	fx_after(&f, "j2", "ok", j1);
	fx_after(&f, "k3", "ok", k2);
	fx_send(&f, now_mono_ms());
	ck_assert_uint_eq(nsends, 3);
	ck_assert_uint_eq(nsent, 5);
	ck_assert_str_eq(fx_sent(0), "k1");
	ck_assert_str_eq(fx_sent(1), "j1");
	ck_assert_str_eq(fx_sent(2), "x");
	ck_assert_str_eq(fx_sent(3), "k2");
	ck_assert_str_eq(fx_sent(4), "k3");
	ck_assert_int_eq(f.m[4].result, SEND_NONE); /* j2 after a retry */
	ck_assert_int_eq(f.m[4].started_ms, 0);
}
END_TEST

/* Nothing starts past --for's deadline, nor once the claim's lease less
 * the channel's timeout has gone (another worker may take the row). */
START_TEST(deadline_and_lease)
{
	struct fx f;

	fx_init(&f);
	fx_msg(&f, "a", "hook", "ok");
	f.dp.until = now_mono_ms() - 1;
	fx_send(&f, now_mono_ms());
	ck_assert_uint_eq(nsent, 0);
	ck_assert_int_eq(f.m[0].result, SEND_NONE);

	fx_init(&f);
	fx_msg(&f, "a", "hook", "ok");
	fx_send(&f, now_mono_ms() - 300000 + 10000 - 1);
	ck_assert_uint_eq(nsent, 0);
	ck_assert_int_eq(f.m[0].result, SEND_NONE);

	fx_init(&f);
	fx_msg(&f, "a", "hook", "ok");
	fx_send(&f, now_mono_ms() - 300000 + 10000 + 5000);
	ck_assert_uint_eq(nsent, 1);
}
END_TEST

/* A row whose end has come is marked expired and never started. */
START_TEST(expired_not_started)
{
	struct fx f;

	fx_init(&f);
	fx_msg(&f, "old", "hook", "ok")->expires_ms = now_mono_ms() - 1;
	fx_msg(&f, "new", "hook", "ok")->expires_ms = now_mono_ms() + 60000;
	fx_send(&f, now_mono_ms());
	ck_assert_uint_eq(nsent, 1);
	ck_assert_str_eq(fx_sent(0), "new");
	ck_assert(f.m[0].expired);
	ck_assert_int_eq(f.m[0].result, SEND_NONE);
	ck_assert(!f.m[1].expired);
}
END_TEST

/* --bench-no-send: every row of the channel counts as sent, the channel
 * is never called. */
START_TEST(no_send)
{
	struct fx f;

	fx_init(&f);
	f.dp.no_send = true;
	fx_msg(&f, "a", "hook", "retry");
	fx_msg(&f, "b", "mail", "ok");
	fx_send(&f, now_mono_ms());
	ck_assert_uint_eq(nsends, 0);
	ck_assert_int_eq(f.m[0].result, SEND_OK);
	ck_assert_int_eq(f.m[1].result, SEND_NONE);
}
END_TEST

static Suite *
dispatch_send_suite(void)
{
	Suite *s = suite_create("dispatch_send");
	TCase *tc = tcase_create("send");

	tcase_add_test(tc, only_its_rows);
	tcase_add_test(tc, runs_in_rounds);
	tcase_add_test(tc, deadline_and_lease);
	tcase_add_test(tc, expired_not_started);
	tcase_add_test(tc, no_send);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(dispatch_send_suite);
}
