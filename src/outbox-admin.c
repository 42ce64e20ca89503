/*
 * outbox-admin.c: the operator's statements on the outbox table: the
 * watchdog's counts and verdict (outbox check; report.c writes them),
 * list, show, retry, purge and enqueue.  The dispatcher's row state
 * machine is outbox.c.
 */
#include "config.h"

#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outbox-admin.h"
#include "outbox.h"
#include "util.h"

/* ------------------------------------------------------------- counts */

/* The pauses in force, oldest first. */
static enum db_status
outbox_count_paused(struct db *db, struct outbox_counts *k, char **errstr)
{
	struct db_result    *res = NULL;
	struct outbox_pause *p;
	enum db_status       st;
	const char          *e;
	size_t               i;

	st = db_query(db, &res, errstr,
	    "SELECT channel, paused_at, paused_by, reason, until_at,"
	    " FLOOR(TIMESTAMPDIFF(MICROSECOND, paused_at, NOW(6)) / 1000000)"
	    " FROM cronguard_channel_pauses"
	    " WHERE until_at IS NULL OR until_at > NOW(6)"
	    " ORDER BY paused_at, channel");
	if (st != DB_OK)
		goto out;
	k->paused = xcalloc(res->nrows + 1, sizeof *k->paused);
	for (i = 0; i < res->nrows; i++) {
		p = &k->paused[k->npaused++];
		p->channel =
		    xstrdup(db_cell(res, i, 0) ? db_cell(res, i, 0) : "");
		p->paused_at =
		    xstrdup(db_cell(res, i, 1) ? db_cell(res, i, 1) : "");
		p->paused_by =
		    xstrdup(db_cell(res, i, 2) ? db_cell(res, i, 2) : "");
		p->reason =
		    db_cell(res, i, 3) ? xstrdup(db_cell(res, i, 3)) : NULL;
		p->until_at =
		    db_cell(res, i, 4) ? xstrdup(db_cell(res, i, 4)) : NULL;
		if (db_cell(res, i, 5) == NULL ||
		    parse_ll(db_cell(res, i, 5), LLONG_MIN, LLONG_MAX,
		        &p->for_s, &e) != 0 ||
		    p->for_s < 0)
			p->for_s = 0;
	}
out:
	db_result_free(res);
	return st;
}

/* The blocked rows and the oldest one's age.  From the FAILED rows
 * (ix_outbox_due), few, to the later PENDING rows of their key and
 * scope on the ordering index; the other way round, from every PENDING
 * row, read each row (1.3 s for outbox check at 1,000,000 rows with
 * 100,000 PENDING; STRAIGHT_JOIN keeps this order). */
static enum db_status
outbox_count_blocked(struct db *db, const struct conf_outbox *conf,
    struct outbox_counts *k, char **errstr)
{
	struct db_result *res = NULL;
	struct buf        cond;
	enum db_status    st = DB_OK;
	const char       *e;

	buf_init(&cond);
	if (conf->ordering != ORDERING_PER_KEY)
		goto out;
	if (outbox_blocking_sql(db, conf, "f", "p", 1, &cond, errstr) != 0) {
		st = DB_ERR_QUERY;
		goto out;
	}
	st = db_query(db, &res, errstr,
	    "SELECT COUNT(DISTINCT p.id), COALESCE(FLOOR(TIMESTAMPDIFF("
	    "MICROSECOND, MIN(p.created_at), NOW(6)) / 1000000), 0)"
	    " FROM outbox_messages f FORCE INDEX (ix_outbox_due)"
	    " STRAIGHT_JOIN outbox_messages p ON %F AND p.status = 'PENDING'"
	    " WHERE f.status = 'FAILED' AND f.ordering_key IS NOT NULL",
	    &cond);
	if (st != DB_OK)
		goto out;
	if (res->nrows != 1 || db_cell(res, 0, 0) == NULL ||
	    db_cell(res, 0, 1) == NULL ||
	    parse_ll(db_cell(res, 0, 0), 0, LLONG_MAX, &k->blocked, &e) != 0 ||
	    parse_ll(db_cell(res, 0, 1), LLONG_MIN, LLONG_MAX,
	        &k->oldest_blocked_age_s, &e) != 0) {
		*errstr = xstrdup("count failed: bad blocked count");
		st = DB_ERR_QUERY;
	}
	if (k->oldest_blocked_age_s < 0)
		k->oldest_blocked_age_s = 0;
out:
	db_result_free(res);
	buf_free(&cond);
	return st;
}

/* A paused channel's backlog is not late (cronguard-outbox(7), PAUSING A
 * CHANNEL): take its PENDING rows out of pending and due (into
 * paused_pending), and read the oldest due row of the other channels
 * again.  Only while a pause is in force: then the rows of the paused
 * channels are read, and ix_outbox_due is walked from its oldest due
 * row to the first of a channel that is not paused. */
