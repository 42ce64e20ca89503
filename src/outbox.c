/*
 * outbox.c: claim, finalise, recover and count outbox rows.
 *
 * The dispatcher's session runs READ COMMITTED (see the dispatch command):
 * a locking range read then takes no gap locks that would block the
 * applications' INSERTs, and rows it skips are unlocked at once.
 *
 * UPDATE assignments are evaluated left to right on MySQL and MariaDB, so
 * a status computed from attempts is assigned before attempts changes.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <mysql.h>

#include "backoff.h"
#include "log.h"
#include "outbox.h"
#include "util.h"

/* Statuses that block later rows of the same ordering key. */
#define OUTBOX_BLOCKING "'PENDING','PROCESSING','FAILED'"

/* The ids as text for messages (SQL takes them with %L). */
static void
outbox_idlist(struct buf *b, const unsigned long long *ids, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf_printf(b, "%s%llu", i ? "," : "", ids[i]);
}

enum db_status
outbox_recover(struct db *db, const struct conf_outbox *c,
    unsigned long long *n, char **errstr)
{
	struct db_result *res = NULL;
	enum db_status    st;

	*n = 0;
	st = db_query_retry(db, &res, errstr,
	    "UPDATE outbox_messages SET"
	    " status = IF(attempts + 1 >= %u, 'FAILED', 'PENDING'),"
	    " attempts = attempts + 1,"
	    " next_attempt_at = NOW(6),"
	    " last_error = 'lease expired',"
	    " claim_token = NULL"
	    " WHERE status = 'PROCESSING'"
	    " AND claimed_at < NOW(6) - INTERVAL %lld MICROSECOND",
	    c->max_attempts, (long long)c->lease_ms * 1000);
	if (st == DB_OK)
		*n = res->affected;
	db_result_free(res);
	return st;
}

struct claim_args {
	const struct conf_outbox *conf;
	const struct buf         *channels; /* quoted IN list */
	const struct buf         *after;    /* cursor condition, or empty */
	unsigned                  limit;
	struct claim             *c;
};

static void
claim_reset(struct claim *c)
{
	size_t i;

	for (i = 0; c->storage != NULL && i < c->n; i++)
		free(c->storage[i].error);
	db_result_free(c->res);
	free(c->storage);
	free(c->msgs);
	c->res = NULL;
	c->storage = NULL;
	c->msgs = NULL;
	c->n = 0;
}

/* Fill the messages from the claim's result rows. */
static int
claim_fill(struct claim *c, char **errstr)
{
	struct db_result  *r = c->res;
	struct outbox_msg *m;
	const char        *e;
	long long          v;
	size_t             i;

	c->n = r->nrows;
	c->storage = xcalloc(c->n + 1, sizeof *c->storage);
	c->msgs = xcalloc(c->n + 1, sizeof *c->msgs);
	for (i = 0; i < c->n; i++) {
		m = &c->storage[i];
		c->msgs[i] = m;
		if (r->rows[i][0] == NULL ||
		    parse_ull(r->rows[i][0], UINT64_MAX, &m->id, &e) != 0) {
			*errstr = xstrdup("claim failed: bad id");
			return -1;
		}
		snprintf(m->message_id, sizeof m->message_id, "%s",
		    r->rows[i][1] != NULL ? r->rows[i][1] : "");
		m->channel = r->rows[i][2];
		m->event_type = r->rows[i][3];
		m->ordering_key = r->rows[i][4];
		m->payload = r->rows[i][5] != NULL ? r->rows[i][5] : "";
		m->payload_len = r->rows[i][5] != NULL ? r->lengths[i][5] : 0;
		if (r->rows[i][6] == NULL ||
		    parse_ll(r->rows[i][6], 0, UINT32_MAX, &v, &e) != 0) {
			*errstr = xstrdup("claim failed: bad attempts");
			return -1;
		}
		m->attempts = (unsigned)v;
		if (r->rows[i][7] != NULL &&
		    parse_ll(r->rows[i][7], 0, INT64_MAX, &v, &e) == 0)
			m->created_at_s = v;
		m->result = SEND_NONE;
	}
	return 0;
}

