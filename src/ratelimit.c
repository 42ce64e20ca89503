/*
 * ratelimit.c: rate, daily quota and circuit breaker shared by every
 * dispatcher of a channel, in one cronguard_channels row per channel.
 *
 * Each decision is one UPDATE that reads and writes the row atomically
 * (the row lock serialises dispatchers) and hands its answer back through
 * LAST_INSERT_ID(expr), which the client reads from the OK packet
 * (mysql_insert_id) with no second round trip and no vendor syntax.
 * Assignments in one UPDATE run left to right in MySQL and MariaDB (and
 * all at once under MariaDB's SIMULTANEOUS_ASSIGNMENT): every expression
 * here reads only columns assigned after it, so both orders agree.
 *
 * Rate: GCRA / virtual scheduling.  rate_tat is the next free send slot;
 * a reservation takes k consecutive slots T = 1/rate apart starting at
 * GREATEST(rate_tat, NOW(6)), but only slots due within the next
 * RL_HORIZON_US, so no dispatcher holds claimed rows long waiting for a
 * slot.  Idle time earns no burst.  The reservation also stores its end in
 * the session variable @cg_rate_tat; settle gives the trailing slots not
 * used back while rate_tat still equals it (no dispatcher reserved after
 * them).  Otherwise they lapse: they are before the later reservation's
 * and within the horizon, so at most one horizon is lost.
 *
 * Quota: quota_used counts the UTC day's reservations (reset when
 * UTC_DATE() moves on); settle gives back what was not sent.
 *
 * Circuit: circuit_failures counts consecutive transient failures across
 * instances; at `failures` the circuit opens for `cooldown`; then one
 * instance takes the probe (circuit_probe_at) and its result closes or
 * reopens it.
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "ratelimit.h"
#include "util.h"

/* Rate slots are reserved at most this far ahead. */
#define RL_HORIZON_US 1000000LL
/* Grants are encoded in 10 bits of LAST_INSERT_ID. */
#define RL_MAX_WANT 1000
/* LAST_INSERT_ID of the gate: grant + 1024 * failures + 2^20 * day,
 * plus this when the day's quota has none left. */
#define RL_EXHAUSTED_BIT 1125899906842624LL
/* A half-open probe not settled after the channel timeout plus this is
 * taken to be lost (its dispatcher died): another instance may probe. */
#define RL_PROBE_SLACK_US 5000000LL

struct ratelimit {
	const struct conf_channel *conf;
	int                        limited;
	int                        have_row;

	/* rate: the reserved slots of this batch */
	int64_t  slot_us; /* T */
	int64_t  base_ms; /* monotonic time of slot 0 */
	unsigned nslots;
	unsigned next_slot;
	unsigned rate_reserved; /* slots reserved, before any trim */
	unsigned rate_used;     /* 1 + the last slot a send started in */
	int64_t  rate_wait_ms;  /* the rate held the batch: until a slot */

	/* quota: reserved by this batch on day (TO_DAYS) */
	unsigned  quota_reserved;
	long long quota_day;
	int       quota_exhausted; /* the last gate found none left */

	/* circuit */
	unsigned db_failures; /* as read at reserve */
	int      probe;       /* this batch is the half-open probe */
	unsigned tail;        /* trailing transient failures */
	int      reset;       /* a send reached the server */
	int      fault;       /* the channel itself failed (a refused login) */
	unsigned attempts;
	char    *error;              /* last transient failure */
	unsigned long long *started; /* ids that passed before_send */
	size_t              nstarted;
	size_t              capstarted;

	volatile sig_atomic_t *stop;
};

static int
rl_has_circuit(const struct ratelimit *rl)
{
	return rl->conf->circuit_failures > 0;
}

static int
rl_has_quota(const struct ratelimit *rl)
{
	return rl->conf->daily_quota > 0;
}

static int
rl_has_rate(const struct ratelimit *rl)
{
	return rl->conf->rate > 0;
}

