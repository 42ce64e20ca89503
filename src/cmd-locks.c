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

/* Fill row r: its holder, state and fencing tokens.  A lease job's
 * holder is its lease row's; an "auto" job's the named lock's, or the
 * lease's when the named lock is free (a Galera node takes a lease). */
static enum db_status
locks_row_get(struct db *db, struct locks_row *r, char **errstr)
{
	enum db_status st;

	if (r->j != NULL && r->j->guard == GUARD_LEASE)
		st = lock_lease_holder_get(db, r->lock, &r->h, errstr);
	else
		st = lock_holder_get(db, r->lock, &r->h, errstr);
	if (st == DB_OK && r->j != NULL && r->j->guard == GUARD_AUTO &&
	    r->h.connection_id == 0) {
		lock_holder_free(&r->h);
		st = lock_lease_holder_get(db, r->lock, &r->h, errstr);
	}
	if (st != DB_OK)
		return st;
	r->state = locks_state(r);
	return runs_lock_fence(
	    db, r->lock, r->h.run_id, &r->fence, &r->last_fence, errstr);
}

static int
cmd_locks_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct db        *db = NULL;
	struct db_result *running = NULL;
	struct locks_row *rows = NULL;
	char             *errstr = NULL;
	enum db_status    st;
	int               json, rc = EXIT_OK;
	size_t            i, n = 0;

	if ((rc = cmd_format_option(ctx, &json)) != 0)
		return rc;
	if ((rc = cmd_db_connect(ctx, c, &db)) != 0)
		goto out;
	if ((st = runs_locks(db, &running, &errstr)) != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	n = locks_rows(c, running, &rows);
	for (i = 0; i < n; i++) {
		if ((st = locks_row_get(db, &rows[i], &errstr)) != DB_OK) {
			rc = cmd_db_error(ctx, st, errstr);
			goto out;
		}
	}
	print_rows(rows, n, json);
out:
	for (i = 0; i < n; i++)
		lock_holder_free(&rows[i].h);
	free(rows);
	db_result_free(running);
	db_close(db);
	free(errstr);
	return rc;
}

const struct cmd_entry cmd_locks_entry = {
	.name = "locks",
	.usage = "[--format text|json]",
	.summary =
	    "Show each configured lock name and every other lock a running cronguard holds (exec --lock), whether it is held, by which connection and run, since when, and the holder's fencing token.",
	.options = cmd_format_template,
	.flags = CMD_NEEDS_DB | CMD_READS_ONLY,
	.exec = cmd_locks_exec,
};
