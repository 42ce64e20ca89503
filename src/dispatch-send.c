/*
 * dispatch-send.c: what both dispatch passes use to send a claimed batch:
 * the deadline before each send, expiry at send time, the runs of a
 * batch handed to its channel, the limits settled after, the batch's log
 * line.  It sits below dispatch.c (the serial pass, which chooses the
 * pass) and dispatch-pipeline.c (the pipelined pass), and calls neither
 * (doc/architecture.md, "The outbox, from the top").
 */
#include "config.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "db.h"
#include "dispatch.h"
#include "faultpoint.h"
#include "log.h"
#include "outbox.h"
#include "ratelimit.h"
#include "util.h"

#include "dispatch-int.h"

/*
 * --bench-no-send (hidden, for scripts/bench-outbox): every claimed
 * message counts as delivered without being sent, to measure the
 * database floor of the same claim and finalise statements.
 */
static void
dispatch_null_send(struct outbox_msg **msgs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		msgs[i]->result = SEND_OK;
}

static int
dispatch_pass_after(struct send_ctl *ctl, struct outbox_msg *msg)
{
	(void)ctl;
	(void)msg;
	return 0;
}

static void
dispatch_noop_after(struct send_ctl *ctl, struct outbox_msg *msg)
{
	(void)ctl;
	(void)msg;
}

/* Milliseconds left before dp->until; INT64_MAX without a deadline. */
int64_t
dispatch_left(const struct dispatch *dp)
{
	if (dp->until == 0)
		return INT64_MAX;
	return dp->until - now_mono_ms();
}

/*
 * The deadline as a send_ctl around the channel's own (the limiter's or
 * the defaults): a message not started by until (the --for deadline, or
 * the last moment its send can end within the claim's lease) stays
 * SEND_NONE.  ctl must stay the first member: the channel hands it back.
 */
struct dispatch_ctl {
	struct send_ctl ctl;
	struct send_ctl inner;
	int64_t         until;
};

bool
dispatch_expired(struct outbox_msg *msg)
{
	if (msg->expires_ms != 0 && now_mono_ms() >= msg->expires_ms)
		msg->expired = true;
	return msg->expired;
}

/* Expiry is asked again after the limiter's before_send, which may have
 * waited for a rate slot (that slot is then spent unsent). */
static int
dispatch_deadline_before(struct send_ctl *ctl, struct outbox_msg *msg)
{
	struct dispatch_ctl *dc = (struct dispatch_ctl *)ctl;

	if (now_mono_ms() >= dc->until || dispatch_expired(msg))
		return 1;
	if (dc->inner.before_send(&dc->inner, msg) != 0 ||
	    dispatch_expired(msg))
		return 1;
	msg->started_ms = now_mono_ms();
	return 0;
}

static void
dispatch_deadline_after(struct send_ctl *ctl, struct outbox_msg *msg)
{
	struct dispatch_ctl *dc = (struct dispatch_ctl *)ctl;

	msg->ended_ms = now_mono_ms();
	if (msg->result == SEND_OK)
		faultpoint("after_send");
	dc->inner.after_send(&dc->inner, msg);
}

/*
 * Send msgs[0..n-1] on d in rounds (doc/architecture.md, "Ordering and
 * runs of a key"): the first rows of their keys' runs and the unkeyed
 * rows together, then the second rows of the runs whose first was
 * SEND_OK, and so on; a row after one that was not sent stays SEND_NONE,
 * put back without an attempt.  Without runs (no key with more than one
 * row in the batch) this is one send.
 */
static void
dispatch_send_runs(
    struct dchan *d, struct outbox_msg **msgs, size_t n, struct send_ctl *ctl)
{
	struct outbox_msg **now;
	unsigned            run, next;
	size_t              i, k;
	bool                more = true;

	now = xcalloc(n + 1, sizeof *now);
	/* Round by round over the runs' places present (a row following
	 * an earlier batch's is one place after it, however far). */
	for (run = 0; more; run = next) {
		more = false;
		next = UINT_MAX;
		for (i = k = 0; i < n; i++) {
			if (msgs[i]->run > run) {
				more = true;
				if (msgs[i]->run < next)
					next = msgs[i]->run;
			}
			if (msgs[i]->run == run &&
			    (msgs[i]->after == NULL ||
			        msgs[i]->after->result == SEND_OK))
				now[k++] = msgs[i];
		}
		if (k > 0)
			d->ops->send(d->ch, now, k, ctl);
	}
	free(now);
}

/* Send the claimed messages of channel d, then settle its limits.
 * claimed_ms is the monotonic time just before the claim. */
enum db_status
dispatch_send(struct dispatch *dp, struct dchan *d, struct claim *c,
    int64_t claimed_ms, char **errstr)
{
	struct outbox_msg **msgs;
	struct dispatch_ctl dc;
	struct send_ctl     ctl, *use;
	size_t              i, n = 0;
	enum db_status      st = DB_OK;
	int64_t             until;

	msgs = xcalloc(c->n + 1, sizeof *msgs);
	for (i = 0; i < c->n; i++) {
		if (strcmp(c->msgs[i]->channel, d->conf->name) == 0)
			msgs[n++] = c->msgs[i];
	}
	if (n == 0)
		goto out;
	if (dp->no_send) {
		dispatch_null_send(msgs, n);
		goto out;
	}
	memset(&ctl, 0, sizeof ctl);
	ctl.before_send = dispatch_pass_after;
	ctl.after_send = dispatch_noop_after;
	ctl.stop = dp->stop;
	if (d->lim != NULL) {
		ratelimit_ctl(d->lim, &ctl, dp->stop);
		ratelimit_pace(d->lim, msgs, n);
	}
	/* A send started later could still run when the row is stale
	 * (claimed_at + lease, by the database clock, which the claim set
	 * after claimed_ms): another worker may be sending it again. */
	until = claimed_ms + dp->conf->outbox.lease_ms - d->conf->timeout_ms;
	if (dp->until != 0 && dp->until < until)
		until = dp->until;
	memset(&dc, 0, sizeof dc);
	dc.inner = ctl;
	dc.until = until;
	dc.ctl.before_send = dispatch_deadline_before;
	dc.ctl.after_send = dispatch_deadline_after;
	dc.ctl.arg = &dc;
	dc.ctl.stop = ctl.stop;
	use = &dc.ctl;
	dispatch_send_runs(d, msgs, n, use);
	if (d->lim != NULL)
		st = ratelimit_settle(d->lim, dp->db, msgs, n, errstr);
out:
	free(msgs);
	return st;
}

/* Where a batch's time went, for -vv and the benchmark. */
void
dispatch_log_batch(const struct claim *c, int64_t claim_ms, int64_t send_ms,
    int64_t fin_ms, size_t held)
{
	char n[32], a[32], b[32], f[32], h[32];

	snprintf(n, sizeof n, "%zu", c->n);
	snprintf(a, sizeof a, "%lld", (long long)claim_ms);
	snprintf(b, sizeof b, "%lld", (long long)send_ms);
	snprintf(f, sizeof f, "%lld", (long long)fin_ms);
	snprintf(h, sizeof h, "%zu", held);
	log_kv(LOG_DEBUG, "outbox_batch", "count", n, "claim_ms", a, "send_ms",
	    b, "finalise_ms", f, "held", h, "token", c->token);
}
