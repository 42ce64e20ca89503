/* cmd-outbox-retry.c: make rows due now. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "db.h"
#include "outbox-admin.h"
#include "util.h"

static int
cmd_outbox_retry_exec(struct cmd_ctx *ctx, struct conf *c)
{
	unsigned long long  *ids = NULL, n = 0;
	struct outbox_filter f;
	struct db           *db = NULL;
	char                *errstr = NULL;
	enum db_status       st;
	size_t               nids = 0;
	int                  all, any, dry, rc = EXIT_OK;

	all = cmd_opt_count(ctx, "failed") > 0;
	if ((rc = cmd_outbox_filter(ctx, &f, &any, &dry)) != 0)
		return rc;
	if (all == (ctx->nargs > 0))
		return cmd_usage_error(
		    ctx->entry, "give message ids or --failed");
	if ((any || dry) && !all)
		return cmd_usage_error(ctx->entry,
		    "--channel, --event-type, --since, --error and --dry-run "
		    "go with --failed");
	if ((rc = cmd_parse_ids(ctx, &ids, &nids)) != 0)
		goto out;
	if ((rc = cmd_db_connect(ctx, c, &db)) != 0)
		goto out;
	st = all
	    ? outbox_filtered(db, OUTBOX_IDS_RETRY, &f, NULL, dry, &n, &errstr)
	    : outbox_ids(db, OUTBOX_IDS_RETRY, ids, nids, NULL, &n, &errstr);
	if (st != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	if (dry)
		printf(
		    "%llu message%s would be due now\n", n, n == 1 ? "" : "s");
	else
		printf("%llu message%s due now\n", n, n == 1 ? "" : "s");
	if (!all)
		rc = cmd_ids_changed(
		    ctx, n, nids, "PENDING, FAILED or CANCELLED");
out:
	db_close(db);
	free(ids);
	free(errstr);
	return rc;
}

static const struct cmd_option cmd_outbox_retry_options[] = {
	{ "failed", 0 },
	{ "channel", 1 },
	{ "event-type", 1 },
	{ "since", 1 },
	{ "error", 1 },
	{ "dry-run", 0 },
	{ NULL, 0 },
};

const struct cmd_entry cmd_outbox_retry_entry = {
	.name = "outbox retry",
	.usage =
	    "id... | --failed [--channel name] [--event-type type] [--since duration] [--error text] [--dry-run]",
	.summary =
	    "Make rows due now: PENDING rows skip their backoff; FAILED and CANCELLED rows go back to PENDING with attempts reset.  Exit 65 if a given id is not such a row.",
	.options = cmd_outbox_retry_options,
	.max_args = -1,
	.flags = CMD_NEEDS_DB,
	.exec = cmd_outbox_retry_exec,
};