static enum db_status
outbox_count_unpaused(struct db *db, struct outbox_counts *k, char **errstr)
{
	struct db_result *res = NULL;
	struct buf        in;
	enum db_status    st = DB_ERR_QUERY;
	long long         v[3];
	const char       *e;
	size_t            i;

	buf_init(&in);
	for (i = 0; i < k->npaused; i++) {
		if (db_fragment(db, &in, errstr, i > 0 ? ",%s" : "%s",
		        k->paused[i].channel) != 0)
			goto out;
	}
	st = db_query(db, &res, errstr,
	    "SELECT"
	    " (SELECT COUNT(*) FROM outbox_messages FORCE INDEX (ix_outbox_due)"
	    "  WHERE status = 'PENDING' AND channel IN (%F)),"
	    " (SELECT COUNT(*) FROM outbox_messages FORCE INDEX (ix_outbox_due)"
	    "  WHERE status = 'PENDING' AND next_attempt_at <= NOW(6)"
	    "  AND channel IN (%F)),"
	    " COALESCE((SELECT FLOOR(TIMESTAMPDIFF(MICROSECOND,"
	    "  next_attempt_at, NOW(6)) / 1000000)"
	    "  FROM outbox_messages FORCE INDEX (ix_outbox_due)"
	    "  WHERE status = 'PENDING' AND next_attempt_at <= NOW(6)"
	    "  AND channel NOT IN (%F) ORDER BY next_attempt_at LIMIT 1), 0)",
	    &in, &in, &in);
	if (st != DB_OK || (st = db_one_row(res, 3, errstr)) != DB_OK)
		goto out;
	for (i = 0; i < nitems(v); i++) {
		if (db_cell(res, 0, i) == NULL ||
		    parse_ll(db_cell(res, 0, i), 0, LLONG_MAX, &v[i], &e) !=
		        0) {
			*errstr = xstrdup("count failed: bad paused counts");
			st = DB_ERR_QUERY;
			goto out;
		}
	}
	/* Read after the first counts: a row enqueued meanwhile must not
	 * take either below 0. */
	k->paused_pending = v[0];
	k->pending = k->pending > v[0] ? k->pending - v[0] : 0;
	k->due = k->due > v[1] ? k->due - v[1] : 0;
	k->oldest_due_age_s = v[2];
out:
	db_result_free(res);
	buf_free(&in);
	return st;
}

/* The condition of a PENDING row whose channel is not configured into
 * in: 0, or -1 with *errstr. */
static int
outbox_unknown_channel(
    struct db *db, const struct conf *conf, struct buf *in, char **errstr)
{
	size_t i;

	if (conf->nchannels == 0) {
		buf_adds(in, "TRUE"); /* every PENDING row is unknown */
		return 0;
	}
	buf_adds(in, "channel NOT IN (");
	for (i = 0; i < conf->nchannels; i++) {
		if (i > 0)
			buf_addc(in, ',');
		if (db_fragment(db, in, errstr, "%s", conf->channels[i].name) !=
		    0)
			return -1;
	}
	buf_addc(in, ')');
	return 0;
}

/* The one row of n counts of res into dst: 0, or -1 with *errstr. */
static int
outbox_count_cells(
    const struct db_result *res, long long **dst, size_t n, char **errstr)
{
	const char *cell, *e;
	size_t      i;

	if (res->nrows != 1 || res->ncols != n) {
		*errstr = xstrdup("count failed: unexpected result");
		return -1;
	}
	for (i = 0; i < n; i++) {
		cell = db_cell(res, 0, i);
		if (cell == NULL ||
		    parse_ll(cell, 0, LLONG_MAX, dst[i], &e) != 0) {
			*errstr = xasprintf("count failed: bad value %s",
			    cell != NULL ? cell : "NULL");
			return -1;
		}
	}
	return 0;
}

