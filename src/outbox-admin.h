/*
 * outbox-admin.h: the operator's statements on the outbox table
 * (cronguard-outbox(7), OPERATIONS and MONITORING): the watchdog's counts and
 * verdict (report.c writes them), and the statements behind outbox
 * list/show/retry/purge/enqueue. The dispatcher's claim/finalise/recover state
 * machine is outbox.h.
 *
 * Times come from the database clock.
 */
#ifndef CRONGUARD_OUTBOX_ADMIN_H
#define CRONGUARD_OUTBOX_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "db.h"
#include "ratelimit.h"
#include "check.h"
#include "util.h"

/* The watchdog's counts (cronguard(1), jobs check; cronguard-outbox(7),
 * MONITORING). */
struct outbox_counts {
	/* pending, due and oldest_due_age_s leave out the rows of a
	 * channel that is paused: a planned pause does not page. */
	long long pending;
	long long due;
	long long processing;
	long long stale;
	long long stuck;
	long long failed;
	long long oldest_due_age_s; /* 0 when nothing is due */
	long long paused_pending;   /* PENDING rows of paused channels */
	long long unknown_channel;
	long long expired; /* FAILED rows whose last_error begins "expired" */
	/* PENDING rows held back by an earlier FAILED row of their key
	 * and scope (cronguard-outbox(7), ORDERING), and the age of the
	 * oldest of them by created_at (0 when none). */
	long long blocked;
	long long oldest_blocked_age_s;

	/* The limiter state (cronguard_channels) of the configured
	 * channels that have a row there, by name; filled by
	 * outbox_count_channels, freed by outbox_counts_free. */
	struct ratelimit_state *channels;
	size_t                  nchannels;
	long long               circuit_open; /* of those: open or half-open */
	/* Parallel to channels: whether its daily_quota is used up today,
	 * and then its due PENDING rows (waiting behind the quota). */
	struct outbox_quota {
		bool      exhausted;
		long long due;
	} * quota;
	/* Paused channels (cronguard_channel_pauses, still in force), by
	 * name; filled by outbox_count. */
	struct outbox_pause {
		char     *channel;
		char     *paused_at; /* database clock, as text */
		char     *paused_by; /* user@host:pid */
		char     *reason;    /* or NULL */
		char     *until_at;  /* or NULL: until outbox resume */
		long long for_s;     /* seconds since paused_at */
	} * paused;
	size_t    npaused;
	long long quota_exhausted; /* channels with the quota used up */
	long long quota_blocked;   /* of those: with due rows */
};
enum db_status outbox_count(
    struct db *, const struct conf *, struct outbox_counts *, char **errstr);
/* Fill k->channels, k->circuit_open and the quota fields (one query, a
 * second when a quota is used up); k's counts stay. */
enum db_status outbox_count_channels(
    struct db *, const struct conf *, struct outbox_counts *k, char **errstr);
void outbox_counts_free(struct outbox_counts *);

/* The verdict: stuck > 0 is CRITICAL; pending, oldest due age and failed
 * against outbox.thresholds (value >= threshold; 0 disables one); any
 * unknown_channel row is a WARNING; so is a configured channel whose
 * circuit is open or half-open (its rows wait, no attempt is spent: the
 * breaker works, but nothing is delivered there until it closes); so is
 * a channel whose daily quota is used up, CRITICAL when due rows of it
 * wait behind the quota until it resets at midnight UTC. */
enum check_status outbox_verdict(
    const struct outbox_counts *, const struct conf_outbox *);

/* Pause the channels fleet-wide (cronguard-outbox(7), PAUSING A
 * CHANNEL): one row each in cronguard_channel_pauses, replacing an
 * earlier pause; for_ms > 0 ends it that long from now (database
 * clock), 0 never.  reason may be NULL. */
enum db_status outbox_pause(struct db *, const char *const *channels, size_t n,
    int64_t for_ms, const char *reason, char **errstr);
/* End the pauses of the channels; *n of them were paused. */
enum db_status outbox_resume(struct db *, const char *const *channels, size_t n,
    unsigned long long *npaused, char **errstr);

/* Rows newest first; status and channel may be NULL (no filter).  With a
 * status, on ix_outbox_phase_sent (sql/015; PROCESSING rows on
 * ix_outbox_claimed): SENT rows the latest sent first.  outbox_list_sql appends
 * the statement to sql (doctor EXPLAINs it); -1 on error. */
int outbox_list_sql(struct db *, const char *status, const char *channel,
    unsigned limit, struct buf *sql, char **errstr);
enum db_status outbox_list(struct db *, const char *status, const char *channel,
    unsigned limit, struct db_result **res, char **errstr);
/* One row, every column, or an empty result. */
enum db_status outbox_show(
    struct db *, unsigned long long id, struct db_result **res, char **errstr);
/* A page of a message's attempt log: its newest limit rows, newest
 * first (attempt, started_at, duration_ms, outcome, status_code,
 * dispatcher, detail), and in *total how many it has.  Bounded by limit
 * whatever the log's length (outbox show --attempts). */