struct ratelimit *
ratelimit_new(const struct conf_channel *conf)
{
	struct ratelimit *rl;
	double            t;

	rl = xcalloc(1, sizeof *rl);
	rl->conf = conf;
	rl->limited = rl_has_circuit(rl) || rl_has_quota(rl) || rl_has_rate(rl);
	if (rl_has_rate(rl)) {
		t = floor(1e6 / conf->rate + 0.5);
		rl->slot_us =
		    t < 1 ? 1 : (t > 86400e6 ? 86400000000LL : (int64_t)t);
	}
	return rl;
}

void
ratelimit_free(struct ratelimit *rl)
{
	if (rl == NULL)
		return;
	free(rl->error);
	free(rl->started);
	free(rl);
}

static void
rl_batch_reset(struct ratelimit *rl)
{
	rl->nslots = rl->next_slot = 0;
	rl->rate_reserved = rl->rate_used = 0;
	rl->base_ms = 0;
	rl->quota_reserved = 0;
	rl->quota_day = 0;
	rl->probe = 0;
	rl->tail = 0;
	rl->reset = 0;
	rl->fault = 0;
	rl->attempts = 0;
	rl->nstarted = 0;
	free(rl->error);
	rl->error = NULL;
}

static enum db_status
rl_ensure_row(struct ratelimit *rl, struct db *db, char **errstr)
{
	enum db_status st;

	if (rl->have_row)
		return DB_OK;
	st = db_query_retry(db, NULL, errstr,
	    "INSERT IGNORE INTO cronguard_channels (name) VALUES (%s)",
	    rl->conf->name);
	if (st == DB_OK)
		rl->have_row = 1;
	return st;
}

/*
 * Run the UPDATE sql on the channel's row and return in *v what it handed
 * back through LAST_INSERT_ID.  *v is 0 when no row matched (deleted by
 * hand?): none granted, and the row is made again next time.
 */
static enum db_status
rl_update_row(struct ratelimit *rl, struct db *db, const struct buf *sql,
    unsigned long long *v, char **errstr)
{
	struct db_result *res = NULL;
	enum db_status    st;

	*v = 0;
	st = db_query_retry(
	    db, &res, errstr, "%F WHERE name = %s", sql, rl->conf->name);
	if (st == DB_OK && (*v = res->insert_id) == 0)
		rl->have_row = 0;
	db_result_free(res);
	return st;
}

/* The probe lease: how long a taken probe keeps others from probing. */
static long long
rl_probe_us(const struct ratelimit *rl)
{
	return (long long)rl->conf->timeout_ms * 1000 + RL_PROBE_SLACK_US;
}

/*
 * Circuit gate and quota: one UPDATE.  Returns the grant in *granted
 * (at most want) and notes the day and the consecutive failures.
 */