static enum db_status
claim_txn(struct db *db, void *arg, char **errstr)
{
	struct claim_args  *a = arg;
	struct claim       *c = a->c;
	struct db_result   *up = NULL;
	unsigned long long *ids = NULL;
	enum db_status      st;
	size_t              i;
	const char         *order = "";

	claim_reset(c);
	uuid_v4(c->token);
	/* The NOT EXISTS runs on ix_outbox_ordering_status (sql/005), index
	 * only, never reading the key's SENT history row by row (EXPLAIN in
	 * t0440; a blocked backlog behind 20,000 SENT rows of its key: 4 ms
	 * instead of 800 ms a claim). */
	if (a->conf->ordering == ORDERING_PER_KEY)
		order = " AND (o.ordering_key IS NULL OR NOT EXISTS ("
		        "SELECT 1 FROM outbox_messages e"
		        " WHERE e.ordering_key = o.ordering_key AND e.id < o.id"
		        " AND e.status IN (" OUTBOX_BLOCKING ")))";

	/* FORCE INDEX: with the cursor the optimizer otherwise picks a ref
	 * on status alone, which walks every delete-marked entry. */
	st = db_query(db, &c->res, errstr,
	    "SELECT o.id, o.message_id, o.channel, o.event_type,"
	    " o.ordering_key, o.payload, o.attempts,"
	    " FLOOR(UNIX_TIMESTAMP(o.created_at)), o.next_attempt_at"
	    " FROM outbox_messages o FORCE INDEX (ix_outbox_due)"
	    " WHERE o.status = 'PENDING' AND o.next_attempt_at <= NOW(6)%F"
	    " AND o.channel IN (%F)%R"
	    " ORDER BY o.next_attempt_at, o.id LIMIT %u"
	    " FOR UPDATE SKIP LOCKED",
	    a->after, a->channels, order, a->limit);
	if (st != DB_OK)
		goto out;
	if (claim_fill(c, errstr) != 0) {
		st = DB_ERR_QUERY;
		goto out;
	}
	if (c->n == 0)
		goto out;

	ids = xcalloc(c->n, sizeof *ids);
	for (i = 0; i < c->n; i++)
		ids[i] = c->msgs[i]->id;
	st = db_query(db, &up, errstr,
	    "UPDATE outbox_messages SET status = 'PROCESSING',"
	    " claim_token = %s, claimed_by = %s, claimed_at = NOW(6)"
	    " WHERE id IN (%L) AND status = 'PENDING'",
	    c->token, self_identity(), c->n, ids);
	if (st == DB_OK && up->affected != c->n) {
		*errstr = xasprintf("claim failed: %llu of %zu locked rows "
		                    "updated",
		    up->affected, c->n);
		st = DB_ERR_QUERY;
	}
out:
	db_result_free(up);
	free(ids);
	return st;
}

enum db_status
outbox_claim(struct db *db, const struct conf_outbox *conf,
    const char *const *channels, size_t nchannels, unsigned limit,
    struct outbox_cursor *cur, struct claim *c, char **errstr)
{
	struct claim_args a;
	struct buf        in, after;
	enum db_status    st;
	size_t            i;
	const char       *at;

	memset(c, 0, sizeof *c);
	if (nchannels == 0 || limit == 0)
		return DB_OK;
	buf_init(&in);
	buf_init(&after);
	for (i = 0; i < nchannels; i++) {
		if (i > 0)
			buf_addc(&in, ',');
		if (db_fragment(db, &in, errstr, "%s", channels[i]) != 0) {
			st = DB_ERR_QUERY;
			goto out;
		}
	}
	if (cur != NULL && cur->set &&
	    db_fragment(db, &after, errstr,
	        " AND (o.next_attempt_at > %s OR (o.next_attempt_at = %s"
	        " AND o.id > %llu))",
	        cur->at, cur->at, cur->id) != 0) {
		st = DB_ERR_QUERY;
		goto out;
	}
	a.conf = conf;
	a.channels = &in;
	a.after = &after;
	a.limit = limit;
	a.c = c;
	st = db_txn(db, claim_txn, &a, errstr);
	if (st != DB_OK)
		claim_reset(c);
	if (cur != NULL) {
		cur->set = 0;
		if (st == DB_OK && c->n == limit &&
		    (at = db_cell(c->res, c->n - 1, 8)) != NULL) {
			snprintf(cur->at, sizeof cur->at, "%s", at);
			cur->id = c->msgs[c->n - 1]->id;
			cur->set = 1;
		}
	}
out:
	buf_free(&in);
	buf_free(&after);
	return st;
}

void
outbox_claim_free(struct claim *c)
{
	claim_reset(c);
}

/* ---------------------------------------------------------- finalise */

enum fin_col {
	FIN_STATUS,
	FIN_ATTEMPTS,
	FIN_NEXT,
	FIN_ERROR,
	FIN_SENT,
	FIN_NCOLS
};
static const char *const fin_names[FIN_NCOLS] = { "status", "attempts",
	"next_attempt_at", "last_error", "sent_at" };

