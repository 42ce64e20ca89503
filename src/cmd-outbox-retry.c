/* cmd-outbox-retry.c: FAILED rows back to PENDING, attempts reset. */
#include "config.h"

#include <getopt.h>
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
	static const struct option longopts[] = { { "failed", no_argument, NULL,
		                                      'F' },
		{ "channel", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 } };
	unsigned long long        *ids = NULL, n = 0;
	struct db                 *db = NULL;
	const char                *channel = NULL, *e;
	char                      *errstr = NULL;
	enum db_status             st;
	size_t                     nids = 0;
	int                        ch, all = 0, rc = EXIT_OK;

	opterr = 0;
	while ((ch = getopt_long(ctx->argc, ctx->argv, "", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case 'F':
			all = 1;
			break;
		case 'c':
			channel = optarg;
			break;
		default:
			return cmd_usage_error(ctx->entry, "bad option: %s",
			    ctx->argv[optind - 1]);
		}
	}
	if (all == (optind < ctx->argc))
		return cmd_usage_error(
		    ctx->entry, "give message ids or --failed");
	if (channel != NULL && !all)
		return cmd_usage_error(
		    ctx->entry, "--channel goes with --failed");
	ids = xcalloc((size_t)(ctx->argc - optind) + 1, sizeof *ids);
	for (; optind < ctx->argc; optind++) {
		if (parse_ull(ctx->argv[optind], UINT64_MAX, &ids[nids], &e) !=
		    0) {
			rc = cmd_usage_error(
			    ctx->entry, "bad id %s: %s", ctx->argv[optind], e);
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
		    "cronguard: outbox retry: %llu of %zu ids "
		    "are not FAILED messages (see outbox show)\n",
		    (unsigned long long)nids - n, nids);
		rc = EXIT_DATAERR;
	}
out:
	db_close(db);
	free(ids);
	free(errstr);
	return rc;
}

const struct cmd_entry cmd_outbox_retry_entry = {
	.name = "outbox retry",
	.usage = "id... | --failed [--channel name]",
	.summary = "Put FAILED rows back to PENDING, due now, attempts reset.  "
	           "Exit 65 if a given id is not a FAILED row.",
	.flags = CMD_NEEDS_CONF | CMD_OWN_OPTIONS,
	.exec = cmd_outbox_retry_exec,
};
