/*
 * cmd-outbox-dispatch.c: options and reporting of `outbox dispatch`; the
 * engine (passes, deadline, limits) is dispatch.c.
 */
#include "config.h"

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
 * and signals ignored while it runs, from the start of the command (held
 * since main began, cmd_signals_hold); the old handlers are restored. */
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
	char s[7][32], ms[32];

	snprintf(s[6], sizeof s[6], "%llu", st->conflicts);
	snprintf(s[5], sizeof s[5], "%llu", st->recovered);
	snprintf(s[0], sizeof s[0], "%llu", st->tally.sent);
	snprintf(s[1], sizeof s[1], "%llu", st->tally.retried);
	snprintf(s[2], sizeof s[2], "%llu", st->tally.failed);
	snprintf(s[3], sizeof s[3], "%llu", st->tally.released);
	snprintf(s[4], sizeof s[4], "%llu", st->tally.lost);
	snprintf(ms, sizeof ms, "%lld", (long long)st->ms);
	log_kv(LOG_INFO, "outbox_dispatched", "sent", s[0], "retried", s[1],
	    "failed", s[2], "released", s[3], "lost", s[4], "recovered", s[5],
	    "conflicts", s[6], "ms", ms);
}

/* The actions the signals had before dispatch set its own. */
struct dispatch_old_actions {
	struct sigaction stop[nitems(cmd_outbox_dispatch_stop_signals)];
	struct sigaction ign[nitems(cmd_outbox_dispatch_ignore_signals)];
};

/* The stop signals stop dispatch, the others are ignored; the actions
 * they had into *old. */
static void
dispatch_signals_set(struct dispatch_old_actions *old)
{
	struct sigaction sa, ign;
	size_t           i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = cmd_outbox_dispatch_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: a sleep ends at once */
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	for (i = 0; i < nitems(cmd_outbox_dispatch_stop_signals); i++)
		sigaction(
		    cmd_outbox_dispatch_stop_signals[i], &sa, &old->stop[i]);
	for (i = 0; i < nitems(cmd_outbox_dispatch_ignore_signals); i++)
		sigaction(
		    cmd_outbox_dispatch_ignore_signals[i], &ign, &old->ign[i]);
}

static void
dispatch_signals_restore(const struct dispatch_old_actions *old)
{
	size_t i;

	for (i = 0; i < nitems(cmd_outbox_dispatch_stop_signals); i++)
		sigaction(
		    cmd_outbox_dispatch_stop_signals[i], &old->stop[i], NULL);
	for (i = 0; i < nitems(cmd_outbox_dispatch_ignore_signals); i++)
		sigaction(
		    cmd_outbox_dispatch_ignore_signals[i], &old->ign[i], NULL);
}

/* --for, --channel, --batch and --bench-no-send into *opts.  Returns 0,
 * or EXIT_USAGE having said why. */
static int
dispatch_options(
    struct cmd_ctx *ctx, const struct conf *c, struct dispatch_opts *opts)
{
	const char *const *only;
	const char        *e, *v;
	long long          n;
	size_t             i, nonly;

	if ((v = cmd_opt_value(ctx, "for")) != NULL &&
	    duration_parse(v, &opts->for_ms, &e) != 0)
		return cmd_usage_error(ctx->entry, "--for %s: %s", v, e);
	only = cmd_opt_values(ctx, "channel", &nonly);
	for (i = 0; i < nonly; i++) {
		if (conf_channel_find(c, only[i]) == NULL)
			return cmd_usage_error(ctx->entry,
			    "--channel %s: no such channel in %s", only[i],
			    c->path != NULL ? c->path : "configuration");
	}
	if ((v = cmd_opt_value(ctx, "batch")) != NULL) {
		if (parse_ll(v, 1, 1000, &n, &e) != 0)
			return cmd_usage_error(
			    ctx->entry, "--batch %s: %s", v, e);
		opts->batch = (unsigned)n;
	}
	opts->no_send = cmd_opt_count(ctx, "bench-no-send") > 0;
	opts->channels = only;
	opts->nchannels = nonly;
	return 0;
}