/* One row's new values as SQL expressions. */
struct fin_row {
	unsigned long long id;
	char              *expr[FIN_NCOLS];
};

static void
fin_row_set(struct db *db, const struct conf_outbox *conf,
    const struct outbox_msg *m, struct fin_row *r)
{
	struct buf b;
	int64_t    delay;
	char      *err = NULL;
	int        give_up;

	r->id = m->id;
	r->expr[FIN_ATTEMPTS] = xstrdup("attempts + 1");
	r->expr[FIN_NEXT] = xstrdup("next_attempt_at");
	r->expr[FIN_SENT] = xstrdup("sent_at");
	buf_init(&b);
	switch (m->result) {
	case SEND_OK:
		r->expr[FIN_STATUS] = xstrdup("'SENT'");
		free(r->expr[FIN_SENT]);
		r->expr[FIN_SENT] = xstrdup("NOW(6)");
		(void)db_fragment(db, &b, NULL, "%s", m->error);
		break;
	case SEND_RETRY:
		give_up = m->attempts + 1 >= conf->max_attempts;
		if (give_up) {
			r->expr[FIN_STATUS] = xstrdup("'FAILED'");
			err = xasprintf("%s (gave up after %u attempts)",
			    m->error != NULL ? m->error : "transient failure",
			    m->attempts + 1);
		} else {
			r->expr[FIN_STATUS] = xstrdup("'PENDING'");
			delay = backoff_delay_ms(conf, m->attempts + 1,
			    m->retry_after_ms, backoff_random());
			free(r->expr[FIN_NEXT]);
			r->expr[FIN_NEXT] = xasprintf("NOW(6) + INTERVAL %lld "
			                              "MICROSECOND",
			    (long long)delay * 1000);
		}
		(void)db_fragment(db, &b, NULL, "%s",
		    err != NULL
		        ? err
		        : (m->error != NULL ? m->error : "transient failure"));
		break;
	case SEND_PERMANENT:
		r->expr[FIN_STATUS] = xstrdup("'FAILED'");
		(void)db_fragment(db, &b, NULL, "%s",
		    m->error != NULL ? m->error : "permanent failure");
		break;
	case SEND_NONE:
	default:
		r->expr[FIN_STATUS] = xstrdup("'PENDING'");
		free(r->expr[FIN_ATTEMPTS]);
		r->expr[FIN_ATTEMPTS] = xstrdup("attempts");
		buf_adds(&b, "last_error");
		break;
	}
	r->expr[FIN_ERROR] = buf_steal(&b);
	free(err);
	buf_free(&b);
}

/* "col = expr" when every row agrees, else a CASE on id. */
static void
fin_assign(struct buf *b, struct fin_row *rows, size_t n, enum fin_col col)
{
	size_t i;
	int    same = 1;

	for (i = 1; i < n && same; i++)
		same = strcmp(rows[i].expr[col], rows[0].expr[col]) == 0;
	buf_printf(b, "%s = ", fin_names[col]);
	if (same) {
		buf_adds(b, rows[0].expr[col]);
		return;
	}
	buf_adds(b, "CASE id");
	for (i = 0; i < n; i++)
		buf_printf(
		    b, " WHEN %llu THEN %s", rows[i].id, rows[i].expr[col]);
	buf_printf(b, " ELSE %s END", fin_names[col]);
}

size_t
outbox_lost_ids(const struct claim *c, const unsigned char *deleted,
    const struct db_result *found, unsigned long long *lost)
{
	size_t             i, j, n = 0;
	unsigned long long id;
	const char        *e;
	int                present, ours;

	for (i = 0; i < c->n; i++) {
		present = ours = 0;
		for (j = 0; j < found->nrows; j++) {
			if (db_cell(found, j, 0) == NULL ||
			    parse_ull(db_cell(found, j, 0), UINT64_MAX, &id,
			        &e) != 0 ||
			    id != c->msgs[i]->id)
				continue;
			present = 1;
			ours = db_parse_bool(db_cell(found, j, 1)) == 1;
		}
		if (deleted[i] ? present : !ours)
			lost[n++] = c->msgs[i]->id;
	}
	return n;
}

