/* cmd-completion.c: "completion bash|zsh" prints the shell completion
 * script (completion.c); "completion names KIND" the configured names it
 * completes with. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "completion.h"

static int
cmd_completion_exec(struct cmd_ctx *ctx, struct conf *c)
{
	char *s;

	(void)c;
	if (strcmp(ctx->args[0], "bash") == 0)
		s = completion_bash();
	else if (strcmp(ctx->args[0], "zsh") == 0)
		s = completion_zsh();
	else
		return cmd_usage_error(ctx->entry,
		    "unknown shell '%s' (bash or zsh)", ctx->args[0]);
	fputs(s, stdout);
	free(s);
	return EXIT_OK;
}

static int
cmd_completion_names_exec(struct cmd_ctx *ctx, struct conf *c)
{
	char *s;

	if ((s = completion_names(c, ctx->args[0])) == NULL)
		return cmd_usage_error(ctx->entry,
		    "unknown kind '%s' (jobs, channels or locks)",
		    ctx->args[0]);
	fputs(s, stdout);
	free(s);
	return EXIT_OK;
}

const struct cmd_entry cmd_completion_entry = {
	.name = "completion",
	.usage = "bash|zsh",
	.summary =
	    "Print the shell completion script, generated from the command table.",
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_completion_exec,
};

const struct cmd_entry cmd_completion_names_entry = {
	.name = "completion names",
	.usage = "jobs|channels|locks",
	.summary =
	    "Print the configured job, channel or lock names, one a line (for the completion script).",
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_NEEDS_CONF,
	.exec = cmd_completion_names_exec,
};
