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

/* What the arguments say (cmd_jobs_pause_check), for the exec. */
struct jobs_pause_args {
	int64_t     for_ms; /* 0: until resumed */
	const char *reason;
};

static int
cmd_jobs_pause_check(struct cmd_ctx *ctx, const struct conf *c)
{
	struct jobs_pause_args *a = ctx->state;
	const char             *v, *e;
	int                     rc;

	if (cmd_opt_count(ctx, "all") > 0 && ctx->nargs > 0)
		return cmd_usage_error(
		    ctx->entry, "--all and job names exclude each other");
	if (cmd_opt_count(ctx, "all") == 0 && ctx->nargs == 0)
		return cmd_usage_error(ctx->entry, "no job named (or --all)");
	if ((rc = cmd_jobs_known(ctx, c)) != 0)
		return rc;
	if ((v = cmd_opt_value(ctx, "for")) != NULL) {
		if (duration_parse(v, &a->for_ms, &e) != 0)
			return cmd_usage_error(
			    ctx->entry, "--for: %s: %s", v, e);
		if (a->for_ms <= 0)
			return cmd_usage_error(
			    ctx->entry, "--for: %s: must be more than 0", v);
	}
	return cmd_reason_option(ctx, 0, JOBCTL_REASON_MAX, &a->reason);
}

static int
cmd_jobs_pause_exec(struct cmd_ctx *ctx, struct conf *c)
{
	static const char *const      all[] = { JOBCTL_ALL };
	const struct jobs_pause_args *a = ctx->state;
	const char *const            *jobs;
	struct job_pause              p = { 0 };
	char                         *errstr = NULL;
	enum db_status                st;
	size_t                        n;
	int                           rc = EXIT_OK;

	if (ctx->nargs > 0) {
		jobs = (const char *const *)ctx->args;
		n = (size_t)ctx->nargs;
	} else {
		jobs = all;
		n = 1;
	}
	if ((st = jobctl_pause(ctx->db, jobs, n, a->for_ms, a->reason, &p,
	         &errstr)) != DB_OK) {
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
	.flags = CMD_NEEDS_DB | CMD_OPENS_DB,
	.check = cmd_jobs_pause_check,
	.state_size = sizeof(struct jobs_pause_args),
	.exec = cmd_jobs_pause_exec,
};