void
outbox_tally_claim(const struct conf_outbox *conf, const struct claim *c,
    const unsigned long long *lost, size_t nlost, struct outbox_tally *t)
{
	const struct outbox_msg *m;
	size_t                   i, j;
	int                      gone;

	for (i = 0; i < c->n; i++) {
		m = c->msgs[i];
		for (gone = 0, j = 0; j < nlost && !gone; j++)
			gone = lost[j] == m->id;
		if (gone) {
			t->lost++;
			continue;
		}
		switch (m->result) {
		case SEND_OK:
			t->sent++;
			break;
		case SEND_RETRY:
			/* as fin_row_set: the last attempt gives up */
			if (m->attempts + 1 >= conf->max_attempts)
				t->failed++;
			else
				t->retried++;
			break;
		case SEND_PERMANENT:
			t->failed++;
			break;
		case SEND_NONE:
		default:
			t->released++;
			break;
		}
	}
}

/* Which of the claim's rows it no longer holds, after a finalise that
 * matched fewer rows than expected: *lost (allocated) gets *nlost ids.
 * deleted[i] says the row was to be deleted. */
static enum db_status
fin_find_lost(struct db *db, struct claim *c, const unsigned char *deleted,
    unsigned long long **lost, size_t *nlost, char **errstr)
{
	struct db_result   *res = NULL;
	unsigned long long *ids;
	enum db_status      st;
	size_t              i;

	ids = xcalloc(c->n + 1, sizeof *ids);
	for (i = 0; i < c->n; i++)
		ids[i] = c->msgs[i]->id;
	st = db_query(db, &res, errstr,
	    "SELECT id, claim_token <=> %s FROM outbox_messages"
	    " WHERE id IN (%L)",
	    c->token, c->n, ids);
	if (st != DB_OK)
		goto out;
	*lost = xcalloc(c->n + 1, sizeof **lost);
	*nlost = outbox_lost_ids(c, deleted, res, *lost);
out:
	db_result_free(res);
	free(ids);
	return st;
}

enum db_status
outbox_finalise(struct db *db, const struct conf_outbox *conf, struct claim *c,
    struct outbox_tally *t, char **errstr)
{
	struct fin_row     *rows = NULL;
	unsigned char      *deleted = NULL;
	struct db_result   *res = NULL;
	struct buf          sql, lost;
	struct incident     inc;
	char               *detail = NULL;
	enum db_status      st = DB_OK;
	unsigned long long  matched = 0, *lostids = NULL, *delids = NULL;
	unsigned long long *rowids = NULL;
	size_t              i, nrows = 0, ndel = 0, k, nlost = 0;

	buf_init(&sql);
	buf_init(&lost);
	if (c->n == 0)
		goto out;
	rows = xcalloc(c->n, sizeof *rows);
	rowids = xcalloc(c->n, sizeof *rowids);
	delids = xcalloc(c->n, sizeof *delids);
	deleted = xcalloc(c->n, 1);
	for (i = 0; i < c->n; i++) {
		if (!conf->keep_sent && c->msgs[i]->result == SEND_OK) {
			delids[ndel++] = c->msgs[i]->id;
			deleted[i] = 1;
			continue;
		}
		rowids[nrows] = c->msgs[i]->id;
		fin_row_set(db, conf, c->msgs[i], &rows[nrows++]);
	}

	if (ndel > 0) {
		st = db_query_retry(db, &res, errstr,
		    "DELETE FROM outbox_messages WHERE id IN (%L)"
		    " AND claim_token = %s",
		    ndel, delids, c->token);
		if (st != DB_OK)
			goto out;
		matched += res->affected;
		db_result_free(res);
		res = NULL;
	}
	if (nrows > 0) {
		buf_adds(&sql, "UPDATE outbox_messages SET ");
		for (k = 0; k < FIN_NCOLS; k++) {
			if (k > 0)
				buf_adds(&sql, ", ");
			fin_assign(&sql, rows, nrows, (enum fin_col)k);
		}
		st = db_query_retry(db, &res, errstr,
		    "%F WHERE id IN (%L) AND claim_token = %s", &sql, nrows,
		    rowids, c->token);
		if (st != DB_OK)
			goto out;
		matched += res->affected;
	}

	if (matched != c->n) {
		st = fin_find_lost(db, c, deleted, &lostids, &nlost, errstr);
		if (st != DB_OK)
			goto out;
		if (nlost > 0) {
			outbox_idlist(&lost, lostids, nlost);
			detail = xasprintf(
			    "finalise matched nothing for "
			    "ids %s (claim token %s): another worker holds "
			    "them; results discarded",
			    lost.data, c->token);
			memset(&inc, 0, sizeof inc);
			inc.event = "outbox_lease_lost";
			inc.detail = detail;
			incident_report(&inc);
		}
	}
	/* What this claim wrote; a lost row counts as lost only. */
	outbox_tally_claim(conf, c, lostids, nlost, t);
out:
	for (i = 0; rows != NULL && i < nrows; i++) {
		for (k = 0; k < FIN_NCOLS; k++)
			free(rows[i].expr[k]);
	}
	free(rows);
	free(rowids);
	free(delids);
	free(deleted);
	free(lostids);
	free(detail);
	db_result_free(res);
	buf_free(&sql);
	buf_free(&lost);
	return st;
}

