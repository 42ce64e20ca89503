/*
 * dispatch.c: the outbox dispatch engine: recover stale claims, then
 * claim, send and finalise due messages until none is due
 * (cronguard-outbox(7), DISPATCH); with a deadline (--for), keep polling until
 * it.
 *
 * The deadline holds within a pass too: no claim and no send starts in
 * its last DISPATCH_MARGIN_MS, a rate-limited channel claims only as many
 * rows as its reserved send slots before then, and rows claimed but not
 * started by then go back to PENDING without an attempt counted
 * (SEND_NONE, as on SIGTERM or SIGHUP).  Only sends already in flight run
 * past it, each within the channel's timeout.  The same holds for each
 * claim's lease: a message not started within lease - timeout of its
 * claim (queued behind a slow server) is released for a fresh claim
 * rather than sent after another worker may have recovered it (the
 * claims of several channels send one channel after the other).  Without
 * a deadline (drain mode) the pass ends when nothing is due or nothing
 * claimed could be sent (circuit open, quota used up), so a rate-limited
 * backlog of N rows takes N / rate seconds; cron should use --for.
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "channel.h"
#include "db.h"
#include "dispatch.h"
#include "faultpoint.h"
#include "log.h"
#include "outbox.h"
#include "ratelimit.h"
#include "util.h"

/* Claims and sends stop this long before the --for deadline (or a tenth
 * of --for, if shorter), leaving it to in-flight replies and finalise. */
#define DISPATCH_MARGIN_MS 100

/* A one-shot dispatch whose batch the rate alone held back waits for the
 * next slot: each wait at most this long and at most the channel's rate
 * interval, and no more than this in all (cronguard(1)). */
#define DISPATCH_RATE_WAIT_MS 5000

/* The shortest sleep between passes in --for mode, right after a pass
 * that found work (dispatch_poll_ms); poll_interval is the longest. */
#define DISPATCH_POLL_MIN_MS 50

/* One configured channel this dispatcher serves. */
struct dchan {
	const struct conf_channel *conf;
	const struct channel_ops  *ops;
	struct channel            *ch;
	struct ratelimit          *lim;
	bool                 limited; /* rate, quota or circuit configured */
	unsigned             granted;
	struct outbox_cursor cursor;
	bool                 quota_warned; /* quota_exhausted logged */
};

struct dpipe;

struct dispatch {
	struct conf  *conf;
	struct db    *db;
	struct db    *claim_db; /* pipeline: the claimer's connection */
	struct db    *fin_db;   /* pipeline: the finaliser's connection */
	struct dpipe *pipe;     /* the pass's pipeline, or NULL: serial */
	struct dchan *chans;
	size_t        nchans;
	unsigned      batch;
	bool          no_send;         /* benchmark: claim and finalise only */
	int64_t       for_ms;          /* poll until this long; 0 = drain */
	int64_t       until;           /* monotonic ms: no claim or send
	                                * starts after it; 0 = no deadline */
	struct outbox_cursor   cursor; /* of the unlimited channels' claims */
	struct outbox_tally    tally;
	unsigned long long     found; /* rows claimed by this run */
	unsigned long long     recovered;
	int64_t                rate_wait; /* ms until a held channel's slot */
	int64_t                waited;    /* ms waited for slots in all */
	volatile sig_atomic_t *stop;      /* opts->stop, or never */
	volatile sig_atomic_t  never;
};

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
static int64_t
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

static int
dispatch_deadline_before(struct send_ctl *ctl, struct outbox_msg *msg)
{
	struct dispatch_ctl *dc = (struct dispatch_ctl *)ctl;

	if (now_mono_ms() >= dc->until)
		return 1;
	if (dc->inner.before_send(&dc->inner, msg) != 0)
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

/* Send the claimed messages of channel d, then settle its limits.
 * claimed_ms is the monotonic time just before the claim. */
static enum db_status
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
	d->ops->send(d->ch, msgs, n, use);
	if (d->lim != NULL)
		st = ratelimit_settle(d->lim, dp->db, msgs, n, errstr);
out:
	free(msgs);
	return st;
}

/* Where a batch's time went, for -vv and the benchmark. */
static void
dispatch_log_batch(
    const struct claim *c, int64_t claim_ms, int64_t send_ms, int64_t fin_ms)
{
	char n[32], a[32], b[32], f[32];

	snprintf(n, sizeof n, "%zu", c->n);
	snprintf(a, sizeof a, "%lld", (long long)claim_ms);
	snprintf(b, sizeof b, "%lld", (long long)send_ms);
	snprintf(f, sizeof f, "%lld", (long long)fin_ms);
	log_kv(LOG_DEBUG, "outbox_batch", "count", n, "claim_ms", a, "send_ms",
	    b, "finalise_ms", f, "token", c->token, NULL);
}

/* Claim for names[0..n-1] at most limit rows after cur, send, finalise.
 * *attempted says whether any message was really attempted (not
 * SEND_NONE); *rescan that a claim after the cursor came back short, so
 * the next claim starts over from the oldest due row. */
