/*
 * dispatch.h: the outbox dispatch engine (cronguard-outbox(7), DISPATCH):
 * recover stale claims, then claim, send and finalise due messages until none
 * is due; with a deadline, keep polling until it.
 *
 * The engine never prints and never exits: it logs the events of a pass
 * (outbox_recovered, quota_exhausted, outbox_batch at debug level) and
 * returns a status, its counters and an allocated error string.
 */
#ifndef CRONGUARD_DISPATCH_H
#define CRONGUARD_DISPATCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "db.h"
#include "outbox.h"

struct dispatch_opts {
	const char *const *channels;  /* serve only these (names in conf); */
	size_t             nchannels; /* 0 = every configured channel */
	unsigned           batch;    /* rows per claim; 0 = outbox.batch_size */
	int64_t            for_ms;   /* poll until this long; 0 = drain once */
	int64_t            start_ms; /* monotonic ms for_ms counts from (the
	                              * process start); 0 = dispatch_open */
	bool no_send;                /* benchmark: claim and finalise only */
	/* Set non-zero (by a signal handler) to stop: claimed but unsent
	 * rows go back at once.  NULL: never stopped. */
	volatile sig_atomic_t *stop;
};

enum dispatch_status {
	DISPATCH_OK,
	DISPATCH_ERR_CHANNEL, /* a channel would not open (dispatch_open) */
	DISPATCH_ERR_SESSION, /* the session setup failed: nothing ran */
	DISPATCH_ERR_PASS,    /* a pass failed: the counters hold the rest */
};

/* What dispatch_run did. */
struct dispatch_stats {
	struct outbox_tally tally;
	unsigned long long  recovered; /* stale claims recovered */
	unsigned long long  conflicts; /* deadlocks, certification
	                                * failures retried (db_conflicts) */
	int64_t        ms;             /* time the run took */
	bool           stopped;        /* by *opts.stop */
	enum db_status db;             /* of a DISPATCH_ERR_* failure */
};

struct dispatch;

/*
 * Open the channels to serve (opts->channels must name configured
 * channels).  On success *dp is the engine (free with dispatch_close); on
 * DISPATCH_ERR_CHANNEL *errstr says which channel and why, and *dp is
 * still set, to be closed.  c and opts must outlive *dp.
 */
enum dispatch_status dispatch_open(struct conf *c,
    const struct dispatch_opts *opts, struct dispatch **dp, char **errstr);

/* How many channels dp serves (0: nothing to dispatch). */
size_t dispatch_nchannels(const struct dispatch *dp);

/* The monotonic ms after which no claim or send starts (from start_ms
 * and for_ms): connect retries stop at it too.  0 without a deadline. */
int64_t dispatch_deadline(const struct dispatch *dp);

/*
 * Set db's session to READ COMMITTED (outbox.c relies on it); with
 * outbox.pipeline above 1 and a channel without rate, quota or circuit,
 * also open two more connections set up the same way, for the pass's
 * claimer and finaliser threads (closed before returning).  Then run
 * passes: once without opts->for_ms, else until for_ms has passed,
 * polling 50 ms after a pass that found work and backing off to
 * outbox.poll_interval_ms while none arrives.  With no channel, no pass
 * runs.  On failure *errstr is allocated and st->db says which database
 * error.  *st is filled in every case.
 */
enum dispatch_status dispatch_run(struct dispatch *dp, struct db *db,
    struct dispatch_stats *st, char **errstr);

/* Close the channels and free dp (NULL is fine). */
void dispatch_close(struct dispatch *dp);

#endif
