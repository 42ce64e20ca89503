/* cmd-outbox-purge.c: retention, in small paced batches. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "db.h"
#include "duration.h"
#include "log.h"
#include "outbox-admin.h"
#include "util.h"

static int
cmd_outbox_purge_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct db         *db = NULL;
	unsigned long long nsent = 0, nfailed = 0, n = 0, *ids = NULL;
	size_t             nids = 0;
	int64_t            sent_ms = -1, failed_ms = -1;
	const char        *e, *v;
	char              *errstr = NULL, a[32], b[32];
	enum db_status     st = DB_OK;
	long long          rate = OUTBOX_PURGE_RATE;
	int                dry, rc = EXIT_OK;

	if ((v = cmd_opt_value(ctx, "sent-before")) != NULL &&
	    duration_parse(v, &sent_ms, &e) != 0)
		return cmd_usage_error(
		    ctx->entry, "--sent-before: %s: %s", v, e);
	if ((v = cmd_opt_value(ctx, "failed-before")) != NULL &&
	    duration_parse(v, &failed_ms, &e) != 0)
		return cmd_usage_error(
		    ctx->entry, "--failed-before: %s: %s", v, e);
	if ((v = cmd_opt_value(ctx, "rate")) != NULL &&
	    parse_ll(v, 0, OUTBOX_PURGE_RATE_MAX, &rate, &e) != 0)
		return cmd_usage_error(ctx->entry, "--rate %s: %s", v, e);
	dry = cmd_opt_count(ctx, "dry-run") > 0;
	if ((sent_ms >= 0 || failed_ms >= 0) == (ctx->nargs > 0))
		return cmd_usage_error(ctx->entry,
		    "give message ids, or --sent-before or --failed-before");
	if (ctx->nargs > 0 && dry)
		return cmd_usage_error(ctx->entry, "--dry-run goes with ages");
	if ((rc = cmd_parse_ids(ctx, &ids, &nids)) != 0)
		goto out;
	if ((rc = cmd_db_connect(ctx, c, &db)) != 0)
		goto out;
	if (nids > 0) {
		st = outbox_ids(
		    db, OUTBOX_IDS_PURGE, ids, nids, NULL, &n, &errstr);
		if (st != DB_OK) {
			rc = cmd_db_error(ctx, st, errstr);
			goto out;
		}
		printf("deleted %llu message%s\n", n, n == 1 ? "" : "s");
		rc = cmd_ids_changed(ctx, n, nids, "SENT, FAILED or CANCELLED");
		goto out;
	}
	if (sent_ms >= 0)
		st = outbox_purge(db, PURGE_SENT, sent_ms, dry, (unsigned)rate,
		    &nsent, &errstr);
	if (st == DB_OK && failed_ms >= 0)
		st = outbox_purge(db, PURGE_FAILED, failed_ms, dry,
		    (unsigned)rate, &nfailed, &errstr);
	if (st != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	printf("%s %llu SENT or CANCELLED and %llu FAILED messages\n",
	    dry ? "would delete" : "deleted", nsent, nfailed);
	snprintf(a, sizeof a, "%llu", nsent);
	snprintf(b, sizeof b, "%llu", nfailed);
	log_kv(LOG_INFO, dry ? "outbox_purge_dry_run" : "outbox_purged", "sent",
	    a, "failed", b);
out:
	db_close(db);
	free(ids);
	free(errstr);
	return rc;
}

static const struct cmd_option cmd_outbox_purge_options[] = {
	{ "sent-before", 1 },
	{ "failed-before", 1 },
	{ "dry-run", 0 },
	{ "rate", 1 },
	{ NULL, 0 },
};

const struct cmd_entry cmd_outbox_purge_entry = {
	.name = "outbox purge",
	.usage =
	    "[--sent-before duration] [--failed-before duration] [--rate rows] [--dry-run] | id...",
	.summary =
	    "Delete SENT and CANCELLED rows, and FAILED rows last tried, longer ago than the durations (at most 1000 rows per statement, at most --rate rows a second, default 10000, 0 unpaced), or the SENT, FAILED or CANCELLED rows given by id, and print how many.",
	.options = cmd_outbox_purge_options,
	.max_args = -1,
	.flags = CMD_NEEDS_DB,
	.exec = cmd_outbox_purge_exec,
};