static enum db_status
dispatch_claim_send(struct dispatch *dp, const char **names, size_t n,
    unsigned limit, struct dchan *limited, struct outbox_cursor *cur,
    size_t *claimed, bool *attempted, bool *rescan, char **errstr)
{
	int            had_cursor = cur->set;
	struct claim   c;
	enum db_status st, st2;
	size_t         i;
	char          *err2 = NULL;
	int64_t        t0, t1, t2;

	t0 = now_mono_ms();
	st = outbox_claim(
	    dp->db, &dp->conf->outbox, names, n, limit, cur, &c, errstr);
	if (st != DB_OK) {
		/* Nothing was sent with the reservation: it goes back even
		 * though the pass ends here (errstr keeps the claim's). */
		if (limited != NULL && limited->lim != NULL &&
		    ratelimit_settle(limited->lim, dp->db, NULL, 0, &err2) !=
		        DB_OK)
			log_kv(LOG_WARN, "quota_return_failed", "channel",
			    limited->conf->name, "error", err2, NULL);
		free(err2);
		return st;
	}
	if (had_cursor && !cur->set)
		*rescan = true;
	*claimed += c.n;
	if (c.n == 0) {
		/* Give the reservation back at once, not at the next
		 * reserve: this process may exit before that. */
		if (limited != NULL && limited->lim != NULL)
			st = ratelimit_settle(
			    limited->lim, dp->db, NULL, 0, errstr);
		goto out;
	}
	t1 = now_mono_ms();
	for (i = 0; i < dp->nchans; i++) {
		st = dispatch_send(dp, &dp->chans[i], &c, t0, errstr);
		if (st != DB_OK)
			break;
	}
	t2 = now_mono_ms();
	for (i = 0; i < c.n; i++) {
		if (c.msgs[i]->result != SEND_NONE)
			*attempted = true;
	}
	/* Finalise even when settling the limits failed: the results are
	 * known and the rows must not wait for the lease. */
	st2 = outbox_finalise(dp->db, &dp->conf->outbox, &c, &dp->tally,
	    st == DB_OK ? errstr : &err2);
	if (st == DB_OK)
		st = st2;
	free(err2);
	if (log_enabled(LOG_DEBUG))
		dispatch_log_batch(&c, t1 - t0, t2 - t1, now_mono_ms() - t2);
out:
	outbox_claim_free(&c);
	return st;
}

/* ---------------------------------------------------------- pipeline */

/*
 * With outbox.pipeline = N > 1 the unlimited channels' batches go through
 * three stages, each with its own database connection, so that the sends
 * of one batch overlap the claim of the next and the finalise of the one
 * before:
 *
 *	claimer thread    claim_db  outbox_claim      -> sendq
 *	main thread       (none)    the channel sends    sendq -> finq
 *	finaliser thread  fin_db    outbox_finalise      finq -> freed
 *
 * At most N batches are claimed and not yet finalised (inflight).  With
 * one unlimited channel that streams (http, smtp) the main thread's sends
 * do not go batch by batch: the channel starts a claimed message whenever
 * it has a free slot and a batch goes to finq once all its messages have
 * a result (dpipe_stream).  Each batch keeps every guarantee of the
 * serial path: its claim is one short transaction on a session that holds
 * no other; its sends start only within its claim's lease (from
 * claimed_ms: dispatch_send, dstream_before); its finalise is fenced by
 * its claim token; the messages of a batch not started when the pass
 * ends (stop, deadline, error) are finalised unsent: PENDING again, no
 * attempt counted.
 * Per-key ordering needs nothing more: a batch's rows are PROCESSING
 * from its claim's commit until its finalise, and a claim skips every row
 * whose key has an earlier PROCESSING row, so a key has at most one
 * message in flight.  Channels with a rate, quota or circuit keep the
 * serial path on the main connection, between pipelined batches: their
 * fleet-wide reservations are made for the one batch about to be claimed,
 * as before.
 *
 * One mutex and one condition variable guard the queues and the flags;
 * every change broadcasts.  The helper threads block every signal, so
 * SIGTERM still interrupts the main thread's sleeps and sends; only the
 * main thread reads the stop flag and passes it on as stopping.
 */
struct dbatch {
	struct claim   c;
	int64_t        claimed_ms; /* monotonic, just before the claim */
	int64_t        claim_ms;   /* for -vv: the claim's duration */
	int64_t        send_ms;    /* and the sends' */
	int64_t        start_by;   /* streamed: no send starts after it */
	size_t         handed;     /* streamed: messages handed out */
	size_t         open;       /* of them, still without a result */
	bool           tried;      /* streamed: one was attempted */
	struct dbatch *next;
};

struct dbatchq {
	struct dbatch  *head;
	struct dbatch **tail;
};

struct dpipe {
	struct dispatch    *dp;
	const char        **names; /* the unlimited channels */
	size_t              nnames;
	pthread_mutex_t     lock;
	pthread_cond_t      cond;
	struct dbatchq      sendq;    /* claimed, to send */
	struct dbatchq      finq;     /* sent or not, to finalise */
	unsigned            inflight; /* claimed and not finalised */
	unsigned long long  inbytes;  /* their payload bytes */
	bool                stopping; /* claim nothing more */
	bool                drained;  /* the claimer has ended */
	bool                closing;  /* nothing more comes to finq */
	enum db_status      st;       /* a helper thread's first failure */
	char               *err;      /* and its message */
	struct outbox_tally tally;    /* the finaliser's */
	struct dchan       *stream;   /* the one channel, when it streams */
	pthread_t           claimer, finaliser;
	bool                has_claimer, has_finaliser;
};

