/* cmd-outbox-pause.c: stop and restart a channel's deliveries fleet-wide. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "db.h"
#include "duration.h"
#include "log.h"
#include "outbox-admin.h"
#include "util.h"

/* Every operand must be a configured channel: a misspelt name would
 * pause nothing and say nothing. */
static int
pause_check_channels(struct cmd_ctx *ctx, const struct conf *c)
{
	size_t j;
	int    i;

	for (i = 0; i < ctx->nargs; i++) {
		for (j = 0; j < c->nchannels; j++) {
			if (strcmp(ctx->args[i], c->channels[j].name) == 0)
				break;
		}
		if (j == c->nchannels)
			return cmd_usage_error(ctx->entry,
			    "%s: no such channel in %s", ctx->args[i], c->path);
	}
	return 0;
}

/* What the arguments say (cmd_outbox_pause_check), for the exec. */
struct outbox_pause_args {
	const char *for_text; /* --for as given; NULL: until resumed */
	int64_t     for_ms;
	const char *reason;
};

static int
cmd_outbox_pause_check(struct cmd_ctx *ctx, const struct conf *c)
{
	struct outbox_pause_args *a = ctx->state;
	const char               *e, *v;
	int                       rc;

	if ((v = a->for_text = cmd_opt_value(ctx, "for")) != NULL &&
	    duration_parse(v, &a->for_ms, &e) != 0)
		return cmd_usage_error(ctx->entry, "--for: %s: %s", v, e);
	if (v != NULL && a->for_ms <= 0)
		return cmd_usage_error(
		    ctx->entry, "--for: %s: must be more than 0", v);
	if ((rc = cmd_reason_option(
	         ctx, 0, OUTBOX_PAUSE_REASON_MAX, &a->reason)) != 0)
		return rc;
	return pause_check_channels(ctx, c);
}

static int
cmd_outbox_pause_exec(struct cmd_ctx *ctx, struct conf *c)
{
	const struct outbox_pause_args *a = ctx->state;
	char                           *errstr = NULL;
	enum db_status                  st;
	int                             i, rc = EXIT_OK;

	st = outbox_pause(ctx->db, (const char *const *)ctx->args,
	    (size_t)ctx->nargs, a->for_ms, a->reason, &errstr);
	if (st != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	for (i = 0; i < ctx->nargs; i++)
		log_kv(LOG_INFO, "outbox_channel_paused", "channel",
		    ctx->args[i], "for",
		    a->for_text != NULL ? a->for_text : "until resumed",
		    "reason", a->reason);
	printf("%d channel%s paused\n", ctx->nargs, ctx->nargs == 1 ? "" : "s");
out:
	free(errstr);
	return rc;
}

static int
cmd_outbox_resume_exec(struct cmd_ctx *ctx, struct conf *c)
{
	unsigned long long n = 0;
	char              *errstr = NULL;
	enum db_status     st;
	int                rc = EXIT_OK;

	st = outbox_resume(ctx->db, (const char *const *)ctx->args,
	    (size_t)ctx->nargs, &n, &errstr);
	if (st != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	printf("%llu channel%s resumed\n", n, n == 1 ? "" : "s");
out:
	free(errstr);
	return rc;
}

static const struct cmd_option cmd_outbox_pause_options[] = {
	{ "for", 1 },
	{ "reason", 1 },
	{ NULL, 0 },
};

const struct cmd_entry cmd_outbox_pause_entry = {
	.name = "outbox pause",
	.usage = "channel... [--for duration] [--reason text]",
	.summary =
	    "Pause the channels on every host: their rows stay PENDING and are not claimed, no attempt is counted, sends in flight finish.  Until outbox resume, or for the duration.",
	.options = cmd_outbox_pause_options,
	.min_args = 1,
	.max_args = -1,
	.flags = CMD_NEEDS_DB | CMD_OPENS_DB,
	.check = cmd_outbox_pause_check,
	.state_size = sizeof(struct outbox_pause_args),
	.exec = cmd_outbox_pause_exec,
};

const struct cmd_entry cmd_outbox_resume_entry = {
	.name = "outbox resume",
	.usage = "channel...",
	.summary = "End the pause of the channels on every host.",
	.min_args = 1,
	.max_args = -1,
	.flags = CMD_NEEDS_DB | CMD_OPENS_DB,
	.check = pause_check_channels,
	.exec = cmd_outbox_resume_exec,
};
