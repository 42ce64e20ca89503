/* cmd-outbox-show.c: one outbox row, every column, payload pretty-printed,
 * and a page of its attempt log. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "db.h"
#include "outbox-admin.h"
#include "report.h"
#include "util.h"

/* What the arguments say (cmd_outbox_show_check), for the exec. */
struct outbox_show_args {
	unsigned long long id;
	long long          limit; /* --attempts */
};

static int
cmd_outbox_show_check(struct cmd_ctx *ctx, const struct conf *c)
{
	struct outbox_show_args *a = ctx->state;
	const char              *e, *v;

	if (parse_ull(ctx->args[0], UINT64_MAX, &a->id, &e) != 0)
		return cmd_usage_error(
		    ctx->entry, "bad id %s: %s", ctx->args[0], e);
	a->limit = OUTBOX_SHOW_ATTEMPTS;
	if ((v = cmd_opt_value(ctx, "attempts")) != NULL &&
	    parse_ll(v, 0, OUTBOX_SHOW_ATTEMPTS_MAX, &a->limit, &e) != 0)
		return cmd_usage_error(ctx->entry, "--attempts %s: %s", v, e);
	return 0;
}

static int
cmd_outbox_show_exec(struct cmd_ctx *ctx, struct conf *c)
{
	const struct outbox_show_args *a = ctx->state;
	struct db_result  *res = NULL, *blocker = NULL, *attempts = NULL;
	struct db         *db = ctx->db;
	unsigned long long id = a->id, total = 0;
	char              *errstr = NULL, *out;
	enum db_status     st;
	int                rc = EXIT_OK;

	if ((st = outbox_show(db, id, &res, &errstr)) != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	if (res->nrows == 0) {
		fprintf(
		    stderr, "cronguard: outbox show: no message %llu\n", id);
		rc = EXIT_DATAERR;
		goto out;
	}
	if ((st = outbox_show_blocker(db, &c->outbox, id, &blocker, &errstr)) !=
	        DB_OK ||
	    (st = outbox_show_attempts(db, id, (unsigned)a->limit, &attempts,
	         &total, &errstr)) != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	out = report_outbox_show(res, blocker, attempts, total);
	fputs(out, stdout);
	free(out);
out:
	db_result_free(attempts);
	db_result_free(blocker);
	db_result_free(res);
	free(errstr);
	return rc;
}

static const struct cmd_option cmd_outbox_show_options[] = {
	{ "attempts", 1 },
	{ NULL, 0 },
};

const struct cmd_entry cmd_outbox_show_entry = {
	.name = "outbox show",
	.usage = "[--attempts n] id",
	.summary =
	    "Show one outbox row, every column, the payload pretty-printed, and the newest --attempts entries of its attempt log (default 20) with their count.  Exit 65 if there is no such row.",
	.options = cmd_outbox_show_options,
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_NEEDS_DB | CMD_READS_ONLY | CMD_OPENS_DB,
	.check = cmd_outbox_show_check,
	.state_size = sizeof(struct outbox_show_args),
	.exec = cmd_outbox_show_exec,
};
