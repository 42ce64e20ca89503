/*
 * outbox-finalise.c: the outbox rows' state machine, its last step: each
 * claimed message's result written back, fenced by its claim token, with
 * the attempt log (cronguard-outbox(7), STATES).  The claim is outbox.c.
 */
#include "config.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysqld_error.h>

#include "backoff.h"
#include "faultpoint.h"
#include "incident.h"
#include "log.h"
#include "outbox.h"
#include "outbox-int.h"
#include "util.h"

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

/* sent_at: when the peer accepted the message (its answer ended the
 * send, at ended_ms), on the database clock: the finalise's NOW(6) less
 * the time since, as an attempt's started_at.  now is the monotonic
 * clock read once for the whole claim. */
static char *
fin_sent_at(const struct outbox_msg *m, int64_t now)
{
	int64_t ago = m->ended_ms > 0 ? now - m->ended_ms : 0;

	if (ago <= 0)
		return xstrdup("NOW(6)");
	return xasprintf(
	    "NOW(6) - INTERVAL %lld MICROSECOND", (long long)ago * 1000);
}

static void
fin_row_set(struct db *db, const struct conf_outbox *conf,
    const struct outbox_msg *m, int64_t now, struct fin_row *r)
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
	if (m->expired) {
		/* never started: no attempt counted */
		r->expr[FIN_STATUS] = xstrdup("'FAILED'");
		free(r->expr[FIN_ATTEMPTS]);
		r->expr[FIN_ATTEMPTS] = xstrdup("attempts");
		r->expr[FIN_ERROR] = xstrdup(outbox_expired_sql);
		return;
	}
	switch (m->result) {
	case SEND_OK:
		r->expr[FIN_STATUS] = xstrdup("'SENT'");
		free(r->expr[FIN_SENT]);
		r->expr[FIN_SENT] = fin_sent_at(m, now);
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
		if (m->expired) {
			t->failed++;
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

/* ------------------------------------------------------- attempt log */

/* The outcome an attempt row records for m, or NULL for none: a message
 * never started has no attempt; outbox.attempt_log picks the rest. */
static const char *
attempt_outcome(const struct conf_outbox *conf, const struct outbox_msg *m)
{
	const char *o;

	if (conf->attempt_log == ATTEMPT_LOG_NONE || m->started_ms == 0)
		return NULL;
	switch (m->result) {
	case SEND_OK:
		o = "SENT";
		break;
	case SEND_RETRY:
		o = m->attempts + 1 >= conf->max_attempts ? "FAILED" : "RETRY";
		break;
	case SEND_PERMANENT:
		o = "FAILED";
		break;
	case SEND_NONE:
	default:
		o = "RELEASED";
		break;
	}
	if (conf->attempt_log == ATTEMPT_LOG_FAILURES && strcmp(o, "SENT") == 0)
		return NULL;
	return o;
}

/* The attempt rows of c's messages, but those in lost[], as one
 * multi-row INSERT in sql; *n rows (0: sql stays empty).  started_at is
 * the database clock less the time since the send started, so the rows
 * of all dispatchers order on one clock. */
static int
attempt_sql(struct db *db, const struct conf_outbox *conf,
    const struct claim *c, const unsigned long long *lost, size_t nlost,
    struct buf *sql, size_t *n, char **errstr)
{
	const struct outbox_msg *m;
	const char              *outcome;
	int64_t                  now = now_mono_ms(), ago, dur;
	size_t                   i, j;
	int                      gone, rc;

	*n = 0;
	for (i = 0; i < c->n; i++) {
		m = c->msgs[i];
		if ((outcome = attempt_outcome(conf, m)) == NULL)
			continue;
		for (gone = 0, j = 0; j < nlost && !gone; j++)
			gone = lost[j] == m->id;
		if (gone)
			continue;
		ago = now - m->started_ms;
		dur = (m->ended_ms >= m->started_ms ? m->ended_ms : now) -
		    m->started_ms;
		if (ago < 0)
			ago = 0;
		if (dur < 0 || dur > UINT32_MAX)
			dur = 0;
		rc = db_fragment(db, sql, errstr,
		    "%R(%llu, %u, NOW(6) - INTERVAL %lld MICROSECOND, %lld, %s, ",
		    *n == 0 ? "INSERT INTO outbox_attempts (outbox_id, attempt,"
		              " started_at, duration_ms, outcome, status_code,"
		              " detail, dispatcher, claim_token) VALUES "
		            : ",",
		    m->id, m->attempts + 1, (long long)ago * 1000,
		    (long long)dur, outcome);
		if (rc == 0 && m->status_code > 0)
			rc = db_fragment(db, sql, errstr, "%d", m->status_code);
		else if (rc == 0)
			buf_adds(sql, "NULL");
		if (rc == 0)
			rc = db_fragment(db, sql, errstr, ", %s, %s, %s)",
			    m->error, self_identity(), c->token);
		if (rc != 0)
			return -1;
		(*n)++;
	}
	return 0;
}

/* Which of the claim's rows it no longer holds, after a finalise that
 * matched fewer rows than expected: *lost (allocated) gets *nlost ids.
 * deleted[i] says the row was to be deleted.  txn: inside a transaction
 * (no retry of its own). */
static enum db_status
fin_find_lost(struct db *db, bool txn, struct claim *c,
    const unsigned char *deleted, unsigned long long **lost, size_t *nlost,
    char **errstr)
{
	struct db_result   *res = NULL;
	unsigned long long *ids;
	enum db_status      st;

	ids = claim_id_array(c);
	st = (txn ? db_query : db_query_retry)(db, &res, errstr,
	    "SELECT id, claim_token <=> %s FROM outbox_messages"
	    " WHERE id IN (%L)",
	    c->token, c->n, ids);
	if (st != DB_OK)
		goto out;
	free(*lost);
	*lost = xcalloc(c->n + 1, sizeof **lost);
	*nlost = outbox_lost_ids(c, deleted, res, *lost);
out:
	db_result_free(res);
	free(ids);
	return st;
}

/* A finalise's statements, built once; fin_write runs them. */
struct fin_args {
	const struct conf_outbox *conf;
	struct claim             *c;
	struct buf                update; /* "UPDATE ... SET ..." or empty */
	struct buf                del;    /* the fenced DELETE, or empty */
	struct buf                upd;    /* the fenced UPDATE, or empty */
	unsigned long long       *rowids; /* the rows it updates */
	size_t                    nrows;
	unsigned long long       *delids; /* the rows it deletes */
	size_t                    ndel;
	unsigned char            *deleted; /* per claim message */
	bool                      txn;     /* with the attempt log */
	unsigned long long       *lost;    /* out: lease lost */
	size_t                    nlost;
};

static enum db_status
fin_write(struct db *db, void *arg, char **errstr)
{
	struct fin_args   *a = arg;
	struct db_result  *res = NULL;
	struct buf         ins;
	enum db_status     st = DB_OK;
	unsigned long long matched = 0;
	size_t             nins;
	enum db_status (*q)(struct db *, struct db_result **, char **,
	    const char *, ...) = a->txn ? db_query : db_query_retry;

	buf_init(&ins);
	free(a->lost);
	a->lost = NULL;
	a->nlost = 0;
	if (a->ndel > 0) {
		st = q(db, &res, errstr, "%F", &a->del);
		if (st != DB_OK)
			goto out;
		matched += res->affected;
		db_result_free(res);
		res = NULL;
	}
	faultpoint("mid_finalise");
	if (a->nrows > 0) {
		st = q(db, &res, errstr, "%F", &a->upd);
		if (st != DB_OK)
			goto out;
		matched += res->affected;
	}
	if (matched != a->c->n) {
		st = fin_find_lost(
		    db, a->txn, a->c, a->deleted, &a->lost, &a->nlost, errstr);
		if (st != DB_OK)
			goto out;
	}
	if (!a->txn)
		goto out;
	if (attempt_sql(db, a->conf, a->c, a->lost, a->nlost, &ins, &nins,
	        errstr) != 0) {
		st = DB_ERR_QUERY;
		goto out;
	}
	if (nins > 0)
		st = db_query(db, NULL, errstr, "%F", &ins);
out:
	db_result_free(res);
	buf_free(&ins);
	return st;
}

/* The finalise's COMMIT reply was lost: it committed if and only if its
 * attempt rows are there (the claim token is fresh for every claim). */
static enum db_status
fin_committed(struct db *db, void *arg, bool *committed, char **errstr)
{
	struct fin_args *a = arg;
	enum db_status   st;
	long long        n = 0;

	*committed = false;
	if ((st = outbox_token_rows(db, "outbox_attempts", "outbox_id", a->c,
	         &n, errstr)) != DB_OK)
		return st;
	*committed = n > 0;
	return DB_OK;
}

/* Set when cronguard_finalise (sql/012) cannot be called on this
 * server: finalise statement by statement from then on. */
static atomic_int fin_no_call;

/*
 * The finalise with its attempt rows in one round trip: CALL
 * cronguard_finalise (sql/012), which runs the fenced DELETE and UPDATE
 * and, when they matched every row of the claim, the attempt rows, in one
 * transaction.  *done: it committed.  Not done (a row was lost, or no
 * procedure): the caller finalises statement by statement, which finds
 * the lost rows.  A reply lost after the COMMIT is told by
 * fin_committed.
 */
static enum db_status
fin_call(struct db *db, struct fin_args *a, bool *done, char **errstr)
{
	struct db_result *res = NULL;
	struct buf        ins;
	enum db_status    st = DB_OK;
	const char       *v;
	size_t            nins;
	unsigned          e;

	*done = false;
	buf_init(&ins);
	if (fin_no_call)
		goto out;
	if (attempt_sql(db, a->conf, a->c, NULL, 0, &ins, &nins, errstr) != 0) {
		st = DB_ERR_QUERY;
		goto out;
	}
	faultpoint("mid_finalise");
	st = db_call_checked(db, &res, fin_committed, a, errstr,
	    "CALL cronguard_finalise(%s, %s, %llu, %s)", buf_str(&a->del),
	    buf_str(&a->upd), (unsigned long long)a->c->n, buf_str(&ins));
	if ((st == DB_ERR_QUERY || st == DB_ERR_PRIVILEGE) &&
	    ((e = db_errno(db)) == ER_SP_DOES_NOT_EXIST ||
	        e == ER_PROCACCESS_DENIED_ERROR)) {
		log_kv(LOG_WARN, "outbox_finalise_statements", "error", *errstr,
		    "msg",
		    e == ER_SP_DOES_NOT_EXIST
		        ? "run cronguard db migrate: a finalise with the "
		          "attempt log costs three more statements (four with "
		          "keep_sent off) until then"
		        : "GRANT EXECUTE on the schema: a finalise with the "
		          "attempt log costs three more statements (four with "
		          "keep_sent off) until then");
		fin_no_call = 1;
		free(*errstr);
		*errstr = NULL;
		st = DB_OK;
		goto out;
	}
	if (st != DB_OK)
		goto out;
	/* No result: the reply was lost and fin_committed found it done. */
	v = res != NULL ? db_cell(res, 0, 0) : "1";
	*done = v != NULL && strcmp(v, "1") == 0;
out:
	db_result_free(res);
	buf_free(&ins);
	return st;
}

/*
 * Every channel's error text (a server's reply, a response body, a
 * library's message) made valid, bounded UTF-8 here, before any of it is
 * written to last_error or the attempt log, logged or printed: a byte the
 * column refuses would fail the whole batch's finalise and leave every
 * row of it PROCESSING, to be sent again after the lease.
 */
static void
outbox_peer_errors(struct claim *c)
{
	char  *clean;
	size_t i;

	for (i = 0; i < c->n; i++) {
		if (c->msgs[i]->error == NULL)
			continue;
		clean = peer_text(c->msgs[i]->error, strlen(c->msgs[i]->error),
		    PEER_TEXT_MAX);
		free(c->msgs[i]->error);
		c->msgs[i]->error = clean;
	}
}

/* The claim's statements into a: the rows it deletes (sent, without
 * keep_sent) and the fenced DELETE; the others' new values into rows
 * (c->n of them; a->nrows used) and the one fenced UPDATE; a->txn when
 * an attempt row is to be written.  DB_ERR_QUERY when a statement
 * cannot be built. */
static enum db_status
fin_statements(struct db *db, struct fin_args *a, struct fin_row *rows,
    int64_t now, char **errstr)
{
	const struct conf_outbox *conf = a->conf;
	struct claim             *c = a->c;
	size_t                    i, k, nrows = 0;

	a->rowids = xcalloc(c->n, sizeof *a->rowids);
	a->delids = xcalloc(c->n, sizeof *a->delids);
	a->deleted = xcalloc(c->n, 1);
	for (i = 0; i < c->n; i++) {
		if (attempt_outcome(conf, c->msgs[i]) != NULL)
			a->txn = true;
		if (!conf->keep_sent && c->msgs[i]->result == SEND_OK) {
			a->delids[a->ndel++] = c->msgs[i]->id;
			a->deleted[i] = 1;
			continue;
		}
		a->rowids[nrows] = c->msgs[i]->id;
		fin_row_set(db, conf, c->msgs[i], now, &rows[nrows++]);
	}
	a->nrows = nrows;
	if (nrows > 0) {
		buf_adds(&a->update, "UPDATE outbox_messages SET ");
		for (k = 0; k < FIN_NCOLS; k++) {
			if (k > 0)
				buf_adds(&a->update, ", ");
			fin_assign(&a->update, rows, nrows, (enum fin_col)k);
		}
	}
	if (a->ndel > 0 &&
	    db_fragment(db, &a->del, errstr,
	        "DELETE FROM outbox_messages WHERE id IN (%L)"
	        " AND claim_token = %s AND status = 'PROCESSING'",
	        a->ndel, a->delids, c->token) != 0)
		return DB_ERR_QUERY;
	if (nrows > 0 &&
	    db_fragment(db, &a->upd, errstr,
	        "%F WHERE id IN (%L) AND claim_token = %s"
	        " AND status = 'PROCESSING'",
	        &a->update, nrows, a->rowids, c->token) != 0)
		return DB_ERR_QUERY;
	return DB_OK;
}

/* The rows whose finalise matched nothing: another worker holds them,
 * an incident (outbox_lease_lost). */
static void
fin_report_lost(const struct fin_args *a)
{
	struct incident inc;
	struct buf      lost;
	char           *detail;

	buf_init(&lost);
	outbox_idlist(&lost, a->lost, a->nlost);
	detail = xasprintf(
	    "finalise matched nothing for ids %s (claim token %s): another worker holds them; results discarded",
	    lost.data, a->c->token);
	memset(&inc, 0, sizeof inc);
	inc.event = "outbox_lease_lost";
	inc.detail = detail;
	incident_report(&inc);
	free(detail);
	buf_free(&lost);
}

enum db_status
outbox_finalise(struct db *db, const struct conf_outbox *conf, struct claim *c,
    struct outbox_tally *t, char **errstr)
{
	struct fin_row *rows = NULL;
	struct fin_args a;
	enum db_status  st = DB_OK;
	size_t          i, k, nrows = 0;
	int64_t         now = now_mono_ms();
	bool            done;

	memset(&a, 0, sizeof a);
	buf_init(&a.update);
	buf_init(&a.del);
	buf_init(&a.upd);
	if (c->n == 0)
		goto out;
	faultpoint("before_finalise");
	outbox_peer_errors(c);
	a.conf = conf;
	a.c = c;
	rows = xcalloc(c->n, sizeof *rows);
	st = fin_statements(db, &a, rows, now, errstr);
	nrows = a.nrows;
	if (st != DB_OK)
		goto out;
	/* With attempt rows to write, one transaction: an attempt row
	 * exists exactly when its outcome was recorded.  One round trip
	 * (fin_call) unless a row was lost or the procedure is missing. */
	done = false;
	if (a.txn && (st = fin_call(db, &a, &done, errstr)) != DB_OK)
		goto out;
	if (!done)
		st = a.txn
		    ? db_txn_checked(db, fin_write, fin_committed, &a, errstr)
		    : fin_write(db, &a, errstr);
	if (st != DB_OK)
		goto out;
	if (a.nlost > 0)
		fin_report_lost(&a);
	/* What this claim wrote; a lost row counts as lost only. */
	outbox_tally_claim(conf, c, a.lost, a.nlost, t);
out:
	for (i = 0; rows != NULL && i < nrows; i++) {
		for (k = 0; k < FIN_NCOLS; k++)
			free(rows[i].expr[k]);
	}
	free(rows);
	free(a.rowids);
	free(a.delids);
	free(a.deleted);
	free(a.lost);
	buf_free(&a.update);
	buf_free(&a.del);
	buf_free(&a.upd);
	return st;
}