static enum db_status
rl_reserve_gate(struct ratelimit *rl, struct db *db, unsigned want,
    unsigned prev, long long prev_day, unsigned *granted, char **errstr)
{
	struct buf         used, left, g, sql;
	enum db_status     st;
	unsigned long long v;

	buf_init(&used);
	buf_init(&left);
	buf_init(&g);
	buf_init(&sql);
	/* Today's count, less a reservation of ours never settled (nothing
	 * was claimed with it). */
	st = DB_ERR_QUERY;
	if (db_fragment(db, &used, errstr,
	        "GREATEST(IF(quota_day = UTC_DATE(), quota_used, 0) "
	        "- IF(quota_day = FROM_DAYS(%lld), %u, 0), 0)",
	        prev_day, prev) != 0)
		goto out;
	if (rl_has_quota(rl)
	        ? db_fragment(db, &left, errstr, "GREATEST(%lld - %F, 0)",
	              rl->conf->daily_quota, &used) != 0
	        : db_fragment(db, &left, errstr, "%u", want) != 0)
		goto out;
	if (rl_has_circuit(rl)
	        ? db_fragment(db, &g, errstr,
	              "CASE WHEN circuit_open_until > NOW(6) THEN 0 "
	              "WHEN circuit_open_until IS NOT NULL AND "
	              "circuit_probe_at > "
	              "NOW(6) - INTERVAL %lld MICROSECOND THEN 0 "
	              "WHEN circuit_open_until IS NOT NULL THEN LEAST(1, %F) "
	              "ELSE LEAST(%u, %F) END",
	              rl_probe_us(rl), &left, want, &left) != 0
	        : db_fragment(db, &g, errstr, "LEAST(%u, %F)", want, &left) !=
	            0)
		goto out;

	if (db_fragment(db, &sql, errstr,
	        "UPDATE cronguard_channels SET "
	        "quota_used = %F + %d * "
	        "(LAST_INSERT_ID((%F) + 1024 * LEAST(circuit_failures, 1023) + "
	        "1048576 * TO_DAYS(UTC_DATE()) + %lld * (%d AND %F = 0)) MOD "
	        "1024), ",
	        &used, rl_has_quota(rl) ? 1 : 0, &g, RL_EXHAUSTED_BIT,
	        rl_has_quota(rl) ? 1 : 0, &left) != 0)
		goto out;
	if (rl_has_circuit(rl) &&
	    db_fragment(db, &sql, errstr,
	        "circuit_probe_at = IF(circuit_open_until <= "
	        "NOW(6) AND (circuit_probe_at IS NULL OR circuit_probe_at "
	        "<= NOW(6) - INTERVAL %lld MICROSECOND), NOW(6), "
	        "circuit_probe_at), ",
	        rl_probe_us(rl)) != 0)
		goto out;
	buf_adds(&sql, "quota_day = UTC_DATE()");

	if ((st = rl_update_row(rl, db, &sql, &v, errstr)) != DB_OK)
		goto out;
	if (v == 0) {
		*granted = 0;
		goto out;
	}
	*granted = (unsigned)(v % 1024);
	rl->db_failures = (unsigned)((v / 1024) % 1024);
	rl->quota_exhausted = v >= (unsigned long long)RL_EXHAUSTED_BIT;
	rl->quota_day =
	    (long long)((v % (unsigned long long)RL_EXHAUSTED_BIT) / 1048576);
	if (rl_has_quota(rl))
		rl->quota_reserved = *granted;
	rl->probe = rl_has_circuit(rl) && *granted > 0 &&
	    rl->db_failures >= rl->conf->circuit_failures;
out:
	buf_free(&used);
	buf_free(&left);
	buf_free(&g);
	buf_free(&sql);
	return st;
}

/* Rate: reserve at most want slots due within the horizon; one UPDATE. */
static enum db_status
rl_reserve_rate(struct ratelimit *rl, struct db *db, unsigned want,
    unsigned *granted, char **errstr)
{
	struct buf         d, sql;
	enum db_status     st;
	unsigned long long v;
	long long          T = (long long)rl->slot_us, H = RL_HORIZON_US;

	buf_init(&d);
	buf_init(&sql);
	buf_adds(&d,
	    "GREATEST(TIMESTAMPDIFF(MICROSECOND, NOW(6), "
	    "COALESCE(rate_tat, NOW(6))), 0)");
	if (db_fragment(db, &sql, errstr,
	        "UPDATE cronguard_channels SET rate_tat = (@cg_rate_tat := "
	        "GREATEST(COALESCE(rate_tat, NOW(6)), NOW(6)) + INTERVAL (%lld * "
	        "(LAST_INSERT_ID(IF(%F > %lld, 0, LEAST(%u, FLOOR((%lld - %F) / "
	        "%lld) + 1)) + 1024 * LEAST(%F, 1000000000000)) MOD 1024)) "
	        "MICROSECOND)",
	        T, &d, H, want, H, &d, T, &d) != 0) {
		st = DB_ERR_QUERY;
		goto out;
	}
	if ((st = rl_update_row(rl, db, &sql, &v, errstr)) != DB_OK)
		goto out;
	if (v == 0) {
		*granted = 0;
		goto out;
	}
	*granted = (unsigned)(v % 1024);
	if (*granted == 0) {
		/* Slots come within the horizon again in d - H. */
		rl->rate_wait_ms = ((int64_t)(v / 1024) - H) / 1000 + 1;
		goto out;
	}
	/* Slot 0 is d after the statement ran; the reply's latency is
	 * negligible beside a slot. */
	rl->base_ms = now_mono_ms() + (int64_t)(v / 1024) / 1000;
	rl->nslots = rl->rate_reserved = *granted;
out:
	buf_free(&d);
	buf_free(&sql);
	return st;
}

/* Give this batch's reservation back now (nothing was claimed with it).
 * When that fails the next reserve gives it back. */
