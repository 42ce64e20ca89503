/*
 * outbox.h: the outbox rows' state machine (cronguard-outbox(7), STATES and
 * DISPATCH): recover stale claims, claim a batch, finalise it.  The operator's
 * statements (counts, list, show, retry, purge, enqueue) are outbox-admin.h.
 *
 * Every call is one statement or one short transaction; none is held
 * while a message is sent.  Times come from the database clock.
 */
#ifndef CRONGUARD_OUTBOX_H
#define CRONGUARD_OUTBOX_H

#include <stddef.h>
#include <stdint.h>

#include "channel.h"
#include "conf.h"
#include "db.h"
#include "util.h"

/*
 * Per-key ordering across claims (doc/architecture.md, "Ordering and runs
 * of a key"): a pipelined dispatcher claims ahead while its earlier
 * batches are sent.  find returns its message of row id when that row is
 * in one of its batches still alive (claimed in this pass, not freed), or
 * NULL.  A claim given one keeps the rows of a key whose open rows before
 * them are all that dispatcher's, in flight: they follow its last one
 * (outbox_msg.after), sent only once it is SEND_OK.  The caller keeps
 * that message alive as long as the claim's batch (it is called within
 * the claim, from the claiming thread).
 */
struct claim_follow {
	const struct outbox_msg *(*find)(void *arg, unsigned long long id);
	/* The ids of the keyed messages in flight, in an allocated array
	 * (or NULL), their number in *n: the claim's statement keeps only
	 * the keyed rows whose key's last PROCESSING row is one of them or
	 * none.  May be NULL. */
	unsigned long long *(*keyed)(void *arg, size_t *n);
	void *arg;
};

/* A claimed batch.  msgs[i] point into the claim; the strings of each
 * message point into the claim's result.  Free with outbox_claim_free. */
struct claim {
	char                token[37];
	struct outbox_msg  *storage;
	struct outbox_msg **msgs;
	size_t              n;
	struct db_result   *res;
	/* Rows the claim found expired (expires_at, or the channel's ttl)
	 * and made FAILED instead of claiming them. */
	unsigned long long *expired;
	size_t              nexpired;
	/* Rows the locking SELECT returned that the claim left out: with
	 * per-key ordering, rows that do not follow on from their key's
	 * open rows (they stay PENDING). */
	size_t            dropped;
	struct db_result *big; /* payloads fetched on their own, or NULL */
	int64_t claimed_ms;    /* monotonic, just before the locking SELECT */
	unsigned long long bytes; /* of the claimed payloads */
};

/* What a finalise did. */
struct outbox_tally {
	unsigned long long sent;     /* SENT, or deleted (keep_sent off) */
	unsigned long long retried;  /* back to PENDING with backoff */
	unsigned long long failed;   /* FAILED: permanent or max_attempts */
	unsigned long long released; /* never attempted: PENDING again */
	unsigned long long lost;     /* lease lost: result discarded */
};

/*
 * Recover stale claims: PROCESSING rows claimed longer than lease ago go
 * back to PENDING (due at once) with attempts + 1 and last_error "lease
 * expired"; a row reaching max_attempts becomes FAILED.  One statement;
 * *n is the number of rows recovered.
 */
enum db_status outbox_recover(struct db *, const struct conf_outbox *,
    unsigned long long *n, char **errstr);

/*
 * Where the previous claim of a pass ended, in (next_attempt_at, id)
 * order.  Rows a pass has claimed leave the PENDING range of the due
 * index, but InnoDB keeps their delete-marked entries there until purge
 * runs; a claim that starts after the cursor skips them instead of
 * scanning them again on every batch (measured: 10 ms instead of 0.6 ms
 * per claim with 10,000 such entries).  A claim that comes back short
 * resets the cursor, so the next claim scans from the start and no row
 * behind the cursor (released, or inserted with an old next_attempt_at)
 * waits past the end of the pass.
 */
struct outbox_cursor {
	int                set;
	char               at[32]; /* next_attempt_at as text */
	unsigned long long id;
};

/*
 * The condition under which row e (an alias) holds back the later row o
 * of its ordering key, appended to sql: same key, earlier id, in o's
 * scope (outbox.ordering_scope), and PENDING, PROCESSING or FAILED, a
 * FAILED row only when its channel's on_failure is "block".  With
 * failed_only, FAILED rows alone (what outbox check counts as blocked).
 * Returns 0, or -1 with *errstr.
 */
