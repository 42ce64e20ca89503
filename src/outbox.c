/*
 * outbox.c: the outbox rows' state machine: claim and recover (the
 * finalise is outbox-finalise.c).
 *
 * The dispatcher's session runs READ COMMITTED (dispatch_run sets it):
 * a locking range read then takes no gap locks that would block the
 * applications' INSERTs, and rows it skips are unlocked at once.
 *
 * UPDATE assignments are evaluated left to right on MySQL and MariaDB, so
 * a status computed from attempts is assigned before attempts changes.
 */
#include "config.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysqld_error.h>

#include "faultpoint.h"
#include "log.h"
#include "outbox.h"
#include "outbox-int.h"
#include "util.h"

void
outbox_idlist(struct buf *b, const unsigned long long *ids, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf_printf(b, "%s%llu", i ? "," : "", ids[i]);
}

unsigned long long *
claim_id_array(const struct claim *c)
{
	unsigned long long *ids = xcalloc(c->n + 1, sizeof *ids);
	size_t              i;

	for (i = 0; i < c->n; i++)
		ids[i] = c->msgs[i]->id;
	return ids;
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

int
outbox_blocking_sql(struct db *db, const struct conf_outbox *conf,
    const char *e, const char *o, int failed_only, struct buf *sql,
    char **errstr)
{
	struct buf skip;
	size_t     i, nskip = 0;
	int        rc = -1;

	buf_init(&skip);
	for (i = 0; i < conf->nchans; i++) {
		if (conf->chans[i].on_failure != ON_FAILURE_SKIP)
			continue;
		if (nskip++ > 0)
			buf_addc(&skip, ',');
		if (db_fragment(db, &skip, errstr, "%s", conf->chans[i].name) !=
		    0)
			goto out;
	}
	buf_printf(sql, "%s.ordering_key = %s.ordering_key AND %s.id < %s.id",
	    e, o, e, o);
	if (conf->ordering_scope == SCOPE_CHANNEL)
		buf_printf(sql, " AND %s.channel = %s.channel", e, o);
	/* A channel with on_failure = "skip" leaves its FAILED rows out; an
	 * unknown channel's FAILED row holds its key, as the default. */
	if (failed_only && nskip == 0)
		buf_printf(sql, " AND %s.status = 'FAILED'", e);
	else if (failed_only)
		buf_printf(sql,
		    " AND %s.status = 'FAILED' AND %s.channel NOT IN (%s)", e,
		    e, skip.data);
	else if (nskip == 0)
		buf_printf(sql,
		    " AND %s.status IN ('PENDING','PROCESSING','FAILED')", e);
	else
		buf_printf(sql,
		    " AND (%s.status IN ('PENDING','PROCESSING') OR"
		    " (%s.status = 'FAILED' AND %s.channel NOT IN (%s)))",
		    e, e, e, skip.data);
	rc = 0;
out:
	buf_free(&skip);
	return rc;
}

/* The rows that pause a channel fleet-wide, now. */
static const char outbox_paused_sql[] =
    "SELECT channel FROM cronguard_channel_pauses"
    " WHERE until_at IS NULL OR until_at > NOW(6)";

/* The ordering index of the scope: ix_outbox_ordering_channel (sql/011)
 * or, with the global scope, ix_outbox_ordering_status (sql/005). */
static const char *
outbox_ordering_index(const struct conf_outbox *conf)
{
	return conf->ordering_scope == SCOPE_CHANNEL
	    ? "ix_outbox_ordering_channel"
	    : "ix_outbox_ordering_status";
}

/* " FROM outbox_messages a FORCE INDEX (the ordering index) WHERE ". */
static void
outbox_from_sql(const struct conf_outbox *conf, const char *a, struct buf *b)
{
	buf_printf(b, " FROM outbox_messages %s FORCE INDEX (%s) WHERE ", a,
	    outbox_ordering_index(conf));
}

/* outbox_from_sql, then "a in o's key and scope". */
static void
outbox_scope_sql(const struct conf_outbox *conf, const char *a, struct buf *b)
{
	outbox_from_sql(conf, a, b);
	buf_printf(b, "%s.ordering_key = o.ordering_key", a);
	if (conf->ordering_scope == SCOPE_CHANNEL)
		buf_printf(b, " AND %s.channel = o.channel", a);
}

/* The id of the first (dir "") or last (" DESC") row of o's key and
 * scope with status (either end of the key's rows), or 0: one dive into the
 * ordering index, reading one entry. */
static void
outbox_key_end_sql(const struct conf_outbox *conf, const char *status,
    const char *dir, struct buf *b)
{
	buf_adds(b, "COALESCE((SELECT f.id");
	outbox_scope_sql(conf, "f", b);
	buf_printf(b,
	    " AND f.status = '%s' ORDER BY f.id%s LIMIT 1), CAST(0 AS UNSIGNED))",
	    status, dir);
}

struct claim_args {
	const struct conf_outbox  *conf;
	const struct buf          *sql; /* outbox_claim_sql */
	struct claim              *c;
	long long                  budget; /* payload bytes; <= 0: no limit */
	const struct claim_follow *follow; /* or NULL */
};

/* The row's end: expires_at, else created_at plus its channel's ttl,
 * else none (NULL compares as not expired).  Returns 0, or -1. */
static int
claim_ttl_sql(struct db *db, const struct conf_outbox *conf, struct buf *ttl,
    char **errstr)
{
	size_t i, nttl = 0;

	buf_adds(ttl, "COALESCE(o.expires_at");
	for (i = 0; i < conf->nchans; i++) {
		if (conf->chans[i].ttl_ms <= 0)
			continue;
		if (db_fragment(db, ttl, errstr,
		        "%R%s THEN o.created_at + INTERVAL %lld MICROSECOND",
		        nttl++ == 0 ? ", CASE o.channel WHEN " : " WHEN ",
		        conf->chans[i].name,
		        (long long)conf->chans[i].ttl_ms * 1000) != 0)
			return -1;
	}
	buf_adds(ttl, nttl > 0 ? " END)" : ")");
	return 0;
}

/*
 * Per-key ordering (doc/architecture.md, "Ordering and runs of a key").
 * The WHERE (order) leaves out a keyed row when an earlier FAILED row
 * holds its key, or when its key's last PROCESSING row is not one of
 * follow's keyed rows in flight (none without a follow): that row is
 * another dispatcher's, or a claim's that is gone.  The HAVING (having)
 * then keeps a keyed row while it is its key's first PENDING row
 * (cg_pend, column 11), or that row comes before it in the walk (due no
 * later: so the walk meets a key's first row before the rows that follow
 * it) and, with the global scope, is of a channel this claim serves (in)
 * and not paused.  So the statement keeps what claim_runs can keep, from
 * columns 11 and 12 (the key's last PROCESSING row): the rows that follow
 * on from the key's open rows or from this dispatcher's in flight.  A
 * row the HAVING leaves out stays locked until the claim commits; no
 * other claim could take it meanwhile, its key's first row being due
 * later or not this claim's to take.  The ids are compared as integers
 * (CAST): a COALESCE of an id and 0 would be a DECIMAL.  Every subquery
 * is one dive into ix_outbox_ordering_channel (sql/011) or, with the
 * global scope, ix_outbox_ordering_status (sql/005), reading one entry:
 * never a walk over the key's backlog or its SENT history (doctor's
 * EXPLAIN, t0440, t1126); the first PENDING row's due time is read only
 * for a row that is not its key's first.  Returns 0, or -1.
 */
static int
claim_order_sql(struct db *db, const struct conf_outbox *conf,
    const struct buf *in, const struct claim_follow *follow, struct buf *order,
    struct buf *prev, struct buf *having, char **errstr)
{
	unsigned long long *held = NULL;
	size_t              nheld = 0;

	if (conf->ordering != ORDERING_PER_KEY) {
		buf_adds(prev, "0, 0");
		return 0;
	}
	buf_adds(order,
	    " AND (o.ordering_key IS NULL OR (NOT EXISTS ("
	    "SELECT 1");
	outbox_from_sql(conf, "e", order);
	if (outbox_blocking_sql(db, conf, "e", "o", 1, order, errstr) != 0)
		return -1;
	buf_adds(order, ") AND CAST(");
	outbox_key_end_sql(conf, "PROCESSING", " DESC", order);
	buf_adds(order, " AS SIGNED) IN (0");
	if (follow != NULL && follow->keyed != NULL)
		held = follow->keyed(follow->arg, &nheld);
	if (nheld > 0) {
		buf_addc(order, ',');
		outbox_idlist(order, held, nheld);
	}
	free(held);
	buf_adds(order, ")))");
	buf_adds(prev, "IF(o.ordering_key IS NULL, CAST(0 AS UNSIGNED), ");
	outbox_key_end_sql(conf, "PENDING", "", prev);
	buf_adds(prev,
	    ") AS cg_pend, IF(o.ordering_key IS NULL, CAST(0 AS UNSIGNED), ");
	outbox_key_end_sql(conf, "PROCESSING", " DESC", prev);
	buf_adds(prev, ")");
	buf_adds(having,
	    " HAVING o.ordering_key IS NULL OR cg_pend = o.id OR"
	    " COALESCE((SELECT h.next_attempt_at <= o.next_attempt_at");
	if (conf->ordering_scope == SCOPE_GLOBAL &&
	    db_fragment(db, having, errstr,
	        " AND h.channel IN (%F) AND h.channel NOT IN (%R)", in,
	        outbox_paused_sql) != 0)
		return -1;
	outbox_scope_sql(conf, "h", having);
	buf_adds(
	    having, " AND h.status = 'PENDING' ORDER BY h.id LIMIT 1), FALSE)");
	return 0;
}

int
outbox_claim_sql(struct db *db, const struct conf_outbox *conf,
    const char *const *channels, size_t nchannels, unsigned limit,
    const struct outbox_cursor *cur, const struct claim_follow *follow,
    struct buf *sql, char **errstr)
{
	struct buf in, after, order, ttl, prev, having;
	size_t     i;
	long long  inline_max;
	int        rc = -1;

	buf_init(&in);
	buf_init(&after);
	buf_init(&order);
	buf_init(&ttl);
	buf_init(&prev);
	buf_init(&having);
	if (claim_ttl_sql(db, conf, &ttl, errstr) != 0)
		goto out;
	for (i = 0; i < nchannels; i++) {
		if (i > 0)
			buf_addc(&in, ',');
		if (db_fragment(db, &in, errstr, "%s", channels[i]) != 0)
			goto out;
	}
	if (nchannels == 0)
		buf_adds(&in, "NULL");
	if (cur != NULL && cur->set &&
	    db_fragment(db, &after, errstr,
	        " AND (o.next_attempt_at > %s OR (o.next_attempt_at = %s"
	        " AND o.id > %llu))",
	        cur->at, cur->at, cur->id) != 0)
		goto out;
	if (claim_order_sql(
	        db, conf, &in, follow, &order, &prev, &having, errstr) != 0)
		goto out;
	/* FORCE INDEX: with the cursor the optimizer otherwise picks a ref
	 * on status alone, which walks every delete-marked entry. */
	/* A payload larger than its share of max_batch_bytes is read only
	 * for a row the claim keeps (claim_big). */
	inline_max = conf->max_batch_bytes > 0 && limit > 0
	    ? conf->max_batch_bytes / (long long)limit
	    : LLONG_MAX;
	rc = db_fragment(db, sql, errstr,
	    "SELECT o.id, o.message_id, o.channel, o.event_type,"
	    " o.ordering_key, IF(LENGTH(o.payload) <= %lld, o.payload, NULL),"
	    " o.attempts, FLOOR(UNIX_TIMESTAMP(o.created_at)),"
	    " o.next_attempt_at, LENGTH(o.payload),"
	    " COALESCE(%F <= NOW(6), FALSE), %F,"
	    " TIMESTAMPDIFF(MICROSECOND, NOW(6), %F)"
	    " FROM outbox_messages o FORCE INDEX (ix_outbox_due)"
	    " WHERE o.status = 'PENDING' AND o.next_attempt_at <= NOW(6)%F"
	    " AND o.channel IN (%F)%F"
	    " AND o.channel NOT IN (%R)%F"
	    " ORDER BY o.next_attempt_at, o.id LIMIT %u"
	    " FOR UPDATE SKIP LOCKED",
	    inline_max, &ttl, &prev, &ttl, &after, &in, &order,
	    outbox_paused_sql, &having, limit);
out:
	buf_free(&in);
	buf_free(&after);
	buf_free(&order);
	buf_free(&ttl);
	buf_free(&prev);
	buf_free(&having);
	return rc;
}

static void
claim_reset(struct claim *c)
{
	size_t i;

	for (i = 0; c->storage != NULL && i < c->n; i++)
		free(c->storage[i].error);
	db_result_free(c->res);
	db_result_free(c->big);
	c->big = NULL;
	c->bytes = 0;
	free(c->storage);
	free(c->msgs);
	free(c->expired);
	c->res = NULL;
	c->storage = NULL;
	c->msgs = NULL;
	c->expired = NULL;
	c->n = 0;
	c->nexpired = 0;
	c->dropped = 0;
}

/* How many of the locked rows to keep: in order, while their payloads
 * fit in budget, and the first one in any case. */
static size_t
claim_cut(
    const struct db_result *r, long long budget, unsigned long long *bytes)
{
	unsigned long long sum = 0, len;
	const char        *e;
	size_t             i;

	for (i = 0; i < r->nrows; i++) {
		if (r->rows[i][9] == NULL ||
		    parse_ull(r->rows[i][9], UINT64_MAX, &len, &e) != 0)
			len = 0;
		if (budget > 0 && i > 0 &&
		    sum + len > (unsigned long long)budget)
			break;
		sum += len;
	}
	*bytes = sum;
	return i;
}

/* Read the payloads the locking SELECT left out (larger than their share
 * of the budget) for the rows kept, and point their messages at them. */
static enum db_status
claim_big(struct db *db, struct claim *c, char **errstr)
{
	unsigned long long *ids, id;
	enum db_status      st;
	const char         *e;
	size_t              i, j, n = 0;

	ids = xcalloc(c->n + 1, sizeof *ids);
	for (i = 0; i < c->n; i++) {
		if (c->msgs[i]->payload == NULL)
			ids[n++] = c->msgs[i]->id;
	}
	st = DB_OK;
	if (n == 0)
		goto out;
	st = db_query(db, &c->big, errstr,
	    "SELECT id, payload FROM outbox_messages WHERE id IN (%L)", n, ids);
	if (st != DB_OK)
		goto out;
	for (j = 0; j < c->big->nrows; j++) {
		if (c->big->rows[j][0] == NULL ||
		    parse_ull(c->big->rows[j][0], UINT64_MAX, &id, &e) != 0)
			continue;
		for (i = 0; i < c->n; i++) {
			if (c->msgs[i]->id != id || c->big->rows[j][1] == NULL)
				continue;
			c->msgs[i]->payload = c->big->rows[j][1];
			c->msgs[i]->payload_len = c->big->lengths[j][1];
		}
	}
out:
	/* A row is locked, so its payload was there; never hand on NULL. */
	for (i = 0; i < c->n; i++) {
		if (c->msgs[i]->payload == NULL)
			c->msgs[i]->payload = "";
	}
	free(ids);
	return st;
}

/* A keyed result row, for claim_runs. */
struct claim_row {
	unsigned long long id;
	unsigned long long pending; /* its key's first PENDING row */
	unsigned long long last;    /* its key's last PROCESSING row, or 0 */
	const char        *key;
	const char        *scope; /* its channel, or "" (global scope) */
	size_t             i;     /* row in the result */
};

/* What claim_runs decides for each result row. */
struct claim_run {
	int      keep;
	unsigned run;   /* place in its key's run, 0 for the first */
	size_t   after; /* the result row before it in its run, or SIZE_MAX */
	const struct outbox_msg *ext; /* or the in-flight row it follows */
};

static int
claim_row_cmp(const void *a, const void *b)
{
	const struct claim_row *x = a, *y = b;
	int                     c;

	if ((c = strcmp(x->key, y->key)) != 0 ||
	    (c = strcmp(x->scope, y->scope)) != 0)
		return c;
	return x->id < y->id ? -1 : x->id > y->id;
}

static unsigned long long
claim_cell_id(const struct db_result *r, size_t i, size_t col)
{
	unsigned long long v;
	const char        *e;

	if (r->rows[i][col] == NULL ||
	    parse_ull(r->rows[i][col], UINT64_MAX, &v, &e) != 0)
		return 0;
	return v;
}

/*
 * The open (PENDING or PROCESSING) rows of the runs rows[from[k]..to[k])
 * between each run's first and last id: one statement for all of them,
 * ranges on the ordering index.  Returned sorted as claim_row_cmp sorts.
 */
static enum db_status
claim_open_rows(struct db *db, const struct conf_outbox *conf,
    const struct claim_row *rows, const size_t *from, const size_t *to,
    size_t nruns, struct db_result **res, struct claim_row **open,
    char **errstr)
{
	struct buf     where;
	enum db_status st = DB_ERR_QUERY;
	size_t         k, i;
	int            rc = 0;

	*open = NULL;
	buf_init(&where);
	for (k = 0; k < nruns && rc == 0; k++) {
		rc = db_fragment(db, &where, errstr,
		    "%R(ordering_key = %s AND status IN ('PENDING','PROCESSING')"
		    " AND id BETWEEN %llu AND %llu",
		    k > 0 ? " OR " : "", rows[from[k]].key, rows[from[k]].id,
		    rows[to[k] - 1].id);
		if (rc == 0 && conf->ordering_scope == SCOPE_CHANNEL)
			rc = db_fragment(db, &where, errstr,
			    " AND channel = %s", rows[from[k]].scope);
		buf_addc(&where, ')');
	}
	if (rc != 0)
		goto out;
	st = db_query(db, res, errstr,
	    "SELECT id, ordering_key, channel FROM outbox_messages"
	    " FORCE INDEX (%R) WHERE %F",
	    outbox_ordering_index(conf), &where);
	if (st != DB_OK)
		goto out;
	*open = xcalloc((*res)->nrows + 1, sizeof **open);
	for (i = 0; i < (*res)->nrows; i++) {
		(*open)[i].id = claim_cell_id(*res, i, 0);
		(*open)[i].key =
		    (*res)->rows[i][1] != NULL ? (*res)->rows[i][1] : "";
		(*open)[i].scope = conf->ordering_scope == SCOPE_CHANNEL &&
		        (*res)->rows[i][2] != NULL
		    ? (*res)->rows[i][2]
		    : "";
	}
	qsort(*open, (*res)->nrows, sizeof **open, claim_row_cmp);
out:
	buf_free(&where);
	return st;
}

/*
 * The in-flight message that row, the first of its key in the claim,
 * follows, or NULL.  Only when it is its key's first PENDING row, every
 * open row before it is PROCESSING (the walk let it through, so the
 * first of them is this dispatcher's) and the last of them is one of
 * follow's messages, of the same key and channel.  A row after one of
 * another channel is left out, as within a claim.
 */
static const struct outbox_msg *
claim_follows(const struct db_result *r, const struct claim_follow *follow,
    const struct claim_row *row)
{
	const struct outbox_msg *x;

	if (follow == NULL || row->id != row->pending || row->last == 0 ||
	    row->last >= row->id)
		return NULL;
	x = follow->find(follow->arg, row->last);
	if (x == NULL || x->ordering_key == NULL ||
	    strcmp(x->ordering_key, row->key) != 0 ||
	    strcmp(x->channel, r->rows[row->i][2]) != 0)
		return NULL;
	return x;
}

/*
 * Which of the first n result rows the claim keeps (doc/architecture.md,
 * "Ordering and runs of a key").  An unkeyed row always.  The keyed rows
 * of one key and scope, in id order, from the first while they are
 * exactly the key's open rows: the first must be the key's first open row
 * (its first PENDING row, column 11, with no PROCESSING row, column 12) or
 * follow follow's row in flight (claim_follows), and when there are
 * more, one statement
 * (claim_open_rows) reads the open rows between the first and the last,
 * which must be these rows and no other (a row another claim holds, one
 * not due, one this claim does not serve).  A run stops after an expired
 * row and, with the global scope, at a change of channel.  Anything left
 * out stays PENDING for a later claim.  Sets *dropped to how many.
 */
/* Every result row kept as it stands; the keyed ones (per_key ordering)
 * into rows, sorted by key, scope and id.  Returns how many. */
static size_t
claim_keyed_rows(const struct conf_outbox *conf, const struct db_result *r,
    size_t n, struct claim_run *out, struct claim_row *rows)
{
	size_t i, nk = 0;

	for (i = 0; i < n; i++) {
		out[i].keep = 1;
		out[i].run = 0;
		out[i].after = SIZE_MAX;
		out[i].ext = NULL;
		if (conf->ordering != ORDERING_PER_KEY || r->rows[i][4] == NULL)
			continue;
		rows[nk].i = i;
		rows[nk].id = claim_cell_id(r, i, 0);
		rows[nk].key = r->rows[i][4];
		rows[nk].scope = conf->ordering_scope == SCOPE_CHANNEL &&
		        r->rows[i][2] != NULL
		    ? r->rows[i][2]
		    : "";
		rows[nk].pending = claim_cell_id(r, i, 11);
		rows[nk].last = claim_cell_id(r, i, 12);
		nk++;
	}
	qsort(rows, nk, sizeof *rows, claim_row_cmp);
	return nk;
}

/* Each key's run: from its first open row (or following follow's row in
 * flight), while the previous row is not expired and (global scope) of
 * the same channel; the rest of the key is left out.  The runs of more
 * than one row, rows[from[k]..to[k]), for claim_open_rows.  Returns how
 * many. */
static size_t
claim_run_ends(const struct db_result *r, const struct claim_follow *follow,
    const struct claim_row *rows, size_t nk, struct claim_run *out,
    size_t *from, size_t *to)
{
	const struct outbox_msg *x;
	size_t                   i, j, k, o, nruns = 0;

	for (i = 0; i < nk; i = j) {
		for (j = i + 1;
		     j < nk && strcmp(rows[j].key, rows[i].key) == 0 &&
		     strcmp(rows[j].scope, rows[i].scope) == 0;
		     j++)
			;
		k = i;
		if (rows[i].id == rows[i].pending && rows[i].last == 0)
			k = i + 1; /* the key's first open row */
		else if ((x = claim_follows(r, follow, &rows[i])) != NULL) {
			out[rows[i].i].ext = x;
			out[rows[i].i].run = x->run + 1;
			k = i + 1;
		}
		while (k > i && k < j &&
		    db_parse_bool(r->rows[rows[k - 1].i][10]) != 1 &&
		    strcmp(r->rows[rows[k].i][2], r->rows[rows[k - 1].i][2]) ==
		        0)
			k++;
		for (o = k; o < j; o++)
			out[rows[o].i].keep = 0;
		if (k - i > 1) {
			from[nruns] = i;
			to[nruns++] = k;
		}
	}
	return nruns;
}

/* The open rows between each run's first and last (open, no of them,
 * sorted as rows) must be the run: cut it at the first other one, and
 * chain the rest, each after the one before it. */
static void
claim_run_chain(const struct claim_row *rows, const size_t *from,
    const size_t *to, size_t nruns, const struct claim_row *open, size_t no,
    struct claim_run *out)
{
	size_t i, k, o;

	for (k = 0, o = 0; k < nruns; k++) {
		while (o < no && claim_row_cmp(&open[o], &rows[from[k]]) < 0)
			o++;
		for (i = from[k]; i < to[k]; i++, o++) {
			if (o >= no || open[o].id != rows[i].id ||
			    strcmp(open[o].key, rows[i].key) != 0)
				break;
			if (i > from[k]) {
				out[rows[i].i].run = out[rows[i - 1].i].run + 1;
				out[rows[i].i].after = rows[i - 1].i;
			}
		}
		for (; i < to[k]; i++)
			out[rows[i].i].keep = 0;
	}
}

static enum db_status
claim_runs(struct db *db, const struct conf_outbox *conf,
    const struct claim_follow *follow, const struct db_result *r, size_t n,
    struct claim_run *out, size_t *dropped, char **errstr)
{
	struct claim_row *rows, *open = NULL;
	struct db_result *ores = NULL;
	size_t           *from, *to, nk, nruns, i, no = 0;
	enum db_status    st = DB_OK;

	*dropped = 0;
	rows = xcalloc(n + 1, sizeof *rows);
	from = xcalloc(n + 1, sizeof *from);
	to = xcalloc(n + 1, sizeof *to);
	nk = claim_keyed_rows(conf, r, n, out, rows);
	nruns = claim_run_ends(r, follow, rows, nk, out, from, to);
	if (nruns > 0) {
		st = claim_open_rows(
		    db, conf, rows, from, to, nruns, &ores, &open, errstr);
		if (st != DB_OK)
			goto out;
		no = ores->nrows;
	}
	claim_run_chain(rows, from, to, nruns, open, no, out);
	for (i = 0; i < n; i++)
		*dropped += !out[i].keep;
out:
	db_result_free(ores);
	free(open);
	free(rows);
	free(from);
	free(to);
	return st;
}

/* Messages in the order of their runs, then of the claim (storage). */
static int
claim_msg_cmp(const void *a, const void *b)
{
	const struct outbox_msg *x = *(const struct outbox_msg *const *)a;
	const struct outbox_msg *y = *(const struct outbox_msg *const *)b;

	if (x->run != y->run)
		return x->run < y->run ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Fill the messages from the claim's first n result rows that claim_runs
 * keeps; the expired ones go to c->expired instead.  Each message of a
 * run points at the one before it, and msgs are ordered by run, so a
 * message never comes before the one it follows. */
static int
claim_fill(
    struct claim *c, size_t n, const struct claim_run *runs, char **errstr)
{
	struct db_result  *r = c->res;
	struct outbox_msg *m, **at;
	unsigned long long id;
	const char        *e;
	long long          v;
	size_t             i;
	int                rc = -1;

	c->n = 0;
	c->storage = xcalloc(n + 1, sizeof *c->storage);
	c->msgs = xcalloc(n + 1, sizeof *c->msgs);
	c->expired = xcalloc(n + 1, sizeof *c->expired);
	at = xcalloc(n + 1, sizeof *at); /* result row -> its message */
	for (i = 0; i < n; i++) {
		if (!runs[i].keep)
			continue;
		if (r->rows[i][0] == NULL ||
		    parse_ull(r->rows[i][0], UINT64_MAX, &id, &e) != 0) {
			*errstr = xstrdup("claim failed: bad id");
			goto out;
		}
		if (db_parse_bool(r->rows[i][10]) == 1) {
			c->expired[c->nexpired++] = id;
			continue;
		}
		m = at[i] = &c->storage[c->n];
		c->msgs[c->n++] = m;
		m->id = id;
		m->run = runs[i].run;
		snprintf(m->message_id, sizeof m->message_id, "%s",
		    r->rows[i][1] != NULL ? r->rows[i][1] : "");
		m->channel = r->rows[i][2];
		m->event_type = r->rows[i][3];
		m->ordering_key = r->rows[i][4];
		/* NULL: too large for the locking SELECT, read by claim_big. */
		m->payload = r->rows[i][5];
		m->payload_len = r->rows[i][5] != NULL ? r->lengths[i][5] : 0;
		if (r->rows[i][6] == NULL ||
		    parse_ll(r->rows[i][6], 0, UINT32_MAX, &v, &e) != 0) {
			*errstr = xstrdup("claim failed: bad attempts");
			goto out;
		}
		m->attempts = (unsigned)v;
		if (r->rows[i][7] != NULL &&
		    parse_ll(r->rows[i][7], 0, INT64_MAX, &v, &e) == 0)
			m->created_at_s = v;
		/* Its end by the database clock, on this host's monotonic
		 * clock: the time left at the claim's NOW(6), counted from
		 * just before the claim was sent (early rather than late). */
		if (r->rows[i][13] != NULL &&
		    parse_ll(r->rows[i][13], LLONG_MIN, LLONG_MAX, &v, &e) == 0)
			m->expires_ms = c->claimed_ms + v / 1000;
		m->result = SEND_NONE;
	}
	/* A run's rows come in id order, so its row before is kept. */
	for (i = 0; i < n; i++) {
		if (at[i] != NULL && runs[i].after != SIZE_MAX)
			at[i]->after = at[runs[i].after];
		else if (at[i] != NULL)
			at[i]->after = runs[i].ext;
	}
	qsort(c->msgs, c->n, sizeof *c->msgs, claim_msg_cmp);
	rc = 0;
out:
	free(at);
	return rc;
}

/* last_error of a row that expired before it was sent (claimed or not). */
const char outbox_expired_sql[] =
    "IF(expires_at IS NULL,"
    " 'expired: its channel''s ttl passed before it was sent',"
    " CONCAT('expired: expires_at ', expires_at,"
    " ' passed before it was sent'))";

static enum db_status
claim_txn(struct db *db, void *arg, char **errstr)
{
	struct claim_args  *a = arg;
	struct claim       *c = a->c;
	struct claim_run   *runs = NULL;
	struct db_result   *up = NULL;
	unsigned long long *ids = NULL;
	enum db_status      st;
	size_t              n;

	claim_reset(c);
	uuid_v4(c->token);
	c->claimed_ms = now_mono_ms();
	st = db_query(db, &c->res, errstr, "%F", a->sql);
	if (st != DB_OK)
		goto out;
	n = claim_cut(c->res, a->budget, &c->bytes);
	runs = xcalloc(n + 1, sizeof *runs);
	st = claim_runs(
	    db, a->conf, a->follow, c->res, n, runs, &c->dropped, errstr);
	if (st != DB_OK)
		goto out;
	if (claim_fill(c, n, runs, errstr) != 0) {
		st = DB_ERR_QUERY;
		goto out;
	}
	if (c->nexpired > 0) {
		st = db_query(db, NULL, errstr,
		    "UPDATE outbox_messages SET status = 'FAILED',"
		    " claim_token = NULL, last_error = %R"
		    " WHERE id IN (%L) AND status = 'PENDING'",
		    outbox_expired_sql, c->nexpired, c->expired);
		if (st != DB_OK)
			goto out;
	}
	if (c->n == 0)
		goto out;
	if ((st = claim_big(db, c, errstr)) != DB_OK)
		goto out;

	ids = claim_id_array(c);
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
	free(runs);
	return st;
}

/*
 * The claim's COMMIT reply was lost (db_txn_checked): it committed if and
 * only if its token is in the table (the token is fresh for every
 * attempt, and a commit is all or nothing).  Only then are the rows sent;
 * otherwise the claim is made again.  A COMMIT still running on the old
 * session when this looks would leave its rows PROCESSING under a token
 * nobody sends: they wait for the lease, never sent twice.
 */
/* The rows of table (outbox_messages, outbox_attempts) under claim
 * token: how a statement whose COMMIT reply was lost is told done.  Only
 * among the claim's rows (col: id, or outbox_id), so the lookup is on the
 * primary key or ix_attempts_outbox, never a scan for the token. */
enum db_status
outbox_token_rows(struct db *db, const char *table, const char *col,
    const struct claim *c, long long *n, char **errstr)
{
	struct db_result   *res = NULL;
	unsigned long long *ids;
	enum db_status      st;

	ids = claim_id_array(c);
	st = db_query_retry(db, &res, errstr,
	    "SELECT COUNT(*) FROM %I WHERE %I IN (%L) AND claim_token = %s",
	    table, col, c->n, ids, c->token);
	if (st == DB_OK && (st = db_one_row(res, 1, errstr)) == DB_OK &&
	    (*n = db_cell_ll(res, 0, 0, -1)) < 0) {
		*errstr = xasprintf("%s: bad count", table);
		st = DB_ERR_QUERY;
	}
	db_result_free(res);
	free(ids);
	return st;
}

static enum db_status
claim_committed(struct db *db, void *arg, bool *committed, char **errstr)
{
	struct claim_args *a = arg;
	enum db_status     st;
	long long          n = 0;

	*committed = false;
	if ((st = outbox_token_rows(
	         db, "outbox_messages", "id", a->c, &n, errstr)) != DB_OK)
		return st;
	*committed = (unsigned long long)n == a->c->n;
	log_kv(LOG_WARN, "outbox_claim_commit_unknown", "token", a->c->token,
	    "committed", *committed ? "1" : "0");
	return DB_OK;
}

enum db_status
outbox_claim(struct db *db, const struct conf_outbox *conf,
    const char *const *channels, size_t nchannels, unsigned limit,
    struct outbox_cursor *cur, struct claim *c, char **errstr)
{
	return outbox_claim_budget(db, conf, channels, nchannels, limit,
	    conf->max_batch_bytes, NULL, cur, c, errstr);
}

enum db_status
outbox_claim_budget(struct db *db, const struct conf_outbox *conf,
    const char *const *channels, size_t nchannels, unsigned limit,
    long long budget, const struct claim_follow *follow,
    struct outbox_cursor *cur, struct claim *c, char **errstr)
{
	struct claim_args a;
	struct buf        sql;
	enum db_status    st;
	const char       *at, *e;
	char              nexp[32];

	memset(c, 0, sizeof *c);
	if (nchannels == 0 || limit == 0)
		return DB_OK;
	buf_init(&sql);
	if (outbox_claim_sql(db, conf, channels, nchannels, limit, cur, follow,
	        &sql, errstr) != 0) {
		st = DB_ERR_QUERY;
		goto out;
	}
	a.conf = conf;
	a.sql = &sql;
	a.c = c;
	a.budget = budget;
	a.follow = follow;
	st = db_txn_checked(db, claim_txn, claim_committed, &a, errstr);
	if (st != DB_OK)
		claim_reset(c);
	else if (c->n > 0)
		faultpoint("after_claim_commit");
	if (st == DB_OK && c->nexpired > 0) {
		snprintf(nexp, sizeof nexp, "%zu", c->nexpired);
		log_kv(LOG_INFO, "outbox_expired", "count", nexp);
	}
	/* The cursor follows the rows read, expired ones included; not
	 * past rows left out, which the next claim must see again. */
	if (cur != NULL) {
		cur->set = 0;
		if (st == DB_OK && c->res != NULL && c->res->nrows == limit &&
		    c->dropped == 0 &&
		    (at = db_cell(c->res, c->res->nrows - 1, 8)) != NULL &&
		    parse_ull(db_cell(c->res, c->res->nrows - 1, 0), UINT64_MAX,
		        &cur->id, &e) == 0) {
			snprintf(cur->at, sizeof cur->at, "%s", at);
			cur->set = 1;
		}
	}
out:
	buf_free(&sql);
	return st;
}

void
outbox_claim_free(struct claim *c)
{
	claim_reset(c);
}