enum db_status
outbox_count(struct db *db, const struct conf *conf, struct outbox_counts *k,
    char **errstr)
{
	struct db_result *res = NULL;
	struct buf        in;
	enum db_status    st;
	long long *dst[] = { &k->pending, &k->due, &k->processing, &k->stale,
		&k->stuck, &k->failed, &k->oldest_due_age_s,
		&k->unknown_channel, &k->expired };

	memset(k, 0, sizeof *k);
	buf_init(&in);
	if (outbox_unknown_channel(db, conf, &in, errstr) != 0) {
		st = DB_ERR_QUERY;
		goto out;
	}
	/* One statement, one subquery a count: the PENDING, PROCESSING
	 * and FAILED counts and the oldest due row are read from the
	 * indexes alone (ix_outbox_due, ix_outbox_claimed); only the unknown
	 * channels (PENDING rows) and the expired rows (FAILED) read rows.
	 * cronguard-outbox(7), ORDERING, gives the time at 1,000,000
	 * rows (scripts/bench-check). */
	st = db_query(db, &res, errstr,
	    "SELECT"
	    " (SELECT COUNT(*) FROM outbox_messages FORCE INDEX (ix_outbox_due)"
	    "  WHERE status = 'PENDING'),"
	    " (SELECT COUNT(*) FROM outbox_messages FORCE INDEX (ix_outbox_due)"
	    "  WHERE status = 'PENDING' AND next_attempt_at <= NOW(6)),"
	    " (SELECT COUNT(*) FROM outbox_messages"
	    "  FORCE INDEX (ix_outbox_claimed) WHERE status = 'PROCESSING'),"
	    " (SELECT COUNT(*) FROM outbox_messages"
	    "  FORCE INDEX (ix_outbox_claimed) WHERE status = 'PROCESSING'"
	    "  AND claimed_at < NOW(6) - INTERVAL %lld MICROSECOND),"
	    " (SELECT COUNT(*) FROM outbox_messages"
	    "  FORCE INDEX (ix_outbox_claimed) WHERE status = 'PROCESSING'"
	    "  AND claimed_at < NOW(6) - INTERVAL %lld MICROSECOND),"
	    " (SELECT COUNT(*) FROM outbox_messages FORCE INDEX (ix_outbox_due)"
	    "  WHERE status = 'FAILED'),"
	    " (SELECT COALESCE(FLOOR(TIMESTAMPDIFF(MICROSECOND,"
	    "  MIN(next_attempt_at), NOW(6)) / 1000000), 0)"
	    "  FROM outbox_messages FORCE INDEX (ix_outbox_due)"
	    "  WHERE status = 'PENDING' AND next_attempt_at <= NOW(6)),"
	    " (SELECT COUNT(*) FROM outbox_messages FORCE INDEX (ix_outbox_due)"
	    "  WHERE status = 'PENDING' AND %F),"
	    " (SELECT COUNT(*) FROM outbox_messages FORCE INDEX (ix_outbox_due)"
	    "  WHERE status = 'FAILED' AND last_error LIKE 'expired%%')",
	    (long long)conf->outbox.lease_ms * 1000,
	    (long long)conf->outbox.watchdog_ms * 1000, &in);
	if (st != DB_OK)
		goto out;
	if (outbox_count_cells(res, dst, nitems(dst), errstr) != 0) {
		st = DB_ERR_QUERY;
		goto out;
	}
	st = outbox_count_blocked(db, &conf->outbox, k, errstr);
	if (st == DB_OK)
		st = outbox_count_paused(db, k, errstr);
	if (st == DB_OK && k->npaused > 0)
		st = outbox_count_unpaused(db, k, errstr);
out:
	db_result_free(res);
	buf_free(&in);
	return st;
}

/* The due PENDING rows of every channel whose quota is used up. */
static enum db_status
outbox_count_quota_due(struct db *db, struct outbox_counts *k, char **errstr)
{
	struct db_result *res = NULL;
	struct buf        in;
	enum db_status    st = DB_OK;
	const char       *cell, *e;
	size_t            i, j, n = 0;
	long long         x;

	buf_init(&in);
	buf_adds(&in, "channel IN (");
	for (i = 0; i < k->nchannels; i++) {
		if (!k->quota[i].exhausted)
			continue;
		if (n++ > 0)
			buf_addc(&in, ',');
		if (db_fragment(
		        db, &in, errstr, "%s", k->channels[i].channel) != 0) {
			st = DB_ERR_QUERY;
			goto out;
		}
	}
	buf_addc(&in, ')');
	if (n == 0)
		goto out;
	st = db_query(db, &res, errstr,
	    "SELECT channel, COUNT(*) FROM outbox_messages"
	    " WHERE status = 'PENDING' AND next_attempt_at <= NOW(6) AND %F"
	    " GROUP BY channel",
	    &in);
	if (st != DB_OK)
		goto out;
	for (i = 0; i < res->nrows; i++) {
		cell = db_cell(res, i, 1);
		if (db_cell(res, i, 0) == NULL || cell == NULL ||
		    parse_ll(cell, 0, LLONG_MAX, &x, &e) != 0) {
			*errstr = xstrdup("count failed: unexpected result");
			st = DB_ERR_QUERY;
			goto out;
		}
		for (j = 0; j < k->nchannels; j++) {
			if (strcmp(k->channels[j].channel,
			        db_cell(res, i, 0)) == 0)
				k->quota[j].due = x;
		}
	}
	for (i = 0; i < k->nchannels; i++) {
		if (k->quota[i].exhausted && k->quota[i].due > 0)
			k->quota_blocked++;
	}
out:
	db_result_free(res);
	buf_free(&in);
	return st;
}

/* The limiter part of k (outbox_count_channels fills it). */
static void
outbox_channels_free(struct outbox_counts *k)
{
	ratelimit_states_free(k->channels, k->nchannels);
	free(k->quota);
	k->channels = NULL;
	k->quota = NULL;
	k->nchannels = 0;
	k->circuit_open = 0;
	k->quota_exhausted = 0;
	k->quota_blocked = 0;
}

enum db_status
outbox_count_channels(struct db *db, const struct conf *conf,
    struct outbox_counts *k, char **errstr)
{
	const struct conf_channel *cc;
	struct ratelimit_state    *all = NULL;
	enum db_status             st;
	size_t                     i, n = 0;