static void
dbatchq_init(struct dbatchq *q)
{
	q->head = NULL;
	q->tail = &q->head;
}

static void
dbatchq_push(struct dbatchq *q, struct dbatch *b)
{
	b->next = NULL;
	*q->tail = b;
	q->tail = &b->next;
}

static struct dbatch *
dbatchq_pop(struct dbatchq *q)
{
	struct dbatch *b = q->head;

	if (b != NULL && (q->head = b->next) == NULL)
		q->tail = &q->head;
	return b;
}

static void
dbatch_free(struct dbatch *b)
{
	outbox_claim_free(&b->c);
	free(b);
}

static void
dispatch_tally_add(struct outbox_tally *to, const struct outbox_tally *t)
{
	to->sent += t->sent;
	to->retried += t->retried;
	to->failed += t->failed;
	to->released += t->released;
	to->lost += t->lost;
}

/* A batch queued, or a failure: a stream waiting on its transfers asks
 * for its next message at once, not after its next transfer ends
 * (curl_multi_wakeup may be called from any thread: its man page). */
static void
dpipe_wake(struct dpipe *p)
{
	if (p->stream != NULL)
		p->stream->ops->wakeup(p->stream->ch);
}

/* Record a helper thread's failure (the first one is kept) and stop
 * claiming.  Takes err.  Called with the lock held. */
static void
dpipe_fail_locked(struct dpipe *p, enum db_status st, char *err)
{
	if (p->st == DB_OK) {
		p->st = st;
		p->err = err;
	} else
		free(err);
	p->stopping = true;
	pthread_cond_broadcast(&p->cond);
	dpipe_wake(p);
}

/* Pass a stop request on to the claimer.  Only the main thread reads
 * *dp->stop: a signal handler's sig_atomic_t is no inter-thread flag.
 * Called with the lock held. */
static void
dpipe_note_stop_locked(struct dispatch *dp)
{
	if (*dp->stop && !dp->pipe->stopping) {
		dp->pipe->stopping = true;
		pthread_cond_broadcast(&dp->pipe->cond);
	}
}

/* Wait for a change, or ms at most (the main thread: a signal only sets
 * a flag, which a wait on the condition would not see). */
static void
dpipe_wait_ms(struct dpipe *p, long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += ms * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	pthread_cond_timedwait(&p->cond, &p->lock, &ts);
}

/*
 * The claimer: claim full batches ahead while fewer than N are in
 * flight.  A claim that comes back short (nothing more due now) is
 * followed by the next only once every batch in flight is finalised, as
 * in the serial path: rows they release, and rows committed meanwhile,
 * are due by then.  A claim that finds nothing with nothing in flight
 * ends the pass.
 */