static enum db_status
rl_giveback(struct ratelimit *rl, struct db *db, char **errstr)
{
	unsigned       reserved = rl->quota_reserved;
	long long      day = rl->quota_day;
	enum db_status st;

	if (reserved == 0)
		return DB_OK;
	if ((st = ratelimit_settle(rl, db, NULL, 0, errstr)) != DB_OK) {
		rl->quota_reserved = reserved;
		rl->quota_day = day;
	}
	return st;
}

enum db_status
ratelimit_reserve(struct ratelimit *rl, struct db *db, unsigned want,
    unsigned *granted, char **errstr)
{
	enum db_status st;
	unsigned       g = want, prev;
	long long      prev_day;
	char          *err = NULL;

	/* A reservation not settled (no row was claimed with it) goes back
	 * within the next reservation's statement. */
	prev = rl->quota_reserved;
	prev_day = rl->quota_day;
	rl_batch_reset(rl);
	*granted = 0;
	rl->quota_exhausted = 0;
	rl->rate_wait_ms = 0;
	if (!rl->limited) {
		*granted = want;
		return DB_OK;
	}
	if (want > RL_MAX_WANT)
		want = g = RL_MAX_WANT;
	if (want == 0)
		return DB_OK;
	if ((st = rl_ensure_row(rl, db, errstr)) != DB_OK) {
		rl->quota_reserved = prev;
		rl->quota_day = prev_day;
		return st;
	}
	if (rl_has_circuit(rl) || rl_has_quota(rl)) {
		if ((st = rl_reserve_gate(
		         rl, db, want, prev, prev_day, &g, errstr)) != DB_OK) {
			rl->quota_reserved = prev;
			rl->quota_day = prev_day;
			return st;
		}
	}
	if (g > 0 && rl_has_rate(rl)) {
		if ((st = rl_reserve_rate(rl, db, g, &g, errstr)) != DB_OK) {
			/* Report the reserve's error, not the giveback's. */
			(void)rl_giveback(rl, db, &err);
			free(err);
			return st;
		}
	}
	*granted = g;
	/* The rate held the whole batch back: nothing will be claimed
	 * with the quota just reserved, so it goes back now, not at a next
	 * reserve this process may never make. */
	if (g == 0)
		return rl_giveback(rl, db, errstr);
	return DB_OK;
}

int
ratelimit_quota_exhausted(const struct ratelimit *rl)
{
	return rl->quota_exhausted;
}

int64_t
ratelimit_rate_wait(const struct ratelimit *rl)
{
	return rl->rate_wait_ms;
}

void
ratelimit_pace(struct ratelimit *rl, struct outbox_msg **msgs, size_t n)
{
	size_t i;

	if (!rl_has_rate(rl))
		return;
	for (i = 0; i < n && rl->next_slot < rl->nslots; i++) {
		/* 0 means "at once" to a channel: never hand it out. */
		msgs[i]->not_before_ms =
		    rl->base_ms + (int64_t)rl->next_slot * rl->slot_us / 1000;
		if (msgs[i]->not_before_ms == 0)
			msgs[i]->not_before_ms = 1;
		rl->next_slot++;
	}
}

unsigned
ratelimit_trim(struct ratelimit *rl, unsigned granted, int64_t deadline_ms)
{
	unsigned k;

	if (!rl_has_rate(rl))
		return granted;
	for (k = 0; k < rl->nslots; k++) {
		if (rl->base_ms + (int64_t)k * rl->slot_us / 1000 >=
		    deadline_ms)
			break;
	}
	rl->nslots = k;
	return granted < k ? granted : k;
}

/*
 * The failures that open the circuit: circuit.failures, or one when the
 * channel itself failed (a refused login, SMTP 535 or AMQP
 * ACCESS_REFUSED): no retry can succeed before an operator acts, so
 * trying again until the threshold only repeats the refusal.
 */
static unsigned
rl_threshold(const struct ratelimit *rl)
{
	return rl->fault ? 1 : rl->conf->circuit_failures;
}

/* Consecutive transient failures as this batch knows them. */
static unsigned
rl_failures(const struct ratelimit *rl)
{
	return rl->reset ? rl->tail : rl->db_failures + rl->tail;
}

