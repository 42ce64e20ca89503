/* cmd-run.c: placeholder until the command lands. */
#include "config.h"

#include <stdio.h>

#include "cmd.h"

static int
cmd_run_exec(struct cmd_ctx *ctx, struct conf *c)
{
	(void)ctx;
	(void)c;
	fputs("cronguard: run: not implemented yet\n", stderr);
	return EXIT_SOFTWARE;
}

const struct cmd_entry cmd_run_entry = {
	.name = "run",
	.usage = "",
	.summary = NULL,
	.flags = 0,
	.exec = cmd_run_exec,
};
