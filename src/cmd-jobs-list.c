/* cmd-jobs-list.c: "jobs list", the configured jobs and their last runs. */
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

static const char *
guard_name(enum guard_kind g)
{
	switch (g) {
	case GUARD_NAMED_LOCK:
		return "named_lock";
	case GUARD_LOCAL:
		return "local";
	case GUARD_NONE:
		return ("none");
	case GUARD_LEASE:
		return ("lease");
	case GUARD_AUTO:
		return ("auto");
	}
	return "?";
}

/* "2026-11-29 10:00:00" from a DATETIME(6) value: seconds are enough in
 * a table. */
static const char *
short_time(const char *dt, char *buf, size_t len)
{
	if (dt == NULL)
		return "-";
	snprintf(buf, len, "%.19s", dt);
	return buf;
}

static int
cmd_jobs_list_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct db             *db = NULL;
	struct job_summary     js;
	const struct conf_job *j;
	char                  *errstr = NULL, run[32], ok[32];
	enum db_status         st;
	const char            *lock;
	int                    wjob = 3, wlock = 4, n, rc = EXIT_OK;
	size_t                 i;

	if (c->have_database && (rc = cmd_db_connect(ctx, c, &db)) != 0)
		return rc;
	for (i = 0; i < c->njobs; i++) {
		j = &c->jobs[i];
		if ((n = (int)strlen(j->name)) > wjob)
			wjob = n;
		if (j->guard != GUARD_LOCAL && j->guard != GUARD_NONE &&
		    (n = (int)strlen(j->lock)) > wlock)
			wlock = n;
	}
	printf("%-*s  %-10s  %-*s  %-19s  %-9s  %s\n", wjob, "JOB", "GUARD",
	    wlock, "LOCK", "LAST RUN", "OUTCOME", "LAST SUCCESS");
	for (i = 0; i < c->njobs; i++) {
		j = &c->jobs[i];
		memset(&js, 0, sizeof js);
		if (db != NULL &&
		    (st = runs_job_summary(db, j->name, &js, &errstr)) !=
		        DB_OK) {
			rc = cmd_db_error(ctx, st, errstr);
			free(errstr);
			break;
		}
		lock = j->guard != GUARD_LOCAL && j->guard != GUARD_NONE
		    ? j->lock
		    : "-";
		printf("%-*s  %-10s  %-*s  %-19s  %-9s  %s\n", wjob, j->name,
		    guard_name(j->guard), wlock, lock,
		    short_time(js.last_started, run, sizeof run),
		    js.last_outcome != NULL ? js.last_outcome : "-",
		    short_time(js.last_success, ok, sizeof ok));
		runs_job_summary_free(&js);
	}
	db_close(db);
	return rc;
}

const struct cmd_entry cmd_jobs_list_entry = {
	.name = "jobs list",
	.usage = "",
	.summary =
	    "List the configured jobs with their guard, lock name, last run and last success (database clock, UTC).",
	.flags = CMD_NEEDS_CONF,
	.exec = cmd_jobs_list_exec,
};