static int
rl_started(const struct ratelimit *rl, unsigned long long id)
{
	size_t i;

	for (i = 0; i < rl->nstarted; i++) {
		if (rl->started[i] == id)
			return 1;
	}
	return 0;
}

static int
rl_before_send(struct send_ctl *ctl, struct outbox_msg *msg)
{
	struct ratelimit *rl = ctl->arg;
	int64_t           at, now;

	if (rl->stop != NULL && *rl->stop)
		return 1;
	if (rl_has_circuit(rl)) {
		/* The circuit opened mid-batch, or the probe was sent. */
		if (rl_failures(rl) >= rl->conf->circuit_failures &&
		    !(rl->probe && rl->attempts == 0))
			return 1;
		if (rl->probe && rl->attempts > 0)
			return 1;
	}
	if (rl_has_rate(rl) && msg->not_before_ms == 0) {
		/* Not paced by ratelimit_pace: wait for the slot here. */
		if (rl->next_slot >= rl->nslots)
			return 1;
		at = rl->base_ms + (int64_t)rl->next_slot * rl->slot_us / 1000;
		while ((now = now_mono_ms()) < at) {
			if (rl->stop != NULL && *rl->stop)
				return 1;
			sleep_ms(at - now);
		}
		rl->next_slot++;
		if (rl->rate_used < rl->next_slot)
			rl->rate_used = rl->next_slot;
	} else if (rl_has_rate(rl)) {
		/* Paced: the slot ratelimit_pace gave it. */
		at = ((msg->not_before_ms - rl->base_ms) * 1000 +
		         rl->slot_us / 2) /
		        rl->slot_us +
		    1;
		if (at > 0 && (uint64_t)at > rl->rate_used)
			rl->rate_used = at > rl->rate_reserved
			    ? rl->rate_reserved
			    : (unsigned)at;
	}
	if (rl->nstarted == rl->capstarted) {
		rl->capstarted = rl->capstarted == 0 ? 64 : rl->capstarted * 2;
		rl->started = xreallocarray(
		    rl->started, rl->capstarted, sizeof *rl->started);
	}
	rl->started[rl->nstarted++] = msg->id;
	rl->attempts++;
	return 0;
}

static void
rl_after_send(struct send_ctl *ctl, struct outbox_msg *msg)
{
	struct ratelimit *rl = ctl->arg;

	/* A payload refused before sending says nothing of the channel. */
	if (!rl_started(rl, msg->id))
		return;
	/* SEND_NONE with an error: the channel itself failed before the
	 * message (a refused login), a failure without an attempt. */
	if (msg->result == SEND_RETRY ||
	    (msg->result == SEND_NONE && msg->error != NULL)) {
		rl->tail++;
		if (msg->result == SEND_NONE)
			rl->fault = 1;
		free(rl->error);
		/* stored in cronguard_channels: as outbox_finalise does */
		rl->error = msg->error != NULL
		    ? peer_text(msg->error, strlen(msg->error), PEER_TEXT_MAX)
		    : xstrdup("transient failure");
	} else if (msg->result == SEND_OK || msg->result == SEND_PERMANENT) {
		/* The server answered: the channel works. */
		rl->reset = 1;
		rl->tail = 0;
		rl->fault = 0;
	}
}

void
ratelimit_ctl(
    struct ratelimit *rl, struct send_ctl *ctl, volatile sig_atomic_t *stop)
{
	rl->stop = stop;
	ctl->stop = stop;
	if (!rl->limited)
		return;
	ctl->before_send = rl_before_send;
	ctl->after_send = rl_after_send;
	ctl->arg = rl;
}

static void
rl_log_circuit(const struct ratelimit *rl, unsigned failures, int opened)
{
	char n[32], cool[32];

	snprintf(n, sizeof n, "%u", failures);
	snprintf(cool, sizeof cool, "%llds",
	    (long long)(rl->conf->circuit_cooldown_ms / 1000));
	if (opened)
		log_kv(LOG_WARN, "circuit_open", "channel", rl->conf->name,
		    "failures", n, "cooldown", cool, "error", rl->error);
	else
		log_kv(LOG_INFO, "circuit_closed", "channel", rl->conf->name);
}

