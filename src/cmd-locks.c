/* cmd-locks.c: "locks", each configured lock and every lock a running
 * cronguard holds, and who holds it. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "db.h"
#include "lock.h"
#include "log.h"
#include "report.h"
#include "runs.h"
#include "util.h"

/* Whether job j takes a database lock (a named lock, a lease, or either
 * as "auto" decides). */
static int
locks_guarded(const struct conf_job *j)
{
	return j->guard == GUARD_NAMED_LOCK || j->guard == GUARD_LEASE ||
	    j->guard == GUARD_AUTO;
}

/* The first job (of several sharing it) that uses lock name. */
static const struct conf_job *
first_user(const struct conf *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->njobs; i++)
		if (locks_guarded(&c->jobs[i]) &&
		    strcmp(c->jobs[i].lock, name) == 0)
			return &c->jobs[i];
	return NULL;
}

/* One line of the table: a configured lock (j set) or one that only the
 * run records know (exec --lock). */
struct locks_row {
	const char            *lock;
	const struct conf_job *j;
	struct lock_holder     h;
	const char            *state;      /* free, held, STUCK */
	unsigned long long     fence;      /* the holder's run's token; 0 */
	unsigned long long     last_fence; /* last issued for lock; 0 */
};

static const char *
locks_row_job(const struct locks_row *r)
{
	if (r->j != NULL)
		return r->j->name;
	return r->h.run_job != NULL ? r->h.run_job : "-";
}

/* free, held, or STUCK: held past max_runtime + grace, or by a session
 * no run accounts for (only with a configuration to judge by). */
static const char *
locks_state(const struct locks_row *r)
{
	char *why = NULL;
	int   stuck;

	if (r->h.connection_id == 0)
		return "free";
	stuck = r->j != NULL &&
	    lock_holder_stuck(
	        &r->h, r->j->max_runtime_ms, r->j->grace_ms, &why);
	free(why);
	return stuck ? "STUCK" : "held";
}

/* The rows in text or JSON (report.c writes both); a run record whose
 * lock is free is a dead run's, not a lock anyone holds. */
static void
print_rows(const struct locks_row *rows, size_t n, int json)
{
	struct report_lock_row *out;
	char                   *text;
	size_t                  i, k = 0;

	out = xcalloc(n + 1, sizeof *out);
	for (i = 0; i < n; i++) {
		if (rows[i].j == NULL && rows[i].h.connection_id == 0)
			continue;
		out[k].lock = rows[i].lock;
		out[k].job = locks_row_job(&rows[i]);
		out[k].state = rows[i].state;
		out[k].h = &rows[i].h;
		out[k].fence = rows[i].fence;
		out[k++].last_fence = rows[i].last_fence;
	}
	text = json ? report_locks_json(out, k) : report_locks_text(out, k);
	fputs(text, stdout);
	free(text);
	free(out);
}

/* The configured locks (once each), then the other locks that running
 * runs hold.  Returns the number of rows in *rows. */
static size_t
locks_rows(const struct conf *c, const struct db_result *running,
    struct locks_row **rows)
{
	const struct conf_job *j;
	const char            *name;
	size_t                 i, n = 0;

	*rows = xcalloc(c->njobs + running->nrows + 1, sizeof **rows);
	for (i = 0; i < c->njobs; i++) {
		j = &c->jobs[i];
		if (!locks_guarded(j) || first_user(c, j->lock) != j)
			continue;
		(*rows)[n].lock = j->lock;
		(*rows)[n++].j = j;
	}
	for (i = 0; i < running->nrows; i++) {
		if ((name = db_cell(running, i, 0)) == NULL ||
		    first_user(c, name) != NULL)
			continue;
		(*rows)[n++].lock = name;
	}
	return n;
}

/* Whether row r's holder is its lease's: a lease job's always (its
 * lease row), an "auto" job's when the named lock is free (a Galera
 * node takes a lease). */
static int
locks_row_lease(const struct locks_row *r)
{
	if (r->j == NULL)
		return 0;
	return r->j->guard == GUARD_LEASE ||
	    (r->j->guard == GUARD_AUTO && r->h.connection_id == 0);
}

/*
 * Fill the n rows: their holders, states and fencing tokens.  The named
 * locks' holders are one statement, the fencing tokens another, whatever
 * the number of locks; a lease's holder is a statement of its own
 * (lease.c).
 */
static enum db_status
locks_rows_get(struct db *db, struct locks_row *rows, size_t n, char **errstr)
{
	struct lock_holder *h;
	const char        **names;
	unsigned long long *ids, *held, *last;
	size_t             *idx, i, k = 0;
	enum db_status      st;

	names = xcalloc(n + 1, sizeof *names);
	idx = xcalloc(n + 1, sizeof *idx);
	h = xcalloc(n + 1, sizeof *h);
	ids = xcalloc(n + 1, sizeof *ids);
	held = xcalloc(n + 1, sizeof *held);
	last = xcalloc(n + 1, sizeof *last);
	for (i = 0; i < n; i++) {
		if (rows[i].j != NULL && rows[i].j->guard == GUARD_LEASE)
			continue;
		idx[k] = i;
		names[k++] = rows[i].lock;
	}
	if ((st = lock_holders_get(db, names, k, h, errstr)) != DB_OK)
		goto out;
	for (i = 0; i < k; i++) {
		rows[idx[i]].h = h[i];
		memset(&h[i], 0, sizeof h[i]);
	}
	for (i = 0; i < n; i++) {
		if (!locks_row_lease(&rows[i]))
			continue;
		lock_holder_free(&rows[i].h);
		if ((st = lock_lease_holder_get(
		         db, rows[i].lock, &rows[i].h, errstr)) != DB_OK)
			goto out;
	}
	for (i = 0; i < n; i++) {
		rows[i].state = locks_state(&rows[i]);
		names[i] = rows[i].lock;
		ids[i] = rows[i].h.run_id;
	}
	if ((st = runs_lock_fences(db, names, ids, n, held, last, errstr)) !=
	    DB_OK)
		goto out;
	for (i = 0; i < n; i++) {
		rows[i].fence = held[i];
		rows[i].last_fence = last[i];
	}
out:
	for (i = 0; i < k; i++)
		lock_holder_free(&h[i]);
	free(h);
	free(names);
	free(idx);
	free(ids);
	free(held);
	free(last);
	return st;
}

static int
cmd_locks_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct db        *db = ctx->db;
	const int        *json = ctx->state;
	struct db_result *running = NULL;
	struct locks_row *rows = NULL;
	char             *errstr = NULL;
	enum db_status    st;
	int               rc = EXIT_OK;
	size_t            i, n = 0;

	if ((st = runs_locks(db, &running, &errstr)) != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	n = locks_rows(c, running, &rows);
	if ((st = locks_rows_get(db, rows, n, &errstr)) != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	print_rows(rows, n, *json);
out:
	for (i = 0; i < n; i++)
		lock_holder_free(&rows[i].h);
	free(rows);
	db_result_free(running);
	free(errstr);
	return rc;
}

const struct cmd_entry cmd_locks_entry = {
	.name = "locks",
	.usage = "[--format text|json]",
	.summary =
	    "Show each configured lock name and every other lock a running cronguard holds (exec --lock), whether it is held, by which connection and run, since when, and the holder's fencing token.",
	.options = cmd_format_template,
	.flags = CMD_NEEDS_DB | CMD_READS_ONLY | CMD_OPENS_DB,
	.check = cmd_format_check,
	.state_size = sizeof(int),
	.exec = cmd_locks_exec,
};