#define OUTBOX_SHOW_ATTEMPTS 20
#define OUTBOX_SHOW_ATTEMPTS_MAX 100000
enum db_status outbox_show_attempts(struct db *, unsigned long long id,
    unsigned limit, struct db_result **res, unsigned long long *total,
    char **errstr);
/* The FAILED row that holds back PENDING row id (the earliest of its key
 * and scope), as one row (id, channel, last_error), or an empty result
 * when nothing blocks it. */
enum db_status outbox_show_blocker(struct db *, const struct conf_outbox *,
    unsigned long long id, struct db_result **res, char **errstr);

/*
 * An operator's change to rows by id, in batches of at most
 * OUTBOX_BATCH_MAX ids; *n rows were changed.  Rows in other states are
 * left alone (the caller compares *n with nids):
 *	RETRY	PENDING rows become due now (attempts kept); FAILED and
 *		CANCELLED rows back to PENDING, due now, attempts 0
 *	CANCEL	PENDING and FAILED rows become CANCELLED: claimed_by and
 *		claimed_at say who and when, last_error "cancelled: REASON"
 *		(reason NULL: "by the operator")
 *	PURGE	SENT, FAILED and CANCELLED rows are deleted
 * A PROCESSING row is never touched: a dispatcher holds it.
 */
#define OUTBOX_BATCH_MAX 1000
/* The longest cancel reason in bytes: last_error is a TEXT column (65535
 * bytes) and holds "cancelled: " before it. */
#define OUTBOX_REASON_MAX (65535 - 11)
/* The longest pause reason in bytes (cronguard_channel_pauses.reason). */
#define OUTBOX_PAUSE_REASON_MAX 1024
enum outbox_ids_op { OUTBOX_IDS_RETRY, OUTBOX_IDS_CANCEL, OUTBOX_IDS_PURGE };
enum db_status outbox_ids(struct db *, enum outbox_ids_op,
    const unsigned long long *ids, size_t nids, const char *reason,
    unsigned long long *n, char **errstr);
/*
 * Which rows an operator's filtered change (outbox retry --failed,
 * outbox cancel with filters) touches: besides the operation's states,
 * each field that is set narrows it.  channel and event_type match
 * exactly, error is a substring of last_error, since_ms > 0 keeps rows
 * last tried (else created) that long ago or less, by the database
 * clock.
 */
struct outbox_filter {
	const char *channel;
	const char *event_type;
	const char *error;
	int64_t     since_ms;
};
/*
 * RETRY: the FAILED rows matching f back to PENDING, due now, attempts
 * 0; CANCEL: the PENDING and FAILED rows matching f CANCELLED as
 * outbox_ids does (reason may be NULL).  In batches by primary key, as
 * outbox_ids.  With dry_run only count.  *n: rows changed (counted).
 */
enum db_status outbox_filtered(struct db *, enum outbox_ids_op,
    const struct outbox_filter *f, const char *reason, int dry_run,
    unsigned long long *n, char **errstr);

/* Delete SENT rows sent and CANCELLED rows cancelled (PURGE_SENT), or
 * FAILED rows last claimed (else created) (PURGE_FAILED), more than
 * age_ms ago by the database clock: in batches of at most
 * OUTBOX_BATCH_MAX rows, each its own short statement, SENT rows found
 * on ix_outbox_phase_sent (sql/015) and CANCELLED ones on
 * ix_outbox_claimed by their age, FAILED ones by primary key.  Paced:
 * at most rate rows a second from the start of the call (0: no pause;
 * cronguard(1), outbox purge --rate).  With dry_run only count. */
/* The purge's condition for the rows of status whose col (sent_at for
 * SENT, claimed_at for CANCELLED) is before cutoff, appended to where
 * (doctor EXPLAINs its count): SENT rows by their phase (sql/015), the
 * others by their status; -1 on error. */
int outbox_aged_where(struct db *, const char *status, const char *col,
    const char *cutoff, struct buf *where, char **errstr);
#define OUTBOX_PURGE_RATE 10000
#define OUTBOX_PURGE_RATE_MAX 10000000
enum outbox_purge_what { PURGE_SENT, PURGE_FAILED };
enum db_status outbox_purge(struct db *, enum outbox_purge_what, int64_t age_ms,
    int dry_run, unsigned rate, unsigned long long *n, char **errstr);

/* When an enqueued message is due and when it expires: at at_s (unix
 * seconds) when at_set, else delay_ms from now (0: at once); it expires
 * expires_in_ms from now (0: no expires_at).  Database clock. */
struct outbox_when {
	bool    at_set;
	int64_t at_s;
	int64_t delay_ms;
	int64_t expires_in_ms;
};
/* Insert one PENDING message; payload must be valid JSON (the caller
 * checks).  *id is the new row's id; message_id (37 bytes) its UUID. */
enum db_status outbox_enqueue(struct db *, const char *channel,
    const char *event_type, const char *key, const char *payload,
    const struct outbox_when *when, unsigned long long *id, char *message_id,
    char **errstr);

#endif
