/* cmd-outbox-cancel.c: rows that must never be sent. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "db.h"
#include "outbox-admin.h"
#include "util.h"

/* What the arguments say (cmd_outbox_cancel_check), for the exec. */
struct outbox_cancel_args {
	struct outbox_filter f;
	int                  any; /* a filter is given (else ids) */
	int                  dry;
	unsigned long long  *ids;
	size_t               nids;
	const char          *reason; /* NULL: none */
};

static int
cmd_outbox_cancel_check(struct cmd_ctx *ctx, const struct conf *c)
{
	struct outbox_cancel_args *a = ctx->state;
	int                        rc;

	if ((rc = cmd_outbox_filter(ctx, &a->f, &a->any, &a->dry)) != 0)
		return rc;
	if (a->any == (ctx->nargs > 0))
		return cmd_usage_error(ctx->entry,
		    "give message ids, or at least one of --channel, "
		    "--event-type, --since and --error");
	if (a->dry && !a->any)
		return cmd_usage_error(
		    ctx->entry, "--dry-run goes with filters");
	if ((rc = cmd_parse_ids(ctx, &a->ids, &a->nids)) != 0)
		return rc;
	/* Checked here, not by the database: a statement it refuses would
	 * read as "database unavailable". */
	return cmd_reason_option(ctx, 0, OUTBOX_REASON_MAX, &a->reason);
}

static void
cmd_outbox_cancel_free(void *state)
{
	free(((struct outbox_cancel_args *)state)->ids);
}

static int
cmd_outbox_cancel_exec(struct cmd_ctx *ctx, struct conf *c)
{
	const struct outbox_cancel_args *a = ctx->state;
	unsigned long long               n = 0;
	char                            *errstr = NULL;
	enum db_status                   st;
	int                              rc = EXIT_OK;

	st = a->any ? outbox_filtered(ctx->db, OUTBOX_IDS_CANCEL, &a->f,
	                  a->reason, a->dry, &n, &errstr)
	            : outbox_ids(ctx->db, OUTBOX_IDS_CANCEL, a->ids, a->nids,
	                  a->reason, &n, &errstr);
	if (st != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	printf("%llu message%s %s\n", n, n == 1 ? "" : "s",
	    a->dry ? "would be cancelled" : "cancelled");
	if (!a->any)
		rc = cmd_ids_changed(ctx, n, a->nids, "PENDING or FAILED");
out:
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
	.flags = CMD_NEEDS_DB | CMD_OPENS_DB,
	.check = cmd_outbox_cancel_check,
	.state_size = sizeof(struct outbox_cancel_args),
	.state_free = cmd_outbox_cancel_free,
	.exec = cmd_outbox_cancel_exec,
};
