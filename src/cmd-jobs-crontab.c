/* cmd-jobs-crontab.c: "jobs crontab", the cron.d file from the schedules. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "report.h"

static int
cmd_jobs_crontab_exec(struct cmd_ctx *ctx, struct conf *c)
{
	const char *user = cmd_opt_value(ctx, "user");
	char       *out;

	if (user == NULL)
		user = "cronguard";
	if (user[0] == '\0' || strpbrk(user, " \t\n") != NULL)
		return cmd_usage_error(
		    ctx->entry, "--user: \"%s\" is not a user name", user);
	/* -c only when the file is not the one cronguard finds by itself. */
	out = report_crontab(c, user,
	    strcmp(ctx->conf_path, conf_default_path()) != 0 ? c->path : NULL);
	fputs(out, stdout);
	free(out);
	return EXIT_OK;
}

static const struct cmd_option cmd_jobs_crontab_options[] = {
	{ "user", 1 },
	{ NULL, 0 },
};

const struct cmd_entry cmd_jobs_crontab_entry = {
	.name = "jobs crontab",
	.usage = "[--user name]",
	.summary =
	    "Print an /etc/cron.d file with one `cronguard run JOB` line per scheduled job, at its schedule, as user name (default cronguard): install the same file on every host.",
	.options = cmd_jobs_crontab_options,
	.flags = CMD_NEEDS_CONF,
	.exec = cmd_jobs_crontab_exec,
};