/* ------------------------------------------------------------- counts */

enum db_status
outbox_count(struct db *db, const struct conf *conf, struct outbox_counts *k,
    char **errstr)
{
	struct db_result *res = NULL;
	struct buf        in;
	enum db_status    st;
	long long  *dst[] = { &k->pending, &k->due, &k->processing, &k->stale,
		 &k->stuck, &k->failed, &k->oldest_due_age_s,
		 &k->unknown_channel };
	const char *cell, *e;
	size_t      i;

	memset(k, 0, sizeof *k);
	buf_init(&in);
	if (conf->nchannels == 0)
		buf_adds(&in, "TRUE"); /* every PENDING row is unknown */
	else {
		buf_adds(&in, "channel NOT IN (");
		for (i = 0; i < conf->nchannels; i++) {
			if (i > 0)
				buf_addc(&in, ',');
			if (db_fragment(db, &in, errstr, "%s",
			        conf->channels[i].name) != 0) {
				st = DB_ERR_QUERY;
				goto out;
			}
		}
		buf_addc(&in, ')');
	}
	st = db_query(db, &res, errstr,
	    "SELECT"
	    " COALESCE(SUM(status = 'PENDING'), 0),"
	    " COALESCE(SUM(status = 'PENDING' AND next_attempt_at <= NOW(6)), "
	    "0),"
	    " COALESCE(SUM(status = 'PROCESSING'), 0),"
	    " COALESCE(SUM(status = 'PROCESSING' AND claimed_at <"
	    "  NOW(6) - INTERVAL %lld MICROSECOND), 0),"
	    " COALESCE(SUM(status = 'PROCESSING' AND claimed_at <"
	    "  NOW(6) - INTERVAL %lld MICROSECOND), 0),"
	    " COALESCE(SUM(status = 'FAILED'), 0),"
	    " COALESCE(FLOOR(TIMESTAMPDIFF(MICROSECOND, MIN(IF(status ="
	    "  'PENDING' AND next_attempt_at <= NOW(6), next_attempt_at,"
	    "  NULL)), NOW(6)) / 1000000), 0),"
	    " COALESCE(SUM(status = 'PENDING' AND %F), 0)"
	    " FROM outbox_messages"
	    " WHERE status IN ('PENDING', 'PROCESSING', 'FAILED')",
	    (long long)conf->outbox.lease_ms * 1000,
	    (long long)conf->outbox.watchdog_ms * 1000, &in);
	if (st != DB_OK)
		goto out;
	if (res->nrows != 1 || res->ncols != nitems(dst)) {
		*errstr = xstrdup("count failed: unexpected result");
		st = DB_ERR_QUERY;
		goto out;
	}
	for (i = 0; i < nitems(dst); i++) {
		cell = db_cell(res, 0, i);
		if (cell == NULL ||
		    parse_ll(cell, 0, LLONG_MAX, dst[i], &e) != 0) {
			*errstr = xasprintf("count failed: bad value %s",
			    cell != NULL ? cell : "NULL");
			st = DB_ERR_QUERY;
			goto out;
		}
	}
out:
	db_result_free(res);
	buf_free(&in);
	return st;
}

enum db_status
outbox_count_channels(struct db *db, const struct conf *conf,
    struct outbox_counts *k, char **errstr)
{
	struct ratelimit_state *all = NULL;
	enum db_status          st;
	size_t                  i, n = 0;

	outbox_counts_free(k);
	st = ratelimit_states(db, &all, &n, errstr);
	if (st != DB_OK)
		return st;
	k->channels = xcalloc(n + 1, sizeof *k->channels);
	for (i = 0; i < n; i++) {
		/* Another configuration's channel: not this check's alarm. */
		if (conf_channel_find(conf, all[i].channel) == NULL) {
			free(all[i].channel);
			free(all[i].error);
			continue;
		}
		k->channels[k->nchannels++] = all[i];
		if (all[i].circuit != CIRCUIT_CLOSED)
			k->circuit_open++;
	}
	free(all); /* the strings moved to k->channels */
	return DB_OK;
}

void
outbox_counts_free(struct outbox_counts *k)
{
	ratelimit_states_free(k->channels, k->nchannels);
	k->channels = NULL;
	k->nchannels = 0;
	k->circuit_open = 0;
}

