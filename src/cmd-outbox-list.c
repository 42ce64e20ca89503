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

static int
cmd_outbox_list_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct db_result *res = NULL;
	struct db        *db = NULL;
	const char       *status = NULL, *channel, *e, *v;
	char             *errstr = NULL, *out = NULL;
	long long         limit = 50;
	int               json = 0, rc = EXIT_OK;
	size_t            i;
	enum db_status    st;

	if ((v = cmd_opt_value(ctx, "status")) != NULL) {
		for (i = 0; i < nitems(list_statuses); i++) {
			if (strcasecmp(v, list_statuses[i]) == 0)
				status = list_statuses[i];
		}
		if (status == NULL)
			return cmd_usage_error(ctx->entry,
			    "--status must be pending, processing, sent, failed or cancelled");
	}
	if ((rc = cmd_text_option(
	         ctx, "channel", 0, CMD_FILTER_MAX, &channel)) != 0)
		return rc;
	if ((v = cmd_opt_value(ctx, "limit")) != NULL &&
	    parse_ll(v, 1, 1000000, &limit, &e) != 0)
		return cmd_usage_error(ctx->entry, "--limit %s: %s", v, e);
	if ((rc = cmd_format_option(ctx, &json)) != 0)
		return rc;
	if ((rc = cmd_db_connect(ctx, c, &db)) != 0)
		goto out;
	if ((st = outbox_list(db, status, channel, (unsigned)limit, &res,
	         &errstr)) != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	out = json
	    ? report_outbox_list_json(res)
	    : report_outbox_list_text(res, cmd_opt_count(ctx, "wide") > 0);
	fputs(out, stdout);
	free(out);
out:
	db_result_free(res);
	db_close(db);
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
	.flags = CMD_NEEDS_DB | CMD_READS_ONLY,
	.exec = cmd_outbox_list_exec,
};
