/* cmd-outbox-list.c: outbox rows, newest first. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd.h"
#include "report.h"
#include "db.h"
#include "outbox-admin.h"
#include "util.h"

static const char *const list_statuses[] = { "PENDING", "PROCESSING", "SENT",
	"FAILED", "CANCELLED" };

/* What the options say (cmd_outbox_list_check), for the exec. */
struct outbox_list_args {
	const char *status;  /* NULL: any */
	const char *channel; /* NULL: any */
	long long   limit;
	int         json;
};

static int
cmd_outbox_list_check(struct cmd_ctx *ctx, const struct conf *c)
{
	struct outbox_list_args *a = ctx->state;
	const char              *e, *v;
	size_t                   i;
	int                      rc;

	if ((v = cmd_opt_value(ctx, "status")) != NULL) {
		for (i = 0; i < nitems(list_statuses); i++) {
			if (strcasecmp(v, list_statuses[i]) == 0)
				a->status = list_statuses[i];
		}
		if (a->status == NULL)
			return cmd_usage_error(ctx->entry,
			    "--status must be pending, processing, sent, failed or cancelled");
	}
	if ((rc = cmd_text_option(
	         ctx, "channel", 0, CMD_FILTER_MAX, &a->channel)) != 0)
		return rc;
	a->limit = 50;
	if ((v = cmd_opt_value(ctx, "limit")) != NULL &&
	    parse_ll(v, 1, 1000000, &a->limit, &e) != 0)
		return cmd_usage_error(ctx->entry, "--limit %s: %s", v, e);
	return cmd_format_option(ctx, &a->json);
}

static int
cmd_outbox_list_exec(struct cmd_ctx *ctx, struct conf *c)
{
	const struct outbox_list_args *a = ctx->state;
	struct db_result              *res = NULL;
	char                          *errstr = NULL, *out = NULL;
	int                            rc = EXIT_OK;
	enum db_status                 st;

	if ((st = outbox_list(ctx->db, a->status, a->channel,
	         (unsigned)a->limit, &res, &errstr)) != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	out = a->json
	    ? report_outbox_list_json(res)
	    : report_outbox_list_text(res, cmd_opt_count(ctx, "wide") > 0);
	fputs(out, stdout);
	free(out);
out:
	db_result_free(res);
	free(errstr);
	return rc;
}

static const struct cmd_option cmd_outbox_list_options[] = {
	{ "status", 1 },
	{ "channel", 1 },
	{ "limit", 1 },
	{ "format", 1 },
	{ "wide", 0 },
	{ NULL, 0 },
};

const struct cmd_entry cmd_outbox_list_entry = {
	.name = "outbox list",
	.usage =
	    "[--status status] [--channel name] [--limit n] [--format text|json] [--wide]",
	.summary =
	    "List outbox rows, newest first (default limit 50); --wide prints last_error whole.",
	.options = cmd_outbox_list_options,
	.flags = CMD_NEEDS_DB | CMD_READS_ONLY | CMD_OPENS_DB,
	.check = cmd_outbox_list_check,
	.state_size = sizeof(struct outbox_list_args),
	.exec = cmd_outbox_list_exec,
};
