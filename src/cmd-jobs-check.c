/* cmd-jobs-check.c: placeholder until the command lands. */
#include "config.h"

#include <stdio.h>

#include "cmd.h"

static int
cmd_jobs_check_exec(struct cmd_ctx *ctx, struct conf *c)
{
	(void)ctx;
	(void)c;
	fputs("cronguard: jobs check: not implemented yet\n", stderr);
	return EXIT_SOFTWARE;
}

const struct cmd_entry cmd_jobs_check_entry = {
	.name = "jobs check",
	.usage = "",
	.summary = NULL,
	.flags = 0,
	.exec = cmd_jobs_check_exec,
};
