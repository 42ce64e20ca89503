/*
 * cmd-outbox-dispatch.c: options and reporting of `outbox dispatch`; the
 * engine (passes, deadline, limits) is dispatch.c.
 */
#include "config.h"

#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "db.h"
#include "dispatch.h"
#include "duration.h"
#include "log.h"
#include "util.h"

static volatile sig_atomic_t cmd_outbox_dispatch_stop;

/* Signals that stop dispatch (claimed but unsent rows go back at once)
 * and signals ignored while it runs; the old handlers are restored. */
static const int cmd_outbox_dispatch_stop_signals[] = { SIGTERM, SIGINT,
	SIGHUP };
static const int cmd_outbox_dispatch_ignore_signals[] = { SIGUSR1, SIGUSR2,
	SIGPIPE };

static void
cmd_outbox_dispatch_signal(int sig)
{
	(void)sig;
	cmd_outbox_dispatch_stop = 1;
}

static void
cmd_outbox_dispatch_summary(const struct dispatch_stats *st)
{
	char s[6][32], ms[32];

	snprintf(s[5], sizeof s[5], "%llu", st->recovered);
	snprintf(s[0], sizeof s[0], "%llu", st->tally.sent);
	snprintf(s[1], sizeof s[1], "%llu", st->tally.retried);
	snprintf(s[2], sizeof s[2], "%llu", st->tally.failed);
	snprintf(s[3], sizeof s[3], "%llu", st->tally.released);
	snprintf(s[4], sizeof s[4], "%llu", st->tally.lost);
	snprintf(ms, sizeof ms, "%lld", (long long)st->ms);
	log_kv(LOG_INFO, "outbox_dispatched", "sent", s[0], "retried", s[1],
	    "failed", s[2], "released", s[3], "lost", s[4], "recovered", s[5],
	    "ms", ms, NULL);
}

static int
cmd_outbox_dispatch_exec(struct cmd_ctx *ctx, struct conf *c)
{
	static const struct option longopts[] = { { "for", required_argument,
		                                      NULL, 'f' },
		{ "channel", required_argument, NULL, 'c' },
		{ "batch", required_argument, NULL, 'b' },
		{ "bench-no-send", no_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 } };
	struct dispatch_opts       opts;
	struct dispatch_stats      stats;
	struct dispatch           *dp = NULL;
	enum dispatch_status       st;
	struct db                 *db = NULL;
	struct sigaction           sa, ign;
	struct sigaction old_stop[nitems(cmd_outbox_dispatch_stop_signals)];
	struct sigaction old_ign[nitems(cmd_outbox_dispatch_ignore_signals)];
	size_t           i;
	const char     **only = NULL;
	char            *errstr = NULL;
	size_t           nonly = 0;
	long long        v;
	const char      *e;
	int              ch, rc = EXIT_OK;

	memset(&opts, 0, sizeof opts);
	opts.batch = c->outbox.batch_size;
	opts.stop = &cmd_outbox_dispatch_stop;
	only = xcalloc((size_t)ctx->argc + 1, sizeof *only);
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(ctx->argc, ctx->argv, "", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case 'f':
			if (duration_parse(optarg, &opts.for_ms, &e) != 0) {
				rc = cmd_usage_error(
				    ctx->entry, "--for %s: %s", optarg, e);
				goto out;
			}
			break;
		case 'c':
			if (conf_channel_find(c, optarg) == NULL) {
				rc = cmd_usage_error(ctx->entry,
				    "--channel "
				    "%s: no such channel in %s",
				    optarg,
				    c->path != NULL ? c->path
				                    : "configuration");
				goto out;
			}
			only[nonly++] = optarg;
			break;
		case 'b':
			if (parse_ll(optarg, 1, 1000, &v, &e) != 0) {
				rc = cmd_usage_error(ctx->entry,
				    "--batch %s: "
				    "%s",
				    optarg, e);
				goto out;
			}
			opts.batch = (unsigned)v;
			break;
		case 'N':
			opts.no_send = true;
			break;
		default:
			rc = cmd_usage_error(ctx->entry, "bad option: %s",
			    ctx->argv[optind - 1]);
			goto out;
		}
	}
	if (optind != ctx->argc) {
		rc = cmd_usage_error(
		    ctx->entry, "unexpected argument: %s", ctx->argv[optind]);
		goto out;
	}
	opts.channels = only;
	opts.nchannels = nonly;
	if ((rc = cmd_need_db(ctx, c)) != 0)
		goto out;
	if (dispatch_open(c, &opts, &dp, &errstr) != DISPATCH_OK) {
		fprintf(stderr, "cronguard: %s\n", errstr);
		rc = EXIT_CONFIG;
		goto out;
	}
	if (dispatch_nchannels(dp) == 0)
		log_kv(LOG_WARN, "outbox_no_channels", "msg",
		    "no channel configured: nothing to dispatch", NULL);
	if ((rc = cmd_db_connect(ctx, c, &db)) != 0)
		goto out;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = cmd_outbox_dispatch_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: a sleep ends at once */
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	for (i = 0; i < nitems(cmd_outbox_dispatch_stop_signals); i++)
		sigaction(
		    cmd_outbox_dispatch_stop_signals[i], &sa, &old_stop[i]);
	for (i = 0; i < nitems(cmd_outbox_dispatch_ignore_signals); i++)
		sigaction(
		    cmd_outbox_dispatch_ignore_signals[i], &ign, &old_ign[i]);

	st = dispatch_run(dp, db, &stats, &errstr);
	if (st == DISPATCH_ERR_SESSION) {
		rc = cmd_db_error(ctx, stats.db, errstr);
	} else {
		if (st != DISPATCH_OK) {
			log_kv(LOG_ERROR, "outbox_dispatch_failed", "error",
			    errstr, NULL);
			rc = exitcode_db(stats.db);
		}
		if (stats.stopped)
			log_kv(LOG_INFO, "outbox_dispatch_stopped", "msg",
			    "stopped by signal", NULL);
		cmd_outbox_dispatch_summary(&stats);
	}

	for (i = 0; i < nitems(cmd_outbox_dispatch_stop_signals); i++)
		sigaction(
		    cmd_outbox_dispatch_stop_signals[i], &old_stop[i], NULL);
	for (i = 0; i < nitems(cmd_outbox_dispatch_ignore_signals); i++)
		sigaction(
		    cmd_outbox_dispatch_ignore_signals[i], &old_ign[i], NULL);
out:
	dispatch_close(dp);
	db_close(db);
	free(only); /* the names are argv's */
	free(errstr);
	return rc;
}

const struct cmd_entry cmd_outbox_dispatch_entry = {
	.name = "outbox dispatch",
	.usage = "[--for duration] [--channel name]... [--batch n]",
	.summary = "Recover stale claims, then claim, send and finalise due "
	           "messages until none is due; with --for, keep polling.",
	.flags = CMD_NEEDS_CONF | CMD_OWN_OPTIONS,
	.exec = cmd_outbox_dispatch_exec,
};
