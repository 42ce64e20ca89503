/*
 * ratelimit.h: fleet-wide rate limit, daily quota and circuit breaker for a
 * channel, with state in cronguard_channels and the database clock
 * (cronguard-outbox(7), RATE LIMITS, QUOTAS AND CIRCUIT BREAKER).  Every call
 * is one short statement or transaction; none is held across a send.
 */
#ifndef CRONGUARD_RATELIMIT_H
#define CRONGUARD_RATELIMIT_H

#include <stddef.h>
#include <stdint.h>

#include "channel.h"
#include "conf.h"
#include "db.h"

struct ratelimit;

/* Per-channel limiter state for one dispatcher process.  A channel with no
 * rate, no quota and no circuit gets a limiter that grants everything
 * without touching the database. */
struct ratelimit *ratelimit_new(const struct conf_channel *);
void              ratelimit_free(struct ratelimit *);

/*
 * Before claiming for the channel: how many of want rows may be claimed
 * now.  *granted is 0 while the circuit is open or the day's quota is used
 * up; 1 when the circuit is half-open (a probe).  Quota granted here is
 * reserved; ratelimit_settle returns what was not sent.  When *granted
 * is 0 (the rate held the batch back) or on an error, the quota reserved
 * has already gone back.
 */
enum db_status ratelimit_reserve(struct ratelimit *, struct db *, unsigned want,
    unsigned *granted, char **errstr);

/* Whether the last ratelimit_reserve found the day's quota used up. */
int ratelimit_quota_exhausted(const struct ratelimit *);

/* When the rate held the last ratelimit_reserve's whole batch back: in
 * how many milliseconds a reserve can be granted a slot again; else 0. */
int64_t ratelimit_rate_wait(const struct ratelimit *);

/* The send_ctl a channel uses for the reserved batch: paces sends to the
 * rate, and stops starting sends once the circuit opens mid-batch. */
void ratelimit_ctl(
    struct ratelimit *, struct send_ctl *, volatile sig_atomic_t *stop);

/*
 * After claiming, before sending: give msgs[0..n-1] their send
 * slots (msg->not_before_ms) so a channel waits for each without blocking
 * its other transfers.  Without it, the send_ctl's before_send sleeps
 * until the slot instead.  No database access.
 */
void ratelimit_pace(struct ratelimit *, struct outbox_msg **msgs, size_t n);

/*
 * Added, for `outbox dispatch --for`: keep only the slots of the current
 * reservation that start before deadline_ms (monotonic) and return how
 * many of granted rows may be claimed.  Without a rate: granted.  Quota
 * and rate slots reserved for the dropped slots go back at
 * ratelimit_settle like any unsent row's.
 */
unsigned ratelimit_trim(
    struct ratelimit *, unsigned granted, int64_t deadline_ms);

/* After the batch: give back unused quota and the trailing rate slots no
 * send started in (while no other reservation followed them), record
 * consecutive transient failures and open or close the circuit for every
 * instance.  Call it after every ratelimit_reserve that granted rows,
 * also when the claim found nothing (msgs NULL, n 0): that gives the
 * reservation back at once.  Otherwise only the process's next
 * ratelimit_reserve gives it back, and a process that exits first leaves
 * it counted against the day's quota. */
enum db_status ratelimit_settle(struct ratelimit *, struct db *,
    struct outbox_msg **msgs, size_t n, char **errstr);

/*
 * Added, for `outbox check` and operators: the state of every channel row
 * in cronguard_channels, from the database clock.  One query.  On success
 * *out is an allocated array of *n entries (free with
 * ratelimit_states_free); a missing table is an error like any other.
 */
enum ratelimit_circuit { CIRCUIT_CLOSED, CIRCUIT_OPEN, CIRCUIT_HALF_OPEN };
/* "closed", "open", "half-open": outbox check's and the status page's
 * word. */
const char *ratelimit_circuit_name(enum ratelimit_circuit);
struct ratelimit_state {
	char                  *channel;
	enum ratelimit_circuit circuit;
	unsigned               failures;    /* consecutive transient failures */
	long long              open_for_ms; /* CIRCUIT_OPEN: until half-open */
	char                  *error;       /* what opened it last, or NULL */
	long long              quota_used;  /* today (UTC), 0 on another day */
	long long              quota_resets_s; /* until the next UTC midnight */
	char *quota_resets_at;                 /* it, as 2026-12-02T00:00:00Z */
};
enum db_status ratelimit_states(
    struct db *, struct ratelimit_state **out, size_t *n, char **errstr);
void ratelimit_states_free(struct ratelimit_state *, size_t n);

#endif
