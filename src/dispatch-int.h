/*
 * dispatch-int.h: what the serial pass (dispatch.c), the pipeline
 * (dispatch-pipeline.c) and the send both use (dispatch-send.c) share;
 * not for other modules, which use dispatch.h.  doc/architecture.md,
 * "The outbox, from the top".
 */
#ifndef CRONGUARD_DISPATCH_INT_H
#define CRONGUARD_DISPATCH_INT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "channel.h"
#include "conf.h"
#include "db.h"
#include "dispatch.h"
#include "outbox.h"
#include "ratelimit.h"

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

/* dispatch-send.c, for both passes. */
/* Whether msg's end (expires_at, or its channel's ttl) has come: then it
 * is marked expired (the finalise makes it FAILED) and must not be sent.
 * Asked just before every send, serial and pipelined. */
bool dispatch_expired(struct outbox_msg *msg);

/* Milliseconds left before dp->until; INT64_MAX without a deadline. */
int64_t dispatch_left(const struct dispatch *dp);
/* Send the claimed messages of channel d, then settle its limits.
 * claimed_ms is the monotonic time just before the claim. */
enum db_status dispatch_send(struct dispatch *dp, struct dchan *d,
    struct claim *c, int64_t claimed_ms, char **errstr);
/* Where a batch's time went, for -vv and the benchmark; held, the
 * batches the pass still holds in memory once this one is finalised
 * (claimed, sending, or kept for the rows that follow theirs). */
void dispatch_log_batch(const struct claim *c, int64_t claim_ms,
    int64_t send_ms, int64_t fin_ms, size_t held);

/* dispatch-pipeline.c, for the pass (outbox.pipeline > 1). */
/* Start the pass's pipeline for the unlimited channels; when a thread
 * cannot be created the pass runs serially (logged). */
void dpipe_start(struct dispatch *dp);
/* Send every claimed batch waiting and hand them to the finaliser;
 * *claimed 0 when the claimer has ended with nothing left to send. */
enum db_status dpipe_step(
    struct dispatch *dp, size_t *claimed, bool *attempted, char **errstr);
/* End the pass's pipeline: finalise every batch still queued unsent,
 * join both threads, add the finaliser's tally. */
enum db_status dpipe_finish(struct dispatch *dp, char **errstr);

#endif