/* The settling UPDATE: the quota given back, and with circuit the shared
 * failure count and the circuit state it implies.  0, or -1 with *errstr. */
static int
rl_settle_sql(struct ratelimit *rl, struct db *db, struct buf *sql,
    unsigned giveback, unsigned slots, int circuit, char **errstr)
{
	struct buf newf;
	unsigned   thr = rl_threshold(rl);
	int        rc = -1;

	buf_init(&newf);
	if (db_fragment(db, sql, errstr,
	        "UPDATE cronguard_channels SET "
	        "quota_used = IF(%u > 0 AND quota_day = FROM_DAYS(%lld)"
	        ", GREATEST(quota_used - %u, 0), quota_used)",
	        giveback, rl->quota_day, giveback) != 0)
		goto out;
	if (slots > 0 &&
	    db_fragment(db, sql, errstr,
	        ", rate_tat = IF(rate_tat = @cg_rate_tat, rate_tat - INTERVAL "
	        "%lld MICROSECOND, rate_tat)",
	        (long long)slots * (long long)rl->slot_us) != 0)
		goto out;
	if (circuit) {
		if (rl->reset
		        ? db_fragment(db, &newf, errstr, "%u", rl->tail) != 0
		        : db_fragment(db, &newf, errstr,
		              "LEAST(circuit_failures + %u, 1000000)",
		              rl->tail) != 0)
			goto out;
		/* Opening: from closed or half-open (not while open). */
		if (db_fragment(db, sql, errstr,
		        ", circuit_opened_at = IF(%F >= %u AND "
		        "NOT COALESCE(circuit_open_until > NOW(6), 0), NOW(6), "
		        "circuit_opened_at)"
		        ", circuit_error = IF(%F >= %u, %s, circuit_error)"
		        ", circuit_open_until = CASE WHEN %F >= %u "
		        "THEN NOW(6) + INTERVAL %lld MICROSECOND WHEN %d THEN NULL "
		        "ELSE circuit_open_until END"
		        ", circuit_probe_at = IF(%F >= %u OR %d, "
		        "NULL, circuit_probe_at)"
		        ", circuit_failures = %F",
		        &newf, thr, &newf, thr,
		        rl->error != NULL ? rl->error : "", &newf, thr,
		        (long long)rl->conf->circuit_cooldown_ms * 1000,
		        rl->reset ? 1 : 0, &newf, thr, rl->reset ? 1 : 0,
		        &newf) != 0)
			goto out;
	}
	if (db_fragment(db, sql, errstr, " WHERE name = %s", rl->conf->name) !=
	    0)
		goto out;
	rc = 0;
out:
	buf_free(&newf);
	return rc;
}

enum db_status
ratelimit_settle(struct ratelimit *rl, struct db *db, struct outbox_msg **msgs,
    size_t n, char **errstr)
{
	struct buf         sql;
	enum db_status     st = DB_OK;
	unsigned           sent = 0, giveback = 0, slots = 0, thr, failures;
	size_t             i;
	int                circuit = 0, opening = 0, closing = 0;
	unsigned long long before;

	if (!rl->limited)
		return DB_OK;
	buf_init(&sql);
	for (i = 0; i < n; i++) {
		if (msgs[i]->result == SEND_OK)
			sent++;
	}
	if (rl->quota_reserved > sent)
		giveback = rl->quota_reserved - sent;
	if (rl->rate_reserved > rl->rate_used)
		slots = rl->rate_reserved - rl->rate_used;

	thr = rl_threshold(rl);
	failures = rl_failures(rl);
	if (rl_has_circuit(rl) && rl->attempts > 0) {
		/* A batch that sends finds the circuit closed or probing. */
		opening = failures >= thr &&
		    (rl->fault || rl->db_failures < thr || rl->probe);
		closing = rl->reset && failures < thr &&
		    (rl->db_failures >= thr || rl->probe);
		/* Write only what changes the shared count. */
		circuit = rl->tail > 0 || (rl->reset && rl->db_failures > 0) ||
		    closing;
	}
	if (giveback == 0 && slots == 0 && !circuit)
		goto out;

	before = db_reconnects(db);
	if (rl_settle_sql(rl, db, &sql, giveback, slots, circuit, errstr) != 0)
		st = DB_ERR_QUERY;
	else
		st = db_query_once(db, NULL, errstr, "%F", &sql);
	if (st == DB_ERR_LOST && db_reconnects(db) != before) {
		/* Applied or not, it must not run twice (the quota given
		 * back twice could exceed it): at worst the quota counts a
		 * batch too many today, and the circuit misses a failure. */
		log_kv(LOG_WARN, "ratelimit_settle_unknown", "channel",
		    rl->conf->name, "error", *errstr);
		free(*errstr);
		*errstr = NULL;
		st = DB_OK;
		opening = closing = 0;
	}
	if (st == DB_OK && opening)
		rl_log_circuit(rl, failures, 1);
	else if (st == DB_OK && closing)
		rl_log_circuit(rl, failures, 0);
out:
	buf_free(&sql);
	rl_batch_reset(rl);
	return st;
}