	outbox_channels_free(k);
	st = ratelimit_states(db, &all, &n, errstr);
	if (st != DB_OK)
		return st;
	k->channels = xcalloc(n + 1, sizeof *k->channels);
	k->quota = xcalloc(n + 1, sizeof *k->quota);
	for (i = 0; i < n; i++) {
		/* Another configuration's channel: not this check's alarm. */
		if ((cc = conf_channel_find(conf, all[i].channel)) == NULL) {
			free(all[i].channel);
			free(all[i].error);
			free(all[i].quota_resets_at);
			continue;
		}
		if (cc->daily_quota > 0 &&
		    all[i].quota_used >= cc->daily_quota) {
			k->quota[k->nchannels].exhausted = true;
			k->quota_exhausted++;
		}
		k->channels[k->nchannels++] = all[i];
		if (all[i].circuit != CIRCUIT_CLOSED)
			k->circuit_open++;
	}
	free(all); /* the strings moved to k->channels */
	if (k->quota_exhausted > 0)
		st = outbox_count_quota_due(db, k, errstr);
	return st;
}

void
outbox_counts_free(struct outbox_counts *k)
{
	size_t i;

	for (i = 0; i < k->npaused; i++) {
		free(k->paused[i].channel);
		free(k->paused[i].paused_at);
		free(k->paused[i].paused_by);
		free(k->paused[i].reason);
		free(k->paused[i].until_at);
	}
	free(k->paused);
	k->paused = NULL;
	k->npaused = 0;
	outbox_channels_free(k);
}

enum check_status
outbox_verdict(const struct outbox_counts *k, const struct conf_outbox *c)
{
	enum check_status s = CHECK_OK;

	if (k->stuck > 0)
		s = CHECK_CRITICAL;
	if (c->pending_crit > 0 && k->pending >= c->pending_crit)
		s = check_status_worst(s, CHECK_CRITICAL);
	else if (c->pending_warn > 0 && k->pending >= c->pending_warn)
		s = check_status_worst(s, CHECK_WARNING);
	if (c->oldest_due_crit_ms > 0 &&
	    k->oldest_due_age_s * 1000 >= c->oldest_due_crit_ms)
		s = check_status_worst(s, CHECK_CRITICAL);
	else if (c->oldest_due_warn_ms > 0 &&
	    k->oldest_due_age_s * 1000 >= c->oldest_due_warn_ms)
		s = check_status_worst(s, CHECK_WARNING);
	if (c->failed_crit > 0 && k->failed >= c->failed_crit)
		s = check_status_worst(s, CHECK_CRITICAL);
	else if (c->failed_warn > 0 && k->failed >= c->failed_warn)
		s = check_status_worst(s, CHECK_WARNING);
	if (k->unknown_channel > 0)
		s = check_status_worst(s, CHECK_WARNING);
	if (k->circuit_open > 0)
		s = check_status_worst(s, CHECK_WARNING);
	if (k->quota_blocked > 0)
		s = check_status_worst(s, CHECK_CRITICAL);
	else if (k->quota_exhausted > 0)
		s = check_status_worst(s, CHECK_WARNING);
	return s;
}

/* ------------------------------------------------- operator commands */

/* Who pauses: user@host:pid. */
static char *
outbox_operator(void)
{
	struct passwd *pw = getpwuid(geteuid());

	return xasprintf("%s@%s",
	    pw != NULL && pw->pw_name != NULL ? pw->pw_name : "?",
	    self_identity());
}

enum db_status
outbox_pause(struct db *db, const char *const *channels, size_t n,
    int64_t for_ms, const char *reason, char **errstr)
{
	struct db_result *res = NULL;
	struct buf        rows, until;
	enum db_status    st = DB_ERR_QUERY;
	char             *who = outbox_operator();
	size_t            i;

	buf_init(&rows);
	buf_init(&until);
	if (for_ms > 0)
		buf_printf(&until, "NOW(6) + INTERVAL %lld MICROSECOND",
		    (long long)for_ms * 1000);
	else
		buf_adds(&until, "NULL");
	for (i = 0; i < n; i++) {
		if (db_fragment(db, &rows, errstr, "%R(%s, NOW(6), %s, %s, %F)",
		        i > 0 ? "," : "", channels[i], who, reason,
		        &until) != 0)
			goto out;
	}
	st = db_query_retry(db, &res, errstr,
	    "INSERT INTO cronguard_channel_pauses"
	    " (channel, paused_at, paused_by, reason, until_at) VALUES %F"
	    " ON DUPLICATE KEY UPDATE paused_at = VALUES(paused_at),"
	    " paused_by = VALUES(paused_by), reason = VALUES(reason),"
	    " until_at = VALUES(until_at)",
	    &rows);
out:
	db_result_free(res);
	buf_free(&rows);
	buf_free(&until);
	free(who);
	return st;
}

