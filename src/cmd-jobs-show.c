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

static int
cmd_jobs_show_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct db_result  *res = NULL;
	struct db         *db = NULL;
	unsigned long long id;
	const char        *e;
	char              *errstr = NULL, *out = NULL;
	size_t             len;
	enum db_status     st;
	int                json, rc;

	if ((rc = cmd_format_option(ctx, &json)) != 0)
		return rc;
	if (parse_ull(ctx->args[0], UINT64_MAX, &id, &e) != 0)
		return cmd_usage_error(
		    ctx->entry, "bad run id %s: %s", ctx->args[0], e);
	if ((rc = cmd_db_connect(ctx, c, &db)) != 0)
		goto out;
	if ((st = runs_get(db, id, &res, &errstr)) != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	if (res->nrows == 0) {
		fprintf(stderr, "cronguard: %s: no run %llu\n",
		    ctx->entry->name, id);
		rc = EXIT_DATAERR;
		goto out;
	}
	out = report_run(res, json, &len);
	if (fwrite(out, 1, len, stdout) != len)
		rc = EXIT_SOFTWARE;
out:
	free(out);
	db_result_free(res);
	db_close(db);
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
	.flags = CMD_NEEDS_DB | CMD_READS_ONLY,
	.exec = cmd_jobs_show_exec,
};
