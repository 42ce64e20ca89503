/* cmd-jobs-runs.c: "jobs runs", the run history, newest first. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "db.h"
#include "report.h"
#include "runs.h"
#include "util.h"

/* What the options say (cmd_jobs_runs_check), for the exec. */
struct jobs_runs_args {
	int       json;
	long long limit;
};

static int
cmd_jobs_runs_check(struct cmd_ctx *ctx, const struct conf *c)
{
	struct jobs_runs_args *a = ctx->state;
	const char            *v, *e;
	int                    rc;

	if ((rc = cmd_format_option(ctx, &a->json)) != 0)
		return rc;
	a->limit = 20;
	if ((v = cmd_opt_value(ctx, "limit")) != NULL &&
	    parse_ll(v, 1, 1000000, &a->limit, &e) != 0)
		return cmd_usage_error(ctx->entry, "--limit %s: %s", v, e);
	return 0;
}

static int
cmd_jobs_runs_exec(struct cmd_ctx *ctx, struct conf *c)
{
	const struct jobs_runs_args *a = ctx->state;
	struct db_result            *res = NULL;
	char                        *errstr = NULL, *out = NULL;
	enum db_status               st;
	int                          rc = EXIT_OK;

	if ((st = runs_list(ctx->db, ctx->nargs > 0 ? ctx->args[0] : NULL,
	         (unsigned)a->limit, &res, &errstr)) != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	out = report_runs(res, a->json);
	fputs(out, stdout);
out:
	free(out);
	db_result_free(res);
	free(errstr);
	return rc;
}

static const struct cmd_option cmd_jobs_runs_options[] = {
	{ "limit", 1 },
	{ "format", 1 },
	{ NULL, 0 },
};

const struct cmd_entry cmd_jobs_runs_entry = {
	.name = "jobs runs",
	.usage = "[--limit n] [--format text|json] [job]",
	.summary =
	    "List the run records of one job or of all, newest first (default limit 20): id, job, host, start, duration, outcome, exit status and fencing token.",
	.options = cmd_jobs_runs_options,
	.max_args = 1,
	.flags = CMD_NEEDS_DB | CMD_READS_ONLY | CMD_OPENS_DB,
	.check = cmd_jobs_runs_check,
	.state_size = sizeof(struct jobs_runs_args),
	.exec = cmd_jobs_runs_exec,
};