enum db_status
outbox_resume(struct db *db, const char *const *channels, size_t n,
    unsigned long long *npaused, char **errstr)
{
	struct db_result *res = NULL;
	struct buf        in;
	enum db_status    st = DB_ERR_QUERY;
	size_t            i;

	*npaused = 0;
	buf_init(&in);
	for (i = 0; i < n; i++) {
		if (db_fragment(db, &in, errstr, "%R%s", i > 0 ? "," : "",
		        channels[i]) != 0)
			goto out;
	}
	/* A pause that already ran out is removed (and counted) too. */
	st = db_query_retry(db, &res, errstr,
	    "DELETE FROM cronguard_channel_pauses WHERE channel IN (%F)", &in);
	if (st == DB_OK)
		*npaused = res->affected;
out:
	db_result_free(res);
	buf_free(&in);
	return st;
}

/* The phase of a status, as sql/015 computes the column: OPEN for a
 * row waiting or being sent, else the status. */
static const char *
outbox_phase(const char *status)
{
	return strcmp(status, "PENDING") == 0 ||
	        strcmp(status, "PROCESSING") == 0
	    ? "OPEN"
	    : status;
}

int
outbox_list_sql(struct db *db, const char *status, const char *channel,
    unsigned limit, struct buf *sql, char **errstr)
{
	/* With a status: backwards on ix_outbox_phase_sent (phase, sent_at,
	 * id) (sql/015), reading only the rows printed however many rows of
	 * other states are newer; sent_at is NULL but in SENT rows, so for
	 * the others this is id order.  A PENDING listing skips the OPEN
	 * rows being sent (PROCESSING), no more.  A PROCESSING one would
	 * skip the whole backlog there: the rows being sent are few, so it
	 * sorts them all, found on ix_outbox_claimed (status, claimed_at). */
	static const char cols[] =
	    "SELECT id, message_id, status, channel, event_type,"
	    " ordering_key, attempts, next_attempt_at, created_at, sent_at,"
	    " last_error FROM outbox_messages";

	if (status == NULL)
		return db_fragment(db, sql, errstr,
		    "%R WHERE (%s IS NULL OR channel = %s)"
		    " ORDER BY id DESC LIMIT %u",
		    cols, channel, channel, limit);
	return db_fragment(db, sql, errstr,
	    "%R FORCE INDEX (%R) WHERE phase = %s AND status = %s"
	    " AND (%s IS NULL OR channel = %s)"
	    " ORDER BY sent_at DESC, id DESC LIMIT %u",
	    cols,
	    strcmp(status, "PROCESSING") == 0 ? "ix_outbox_claimed"
	                                      : "ix_outbox_phase_sent",
	    outbox_phase(status), status, channel, channel, limit);
}

enum db_status
outbox_list(struct db *db, const char *status, const char *channel,
    unsigned limit, struct db_result **res, char **errstr)
{
	struct buf     sql;
	enum db_status st = DB_ERR_QUERY;

	buf_init(&sql);
	if (outbox_list_sql(db, status, channel, limit, &sql, errstr) == 0)
		st = db_query(db, res, errstr, "%F", &sql);
	buf_free(&sql);
	return st;
}

enum db_status
outbox_show(
    struct db *db, unsigned long long id, struct db_result **res, char **errstr)
{
	return db_query(db, res, errstr,
	    "SELECT id, message_id, channel, event_type, ordering_key,"
	    " status, attempts, next_attempt_at, claim_token, claimed_by,"
	    " claimed_at, last_error, created_at, sent_at, payload"
	    " FROM outbox_messages WHERE id = %llu",
	    id);
}

enum db_status
outbox_show_blocker(struct db *db, const struct conf_outbox *conf,
    unsigned long long id, struct db_result **res, char **errstr)
{
	struct buf     cond;
	enum db_status st;

	buf_init(&cond);
	if (conf->ordering != ORDERING_PER_KEY)
		buf_adds(&cond, "FALSE");
	else if (outbox_blocking_sql(db, conf, "f", "p", 1, &cond, errstr) !=
	    0) {
		st = DB_ERR_QUERY;
		goto out;
	}
	st = db_query(db, res, errstr,
	    "SELECT f.id, f.channel, f.last_error FROM outbox_messages p"
	    " JOIN outbox_messages f ON %F"
	    " WHERE p.id = %llu AND p.status = 'PENDING'"
	    " ORDER BY f.id LIMIT 1",
	    &cond, id);
out:
	buf_free(&cond);
	return st;
}

enum db_status
outbox_show_attempts(struct db *db, unsigned long long id, unsigned limit,
    struct db_result **res, unsigned long long *total, char **errstr)
{
	struct db_result *n = NULL;
	enum db_status    st;

