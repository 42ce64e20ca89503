/* cmd-outbox-retry.c: make rows due now. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "db.h"
#include "outbox-admin.h"
#include "util.h"

/* What the arguments say (cmd_outbox_retry_check), for the exec. */
struct outbox_retry_args {
	struct outbox_filter f;
	int                  all; /* --failed (else ids) */
	int                  dry;
	unsigned long long  *ids;
	size_t               nids;
};

static int
cmd_outbox_retry_check(struct cmd_ctx *ctx, const struct conf *c)
{
	struct outbox_retry_args *a = ctx->state;
	int                       any, rc;

	a->all = cmd_opt_count(ctx, "failed") > 0;
	if ((rc = cmd_outbox_filter(ctx, &a->f, &any, &a->dry)) != 0)
		return rc;
	if (a->all == (ctx->nargs > 0))
		return cmd_usage_error(
		    ctx->entry, "give message ids or --failed");
	if ((any || a->dry) && !a->all)
		return cmd_usage_error(ctx->entry,
		    "--channel, --event-type, --since, --error and --dry-run "
		    "go with --failed");
	return cmd_parse_ids(ctx, &a->ids, &a->nids);
}

static void
cmd_outbox_retry_free(void *state)
{
	free(((struct outbox_retry_args *)state)->ids);
}

static int
cmd_outbox_retry_exec(struct cmd_ctx *ctx, struct conf *c)
{
	const struct outbox_retry_args *a = ctx->state;
	unsigned long long              n = 0;
	char                           *errstr = NULL;
	enum db_status                  st;
	int                             rc = EXIT_OK;

	st = a->all ? outbox_filtered(ctx->db, OUTBOX_IDS_RETRY, &a->f, NULL,
	                  a->dry, &n, &errstr)
	            : outbox_ids(ctx->db, OUTBOX_IDS_RETRY, a->ids, a->nids,
	                  NULL, &n, &errstr);
	if (st != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	if (a->dry)
		printf(
		    "%llu message%s would be due now\n", n, n == 1 ? "" : "s");
	else
		printf("%llu message%s due now\n", n, n == 1 ? "" : "s");
	if (!a->all)
		rc = cmd_ids_changed(
		    ctx, n, a->nids, "PENDING, FAILED or CANCELLED");
out:
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
	.flags = CMD_NEEDS_DB | CMD_OPENS_DB,
	.check = cmd_outbox_retry_check,
	.state_size = sizeof(struct outbox_retry_args),
	.state_free = cmd_outbox_retry_free,
	.exec = cmd_outbox_retry_exec,
};