/* The secrets of the channels this run sends on, and only theirs.
 * Returns 0, or EXIT_CONFIG having said why. */
static int
dispatch_secrets(struct conf *c, const struct dispatch_opts *opts)
{
	char  *errstr = NULL;
	size_t i, n = opts->nchannels;

	for (i = 0; !opts->no_send && i < (n > 0 ? n : 1); i++) {
		if (conf_read_secrets(
		        c, n > 0 ? opts->channels[i] : NULL, &errstr) != 0) {
			fprintf(stderr, "cronguard: %s\n", errstr);
			free(errstr);
			return EXIT_CONFIG;
		}
	}
	return 0;
}

static int
cmd_outbox_dispatch_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct dispatch_opts        opts;
	struct dispatch_stats       stats;
	struct dispatch_old_actions old;
	struct dispatch            *dp = NULL;
	enum dispatch_status        st;
	enum db_status              dst;
	struct db                  *db = NULL;
	char                       *errstr = NULL;
	int                         rc = EXIT_OK;

	dispatch_signals_set(&old);
	cmd_signals_release();

	memset(&opts, 0, sizeof opts);
	opts.batch = c->outbox.batch_size;
	opts.stop = &cmd_outbox_dispatch_stop;
	/* --for counts from the start of the process, not from a connect
	 * that may have waited for the server (cronguard(1)). */
	opts.start_ms = process_started_ms();
	if ((rc = dispatch_options(ctx, c, &opts)) != 0 ||
	    (rc = dispatch_secrets(c, &opts)) != 0)
		goto out;
	if (dispatch_open(c, &opts, &dp, &errstr) != DISPATCH_OK) {
		fprintf(stderr, "cronguard: %s\n", errstr);
		rc = EXIT_CONFIG;
		goto out;
	}
	if (dispatch_nchannels(dp) == 0)
		log_kv(LOG_WARN, "outbox_no_channels", "msg",
		    "no channel configured: nothing to dispatch");
	/* Stopped before connecting: nothing to do, nothing claimed. */
	if (cmd_outbox_dispatch_stop) {
		log_kv(LOG_INFO, "outbox_dispatch_stopped", "msg",
		    "stopped by signal before the first pass");
		goto out;
	}
	if ((dst = db_connect_until(
	         &c->db, dispatch_deadline(dp), &db, &errstr)) != DB_OK) {
		rc = cmd_db_error(ctx, dst, errstr);
		goto out;
	}

	st = dispatch_run(dp, db, &stats, &errstr);
	if (st != DISPATCH_OK)
		rc = cmd_db_error(ctx, stats.db, errstr);
	if (st != DISPATCH_ERR_SESSION) {
		if (stats.stopped)
			log_kv(LOG_INFO, "outbox_dispatch_stopped", "msg",
			    "stopped by signal");
		cmd_outbox_dispatch_summary(&stats);
	}
out:
	dispatch_close(dp);
	db_close(db);
	dispatch_signals_restore(&old);
	free(errstr);
	return rc;
}

/* --bench-no-send (scripts/bench-outbox) is left out of the usage: it
 * claims and finalises without sending. */
static const struct cmd_option cmd_outbox_dispatch_options[] = {
	{ "for", 1 },
	{ "channel", 1 },
	{ "batch", 1 },
	{ "bench-no-send", 0 },
	{ NULL, 0 },
};

const struct cmd_entry cmd_outbox_dispatch_entry = {
	.name = "outbox dispatch",
	.usage = "[--for duration] [--channel name]... [--batch n]",
	.summary =
	    "Recover stale claims, then claim, send and finalise due messages until none is due; with --for, keep polling.",
	.options = cmd_outbox_dispatch_options,
	.flags = CMD_NEEDS_DB | CMD_OWN_SIGNALS,
	.exec = cmd_outbox_dispatch_exec,
};