	/* Both are walks of ix_attempts_outbox: the count reads the index,
	 * the page only its rows, whatever the log's length. */
	if ((st = db_query(db, &n, errstr,
	         "SELECT COUNT(*) FROM outbox_attempts WHERE outbox_id = %llu",
	         id)) != DB_OK ||
	    (st = db_one_row(n, 1, errstr)) != DB_OK)
		goto out;
	*total = (unsigned long long)db_cell_ll(n, 0, 0, 0);
	st = db_query(db, res, errstr,
	    "SELECT attempt, started_at, duration_ms, outcome, status_code,"
	    " dispatcher, detail FROM outbox_attempts WHERE outbox_id = %llu"
	    " ORDER BY id DESC LIMIT %u",
	    id, limit);
out:
	db_result_free(n);
	return st;
}

/* The attempt rows of those of ids (one chunk of a purge) whose message
 * is gone: a message changed meanwhile and not deleted keeps them. */
static enum db_status
outbox_purge_attempts(
    struct db *db, const unsigned long long *ids, size_t nids, char **errstr)
{
	return db_query_retry(db, NULL, errstr,
	    "DELETE FROM outbox_attempts WHERE outbox_id IN (%L)"
	    " AND NOT EXISTS (SELECT 1 FROM outbox_messages m"
	    " WHERE m.id = outbox_attempts.outbox_id)",
	    nids, ids);
}

/* One statement of an operator's change to rows by id (at most
 * OUTBOX_BATCH_MAX ids).  Each names the states it may change, so a row
 * that moved on in the meantime (claimed, sent) is left alone and not
 * counted.  In retry, attempts is assigned before status: MySQL and
 * MariaDB assign left to right, each seeing the previous ones. */
static enum db_status
outbox_ids_in(struct db *db, enum outbox_ids_op op,
    const unsigned long long *ids, size_t nids, const char *reason,
    unsigned long long *n, char **errstr)
{
	struct db_result *res = NULL;
	enum db_status    st = DB_ERR_QUERY;

	switch (op) {
	case OUTBOX_IDS_RETRY:
		st = db_query_retry(db, &res, errstr,
		    "UPDATE outbox_messages SET"
		    " attempts = IF(status = 'PENDING', attempts, 0),"
		    " status = 'PENDING', next_attempt_at = NOW(6),"
		    " claim_token = NULL"
		    " WHERE id IN (%L)"
		    " AND status IN ('PENDING','FAILED','CANCELLED')",
		    nids, ids);
		break;
	case OUTBOX_IDS_CANCEL:
		st = db_query_retry(db, &res, errstr,
		    "UPDATE outbox_messages SET status = 'CANCELLED',"
		    " claim_token = NULL, claimed_by = %s, claimed_at = NOW(6),"
		    " last_error = CONCAT('cancelled: ', %s)"
		    " WHERE id IN (%L) AND status IN ('PENDING','FAILED')",
		    self_identity(),
		    reason != NULL ? reason : "by the operator", nids, ids);
		break;
	case OUTBOX_IDS_PURGE:
		st = db_query_retry(db, &res, errstr,
		    "DELETE FROM outbox_messages WHERE id IN (%L)"
		    " AND status IN ('SENT','FAILED','CANCELLED')",
		    nids, ids);
		if (st == DB_OK)
			st = outbox_purge_attempts(db, ids, nids, errstr);
		break;
	}
	if (st == DB_OK)
		*n += res->affected;
	db_result_free(res);
	return st;
}

enum db_status
outbox_ids(struct db *db, enum outbox_ids_op op, const unsigned long long *ids,
    size_t nids, const char *reason, unsigned long long *n, char **errstr)
{
	enum db_status st = DB_OK;
	size_t         i, k;

	*n = 0;
	for (i = 0; i < nids && st == DB_OK; i += k) {
		k = nids - i < OUTBOX_BATCH_MAX ? nids - i : OUTBOX_BATCH_MAX;
		st = outbox_ids_in(db, op, ids + i, k, reason, n, errstr);
	}
	return st;
}

/* --dry-run: how many rows match where (a fragment over outbox_messages)
 * into *n; what names the command in an error. */
static enum db_status
outbox_count_where(struct db *db, const struct buf *where,
    unsigned long long *n, const char *what, char **errstr)
{
	enum db_status st;
	char          *count = NULL;
	const char    *e;

	st = db_query_value(db, &count, errstr,
	    "SELECT COUNT(*) FROM outbox_messages WHERE %F", where);
	if (st == DB_OK &&
	    (count == NULL || parse_ull(count, UINT64_MAX, n, &e) != 0)) {
		*errstr = xasprintf("%s failed: bad count", what);
		st = DB_ERR_QUERY;
	}
	free(count);
	return st;
}

/* The next batch (at most OUTBOX_BATCH_MAX) of ids matching where, by
 * primary key after *after. */
