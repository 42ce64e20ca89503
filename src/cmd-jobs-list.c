/* cmd-jobs-list.c: placeholder until the command lands. */
#include "config.h"

#include <stdio.h>

#include "cmd.h"

static int
cmd_jobs_list_exec(struct cmd_ctx *ctx, struct conf *c)
{
	(void)ctx;
	(void)c;
	fputs("cronguard: jobs list: not implemented yet\n", stderr);
	return EXIT_SOFTWARE;
}

const struct cmd_entry cmd_jobs_list_entry = {
	.name = "jobs list",
	.usage = "",
	.summary = NULL,
	.flags = 0,
	.exec = cmd_jobs_list_exec,
};
