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
	unsigned long long *ids = NULL, n = 0;
	struct db          *db = NULL;
	const char         *reason;
	char               *errstr = NULL;
	enum db_status      st;
	size_t              nids = 0;
	int                 rc = EXIT_OK;

	if ((rc = cmd_parse_ids(ctx, &ids, &nids)) != 0)
		goto out;
	/* Checked here, not by the database: a statement it refuses would
	 * read as "database unavailable". */
	if ((reason = cmd_opt_value(ctx, "reason")) != NULL &&
	    strlen(reason) > OUTBOX_REASON_MAX) {
		rc = cmd_usage_error(ctx->entry,
		    "--reason is %zu bytes, more than the %d that last_error "
		    "holds",
		    strlen(reason), OUTBOX_REASON_MAX);
		goto out;
	}
	if (reason != NULL && !utf8_valid(reason)) {
		rc = cmd_usage_error(ctx->entry, "--reason is not UTF-8");
		goto out;
	}
	if ((rc = cmd_db_connect(ctx, c, &db)) != 0)
		goto out;
	st = outbox_ids(db, OUTBOX_IDS_CANCEL, ids, nids, reason, &n, &errstr);
	if (st != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	printf("%llu message%s cancelled\n", n, n == 1 ? "" : "s");
	rc = cmd_ids_changed(ctx, n, nids, "PENDING or FAILED");
out:
	db_close(db);
	free(ids);
	free(errstr);
	return rc;
}

static const struct cmd_option cmd_outbox_cancel_options[] = {
	{ "reason", 1 },
	{ NULL, 0 },
};

const struct cmd_entry cmd_outbox_cancel_entry = {
	.name = "outbox cancel",
	.usage = "[--reason text] id...",
	.summary =
	    "Mark PENDING or FAILED rows CANCELLED: never sent, never blocking their ordering key, purged like SENT rows.  Exit 65 if a given id is not such a row.",
	.options = cmd_outbox_cancel_options,
	.min_args = 1,
	.max_args = -1,
	.flags = CMD_NEEDS_DB,
	.exec = cmd_outbox_cancel_exec,
};
