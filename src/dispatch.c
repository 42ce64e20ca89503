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

#include "dispatch-int.h"

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
			    limited->conf->name, "error", err2);
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
		dispatch_log_batch(&c, t1 - t0, t2 - t1, now_mono_ms() - t2, 0);
out:
	outbox_claim_free(&c);
	return st;
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
			    d->conf->name, "reset", "00:00 UTC");
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
		    "lease expired");
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
