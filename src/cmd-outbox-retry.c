/* cmd-outbox-retry.c: FAILED rows back to PENDING, attempts reset. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "db.h"
#include "outbox-admin.h"
#include "util.h"

static int
id_seen(const unsigned long long *ids, size_t n, unsigned long long id)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (ids[i] == id)
			return 1;
	}
	return 0;
}

static int
cmd_outbox_retry_exec(struct cmd_ctx *ctx, struct conf *c)
{
	unsigned long long *ids = NULL, n = 0;
	struct db          *db = NULL;
	const char         *channel, *e;
	char               *errstr = NULL;
	enum db_status      st;
	size_t              nids = 0;
	int                 i, all, rc = EXIT_OK;

	all = cmd_opt_count(ctx, "failed") > 0;
	channel = cmd_opt_value(ctx, "channel");
	if (all == (ctx->nargs > 0))
		return cmd_usage_error(
		    ctx->entry, "give message ids or --failed");
	if (channel != NULL && !all)
		return cmd_usage_error(
		    ctx->entry, "--channel goes with --failed");
	ids = xcalloc((size_t)ctx->nargs + 1, sizeof *ids);
	for (i = 0; i < ctx->nargs; i++) {
		if (parse_ull(ctx->args[i], UINT64_MAX, &ids[nids], &e) != 0) {
			rc = cmd_usage_error(
			    ctx->entry, "bad id %s: %s", ctx->args[i], e);
			goto out;
		}
		if (!id_seen(ids, nids, ids[nids])) /* "retry 5 5" is one */
			nids++;
	}
	if ((rc = cmd_db_connect(ctx, c, &db)) != 0)
		goto out;
	st = all ? outbox_retry_failed(db, channel, &n, &errstr)
	         : outbox_retry_ids(db, ids, nids, &n, &errstr);
	if (st != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	printf("%llu message%s back to PENDING\n", n, n == 1 ? "" : "s");
	if (!all && n != nids) {
		fprintf(stderr,
		    "cronguard: outbox retry: %llu of %zu ids are not FAILED messages (see outbox show)\n",
		    (unsigned long long)nids - n, nids);
		rc = EXIT_DATAERR;
	}
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
	    "Put FAILED rows back to PENDING, due now, attempts reset.  Exit 65 if a given id is not a FAILED row.",
	.options = cmd_outbox_retry_options,
	.max_args = -1,
	.flags = CMD_NEEDS_DB,
	.exec = cmd_outbox_retry_exec,
};