static enum db_status
outbox_next_ids(struct db *db, const struct buf *where,
    unsigned long long *after, unsigned long long *ids, size_t *k,
    char **errstr)
{
	struct db_result  *res = NULL;
	enum db_status     st;
	unsigned long long id;
	const char        *e;
	size_t             i;

	*k = 0;
	st = db_query(db, &res, errstr,
	    "SELECT id FROM outbox_messages WHERE id > %llu AND %F"
	    " ORDER BY id LIMIT %u",
	    *after, where, OUTBOX_BATCH_MAX);
	if (st != DB_OK)
		goto out;
	for (i = 0; i < res->nrows && *k < OUTBOX_BATCH_MAX; i++) {
		if (parse_ull(db_cell(res, i, 0), UINT64_MAX, &id, &e) != 0)
			continue;
		ids[(*k)++] = id;
		*after = id;
	}
out:
	db_result_free(res);
	return st;
}

enum db_status
outbox_filtered(struct db *db, enum outbox_ids_op op,
    const struct outbox_filter *f, const char *reason, int dry_run,
    unsigned long long *n, char **errstr)
{
	struct buf         where;
	enum db_status     st = DB_ERR_QUERY;
	unsigned long long after = 0, *ids;
	size_t             k;

	*n = 0;
	buf_init(&where);
	ids = xcalloc(OUTBOX_BATCH_MAX, sizeof *ids);
	if (db_fragment(db, &where, errstr,
	        "%R AND (%s IS NULL OR channel = %s)"
	        " AND (%s IS NULL OR event_type = %s)"
	        " AND (%s IS NULL OR LOCATE(%s, last_error) > 0)",
	        op == OUTBOX_IDS_RETRY ? "status = 'FAILED'"
	                               : "status IN ('PENDING','FAILED')",
	        f->channel, f->channel, f->event_type, f->event_type, f->error,
	        f->error) != 0)
		goto out;
	if (f->since_ms > 0 &&
	    db_fragment(db, &where, errstr,
	        " AND COALESCE(claimed_at, created_at) >="
	        " NOW(6) - INTERVAL %lld MICROSECOND",
	        (long long)f->since_ms * 1000) != 0)
		goto out;
	if (dry_run) {
		st = outbox_count_where(db, &where, n, "count", errstr);
		goto out;
	}
	for (;;) {
		st = outbox_next_ids(db, &where, &after, ids, &k, errstr);
		if (st != DB_OK || k == 0)
			break;
		st = outbox_ids_in(db, op, ids, k, reason, n, errstr);
		if (st != DB_OK)
			break;
	}
out:
	buf_free(&where);
	free(ids);
	return st;
}

int
outbox_aged_where(struct db *db, const char *status, const char *col,
    const char *cutoff, struct buf *where, char **errstr)
{
	/* SENT rows by their phase, the first column of
	 * ix_outbox_phase_sent; the others by their status, the first of
	 * ix_outbox_claimed. */
	return db_fragment(db, where, errstr, "%R = %s AND %R < %s",
	    strcmp(status, "SENT") == 0 ? "phase" : "status", status, col,
	    cutoff);
}

/* outbox purge's pace: before its next batch, it waits until the rows
 * it has visited are no more than rate a second since it started. */
static void
outbox_purge_pace(int64_t t0, unsigned long long visited, unsigned rate)
{
	int64_t due;

	if (rate == 0)
		return;
	due = t0 + (int64_t)(visited * 1000 / rate);
	if (due > now_mono_ms())
		sleep_ms(due - now_mono_ms());
}

/* One batch's rows deleted (the condition is repeated: a row may have
 * changed), then their attempt rows; *n counts the messages. */
static enum db_status
outbox_purge_batch(struct db *db, const unsigned long long *ids, size_t k,
    const struct buf *where, unsigned long long *n, char **errstr)
{
	struct db_result *res = NULL;
	enum db_status    st;

	st = db_query_retry(db, &res, errstr,
	    "DELETE FROM outbox_messages WHERE id IN (%L) AND %F", k, ids,
	    where);
	if (st == DB_OK) {
		*n += res->affected;
		st = outbox_purge_attempts(db, ids, k, errstr);
	}
	db_result_free(res);
	return st;
}

/*
 * The rows of status whose col (a DATETIME) is before cutoff, in batches
 * walked along an index (phase or status, col, id): ix_outbox_phase_sent
 * for SENT rows by sent_at (sql/015), ix_outbox_claimed for CANCELLED
 * rows by claimed_at (sql/002).  Each batch continues after the last (col,
 * id) of the one before, so it reads only its own rows, never the
 * history before or after the cutoff.
 */
