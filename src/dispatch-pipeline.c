/* dispatch-pipeline.c: the pipelined pass (outbox.pipeline > 1): the
 * claimer and finaliser threads and the streamed sends between them. */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "channel.h"
#include "db.h"
#include "dispatch-int.h"
#include "faultpoint.h"
#include "log.h"
#include "outbox.h"
#include "ratelimit.h"
#include "util.h"

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
 * Per-key ordering: a batch's rows are PROCESSING from its claim's
 * commit until its finalise, and a claim keeps a row of a key only behind
 * every earlier open row of its key: in its own batch, or in flight in
 * an earlier batch of this pass (dpipe_follow; the batch is then kept
 * alive, pinned, while the row follows one of its rows).  A row is sent
 * only once the row before it is SEND_OK (dstream_next, dispatch_send),
 * so a key has at most one message in flight (doc/architecture.md,
 * "Ordering and runs of a key").  Channels with a rate, quota or circuit keep
 *the serial path on the main connection, between pipelined batches: their
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
	size_t         unhanded;   /* streamed: the first msgs[] not */
	bool          *gone;       /* streamed: msgs[i] handed out */
	size_t         open;       /* of them, still without a result */
	bool           tried;      /* streamed: one was attempted */
	struct dbatch *next;
	/* Every batch claimed is on dpipe.live until it is freed: once
	 * finalised (done) and no later batch's row follows one of its rows
	 * (pins).  pinned: the batches whose rows its rows follow. */
	struct dbatch  *live_next;
	unsigned        pins;
	bool            done;
	struct dbatch **pinned;
	size_t          npinned;
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
	struct dbatch      *live;     /* every batch not freed */
	bool                claiming; /* a claim runs: free no batch */
	struct claim_follow follow;   /* dpipe_follow */
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
	free(b->pinned);
	free(b->gone);
	free(b);
}

/* Whether m is one of b's messages (a claim's messages are one array).
 * As integers: relational operators on pointers into different arrays
 * are undefined. */
static bool
dbatch_holds(const struct dbatch *b, const struct outbox_msg *m)
{
	uintptr_t p = (uintptr_t)m, first = (uintptr_t)b->c.storage;

	return p >= first && p < first + b->c.n * sizeof *b->c.storage;
}

/* claim_follow.find: the message of row id in a batch alive, or NULL.
 * Called by the claimer within its claim, while no batch is freed
 * (claiming).  Reads only what a claim fixed (ids, keys, runs). */
static const struct outbox_msg *
dpipe_follow(void *arg, unsigned long long id)
{
	struct dpipe            *p = arg;
	struct dbatch           *b;
	const struct outbox_msg *m = NULL;
	size_t                   i;

	pthread_mutex_lock(&p->lock);
	for (b = p->live; b != NULL && m == NULL; b = b->live_next) {
		for (i = 0; i < b->c.n; i++) {
			if (b->c.storage[i].id == id) {
				m = &b->c.storage[i];
				break;
			}
		}
	}
	pthread_mutex_unlock(&p->lock);
	return m;
}

/* claim_follow.keyed: the ids of the keyed messages of the batches
 * alive and not yet finalised, in an array the caller frees.  A batch
 * finalised (done: its finalise committed) has no row PROCESSING, so no
 * key's last PROCESSING row is among its ids; it may be kept alive for
 * long (pinned by the batch after it, pinned in turn), and its ids would
 * lengthen every claim of the pass.  Called as dpipe_follow is. */
