/* cmd-outbox-purge.c: retention, in small batches by primary key. */
#include "config.h"

#include <getopt.h>
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
	static const struct option longopts[] = {
		{ "sent-before", required_argument, NULL, 's' },
		{ "failed-before", required_argument, NULL, 'f' },
		{ "dry-run", no_argument, NULL, 'n' }, { NULL, 0, NULL, 0 }
	};
	struct db         *db = NULL;
	unsigned long long nsent = 0, nfailed = 0;
	int64_t            sent_ms = -1, failed_ms = -1;
	const char        *e;
	char              *errstr = NULL, a[32], b[32];
	enum db_status     st = DB_OK;
	int                ch, dry = 0, rc = EXIT_OK;

	opterr = 0;
	while ((ch = getopt_long(ctx->argc, ctx->argv, "", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case 's':
		case 'f':
			if (duration_parse(optarg,
			        ch == 's' ? &sent_ms : &failed_ms, &e) != 0)
				return cmd_usage_error(
				    ctx->entry, "%s: %s", optarg, e);
			break;
		case 'n':
			dry = 1;
			break;
		default:
			return cmd_usage_error(ctx->entry, "bad option: %s",
			    ctx->argv[optind - 1]);
		}
	}
	if (optind != ctx->argc)
		return cmd_usage_error(
		    ctx->entry, "unexpected argument: %s", ctx->argv[optind]);
	if (sent_ms < 0 && failed_ms < 0)
		return cmd_usage_error(ctx->entry,
		    "give --sent-before or "
		    "--failed-before");
	if ((rc = cmd_db_connect(ctx, c, &db)) != 0)
		goto out;
	if (sent_ms >= 0)
		st =
		    outbox_purge(db, PURGE_SENT, sent_ms, dry, &nsent, &errstr);
	if (st == DB_OK && failed_ms >= 0)
		st = outbox_purge(
		    db, PURGE_FAILED, failed_ms, dry, &nfailed, &errstr);
	if (st != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	if (dry)
		printf("would delete %llu SENT and %llu FAILED messages\n",
		    nsent, nfailed);
	snprintf(a, sizeof a, "%llu", nsent);
	snprintf(b, sizeof b, "%llu", nfailed);
	log_kv(LOG_INFO, dry ? "outbox_purge_dry_run" : "outbox_purged", "sent",
	    a, "failed", b, NULL);
out:
	db_close(db);
	free(errstr);
	return rc;
}

const struct cmd_entry cmd_outbox_purge_entry = {
	.name = "outbox purge",
	.usage = "[--sent-before duration] [--failed-before duration] "
	         "[--dry-run]",
	.summary = "Delete SENT rows sent, and FAILED rows last tried, longer "
	           "ago than the durations, at most 1000 rows per statement.",
	.flags = CMD_NEEDS_CONF | CMD_OWN_OPTIONS,
	.exec = cmd_outbox_purge_exec,
};