static enum db_status
outbox_purge_aged(struct db *db, const char *status, const char *col,
    const char *cutoff, int dry_run, unsigned rate, int64_t t0,
    unsigned long long *visited, unsigned long long *n, char **errstr)
{
	struct db_result  *res = NULL;
	struct buf         where, after;
	enum db_status     st;
	unsigned long long id, *ids;
	const char        *e;
	size_t             i, k;

	buf_init(&where);
	buf_init(&after);
	ids = xcalloc(OUTBOX_BATCH_MAX, sizeof *ids);
	if (outbox_aged_where(db, status, col, cutoff, &where, errstr) != 0) {
		st = DB_ERR_QUERY;
		goto out;
	}
	if (dry_run) {
		st = outbox_count_where(db, &where, &id, "purge", errstr);
		if (st == DB_OK)
			*n += id;
		goto out;
	}
	for (;;) {
		st = db_query(db, &res, errstr,
		    "SELECT id, %R FROM outbox_messages WHERE %F%F"
		    " ORDER BY %R, id LIMIT %u",
		    col, &where, &after, col, OUTBOX_BATCH_MAX);
		if (st != DB_OK || res->nrows == 0)
			break;
		for (i = k = 0; i < res->nrows; i++) {
			if (parse_ull(
			        db_cell(res, i, 0), UINT64_MAX, &id, &e) == 0)
				ids[k++] = id;
		}
		buf_reset(&after);
		i = res->nrows - 1;
		if (db_fragment(db, &after, errstr,
		        " AND %R >= %s AND (%R > %s OR id > %s)", col,
		        db_cell(res, i, 1), col, db_cell(res, i, 1),
		        db_cell(res, i, 0)) != 0) {
			st = DB_ERR_QUERY;
			break;
		}
		*visited += res->nrows;
		if (k > 0 &&
		    (st = outbox_purge_batch(db, ids, k, &where, n, errstr)) !=
		        DB_OK)
			break;
		if (res->nrows < OUTBOX_BATCH_MAX)
			break;
		db_result_free(res);
		res = NULL;
		outbox_purge_pace(t0, *visited, rate);
	}
out:
	db_result_free(res);
	buf_free(&where);
	buf_free(&after);
	free(ids);
	return st;
}

enum db_status
outbox_purge(struct db *db, enum outbox_purge_what what, int64_t age_ms,
    int dry_run, unsigned rate, unsigned long long *n, char **errstr)
{
	struct buf         where;
	enum db_status     st;
	char              *cutoff = NULL;
	unsigned long long after = 0, visited = 0, *ids;
	int64_t            t0 = now_mono_ms();
	size_t             k;

	*n = 0;
	buf_init(&where);
	ids = xcalloc(OUTBOX_BATCH_MAX, sizeof *ids);
	/* One cutoff for the whole purge, from the database clock. */
	st = db_query_value(db, &cutoff, errstr,
	    "SELECT NOW(6) - INTERVAL %lld MICROSECOND",
	    (long long)age_ms * 1000);
	if (st != DB_OK)
		goto out;
	if (what == PURGE_SENT) {
		st = outbox_purge_aged(db, "SENT", "sent_at", cutoff, dry_run,
		    rate, t0, &visited, n, errstr);
		if (st == DB_OK)
			st = outbox_purge_aged(db, "CANCELLED", "claimed_at",
			    cutoff, dry_run, rate, t0, &visited, n, errstr);
		goto out;
	}
	/* FAILED rows are few: by primary key, on ix_outbox_due's range of
	 * the status. */
	if (db_fragment(db, &where, errstr,
	        "status = 'FAILED' AND COALESCE(claimed_at, created_at) < %s",
	        cutoff) != 0) {
		st = DB_ERR_QUERY;
		goto out;
	}
	if (dry_run) {
		st = outbox_count_where(db, &where, n, "purge", errstr);
		goto out;
	}
	for (;;) {
		st = outbox_next_ids(db, &where, &after, ids, &k, errstr);
		if (st != DB_OK || k == 0)
			break;
		if ((st = outbox_purge_batch(db, ids, k, &where, n, errstr)) !=
		        DB_OK ||
		    k < OUTBOX_BATCH_MAX)
			break;
		visited += k;
		outbox_purge_pace(t0, visited, rate);
	}
out:
	free(cutoff);
	buf_free(&where);
	free(ids);
	return st;
}

enum db_status
outbox_enqueue(struct db *db, const char *channel, const char *event_type,
    const char *key, const char *payload, const struct outbox_when *when,
    unsigned long long *id, char *message_id, char **errstr)
{
	struct db_result *res = NULL;
	struct buf        next, expires;
	enum db_status    st = DB_ERR_QUERY;

	buf_init(&next);
	buf_init(&expires);
	uuid_v4(message_id);
	if (when->at_set)
		buf_printf(&next, "FROM_UNIXTIME(%lld)", (long long)when->at_s);
	else
		buf_printf(&next, "NOW(6) + INTERVAL %lld MICROSECOND",
		    (long long)when->delay_ms * 1000);
	if (when->expires_in_ms > 0)
		buf_printf(&expires, "NOW(6) + INTERVAL %lld MICROSECOND",
		    (long long)when->expires_in_ms * 1000);
	else
		buf_adds(&expires, "NULL");
	st = db_query(db, &res, errstr,
	    "INSERT INTO outbox_messages"
	    " (message_id, channel, event_type, ordering_key, payload,"
	    " next_attempt_at, expires_at)"
	    " VALUES (%s, %s, %s, %s, %s, %F, %F)",
	    message_id, channel, event_type, key, payload, &next, &expires);
	buf_free(&next);
	buf_free(&expires);
	if (st == DB_OK)
		*id = res->insert_id;
	db_result_free(res);
	return st;
}
