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
#include "runs.h"
#include "util.h"

/* The first job (of several sharing it) that uses lock name. */
static const struct conf_job *
first_user(const struct conf *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->njobs; i++)
		if (c->jobs[i].guard == GUARD_NAMED_LOCK &&
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
};

static const char *
locks_row_job(const struct locks_row *r)
{
	if (r->j != NULL)
		return r->j->name;
	return r->h.run_job != NULL ? r->h.run_job : "-";
}

static void
print_lock(const struct locks_row *r, int wlock, int wjob)
{
	const struct lock_holder *h = &r->h;
	struct buf                who;
	char                     *why = NULL;
	const char               *state = "held";
	char                      since[40];

	if (h->connection_id == 0) {
		printf("%-*s  %-*s  %-5s  -\n", wlock, r->lock, wjob,
		    locks_row_job(r), "free");
		return;
	}
	/* Without a configuration there is no max_runtime to judge by. */
	if (r->j != NULL &&
	    lock_holder_stuck(h, r->j->max_runtime_ms, r->j->grace_ms, &why))
		state = "STUCK";
	buf_init(&who);
	buf_printf(&who, "connection %llu", h->connection_id);
	if (h->run_id != 0)
		buf_printf(&who, ", run %llu on %s pid %lld", h->run_id,
		    h->run_host != NULL ? h->run_host : "?", h->run_pid);
	else
		buf_adds(&who, ", no run record");
	if (h->client_host != NULL)
		buf_printf(&who, ", from %s", h->client_host);
	if (h->started_at != NULL)
		snprintf(since, sizeof since, ", since %.19s (%llds)",
		    h->started_at, h->run_age_s);
	else if (h->idle_s >= 0)
		snprintf(
		    since, sizeof since, ", in its state for %llds", h->idle_s);
	else
		since[0] = '\0';
	printf("%-*s  %-*s  %-5s  %s%s\n", wlock, r->lock, wjob,
	    locks_row_job(r), state, who.data, since);
	buf_free(&who);
	free(why);
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
		if (j->guard != GUARD_NAMED_LOCK || first_user(c, j->lock) != j)
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

static int
cmd_locks_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct db        *db = NULL;
	struct db_result *running = NULL;
	struct locks_row *rows = NULL;
	char             *errstr = NULL;
	enum db_status    st;
	int               wlock = 4, wjob = 3, w, rc = EXIT_OK;
	size_t            i, n = 0;

	if ((rc = cmd_db_connect(ctx, c, &db)) != 0)
		goto out;
	if ((st = runs_locks(db, &running, &errstr)) != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	n = locks_rows(c, running, &rows);
	for (i = 0; i < n; i++) {
		if ((st = lock_holder_get(
		         db, rows[i].lock, &rows[i].h, &errstr)) != DB_OK) {
			rc = cmd_db_error(ctx, st, errstr);
			goto out;
		}
		if ((w = (int)strlen(rows[i].lock)) > wlock)
			wlock = w;
		if ((w = (int)strlen(locks_row_job(&rows[i]))) > wjob)
			wjob = w;
	}
	printf("%-*s  %-*s  %-5s  %s\n", wlock, "LOCK", wjob, "JOB", "STATE",
	    "HOLDER");
	for (i = 0; i < n; i++) {
		/* A run record whose lock is free is a dead run's, not a
		 * lock anyone holds. */
		if (rows[i].j == NULL && rows[i].h.connection_id == 0)
			continue;
		print_lock(&rows[i], wlock, wjob);
	}
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
	.usage = "",
	.summary =
	    "Show each configured lock name and every other lock a running cronguard holds (exec --lock), whether it is held, by which connection and run, and since when.",
	.flags = CMD_NEEDS_DB,
	.exec = cmd_locks_exec,
};
