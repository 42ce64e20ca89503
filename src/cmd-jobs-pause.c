/* cmd-jobs-pause.c: "jobs pause", a fleet-wide pause of jobs. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "db.h"
#include "duration.h"
#include "jobctl.h"
#include "util.h"

/* "a, b" or "every job". */
static void
print_jobs(const char *const *jobs, size_t n)
{
	size_t i;

	if (n == 1 && jobs[0][0] == JOBCTL_ALL[0] && jobs[0][1] == '\0') {
		fputs("every job", stdout);
		return;
	}
	for (i = 0; i < n; i++)
		printf("%s%s", i > 0 ? ", " : "", jobs[i]);
}

static int
cmd_jobs_pause_exec(struct cmd_ctx *ctx, struct conf *c)
{
	static const char *const all[] = { JOBCTL_ALL };
	const char *const       *jobs;
	struct job_pause         p = { 0 };
	struct db               *db = NULL;
	const char              *v, *e, *reason;
	char                    *errstr = NULL;
	int64_t                  for_ms = 0;
	enum db_status           st;
	size_t                   n;
	int                      rc;

	if (cmd_opt_count(ctx, "all") > 0 && ctx->nargs > 0)
		return cmd_usage_error(
		    ctx->entry, "--all and job names exclude each other");
	if (cmd_opt_count(ctx, "all") == 0 && ctx->nargs == 0)
		return cmd_usage_error(ctx->entry, "no job named (or --all)");
	if ((rc = cmd_jobs_known(ctx, c)) != 0)
		return rc;
	if ((v = cmd_opt_value(ctx, "for")) != NULL) {
		if (duration_parse(v, &for_ms, &e) != 0)
			return cmd_usage_error(
			    ctx->entry, "--for: %s: %s", v, e);
		if (for_ms <= 0)
			return cmd_usage_error(
			    ctx->entry, "--for: %s: must be more than 0", v);
	}
	if ((rc = cmd_reason_option(ctx, 0, JOBCTL_REASON_MAX, &reason)) != 0)
		return rc;
	if (ctx->nargs > 0) {
		jobs = (const char *const *)ctx->args;
		n = (size_t)ctx->nargs;
	} else {
		jobs = all;
		n = 1;
	}
	if ((rc = cmd_db_connect(ctx, c, &db)) != 0)
		goto out;
	if ((st = jobctl_pause(db, jobs, n, for_ms, reason, &p, &errstr)) !=
	    DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	fputs("paused ", stdout);
	print_jobs(jobs, n);
	if (p.until_at != NULL)
		printf(" by %s until %.19s UTC\n", p.paused_by, p.until_at);
	else
		printf(" by %s until resumed\n", p.paused_by);
out:
	jobctl_pause_free(&p);
	db_close(db);
	free(errstr);
	return rc;
}

static const struct cmd_option cmd_jobs_pause_options[] = {
	{ "all", 0 },
	{ "for", 1 },
	{ "reason", 1 },
	{ NULL, 0 },
};

const struct cmd_entry cmd_jobs_pause_entry = {
	.name = "jobs pause",
	.usage = "job... | --all [--for duration] [--reason text]",
	.summary =
	    "Pause jobs on every host (in the database): a launch skips with job_paused and exits 0, jobs check reports them OK, until jobs resume or --for has passed (database clock).  --all pauses every job, also those configured only on other hosts.",
	.options = cmd_jobs_pause_options,
	.max_args = -1,
	.flags = CMD_NEEDS_DB,
	.exec = cmd_jobs_pause_exec,
};