enum db_status
ratelimit_states(
    struct db *db, struct ratelimit_state **out, size_t *n, char **errstr)
{
	struct db_result       *res = NULL;
	struct ratelimit_state *s;
	enum db_status          st;
	const char             *why, *v;
	long long               x;
	size_t                  i;

	*out = NULL;
	*n = 0;
	st = db_query(db, &res, errstr,
	    "SELECT name, "
	    "CASE WHEN circuit_open_until IS NULL THEN 0 "
	    "WHEN circuit_open_until > NOW(6) THEN 1 ELSE 2 END, "
	    "circuit_failures, GREATEST(COALESCE(TIMESTAMPDIFF(MICROSECOND, "
	    "NOW(6), circuit_open_until), 0), 0) DIV 1000, circuit_error, "
	    "IF(quota_day = UTC_DATE(), quota_used, 0), "
	    "TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), UTC_DATE() + "
	    "INTERVAL 1 DAY), CONCAT(UTC_DATE() + INTERVAL 1 DAY, "
	    "'T00:00:00Z') "
	    "FROM cronguard_channels ORDER BY name");
	if (st != DB_OK)
		return st;
	s = xcalloc(res->nrows + 1, sizeof *s);
	for (i = 0; i < res->nrows; i++) {
		s[i].channel = xstrdup(
		    db_cell(res, i, 0) != NULL ? db_cell(res, i, 0) : "");
		if ((v = db_cell(res, i, 1)) != NULL &&
		    parse_ll(v, 0, 2, &x, &why) == 0)
			s[i].circuit = (enum ratelimit_circuit)x;
		if ((v = db_cell(res, i, 2)) != NULL &&
		    parse_ll(v, 0, 4294967295LL, &x, &why) == 0)
			s[i].failures = (unsigned)x;
		if ((v = db_cell(res, i, 3)) != NULL &&
		    parse_ll(v, 0, LLONG_MAX, &x, &why) == 0)
			s[i].open_for_ms = x;
		if ((v = db_cell(res, i, 4)) != NULL)
			s[i].error = xstrdup(v);
		if ((v = db_cell(res, i, 5)) != NULL &&
		    parse_ll(v, LLONG_MIN, LLONG_MAX, &x, &why) == 0)
			s[i].quota_used = x;
		if ((v = db_cell(res, i, 6)) != NULL &&
		    parse_ll(v, 0, LLONG_MAX, &x, &why) == 0)
			s[i].quota_resets_s = x;
		s[i].quota_resets_at = xstrdup(
		    db_cell(res, i, 7) != NULL ? db_cell(res, i, 7) : "");
	}
	*n = res->nrows;
	*out = s;
	db_result_free(res);
	return DB_OK;
}

void
ratelimit_states_free(struct ratelimit_state *s, size_t n)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < n; i++) {
		free(s[i].channel);
		free(s[i].error);
		free(s[i].quota_resets_at);
	}
	free(s);
}

const char *
ratelimit_circuit_name(enum ratelimit_circuit c)
{
	switch (c) {
	case CIRCUIT_OPEN:
		return "open";
	case CIRCUIT_HALF_OPEN:
		return "half-open";
	case CIRCUIT_CLOSED:
		break;
	}
	return "closed";
}
