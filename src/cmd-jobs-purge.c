/* cmd-jobs-purge.c: "jobs purge", retention of the run records. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "db.h"
#include "duration.h"
#include "log.h"
#include "runs.h"
#include "util.h"

/* What --before says (cmd_jobs_purge_check), for the exec. */
struct jobs_purge_args {
	const char *before; /* as given */
	int64_t     before_ms;
};

static int
cmd_jobs_purge_check(struct cmd_ctx *ctx, const struct conf *c)
{
	struct jobs_purge_args *a = ctx->state;
	const char             *e;

	if ((a->before = cmd_opt_value(ctx, "before")) == NULL)
		return cmd_usage_error(ctx->entry, "--before is required");
	if (duration_parse(a->before, &a->before_ms, &e) != 0)
		return cmd_usage_error(
		    ctx->entry, "--before: %s: %s", a->before, e);
	return 0;
}

static int
cmd_jobs_purge_exec(struct cmd_ctx *ctx, struct conf *c)
{
	const struct jobs_purge_args *a = ctx->state;
	unsigned long long            n = 0;
	char                         *errstr = NULL, count[32];
	enum db_status                st;
	int                           rc = EXIT_OK;

	st = runs_purge(ctx->db, a->before_ms, &n, &errstr);
	/* What was deleted before a failure stays deleted: say how much. */
	printf("deleted %llu run%s\n", n, n == 1 ? "" : "s");
	if (st != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	snprintf(count, sizeof count, "%llu", n);
	log_kv(LOG_INFO, "runs_purged", "runs", count, "before", a->before);
out:
	free(errstr);
	return rc;
}

static const struct cmd_option cmd_jobs_purge_options[] = {
	{ "before", 1 },
	{ NULL, 0 },
};

const struct cmd_entry cmd_jobs_purge_entry = {
	.name = "jobs purge",
	.usage = "--before duration",
	.summary =
	    "Delete the run records that started and finished longer ago than the duration (at most 1000 per statement), never a running one nor a job's newest success, and print how many.",
	.options = cmd_jobs_purge_options,
	.flags = CMD_NEEDS_DB | CMD_OPENS_DB,
	.check = cmd_jobs_purge_check,
	.state_size = sizeof(struct jobs_purge_args),
	.exec = cmd_jobs_purge_exec,
};