int outbox_blocking_sql(struct db *, const struct conf_outbox *, const char *e,
    const char *o, int failed_only, struct buf *sql, char **errstr);

/*
 * The claim's locking SELECT as one statement, appended to sql: the one
 * text that outbox_claim runs and that "cronguard doctor" EXPLAINs.  Due
 * PENDING rows of the named channels (escaped here; none matches no
 * row), after cur when cur (may be NULL) is set, per_key ordering's
 * condition when conf asks for it (a key's rows may follow follow's keyed
 * rows in flight; follow may be NULL), oldest due first, at most limit,
 * FOR UPDATE SKIP LOCKED, on the due index.  Returns 0, or -1 with
 * *errstr.
 */
int outbox_claim_sql(struct db *, const struct conf_outbox *,
    const char *const *channels, size_t nchannels, unsigned limit,
    const struct outbox_cursor *cur, const struct claim_follow *follow,
    struct buf *sql, char **errstr);

/*
 * Claim at most limit due PENDING rows of the named channels (escaped
 * here), oldest due first, skipping rows other workers hold locked, and
 * with per_key ordering only rows whose key has no earlier unsent or
 * FAILED row.  One transaction: the locking SELECT that also fetches the
 * rows, the UPDATE to PROCESSING with a fresh claim token, COMMIT.
 * cur (may be NULL) starts the claim after the previous one and is
 * updated.  On success c->n may be 0.  Every msg->result starts as
 * SEND_NONE.
 */
enum db_status outbox_claim(struct db *, const struct conf_outbox *,
    const char *const *channels, size_t nchannels, unsigned limit,
    struct outbox_cursor *cur, struct claim *c, char **errstr);

/*
 * outbox_claim with a budget of payload bytes (outbox_claim uses
 * conf->max_batch_bytes): the claim takes the due rows in order while
 * their payloads fit in budget, and always the first one, however large
 * (a row larger than the budget is claimed alone).  Payloads up to
 * max_batch_bytes / limit come with the locking SELECT; larger ones are
 * read in the same transaction for the rows kept only, so a claim never
 * holds much more than the budget.  c->bytes is what it holds.  follow
 * (may be NULL) lets it keep rows that follow the caller's in flight.
 */
enum db_status outbox_claim_budget(struct db *, const struct conf_outbox *,
    const char *const *channels, size_t nchannels, unsigned limit,
    long long budget, const struct claim_follow *follow,
    struct outbox_cursor *cur, struct claim *c, char **errstr);

/*
 * Write every message's result back, fenced by id and claim token: one
 * UPDATE for the whole batch (plus one DELETE for the successes when
 * keep_sent is off).  SEND_OK → SENT; SEND_RETRY → PENDING with backoff
 * (at least retry_after_ms), or FAILED at max_attempts; SEND_PERMANENT →
 * FAILED; SEND_NONE → PENDING, no attempt counted.  Rows whose lease was
 * lost (the fence matched nothing) are reported as the outbox_lease_lost
 * incident and their results discarded.  Adds to *t.
 */
enum db_status outbox_finalise(struct db *, const struct conf_outbox *,
    struct claim *c, struct outbox_tally *t, char **errstr);

void outbox_claim_free(struct claim *);

/*
 * Added, the pure part of a finalise that matched fewer rows than it
 * wrote, exposed for tests: found holds (id, claim_token <=> our token)
 * for the claim's ids still in the table.  A row to be updated is lost
 * unless present with our token; a row to be deleted (deleted[i]) is lost
 * if still present (another claim holds it).  Writes the lost ids, in
 * claim order, to lost (room for c->n) and returns how many.
 */
size_t outbox_lost_ids(const struct claim *c, const unsigned char *deleted,
    const struct db_result *found, unsigned long long *lost);

/* Added, exposed for tests: add to *t what a finalise wrote for each of
 * the claim's rows by its result (a SEND_RETRY at max_attempts is
 * failed), except that the nlost rows in lost[] count as lost only. */
void outbox_tally_claim(const struct conf_outbox *, const struct claim *c,
    const unsigned long long *lost, size_t nlost, struct outbox_tally *t);

#endif