static const char *
outbox_circuit_name(enum ratelimit_circuit c)
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
	return s;
}

static void
report_nagios(struct buf *b, const struct outbox_counts *k,
    const struct conf_outbox *c, enum check_status s)
{
	size_t i, n = 0;

	buf_printf(b,
	    "OUTBOX %s - stuck=%lld stale=%lld pending=%lld "
	    "due=%lld failed=%lld oldest_due=%llds",
	    check_status_name(s), k->stuck, k->stale, k->pending, k->due,
	    k->failed, k->oldest_due_age_s);
	if (k->unknown_channel > 0)
		buf_printf(b, " unknown_channel=%lld", k->unknown_channel);
	for (i = 0; i < k->nchannels; i++) {
		if (k->channels[i].circuit == CIRCUIT_CLOSED)
			continue;
		buf_printf(b, "%s%s", n++ == 0 ? " circuit_open=" : ",",
		    k->channels[i].channel);
	}
	buf_printf(b,
	    " | pending=%lld;%lld;%lld due=%lld processing=%lld "
	    "stale=%lld stuck=%lld;;0 failed=%lld;%lld;%lld "
	    "oldest_due=%llds;%lld;%lld unknown_channel=%lld "
	    "circuit_open=%lld;0",
	    k->pending, c->pending_warn, c->pending_crit, k->due, k->processing,
	    k->stale, k->stuck, k->failed, c->failed_warn, c->failed_crit,
	    k->oldest_due_age_s, (long long)(c->oldest_due_warn_ms / 1000),
	    (long long)(c->oldest_due_crit_ms / 1000), k->unknown_channel,
	    k->circuit_open);
	/* Channel names are libconfig setting names: no space, quote or =. */
	for (i = 0; i < k->nchannels; i++)
		buf_printf(b, " quota_used_%s=%lld", k->channels[i].channel,
		    k->channels[i].quota_used);
	buf_addc(b, '\n');
}

static void
report_prom_gauge(
    struct buf *b, const char *name, const char *help, long long v)
{
	buf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n%s %lld\n", name, help,
	    name, name, v);
}

/* A Prometheus label value: backslash, quote and newline escaped. */
static void
report_prom_label(struct buf *b, const char *v)
{
	for (; *v != '\0'; v++) {
		if (*v == '\\' || *v == '"')
			buf_addc(b, '\\');
		if (*v == '\n')
			buf_adds(b, "\\n");
		else
			buf_addc(b, *v);
	}
}

static void
report_prom_channels(struct buf *b, const struct outbox_counts *k)
{
	size_t i;

	if (k->nchannels == 0)
		return;
	buf_adds(b,
	    "# HELP cronguard_outbox_circuit_open Whether the "
	    "channel's circuit breaker is open or half-open (1): nothing is "
	    "sent to it until a probe succeeds.\n"
	    "# TYPE cronguard_outbox_circuit_open gauge\n");
	for (i = 0; i < k->nchannels; i++) {
		buf_adds(b, "cronguard_outbox_circuit_open{channel=\"");
		report_prom_label(b, k->channels[i].channel);
		buf_printf(
		    b, "\"} %d\n", k->channels[i].circuit != CIRCUIT_CLOSED);
	}
	buf_adds(b,
	    "# HELP cronguard_outbox_circuit_failures Consecutive "
	    "transient failures of the channel, across instances.\n"
	    "# TYPE cronguard_outbox_circuit_failures gauge\n");
	for (i = 0; i < k->nchannels; i++) {
		buf_adds(b, "cronguard_outbox_circuit_failures{channel=\"");
		report_prom_label(b, k->channels[i].channel);
		buf_printf(b, "\"} %u\n", k->channels[i].failures);
	}
	buf_adds(b,
	    "# HELP cronguard_outbox_quota_used Messages counted "
	    "against the channel's daily quota today (UTC).\n"
	    "# TYPE cronguard_outbox_quota_used gauge\n");
	for (i = 0; i < k->nchannels; i++) {
		buf_adds(b, "cronguard_outbox_quota_used{channel=\"");
		report_prom_label(b, k->channels[i].channel);
		buf_printf(b, "\"} %lld\n", k->channels[i].quota_used);
	}
}

