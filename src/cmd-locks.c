/* cmd-locks.c: "locks", each configured lock and who holds it. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "db.h"
#include "lock.h"
#include "log.h"
#include "util.h"

/* The first job (of several sharing it) that uses lock name. */
static const struct conf_job *
first_user(const struct conf *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->njobs; i++)
		if (c->jobs[i].guard == GUARD_NAMED_LOCK &&
		    strcmp(c->jobs[i].lock, name) == 0)
			return (&c->jobs[i]);
	return (NULL);
}

static void
print_lock(
    const struct conf_job *j, const struct lock_holder *h, int wlock, int wjob)
{
	struct buf  who;
	char       *why = NULL;
	const char *state;
	char        since[40];

	buf_init(&who);
	if (h->connection_id == 0) {
		printf("%-*s  %-*s  %-5s  -\n", wlock, j->lock, wjob, j->name,
		    "free");
		return;
	}
	state = lock_holder_stuck(h, j->max_runtime_ms, j->grace_ms, &why)
	    ? "STUCK"
	    : "held";
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
	printf("%-*s  %-*s  %-5s  %s%s\n", wlock, j->lock, wjob, j->name, state,
	    who.data, since);
	buf_free(&who);
	free(why);
}

static int
cmd_locks_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct db             *db = NULL;
	struct lock_holder     h;
	const struct conf_job *j;
	char                  *errstr = NULL;
	int                    wlock = 4, wjob = 3, n, rc = EXIT_OK;
	size_t                 i;

	if (ctx->argc != 1)
		return cmd_usage_error(ctx->entry, "locks takes no arguments");
	if ((rc = cmd_need_db(ctx, c)) != 0)
		return (rc);
	if (db_connect(&c->db, &db, &errstr) != DB_OK) {
		log_kv(LOG_ERROR, "db_unavailable", "error", errstr, NULL);
		free(errstr);
		return (EXIT_UNAVAILABLE);
	}
	for (i = 0; i < c->njobs; i++) {
		j = &c->jobs[i];
		if (j->guard != GUARD_NAMED_LOCK)
			continue;
		if ((n = (int)strlen(j->lock)) > wlock)
			wlock = n;
		if ((n = (int)strlen(j->name)) > wjob)
			wjob = n;
	}
	printf("%-*s  %-*s  %-5s  %s\n", wlock, "LOCK", wjob, "JOB", "STATE",
	    "HOLDER");
	for (i = 0; i < c->njobs; i++) {
		j = &c->jobs[i];
		if (j->guard != GUARD_NAMED_LOCK || first_user(c, j->lock) != j)
			continue;
		if (lock_holder_get(db, j->lock, &h, &errstr) != DB_OK) {
			log_kv(LOG_ERROR, "db_unavailable", "lock", j->lock,
			    "error", errstr, NULL);
			free(errstr);
			rc = EXIT_UNAVAILABLE;
			break;
		}
		print_lock(j, &h, wlock, wjob);
		lock_holder_free(&h);
	}
	db_close(db);
	return (rc);
}

const struct cmd_entry cmd_locks_entry = {
	.name = "locks",
	.usage = "",
	.summary = "Show each configured lock name, whether it is held, by "
	           "which connection and run, and since when.",
	.flags = CMD_NEEDS_CONF,
	.exec = cmd_locks_exec,
};
