/* channel.h: the interface every delivery channel (smtp, http) implements. */
#ifndef CRONGUARD_CHANNEL_H
#define CRONGUARD_CHANNEL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"

enum send_result {
	SEND_NONE = 0,  /* not attempted (stopped, circuit open, quota):
	                 * back to PENDING, no attempt counted; with an
	                 * error after before_send let it start, the
	                 * channel itself failed (amqp: login refused),
	                 * which counts for the circuit breaker */
	SEND_OK,        /* delivered */
	SEND_RETRY,     /* transient: retry with backoff */
	SEND_PERMANENT, /* permanent: FAILED */
};

/* One claimed message.  The outbox fills the first block; the channel
 * fills the second. */
struct outbox_msg {
	unsigned long long id;
	char               message_id[37];
	char              *channel;
	char              *event_type;
	char              *ordering_key; /* or NULL */
	char              *payload;      /* JSON text */
	size_t             payload_len;
	unsigned           attempts;     /* attempts before this one */
	int64_t            created_at_s; /* unix seconds, DB clock */
	int64_t not_before_ms; /* monotonic; 0 = send at once (rate) */
	/* Its end (expires_at, or created_at + the channel's ttl, by the
	 * database clock at the claim) on the monotonic clock; 0: none.
	 * The dispatcher starts no send at or past it: expired is then
	 * set, and the finalise makes the row FAILED ("expired: ..."). */
	int64_t expires_ms;
	bool    expired;

	enum send_result result;
	char            *error; /* allocated, for last_error; or NULL */
	int64_t          retry_after_ms; /* server's minimum delay, or 0 */
	/* The server's answer to this message: the HTTP status, the SMTP
	 * reply code, the AMQP reply code; 0 when there was none (a
	 * transport error).  For the attempt log. */
	int status_code;
	/* Set by the dispatcher around the send (monotonic ms): started
	 * when before_send let it start, 0 if it never did. */
	int64_t started_ms, ended_ms;
	/* Per-key ordering: the row of the same key and scope sent just
	 * before this one, in this batch or (claim_follow) in an earlier
	 * batch of the same pass, or NULL.  This one starts only after that
	 * one is SEND_OK, and stays SEND_NONE (put back, no attempt) when it
	 * ended otherwise.  run is its place in that run (0 for the first;
	 * one more than the row it follows, so an earlier batch's row is in
	 * an earlier round); the claim orders msgs by run.  settled: the
	 * result is final (set by the sender). */
	const struct outbox_msg *after;
	unsigned                 run;
	bool                     settled;
};

/*
 * Hooks the dispatcher gives a channel for one batch.  A channel calls
 * before_send just before starting each message (return non-zero to leave
 * that message unsent with SEND_NONE, e.g. circuit open; after_send is
 * then not called for it) and after_send once its result is known.  stop
 * becomes non-zero on SIGTERM/SIGINT: start nothing new, finish what is
 * in flight within its timeout.
 *
 * next is for channel_ops.stream only: the next message to start, or NULL
 * when none waits now (more may come: the stream calls it again whenever
 * a slot is free, a transfer ends or wakeup is called).  before_send for
 * a message next returned comes before next is called again.
 */
struct send_ctl {
	int (*before_send)(struct send_ctl *, struct outbox_msg *);
	void (*after_send)(struct send_ctl *, struct outbox_msg *);
	struct outbox_msg *(*next)(struct send_ctl *);
	void                  *arg;
	volatile sig_atomic_t *stop;
};

struct channel;

struct channel_ops {
	/* Open once per process; keeps connections for reuse across batches.
	 * Returns 0, or -1 with *errstr allocated. */
	int (*open)(
	    const struct conf_channel *, struct channel **, char **errstr);
	/* Send msgs[0..n-1], up to the channel's concurrency at once, and set
	 * every msg->result.  Never touches the database. */
	void (*send)(struct channel *, struct outbox_msg **msgs, size_t n,
	    struct send_ctl *);
	/* Optional: send what ctl->next hands out, up to the channel's
	 * concurrency at once, until next returns NULL with nothing in
	 * flight, or stop with nothing in flight.  NULL: the channel sends
	 * whole batches only. */
	void (*stream)(struct channel *, struct send_ctl *);
	/* With stream: make a stream waiting on its transfers call next
	 * again at once.  Safe from any thread. */
	void (*wakeup)(struct channel *);
	void (*close)(struct channel *);
	/* Check msg as send would, sending nothing: 0, or -1 with *why
	 * allocated when the payload could never be sent on this channel.
	 * NULL: nothing to check beyond valid JSON. */
	int (*check)(
	    const struct conf_channel *, const struct outbox_msg *, char **why);
};

/* The ops for a configured channel type; NULL for one this binary was
 * built without (AMQP --without-amqp). */
const struct channel_ops *channel_ops_for(enum channel_type);

/* Check a payload for a configured channel as its send would (outbox
 * enqueue): 0, or -1 with *why allocated. */
int channel_check(
    const struct conf_channel *, const char *payload, size_t len, char **why);

/* Each type of CHANNEL_TYPES (conf.h) has its ops here, or NULL when it
 * is not built. */
extern const struct channel_ops channel_http_ops;
extern const struct channel_ops channel_smtp_ops;
#define CHANNEL_OPS_SMTP (&channel_smtp_ops)
#define CHANNEL_OPS_HTTP (&channel_http_ops)
#ifdef HAVE_AMQP
extern const struct channel_ops channel_amqp_ops;
#define CHANNEL_OPS_AMQP (&channel_amqp_ops)
#else
#define CHANNEL_OPS_AMQP NULL
#endif

#endif