static void
report_prometheus(
    struct buf *b, const struct outbox_counts *k, enum check_status s)
{
	report_prom_gauge(b, "cronguard_outbox_up",
	    "Whether the outbox "
	    "counts could be read (1) or not (0).",
	    k != NULL);
	report_prom_gauge(b, "cronguard_outbox_check_status",
	    "Verdict of "
	    "outbox check: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.",
	    s);
	if (k == NULL)
		return;
	buf_adds(b,
	    "# HELP cronguard_outbox_messages Outbox rows by "
	    "status (SENT rows are not counted).\n"
	    "# TYPE cronguard_outbox_messages gauge\n");
	buf_printf(b,
	    "cronguard_outbox_messages{status=\"pending\"} %lld\n"
	    "cronguard_outbox_messages{status=\"processing\"} %lld\n"
	    "cronguard_outbox_messages{status=\"failed\"} %lld\n",
	    k->pending, k->processing, k->failed);
	report_prom_gauge(b, "cronguard_outbox_due",
	    "PENDING rows that are "
	    "due now.",
	    k->due);
	report_prom_gauge(b, "cronguard_outbox_stale",
	    "PROCESSING rows "
	    "claimed longer than the lease ago.",
	    k->stale);
	report_prom_gauge(b, "cronguard_outbox_stuck",
	    "PROCESSING rows "
	    "claimed longer than the watchdog ago: no dispatcher recovers "
	    "them.",
	    k->stuck);
	report_prom_gauge(b, "cronguard_outbox_oldest_due_age_seconds",
	    "Seconds the oldest due PENDING row has waited.",
	    k->oldest_due_age_s);
	report_prom_gauge(b, "cronguard_outbox_unknown_channel",
	    "PENDING "
	    "rows whose channel no configuration names.",
	    k->unknown_channel);
	report_prom_channels(b, k);
}

/* {"mail": {"circuit": "open", "failures": 5, ...}, ...} */
static json_t *
report_json_channels(const struct outbox_counts *k)
{
	const struct ratelimit_state *r;
	json_t                       *o, *ch;
	size_t                        i;

	o = json_object();
	for (i = 0; o != NULL && i < k->nchannels; i++) {
		r = &k->channels[i];
		ch = json_pack("{s:s, s:I, s:I, s:I}", "circuit",
		    outbox_circuit_name(r->circuit), "failures",
		    (json_int_t)r->failures, "open_for_seconds",
		    (json_int_t)((r->open_for_ms + 999) / 1000), "quota_used",
		    (json_int_t)r->quota_used);
		if (ch != NULL && r->circuit != CIRCUIT_CLOSED &&
		    r->error != NULL)
			json_object_set_new(ch, "error", json_string(r->error));
		json_object_set_new(o, r->channel, ch);
	}
	return o;
}

void
outbox_report(struct buf *b, enum report_format fmt,
    const struct outbox_counts *k, const struct conf_outbox *c,
    enum check_status s, const char *error)
{
	json_t *j;
	char   *text;

	switch (fmt) {
	case REPORT_NAGIOS:
		if (k == NULL)
			buf_printf(b, "OUTBOX UNKNOWN - %s\n",
			    error != NULL ? error : "no counts");
		else
			report_nagios(b, k, c, s);
		break;
	case REPORT_JSON:
		if (k == NULL)
			j = json_pack("{s:s, s:s}", "status",
			    check_status_name(s), "error",
			    error != NULL ? error : "no counts");
		else
			j = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, "
			              "s:I, s:I}",
			    "status", check_status_name(s), "pending",
			    (json_int_t)k->pending, "due", (json_int_t)k->due,
			    "processing", (json_int_t)k->processing, "stale",
			    (json_int_t)k->stale, "stuck", (json_int_t)k->stuck,
			    "failed", (json_int_t)k->failed,
			    "oldest_due_age_seconds",
			    (json_int_t)k->oldest_due_age_s, "unknown_channel",
			    (json_int_t)k->unknown_channel);
		if (k != NULL && j != NULL) {
			json_object_set_new(j, "circuit_open",
			    json_integer((json_int_t)k->circuit_open));
			json_object_set_new(
			    j, "channels", report_json_channels(k));
		}
		text = j != NULL
		    ? json_dumps(j, JSON_PRESERVE_ORDER | JSON_COMPACT)
		    : NULL;
		buf_printf(b, "%s\n", text != NULL ? text : "{}");
		free(text);
		json_decref(j);
		break;
	case REPORT_PROMETHEUS:
		report_prometheus(b, k, s);
		break;
	}
}

/* ------------------------------------------------- operator commands */