static void *
dpipe_claimer(void *arg)
{
	struct dpipe    *p = arg;
	struct dispatch *dp = p->dp;
	struct dbatch   *b;
	enum db_status   st;
	char            *err = NULL;
	bool             quiet, stopping, had_cursor;
	size_t           got;
	long long        budget;

	for (;;) {
		pthread_mutex_lock(&p->lock);
		/* outbox.max_batch_bytes holds for all the batches in
		 * flight together. */
		while (!p->stopping &&
		    (p->inflight >= dp->conf->outbox.pipeline ||
		        (p->inflight > 0 &&
		            p->inbytes >= (unsigned long long)dp->conf->outbox
		                              .max_batch_bytes)))
			pthread_cond_wait(&p->cond, &p->lock);
		quiet = p->inflight == 0;
		budget =
		    dp->conf->outbox.max_batch_bytes - (long long)p->inbytes;
		stopping = p->stopping;
		pthread_mutex_unlock(&p->lock);
		if (stopping || dispatch_left(dp) <= 0)
			break;

		b = xcalloc(1, sizeof *b);
		had_cursor = dp->cursor.set;
		b->claimed_ms = now_mono_ms();
		st = outbox_claim_budget(dp->claim_db, &dp->conf->outbox,
		    p->names, p->nnames, dp->batch, budget > 0 ? budget : 1,
		    &dp->cursor, &b->c, &err);
		b->claim_ms = now_mono_ms() - b->claimed_ms;
		if (st != DB_OK) {
			dbatch_free(b);
			pthread_mutex_lock(&p->lock);
			dpipe_fail_locked(p, st, err);
			pthread_mutex_unlock(&p->lock);
			break;
		}
		got = b->c.n;
		if (got == 0) {
			dbatch_free(b);
			if (had_cursor && !dp->cursor.set)
				continue; /* rescan from the oldest due row */
			if (quiet)
				break;
		}
		pthread_mutex_lock(&p->lock);
		if (got > 0) {
			p->inflight++;
			p->inbytes += b->c.bytes;
			dbatchq_push(&p->sendq, b);
			pthread_cond_broadcast(&p->cond);
		}
		if (got > 0)
			dpipe_wake(p);
		while (got < dp->batch && !p->stopping && p->inflight > 0)
			pthread_cond_wait(&p->cond, &p->lock);
		pthread_mutex_unlock(&p->lock);
	}
	pthread_mutex_lock(&p->lock);
	p->drained = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* The finaliser: finalise each batch sent (or not) in turn.  After a
 * failure of its own it finalises nothing more: the rows stay PROCESSING
 * for the lease recovery, as after a failed serial finalise. */
static void *
dpipe_finaliser(void *arg)
{
	struct dpipe      *p = arg;
	struct dispatch   *dp = p->dp;
	struct dbatch     *b;
	enum db_status     st;
	char              *err = NULL;
	bool               broken = false;
	int64_t            t0;
	unsigned long long bytes;

	for (;;) {
		pthread_mutex_lock(&p->lock);
		while ((b = dbatchq_pop(&p->finq)) == NULL && !p->closing)
			pthread_cond_wait(&p->cond, &p->lock);
		pthread_mutex_unlock(&p->lock);
		if (b == NULL)
			break;
		t0 = now_mono_ms();
		if (!broken) {
			st = outbox_finalise(dp->fin_db, &dp->conf->outbox,
			    &b->c, &p->tally, &err);
			if (st != DB_OK) {
				broken = true;
				pthread_mutex_lock(&p->lock);
				dpipe_fail_locked(p, st, err);
				pthread_mutex_unlock(&p->lock);
				err = NULL;
			}
		}
		if (log_enabled(LOG_DEBUG))
			dispatch_log_batch(
			    &b->c, b->claim_ms, b->send_ms, now_mono_ms() - t0);
		bytes = b->c.bytes;
		dbatch_free(b);
		pthread_mutex_lock(&p->lock);
		p->inflight--;
		p->inbytes -= bytes;
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
	}
	return NULL;
}

/*
 * Wait until a batch is queued to send, the claimer has ended, a helper
 * thread failed or the stop.  Returns the failure, with its message in
 * *errstr, not yet returned.  Called with the lock held.
 */
static enum db_status
dpipe_await_locked(struct dispatch *dp, char **errstr)
{
	struct dpipe  *p = dp->pipe;
	enum db_status st = DB_OK;

	while (p->st == DB_OK && !*dp->stop && p->sendq.head == NULL &&
	    !p->drained)
		dpipe_wait_ms(p, 50);
	if (p->st != DB_OK) {
		st = p->st;
		*errstr = p->err;
		p->err = NULL;
	}
	dpipe_note_stop_locked(dp);
	return st;
}

/*
 * The streaming send (one unlimited channel, which streams): the channel
 * starts a message whenever it has a free slot and one waits, batch after
 * batch, and a batch goes to the finaliser as soon as every message of it
 * has its result, so neither the slots nor the next claim wait for the
 * slowest message of a group of batches.  The channel hands ctl back.
 */
struct dstream {
	struct send_ctl  ctl; /* first */
	struct dispatch *dp;
	struct dbatchq   sending; /* taken from sendq, not finalised yet */
	struct dbatch   *feed;    /* the last taken, whose messages next
	                           * hands out, while it is sending */
	size_t left;              /* batches it may still take */
	size_t taken;             /* messages in the batches taken */
	bool   tried;             /* a message was attempted */
};

/* The batch of msg among those being sent: a claim's messages are one
 * array (outbox.c). */
static struct dbatch *
dstream_owner(struct dstream *s, const struct outbox_msg *msg)
{
	struct dbatch *b;
	uintptr_t      m = (uintptr_t)msg, first;

	for (b = s->sending.head; b != NULL; b = b->next) {
		first = (uintptr_t)b->c.storage;
		if (m >= first && m < first + b->c.n * sizeof *b->c.storage)
			return b;
	}
	return NULL;
}

/*
 * One more message of b has its result (or will never be started): once
 * every message has one, b goes to the finaliser.  A batch of which
 * nothing was attempted stops the claims, as dpipe_step does: claiming
 * again would spin on rows nothing could send (a login refused).
 */
static void
dstream_settle(struct dstream *s, struct dbatch *b)
{
	struct dpipe   *p = s->dp->pipe;
	struct dbatch **pp;

	if (--b->open > 0 || b->handed < b->c.n)
		return;
	for (pp = &s->sending.head; *pp != b; pp = &(*pp)->next)
		;
	if ((*pp = b->next) == NULL)
		s->sending.tail = pp;
	if (s->feed == b)
		s->feed = NULL;
	b->send_ms = now_mono_ms() - b->send_ms;
	pthread_mutex_lock(&p->lock);
	dbatchq_push(&p->finq, b);
	if (!b->tried)
		p->stopping = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/* The next batch queued, or NULL: none now, none allowed, the stop or a
 * helper thread's failure. */
static struct dbatch *
dstream_take(struct dstream *s)
{
	struct dispatch *dp = s->dp;
	struct dpipe    *p = dp->pipe;
	struct dbatch   *b = NULL;
	int64_t          until;

	if (s->left == 0)
		return NULL;
	pthread_mutex_lock(&p->lock);
	dpipe_note_stop_locked(dp);
	if (p->st == DB_OK && !*dp->stop)
		b = dbatchq_pop(&p->sendq);
	pthread_mutex_unlock(&p->lock);
	if (b == NULL)
		return NULL;
	s->left--;
	s->taken += b->c.n;
	/* As dispatch_send: a send started later could still run when the
	 * row is stale and another worker may be sending it again. */
	until = b->claimed_ms + dp->conf->outbox.lease_ms -
	    p->stream->conf->timeout_ms;
	b->start_by = dp->until != 0 && dp->until < until ? dp->until : until;
	b->send_ms = now_mono_ms();
	dbatchq_push(&s->sending, b);
	return b;
}

static struct outbox_msg *
dstream_next(struct send_ctl *ctl)
{
	struct dstream *s = (struct dstream *)ctl;
	struct dbatch  *b = s->feed;

	if (*s->dp->stop)
		return NULL;
	if (b == NULL || b->handed == b->c.n) {
		if ((b = s->feed = dstream_take(s)) == NULL)
			return NULL;
	}
	b->open++;
	return b->c.msgs[b->handed++];
}

/* A message (of the feed: next handed it out last) starts only within
 * its claim's lease, and before the --for deadline. */
static int
dstream_before(struct send_ctl *ctl, struct outbox_msg *msg)
{
	struct dstream *s = (struct dstream *)ctl;

	if (now_mono_ms() < s->feed->start_by) {
		msg->started_ms = now_mono_ms();
		return 0;
	}
	dstream_settle(s, s->feed);
	return 1;
}

static void
dstream_after(struct send_ctl *ctl, struct outbox_msg *msg)
{
	struct dstream *s = (struct dstream *)ctl;
	struct dbatch  *b = dstream_owner(s, msg);

	msg->ended_ms = now_mono_ms();
	if (msg->result == SEND_OK)
		faultpoint("after_send");
	if (msg->result != SEND_NONE)
		s->tried = b->tried = true;
	dstream_settle(s, b);
}

/*
 * Stream the queued batches through the pipeline's channel and hand each
 * to the finaliser once it is done.  Batches claimed meanwhile join the
 * stream, unless limited channels wait for their turn on this thread:
 * then only those queued now.  What is never started (the stop, a
 * failure) goes to the finaliser unsent.
 */
static enum db_status
dpipe_stream(
    struct dispatch *dp, size_t *claimed, bool *attempted, char **errstr)
{
	struct dpipe  *p = dp->pipe;
	struct dstream s;
	struct dbatch *b;
	enum db_status st;
	size_t         i;

	memset(&s, 0, sizeof s);
	s.ctl.before_send = dstream_before;
	s.ctl.after_send = dstream_after;
	s.ctl.next = dstream_next;
	s.ctl.arg = &s;
	s.ctl.stop = dp->stop;
	s.dp = dp;
	dbatchq_init(&s.sending);
	pthread_mutex_lock(&p->lock);
	st = dpipe_await_locked(dp, errstr);
	s.left = SIZE_MAX;
	for (i = 0; i < dp->nchans; i++) {
		if (dp->chans[i].limited) {
			for (s.left = 0, b = p->sendq.head; b != NULL;
			     b = b->next)
				s.left++;
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	if (st != DB_OK)
		return st;

	p->stream->ops->stream(p->stream->ch, &s.ctl);
	*claimed += s.taken;
	*attempted = *attempted || s.tried;
	pthread_mutex_lock(&p->lock);
	while ((b = dbatchq_pop(&s.sending)) != NULL) {
		b->send_ms = now_mono_ms() - b->send_ms;
		dbatchq_push(&p->finq, b);
	}
	if (s.taken > 0 && !s.tried)
		p->stopping = true;
	if (p->st != DB_OK) {
		st = p->st;
		*errstr = p->err;
		p->err = NULL;
	}
	dpipe_note_stop_locked(dp);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return st;
}

/*
 * Send every claimed batch waiting, together, and hand them to the
 * finaliser (a channel that does not stream, or several channels).
 * Together, so that a slow sink sees the messages of several batches at
 * once instead of each batch waiting for its slowest send before the
 * next starts; each sends within the lease of the oldest claim among
 * them.  *claimed stays 0 when the claimer has ended with nothing left to
 * send (or on stop); a failure of a helper thread is returned with its
 * message.
 */
static enum db_status
dpipe_step(struct dispatch *dp, size_t *claimed, bool *attempted, char **errstr)
{
	struct dpipe  *p = dp->pipe;
	struct dbatchq q;
	struct dbatch *b;
	struct claim   all;
	enum db_status st;
	bool           tried = false;
	size_t         i, n = 0;
	int64_t        t0, oldest;

	if (p->stream != NULL)
		return dpipe_stream(dp, claimed, attempted, errstr);
	dbatchq_init(&q);
	pthread_mutex_lock(&p->lock);
	st = dpipe_await_locked(dp, errstr);
	if (p->st == DB_OK && !*dp->stop && p->sendq.head != NULL) {
		q = p->sendq;
		dbatchq_init(&p->sendq);
	}
	pthread_mutex_unlock(&p->lock);
	if (q.head == NULL)
		return st;

	memset(&all, 0, sizeof all);
	oldest = q.head->claimed_ms;
	for (b = q.head; b != NULL; b = b->next)
		all.n += b->c.n;
	all.msgs = xcalloc(all.n + 1, sizeof *all.msgs);
	for (b = q.head; b != NULL; b = b->next) {
		for (i = 0; i < b->c.n; i++)
			all.msgs[n++] = b->c.msgs[i];
	}
	t0 = now_mono_ms();
	for (i = 0; i < dp->nchans && st == DB_OK; i++) {
		if (!dp->chans[i].limited)
			st = dispatch_send(
			    dp, &dp->chans[i], &all, oldest, errstr);
	}
	*claimed += all.n;
	for (i = 0; i < all.n; i++) {
		if (all.msgs[i]->result != SEND_NONE)
			tried = true;
	}
	free(all.msgs);
	*attempted = *attempted || tried;
	pthread_mutex_lock(&p->lock);
	while ((b = dbatchq_pop(&q)) != NULL) {
		b->send_ms = now_mono_ms() - t0;
		dbatchq_push(&p->finq, b);
	}
	/* As the serial path ends its pass: claiming again at once would
	 * spin on rows nothing could send (a channel down, the stop). */
	if (!tried)
		p->stopping = true;
	dpipe_note_stop_locked(dp);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return st;
}

/*
 * End the pass's pipeline: claim nothing more, finalise every batch
 * still queued unsent, join both threads, add the finaliser's tally.
 * Returns a helper thread's failure not yet returned by dpipe_step.
 */
static enum db_status
dpipe_finish(struct dispatch *dp, char **errstr)
{
	struct dpipe  *p = dp->pipe;
	struct dbatch *b;
	enum db_status st;

	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	if (p->has_claimer)
		pthread_join(p->claimer, NULL);
	pthread_mutex_lock(&p->lock);
	while ((b = dbatchq_pop(&p->sendq)) != NULL)
		dbatchq_push(&p->finq, b);
	p->closing = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	if (p->has_finaliser)
		pthread_join(p->finaliser, NULL);

	dispatch_tally_add(&dp->tally, &p->tally);
	st = p->err != NULL ? p->st : DB_OK;
	if (st != DB_OK)
		*errstr = p->err;
	else
		free(p->err);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p->names);
	free(p);
	dp->pipe = NULL;
	return st;
}

/*
 * Start the pass's pipeline for the unlimited channels.  When a thread
 * cannot be created the pass runs serially (logged): nothing has been
 * claimed by then.
 */
static void
dpipe_start(struct dispatch *dp)
{
	struct dpipe *p;
	sigset_t      all, old;
	size_t        i;
	int           rc;
	char         *err = NULL;

	p = xcalloc(1, sizeof *p);
	p->dp = dp;
	p->names = xcalloc(dp->nchans + 1, sizeof *p->names);
	for (i = 0; i < dp->nchans; i++) {
		if (!dp->chans[i].limited) {
			p->names[p->nnames++] = dp->chans[i].conf->name;
			p->stream = &dp->chans[i];
		}
	}
	/* Several channels' sends would take turns on this thread: they
	 * go as groups of batches (dpipe_step). */
	if (p->nnames != 1 || dp->no_send || p->stream->ops->stream == NULL)
		p->stream = NULL;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	dbatchq_init(&p->sendq);
	dbatchq_init(&p->finq);
	dp->pipe = p;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* The finaliser first: once the claimer runs, batches need it. */
	if ((rc = pthread_create(&p->finaliser, NULL, dpipe_finaliser, p)) ==
	    0) {
		p->has_finaliser = true;
		if ((rc = pthread_create(
		         &p->claimer, NULL, dpipe_claimer, p)) == 0)
			p->has_claimer = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		log_kv(LOG_WARN, "outbox_pipeline_off", "error", strerror(rc),
		    "msg", "cannot start a thread: this pass runs serially",
		    NULL);
		(void)dpipe_finish(dp, &err);
		free(err);
	}
}

/* Whether passes pipeline: a depth over 1, and an unlimited channel. */
static bool
dispatch_pipelined(const struct dispatch *dp)
{
	size_t i;

	if (dp->conf->outbox.pipeline <= 1)
		return false;
	for (i = 0; i < dp->nchans; i++) {
		if (!dp->chans[i].limited)
			return true;
	}
	return false;
}

/*
 * How many rows to ask channel d's limits for: a batch, but with a rate
 * and a deadline no more than the send slots left before it (slot 0 is
 * now at best; ratelimit_trim cuts to the slots really reserved).
 */
static unsigned
dispatch_want(const struct dispatch *dp, const struct dchan *d)
{
	int64_t left = dispatch_left(dp);
	double  fit;

	if (left <= 0)
		return 0;
	if (dp->until == 0 || d->conf->rate <= 0)
		return dp->batch;
	fit = floor((double)left * d->conf->rate / 1000.0) + 1;
	return fit < dp->batch ? (unsigned)fit : dp->batch;
}

/* The rate held d's batch back: note the wait for its next slot when a
 * one-shot dispatch may wait that long. */
static void
dispatch_note_rate_wait(struct dispatch *dp, const struct dchan *d)
{
	int64_t wait = ratelimit_rate_wait(d->lim), bound;

	if (dp->for_ms != 0)
		return;
	bound = (int64_t)(1000.0 / d->conf->rate + 0.5);
	if (bound > DISPATCH_RATE_WAIT_MS)
		bound = DISPATCH_RATE_WAIT_MS;
	if (wait > bound || dp->waited + wait > DISPATCH_RATE_WAIT_MS)
		return;
	if (dp->rate_wait == 0 || wait < dp->rate_wait)
		dp->rate_wait = wait;
}

/*
 * One batch: reserve from each channel's limits, claim the unlimited
 * channels together and each limited channel on its own (so a quota is
 * never exceeded by a shared LIMIT), send, finalise.
 */
static enum db_status
dispatch_batch(struct dispatch *dp, size_t *claimed, bool *attempted,
    bool *rescan, char **errstr)
{
	const char   **names;
	size_t         i, n = 0;
	unsigned       want;
	enum db_status st = DB_OK;

	*claimed = 0;
	*attempted = false;
	*rescan = false;
	dp->rate_wait = 0;
	if (dispatch_left(dp) <= 0)
		return DB_OK;
	names = xcalloc(dp->nchans + 1, sizeof *names);
	for (i = 0; i < dp->nchans; i++) {
		if (!dp->chans[i].limited)
			names[n++] = dp->chans[i].conf->name;
	}
	if (n > 0 && dp->pipe != NULL)
		st = dpipe_step(dp, claimed, attempted, errstr);
	else if (n > 0)
		st = dispatch_claim_send(dp, names, n, dp->batch, NULL,
		    &dp->cursor, claimed, attempted, rescan, errstr);
	if (st != DB_OK)
		goto out;
	for (i = 0; i < dp->nchans && !*dp->stop; i++) {
		struct dchan *d = &dp->chans[i];

		if (!d->limited)
			continue;
		if ((want = dispatch_want(dp, d)) == 0)
			continue;
		d->granted = 0;
		st = ratelimit_reserve(
		    d->lim, dp->db, want, &d->granted, errstr);
		if (st != DB_OK)
			goto out;
		if (d->granted == 0 && ratelimit_rate_wait(d->lim) > 0)
			dispatch_note_rate_wait(dp, d);
		if (ratelimit_quota_exhausted(d->lim) && !d->quota_warned) {
			d->quota_warned = true;
			log_kv(LOG_WARN, "quota_exhausted", "channel",
			    d->conf->name, "reset", "00:00 UTC", NULL);
		}
		if (dp->until != 0 && d->granted > 0) {
			d->granted =
			    ratelimit_trim(d->lim, d->granted, dp->until);
			if (d->granted == 0) {
				/* Quota reserved for nothing goes back. */
				st = ratelimit_settle(
				    d->lim, dp->db, NULL, 0, errstr);
				if (st != DB_OK)
					goto out;
			}
		}
		if (d->granted == 0)
			continue;
		names[0] = d->conf->name;
		st = dispatch_claim_send(dp, names, 1, d->granted, d,
		    &d->cursor, claimed, attempted, rescan, errstr);
		if (st != DB_OK)
			goto out;
	}
out:
	free(names);
	return st;
}

/* Recover, then batches until nothing is due or nothing could be sent. */
static enum db_status
dispatch_pass(struct dispatch *dp, char **errstr)
{
	unsigned long long n = 0;
	enum db_status     st, st2;
	size_t             claimed, i;
	bool               attempted, rescan;
	char              *err2 = NULL;

	dp->cursor.set = 0;
	for (i = 0; i < dp->nchans; i++) {
		dp->chans[i].cursor.set = 0;
		dp->chans[i].quota_warned = false;
	}
	st = outbox_recover(dp->db, &dp->conf->outbox, &n, errstr);
	if (st != DB_OK)
		return st;
	if (n > 0) {
		char num[32];

		snprintf(num, sizeof num, "%llu", n);
		log_kv(LOG_WARN, "outbox_recovered", "count", num, "reason",
		    "lease expired", NULL);
		dp->recovered += n;
	}
	/* Stopped already (a signal while connecting): claim nothing ahead. */
	if (dp->claim_db != NULL && !*dp->stop)
		dpipe_start(dp);
	while (!*dp->stop) {
		st = dispatch_batch(dp, &claimed, &attempted, &rescan, errstr);
		if (st != DB_OK)
			break;
		dp->found += claimed;
		if (claimed == 0 && rescan)
			continue;
		if (claimed == 0 && dp->rate_wait > 0) {
			/* One-shot, and only the rate held rows back. */
			sleep_ms(dp->rate_wait);
			dp->waited += dp->rate_wait;
			continue;
		}
		/* Nothing due; or everything claimed went back unsent
		 * (circuit open, quota, stop): claiming again at once would
		 * spin on the same rows. */
		if (claimed == 0 || !attempted)
			break;
		if (dispatch_left(dp) <= 0)
			break;
	}
	if (dp->pipe != NULL) {
		st2 = dpipe_finish(dp, st == DB_OK ? errstr : &err2);
		if (st == DB_OK)
			st = st2;
		free(err2);
	}
	return st;
}

enum dispatch_status
dispatch_open(struct conf *c, const struct dispatch_opts *opts,
    struct dispatch **dpp, char **errstr)
{
	const struct conf_channel *cc;
	struct dispatch           *dp;
	struct dchan              *d;
	size_t                     i, j;
	char                      *err = NULL;
	bool                       want;

	dp = xcalloc(1, sizeof *dp);
	*dpp = dp;
	dp->conf = c;
	dp->batch = opts->batch != 0 ? opts->batch : c->outbox.batch_size;
	dp->no_send = opts->no_send;
	dp->stop = opts->stop != NULL ? opts->stop : &dp->never;
	dp->for_ms = opts->for_ms;
	if (dp->for_ms > 0)
		dp->until =
		    (opts->start_ms != 0 ? opts->start_ms : now_mono_ms()) +
		    dp->for_ms -
		    (dp->for_ms / 10 < DISPATCH_MARGIN_MS ? dp->for_ms / 10
		                                          : DISPATCH_MARGIN_MS);
	dp->chans = xcalloc(c->nchannels + 1, sizeof *dp->chans);
	for (i = 0; i < c->nchannels; i++) {
		cc = &c->channels[i];
		want = opts->nchannels == 0;
		for (j = 0; j < opts->nchannels; j++)
			want = want || strcmp(opts->channels[j], cc->name) == 0;
		if (!want)
			continue;
		d = &dp->chans[dp->nchans++];
		d->conf = cc;
		d->ops = channel_ops_for(cc->type);
		if (dp->no_send)
			continue;
		d->limited = cc->rate > 0 || cc->daily_quota > 0 ||
		    cc->circuit_failures > 0;
		d->lim = ratelimit_new(cc);
		if (d->ops == NULL || d->ops->open(cc, &d->ch, &err) != 0) {
			*errstr = xasprintf("channel %s: %s", cc->name,
			    err != NULL ? err : "unsupported type");
			free(err);
			return DISPATCH_ERR_CHANNEL;
		}
	}
	return DISPATCH_OK;
}

size_t
dispatch_nchannels(const struct dispatch *dp)
{
	return dp->nchans;
}

int64_t
dispatch_deadline(const struct dispatch *dp)
{
	return dp->until;
}

/*
 * Every connection of the dispatcher is set up here.  READ COMMITTED (see
 * outbox.c): no gap locks on the claim's range read; replayed after a
 * reconnect.  A restarted server or a conflict costs a wait within the
 * pass's deadline, not the pass (db_reconnect_enable).
 */
static enum db_status
dispatch_session(const struct dispatch *dp, struct db *db, char **errstr)
{
	enum db_status st;

	st = db_session_set(db,
	    "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", errstr);
	if (st == DB_OK)
		db_reconnect_enable(db, dp->until);
	return st;
}

/* Open and set up the pipeline's two connections, when passes pipeline. */
static enum db_status
dispatch_connect_pipeline(struct dispatch *dp, char **errstr)
{
	enum db_status st;

	if (!dispatch_pipelined(dp))
		return DB_OK;
	/* They claim and finalise: the writable primary only (db.h). */
	if ((st = db_connect_until(
	         &dp->conf->db, dp->until, &dp->claim_db, errstr)) != DB_OK ||
	    (st = dispatch_session(dp, dp->claim_db, errstr)) != DB_OK ||
	    (st = db_connect_until(
	         &dp->conf->db, dp->until, &dp->fin_db, errstr)) != DB_OK ||
	    (st = dispatch_session(dp, dp->fin_db, errstr)) != DB_OK)
		return st;
	return DB_OK;
}

/*
 * How long to sleep between passes (cronguard(1), POLLING): right after
 * a pass that found work, DISPATCH_POLL_MIN_MS; while nothing arrives, a
 * quarter of the time since work was last found, so a trickle is picked
 * up within about a quarter of its own gaps while an idle dispatcher
 * backs off to poll_interval within seconds.
 */
static int64_t
dispatch_poll_ms(const struct dispatch *dp, int64_t idle_ms)
{
	int64_t ms = idle_ms / 4, ceiling = dp->conf->outbox.poll_interval_ms;

	if (ms < DISPATCH_POLL_MIN_MS)
		ms = DISPATCH_POLL_MIN_MS;
	return ms < ceiling ? ms : ceiling;
}

enum dispatch_status
dispatch_run(struct dispatch *dp, struct db *db, struct dispatch_stats *st,
    char **errstr)
{
	enum dispatch_status rc = DISPATCH_OK;
	int64_t              started, left, wait, worked;
	int64_t              for_ms = dp->for_ms;
	unsigned long long   found = 0;

	memset(st, 0, sizeof *st);
	dp->db = db;
	started = worked = now_mono_ms();
	if ((st->db = dispatch_session(dp, db, errstr)) != DB_OK ||
	    (st->db = dispatch_connect_pipeline(dp, errstr)) != DB_OK) {
		rc = DISPATCH_ERR_SESSION;
		goto out;
	}
	for (;;) {
		if (dp->nchans > 0 &&
		    (st->db = dispatch_pass(dp, errstr)) != DB_OK) {
			rc = DISPATCH_ERR_PASS;
			break;
		}
		if (dp->found != found) {
			found = dp->found;
			worked = now_mono_ms();
		}
		left = dispatch_left(dp);
		if (*dp->stop || for_ms == 0 || left <= 0)
			break;
		wait = dispatch_poll_ms(dp, now_mono_ms() - worked);
		sleep_ms(left < wait ? left : wait);
		if (*dp->stop)
			break;
	}
out:
	st->tally = dp->tally;
	st->recovered = dp->recovered;
	st->conflicts = db_conflicts(db);
	if (dp->claim_db != NULL)
		st->conflicts += db_conflicts(dp->claim_db);
	if (dp->fin_db != NULL)
		st->conflicts += db_conflicts(dp->fin_db);
	st->stopped = *dp->stop != 0;
	st->ms = now_mono_ms() - started;
	dp->db = NULL;
	db_close(dp->claim_db);
	db_close(dp->fin_db);
	dp->claim_db = dp->fin_db = NULL;
	return rc;
}

void
dispatch_close(struct dispatch *dp)
{
	size_t i;

	if (dp == NULL)
		return;
	for (i = 0; i < dp->nchans; i++) {
		if (dp->chans[i].ch != NULL)
			dp->chans[i].ops->close(dp->chans[i].ch);
		ratelimit_free(dp->chans[i].lim);
	}
	free(dp->chans);
	free(dp);
}
