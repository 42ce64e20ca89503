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

static int
cmd_jobs_runs_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct db_result *res = NULL;
	struct db        *db = NULL;
	const char       *v, *e;
	char             *errstr = NULL, *out = NULL;
	long long         limit = 20;
	enum db_status    st;
	int               json, rc;

	if ((rc = cmd_format_option(ctx, &json)) != 0)
		return rc;
	if ((v = cmd_opt_value(ctx, "limit")) != NULL &&
	    parse_ll(v, 1, 1000000, &limit, &e) != 0)
		return cmd_usage_error(ctx->entry, "--limit %s: %s", v, e);
	if ((rc = cmd_db_connect(ctx, c, &db)) != 0)
		goto out;
	if ((st = runs_list(db, ctx->nargs > 0 ? ctx->args[0] : NULL,
	         (unsigned)limit, &res, &errstr)) != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	out = report_runs(res, json);
	fputs(out, stdout);
out:
	free(out);
	db_result_free(res);
	db_close(db);
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
	.flags = CMD_NEEDS_DB | CMD_READS_ONLY,
	.exec = cmd_jobs_runs_exec,
};