static unsigned long long *
dpipe_keyed(void *arg, size_t *n)
{
	struct dpipe       *p = arg;
	struct dbatch      *b;
	unsigned long long *ids;
	size_t              i, cap = 0;

	*n = 0;
	pthread_mutex_lock(&p->lock);
	for (b = p->live; b != NULL; b = b->live_next)
		if (!b->done)
			cap += b->c.n;
	ids = xcalloc(cap + 1, sizeof *ids);
	for (b = p->live; b != NULL; b = b->live_next) {
		if (b->done)
			continue;
		for (i = 0; i < b->c.n; i++) {
			if (b->c.storage[i].ordering_key != NULL)
				ids[(*n)++] = b->c.storage[i].id;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return ids;
}

/* Put a batch just claimed on the live list and pin the batches whose
 * rows its rows follow.  Called with the lock held. */
static void
dpipe_pin_locked(struct dpipe *p, struct dbatch *b)
{
	struct dbatch *o;
	size_t         i;

	for (i = 0; i < b->c.n; i++) {
		if (b->c.msgs[i]->after == NULL ||
		    dbatch_holds(b, b->c.msgs[i]->after))
			continue;
		for (o = p->live; o != NULL; o = o->live_next) {
			if (dbatch_holds(o, b->c.msgs[i]->after))
				break;
		}
		if (o == NULL)
			continue; /* cannot be: claiming kept it alive */
		if (b->pinned == NULL)
			b->pinned = xcalloc(b->c.n + 1, sizeof *b->pinned);
		b->pinned[b->npinned++] = o;
		o->pins++;
	}
	b->live_next = p->live;
	p->live = b;
}

/*
 * Take off the live list every batch done and not pinned, unless a claim
 * runs; they are chained on *dead through next, to free without the lock.
 * A batch done unpins what it pinned at once, freed or not: its rows are
 * sent and finalised, so nothing reads their outbox_msg.after again (the
 * rows that follow its own rows read those, and it stays while they may).
 * Kept until it was freed, each batch of a pass whose keys run through
 * every batch held the one before it, and a pass held every batch it
 * claimed.  Returns how many batches stay alive.
 */
static size_t
dpipe_reap_locked(struct dpipe *p, struct dbatch **dead)
{
	struct dbatch **pp, *b;
	bool            again = true;
	size_t          i, alive = 0;

	while (again && !p->claiming) {
		again = false;
		for (pp = &p->live; (b = *pp) != NULL;) {
			if (b->done && b->npinned > 0) {
				for (i = 0; i < b->npinned; i++)
					b->pinned[i]->pins--;
				b->npinned = 0;
				again = true;
			}
			if (!b->done || b->pins > 0) {
				pp = &b->live_next;
				continue;
			}
			*pp = b->live_next;
			b->next = *dead;
			*dead = b;
		}
	}
	for (b = p->live; b != NULL; b = b->live_next)
		alive++;
	return alive;
}

static void
dbatch_free_all(struct dbatch *dead)
{
	struct dbatch *b;

	while ((b = dead) != NULL) {
		dead = b->next;
		dbatch_free(b);
	}
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
	struct dbatch   *b, *dead;
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
		pthread_mutex_lock(&p->lock);
		p->claiming = true;
		pthread_mutex_unlock(&p->lock);
		b->claimed_ms = now_mono_ms();
		st = outbox_claim_budget(dp->claim_db, &dp->conf->outbox,
		    p->names, p->nnames, dp->batch, budget > 0 ? budget : 1,
		    &p->follow, &dp->cursor, &b->c, &err);
		b->claim_ms = now_mono_ms() - b->claimed_ms;
		got = st == DB_OK ? b->c.n : 0;
		dead = NULL;
		pthread_mutex_lock(&p->lock);
		if (got > 0)
			dpipe_pin_locked(p, b);
		p->claiming = false;
		dpipe_reap_locked(p, &dead);
		pthread_mutex_unlock(&p->lock);
		dbatch_free_all(dead);
		if (st != DB_OK) {
			dbatch_free(b);
			pthread_mutex_lock(&p->lock);
			dpipe_fail_locked(p, st, err);
			pthread_mutex_unlock(&p->lock);
			break;
		}
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
	struct dbatch     *b, *dead;
	enum db_status     st;
	char              *err = NULL;
	bool               broken = false;
	int64_t            t0, fin_ms;
	unsigned long long bytes;
	size_t             held;

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
		fin_ms = now_mono_ms() - t0;
		bytes = b->c.bytes;
		dead = NULL;
		pthread_mutex_lock(&p->lock);
		b->done = true;
		held = dpipe_reap_locked(p, &dead);
		/* Under the lock: once it is released b may be freed. */
		if (log_enabled(LOG_DEBUG))
			dispatch_log_batch(
			    &b->c, b->claim_ms, b->send_ms, fin_ms, held);
		p->inflight--;
		p->inbytes -= bytes;
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
		dbatch_free_all(dead);
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
	struct dbatch   *feed;    /* the batch of the message next
	                           * handed out last, while it is sending */
	size_t left;              /* batches it may still take */
	size_t taken;             /* messages in the batches taken */
	bool   tried;             /* a message was attempted */
};

/* The batch of msg among those being sent. */
static struct dbatch *
dstream_owner(struct dstream *s, const struct outbox_msg *msg)
{
	struct dbatch *b;

	for (b = s->sending.head; b != NULL; b = b->next) {
		if (dbatch_holds(b, msg))
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
	b->gone = xcalloc(b->c.n + 1, sizeof *b->gone);
	dbatchq_push(&s->sending, b);
	return b;
}

/* The first message of b not handed out whose row before (in its run,
 * outbox_msg.after) has its result, or NULL. */
static struct outbox_msg *
dbatch_ready(struct dbatch *b, size_t *at)
{
	struct outbox_msg *m;
	size_t             i;

	while (b->unhanded < b->c.n && b->gone[b->unhanded])
		b->unhanded++;
	for (i = b->unhanded; i < b->c.n; i++) {
		m = b->c.msgs[i];
		if (!b->gone[i] && (m->after == NULL || m->after->settled)) {
			*at = i;
			return m;
		}
	}
	return NULL;
}

/*
 * The next message: the first ready one of the batches taken, in the
 * order they were claimed, taking the next batch queued when none is.  A
 * row that follows another of its key (outbox_msg.after: in its batch,
 * or an earlier one's row in flight) waits until that one has its
 * result, while the rows after it that do not wait go on; the stream
 * asks again when a transfer ends.  After a row that was not sent it is
 * put back unsent (SEND_NONE) at once.
 */
static struct outbox_msg *
dstream_next(struct send_ctl *ctl)
{
	struct dstream    *s = (struct dstream *)ctl;
	struct dbatch     *b;
	struct outbox_msg *m;
	size_t             i = 0;

	for (;;) {
		if (*s->dp->stop)
			return NULL;
		m = NULL;
		for (b = s->sending.head; b != NULL; b = b->next) {
			if ((m = dbatch_ready(b, &i)) != NULL)
				break;
		}
		if (m == NULL) {
			if (dstream_take(s) == NULL)
				return NULL;
			continue;
		}
		b->gone[i] = true;
		b->handed++;
		b->open++;
		s->feed = b;
		if (m->after == NULL || m->after->result == SEND_OK)
			return m;
		m->settled = true;
		dstream_settle(s, b);
	}
}

/* A message (of the feed: next handed it out last) starts only within
 * its claim's lease, before the --for deadline and before its end. */
static int
dstream_before(struct send_ctl *ctl, struct outbox_msg *msg)
{
	struct dstream *s = (struct dstream *)ctl;

	if (now_mono_ms() < s->feed->start_by && !dispatch_expired(msg)) {
		msg->started_ms = now_mono_ms();
		return 0;
	}
	msg->settled = true;
	dstream_settle(s, s->feed);
	return 1;
}

static void
dstream_after(struct send_ctl *ctl, struct outbox_msg *msg)
{
	struct dstream *s = (struct dstream *)ctl;
	struct dbatch  *b = dstream_owner(s, msg);

	msg->ended_ms = now_mono_ms();
	msg->settled = true;
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
enum db_status
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
enum db_status
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

	/* Every batch is finalised: the pins no longer matter. */
	while ((b = p->live) != NULL) {
		p->live = b->live_next;
		dbatch_free(b);
	}
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
void
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
	p->follow.find = dpipe_follow;
	p->follow.keyed = dpipe_keyed;
	p->follow.arg = p;
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
		    "msg", "cannot start a thread: this pass runs serially");
		(void)dpipe_finish(dp, &err);
		free(err);
	}
}