enum db_status
outbox_list(struct db *db, const char *status, const char *channel,
    unsigned limit, struct db_result **res, char **errstr)
{
	return db_query(db, res, errstr,
	    "SELECT id, message_id, status, channel, event_type,"
	    " ordering_key, attempts, next_attempt_at, created_at, sent_at,"
	    " last_error FROM outbox_messages"
	    " WHERE (%s IS NULL OR status = %s)"
	    " AND (%s IS NULL OR channel = %s)"
	    " ORDER BY id DESC LIMIT %u",
	    status, status, channel, channel, limit);
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

static enum db_status
outbox_retry_in(struct db *db, const unsigned long long *ids, size_t nids,
    unsigned long long *n, char **errstr)
{
	struct db_result *res = NULL;
	enum db_status    st;

	st = db_query_retry(db, &res, errstr,
	    "UPDATE outbox_messages SET status = 'PENDING', attempts = 0,"
	    " next_attempt_at = NOW(6), claim_token = NULL"
	    " WHERE id IN (%L) AND status = 'FAILED'",
	    nids, ids);
	if (st == DB_OK)
		*n += res->affected;
	db_result_free(res);
	return st;
}

enum db_status
outbox_retry_ids(struct db *db, const unsigned long long *ids, size_t nids,
    unsigned long long *n, char **errstr)
{
	enum db_status st = DB_OK;
	size_t         i, k;

	*n = 0;
	for (i = 0; i < nids && st == DB_OK; i += k) {
		k = nids - i < OUTBOX_BATCH_MAX ? nids - i : OUTBOX_BATCH_MAX;
		st = outbox_retry_in(db, ids + i, k, n, errstr);
	}
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
outbox_retry_failed(
    struct db *db, const char *channel, unsigned long long *n, char **errstr)
{
	struct buf         where;
	enum db_status     st;
	unsigned long long after = 0, *ids;
	size_t             k;

	*n = 0;
	buf_init(&where);
	ids = xcalloc(OUTBOX_BATCH_MAX, sizeof *ids);
	if (db_fragment(db, &where, errstr,
	        "status = 'FAILED' AND (%s IS NULL OR channel = %s)", channel,
	        channel) != 0) {
		st = DB_ERR_QUERY;
		goto out;
	}
	for (;;) {
		st = outbox_next_ids(db, &where, &after, ids, &k, errstr);
		if (st != DB_OK || k == 0)
			break;
		if ((st = outbox_retry_in(db, ids, k, n, errstr)) != DB_OK)
			break;
	}
out:
	buf_free(&where);
	free(ids);
	return st;
}

enum db_status
outbox_purge(struct db *db, enum outbox_purge_what what, int64_t age_ms,
    int dry_run, unsigned long long *n, char **errstr)
{
	struct db_result  *res = NULL;
	struct buf         where;
	enum db_status     st;
	char              *cutoff = NULL, *count = NULL;
	const char        *e;
	unsigned long long after = 0, *ids;
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
	if (db_fragment(db, &where, errstr,
	        what == PURGE_SENT ? "status = 'SENT' AND sent_at < %s"
	                           : "status = 'FAILED' AND "
	                             "COALESCE(claimed_at, created_at) < %s",
	        cutoff) != 0) {
		st = DB_ERR_QUERY;
		goto out;
	}

	if (dry_run) {
		st = db_query_value(db, &count, errstr,
		    "SELECT COUNT(*) FROM outbox_messages WHERE %F", &where);
		if (st == DB_OK &&
		    (count == NULL ||
		        parse_ull(count, UINT64_MAX, n, &e) != 0)) {
			*errstr = xstrdup("purge failed: bad count");
			st = DB_ERR_QUERY;
		}
		goto out;
	}
	for (;;) {
		st = outbox_next_ids(db, &where, &after, ids, &k, errstr);
		if (st != DB_OK || k == 0)
			break;
		/* The condition is repeated: a row may have changed. */
		st = db_query_retry(db, &res, errstr,
		    "DELETE FROM outbox_messages WHERE id IN (%L) AND %F", k,
		    ids, &where);
		if (st != DB_OK)
			break;
		*n += res->affected;
		db_result_free(res);
		res = NULL;
	}
out:
	db_result_free(res);
	free(cutoff);
	free(count);
	buf_free(&where);
	free(ids);
	return st;
}

enum db_status
outbox_enqueue(struct db *db, const char *channel, const char *event_type,
    const char *key, const char *payload, unsigned long long *id,
    char *message_id, char **errstr)
{
	struct db_result *res = NULL;
	enum db_status    st;

	uuid_v4(message_id);
	st = db_query(db, &res, errstr,
	    "INSERT INTO outbox_messages"
	    " (message_id, channel, event_type, ordering_key, payload)"
	    " VALUES (%s, %s, %s, %s, %s)",
	    message_id, channel, event_type, key, payload);
	if (st == DB_OK)
		*id = res->insert_id;
	db_result_free(res);
	return st;
}
