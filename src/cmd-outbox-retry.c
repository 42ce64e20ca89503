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
	unsigned long long *ids = NULL, n = 0;
	struct db          *db = NULL;
	const char         *channel;
	char               *errstr = NULL;
	enum db_status      st;
	size_t              nids = 0;
	int                 all, rc = EXIT_OK;

	all = cmd_opt_count(ctx, "failed") > 0;
	channel = cmd_opt_value(ctx, "channel");
	if (all == (ctx->nargs > 0))
		return cmd_usage_error(
		    ctx->entry, "give message ids or --failed");
	if (channel != NULL && !all)
		return cmd_usage_error(
		    ctx->entry, "--channel goes with --failed");
	if ((rc = cmd_parse_ids(ctx, &ids, &nids)) != 0)
		goto out;
	if ((rc = cmd_db_connect(ctx, c, &db)) != 0)
		goto out;
	st = all
	    ? outbox_retry_failed(db, channel, &n, &errstr)
	    : outbox_ids(db, OUTBOX_IDS_RETRY, ids, nids, NULL, &n, &errstr);
	if (st != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
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
	{ NULL, 0 },
};

const struct cmd_entry cmd_outbox_retry_entry = {
	.name = "outbox retry",
	.usage = "id... | --failed [--channel name]",
	.summary =
	    "Make rows due now: PENDING rows skip their backoff; FAILED and CANCELLED rows go back to PENDING with attempts reset.  Exit 65 if a given id is not such a row.",
	.options = cmd_outbox_retry_options,
	.max_args = -1,
	.flags = CMD_NEEDS_DB,
	.exec = cmd_outbox_retry_exec,
};
