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

/* What the arguments say (cmd_outbox_purge_check), for the exec. */
struct outbox_purge_args {
	int64_t             sent_ms, failed_ms; /* -1: not given */
	long long           rate;               /* rows a second; 0 unpaced */
	int                 dry;
	unsigned long long *ids;
	size_t              nids;
};

static int
cmd_outbox_purge_check(struct cmd_ctx *ctx, const struct conf *c)
{
	struct outbox_purge_args *a = ctx->state;
	const char               *e, *v;

	a->sent_ms = a->failed_ms = -1;
	if ((v = cmd_opt_value(ctx, "sent-before")) != NULL &&
	    duration_parse(v, &a->sent_ms, &e) != 0)
		return cmd_usage_error(
		    ctx->entry, "--sent-before: %s: %s", v, e);
	if ((v = cmd_opt_value(ctx, "failed-before")) != NULL &&
	    duration_parse(v, &a->failed_ms, &e) != 0)
		return cmd_usage_error(
		    ctx->entry, "--failed-before: %s: %s", v, e);
	a->rate = OUTBOX_PURGE_RATE;
	if ((v = cmd_opt_value(ctx, "rate")) != NULL &&
	    parse_ll(v, 0, OUTBOX_PURGE_RATE_MAX, &a->rate, &e) != 0)
		return cmd_usage_error(ctx->entry, "--rate %s: %s", v, e);
	a->dry = cmd_opt_count(ctx, "dry-run") > 0;
	if ((a->sent_ms >= 0 || a->failed_ms >= 0) == (ctx->nargs > 0))
		return cmd_usage_error(ctx->entry,
		    "give message ids, or --sent-before or --failed-before");
	if (ctx->nargs > 0 && a->dry)
		return cmd_usage_error(ctx->entry, "--dry-run goes with ages");
	return cmd_parse_ids(ctx, &a->ids, &a->nids);
}

static void
cmd_outbox_purge_free(void *state)
{
	free(((struct outbox_purge_args *)state)->ids);
}

/* outbox purge id...: the rows given. */
static int
purge_ids(struct cmd_ctx *ctx, const struct outbox_purge_args *a)
{
	unsigned long long n = 0;
	char              *errstr = NULL;
	enum db_status     st;
	int                rc;

	st = outbox_ids(
	    ctx->db, OUTBOX_IDS_PURGE, a->ids, a->nids, NULL, &n, &errstr);
	if (st != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		free(errstr);
		return rc;
	}
	printf("deleted %llu message%s\n", n, n == 1 ? "" : "s");
	return cmd_ids_changed(ctx, n, a->nids, "SENT, FAILED or CANCELLED");
}

static int
cmd_outbox_purge_exec(struct cmd_ctx *ctx, struct conf *c)
{
	const struct outbox_purge_args *a = ctx->state;
	struct db                      *db = ctx->db;
	unsigned long long              nsent = 0, nfailed = 0;
	char                           *errstr = NULL, sent[32], failed[32];
	enum db_status                  st = DB_OK;
	int                             rc = EXIT_OK;

	if (a->nids > 0)
		return purge_ids(ctx, a);
	if (a->sent_ms >= 0)
		st = outbox_purge(db, PURGE_SENT, a->sent_ms, a->dry,
		    (unsigned)a->rate, &nsent, &errstr);
	if (st == DB_OK && a->failed_ms >= 0)
		st = outbox_purge(db, PURGE_FAILED, a->failed_ms, a->dry,
		    (unsigned)a->rate, &nfailed, &errstr);
	if (st != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	printf("%s %llu SENT or CANCELLED and %llu FAILED messages\n",
	    a->dry ? "would delete" : "deleted", nsent, nfailed);
	snprintf(sent, sizeof sent, "%llu", nsent);
	snprintf(failed, sizeof failed, "%llu", nfailed);
	log_kv(LOG_INFO, a->dry ? "outbox_purge_dry_run" : "outbox_purged",
	    "sent", sent, "failed", failed);
out:
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
	.flags = CMD_NEEDS_DB | CMD_OPENS_DB,
	.check = cmd_outbox_purge_check,
	.state_size = sizeof(struct outbox_purge_args),
	.state_free = cmd_outbox_purge_free,
	.exec = cmd_outbox_purge_exec,
};
