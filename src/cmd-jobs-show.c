/* cmd-jobs-show.c: "jobs show", one run record with its captured output. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "db.h"
#include "report.h"
#include "runs.h"
#include "util.h"

/* What the arguments say (cmd_jobs_show_check), for the exec. */
struct jobs_show_args {
	int                json;
	unsigned long long id;
};

static int
cmd_jobs_show_check(struct cmd_ctx *ctx, const struct conf *c)
{
	struct jobs_show_args *a = ctx->state;
	const char            *e;
	int                    rc;

	if ((rc = cmd_format_option(ctx, &a->json)) != 0)
		return rc;
	if (parse_ull(ctx->args[0], UINT64_MAX, &a->id, &e) != 0)
		return cmd_usage_error(
		    ctx->entry, "bad run id %s: %s", ctx->args[0], e);
	return 0;
}

static int
cmd_jobs_show_exec(struct cmd_ctx *ctx, struct conf *c)
{
	const struct jobs_show_args *a = ctx->state;
	struct db_result            *res = NULL;
	unsigned long long           id = a->id;
	char                        *errstr = NULL, *out = NULL;
	size_t                       len;
	enum db_status               st;
	int                          rc = EXIT_OK;

	if ((st = runs_get(ctx->db, id, &res, &errstr)) != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	if (res->nrows == 0) {
		fprintf(stderr, "cronguard: %s: no run %llu\n",
		    ctx->entry->name, id);
		rc = EXIT_DATAERR;
		goto out;
	}
	out = report_run(res, a->json, &len);
	if (fwrite(out, 1, len, stdout) != len)
		rc = EXIT_SOFTWARE;
out:
	free(out);
	db_result_free(res);
	free(errstr);
	return rc;
}

const struct cmd_entry cmd_jobs_show_entry = {
	.name = "jobs show",
	.usage = "[--format text|json] run-id",
	.summary =
	    "Print one run record in full: its fields, then the captured output as the job wrote it (JSON: a string, bytes that are not UTF-8 replaced).",
	.options = cmd_format_template,
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_NEEDS_DB | CMD_READS_ONLY | CMD_OPENS_DB,
	.check = cmd_jobs_show_check,
	.state_size = sizeof(struct jobs_show_args),
	.exec = cmd_jobs_show_exec,
};
