/* cmd-outbox-cancel.c: rows that must never be sent. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "db.h"
#include "outbox-admin.h"
#include "util.h"

static int
cmd_outbox_cancel_exec(struct cmd_ctx *ctx, struct conf *c)
{
	unsigned long long  *ids = NULL, n = 0;
	struct outbox_filter f;
	struct db           *db = NULL;
	const char          *reason = NULL;
	char                *errstr = NULL;
	enum db_status       st;
	size_t               nids = 0;
	int                  any, dry, rc = EXIT_OK;

	if ((rc = cmd_outbox_filter(ctx, &f, &any, &dry)) != 0)
		return rc;
	if (any == (ctx->nargs > 0))
		return cmd_usage_error(ctx->entry,
		    "give message ids, or at least one of --channel, "
		    "--event-type, --since and --error");
	if (dry && !any)
		return cmd_usage_error(
		    ctx->entry, "--dry-run goes with filters");
	if ((rc = cmd_parse_ids(ctx, &ids, &nids)) != 0)
		goto out;
	/* Checked here, not by the database: a statement it refuses would
	 * read as "database unavailable". */
	if ((rc = cmd_reason_option(ctx, 0, OUTBOX_REASON_MAX, &reason)) != 0)
		goto out;
	if ((rc = cmd_db_connect(ctx, c, &db)) != 0)
		goto out;
	st = any
	    ? outbox_filtered(
	          db, OUTBOX_IDS_CANCEL, &f, reason, dry, &n, &errstr)
	    : outbox_ids(db, OUTBOX_IDS_CANCEL, ids, nids, reason, &n, &errstr);
	if (st != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	printf("%llu message%s %s\n", n, n == 1 ? "" : "s",
	    dry ? "would be cancelled" : "cancelled");
	if (!any)
		rc = cmd_ids_changed(ctx, n, nids, "PENDING or FAILED");
out:
	db_close(db);
	free(ids);
	free(errstr);
	return rc;
}

static const struct cmd_option cmd_outbox_cancel_options[] = {
	{ "reason", 1 },
	{ "channel", 1 },
	{ "event-type", 1 },
	{ "since", 1 },
	{ "error", 1 },
	{ "dry-run", 0 },
	{ NULL, 0 },
};

const struct cmd_entry cmd_outbox_cancel_entry = {
	.name = "outbox cancel",
	.usage =
	    "[--reason text] (id... | [--channel name] [--event-type type] [--since duration] [--error text] [--dry-run])",
	.summary =
	    "Mark PENDING or FAILED rows CANCELLED: never sent, never blocking their ordering key, purged like SENT rows.  Exit 65 if a given id is not such a row.",
	.options = cmd_outbox_cancel_options,
	.max_args = -1,
	.flags = CMD_NEEDS_DB,
	.exec = cmd_outbox_cancel_exec,
};
