/* cmd-exec.c: placeholder until the command lands. */
#include "config.h"

#include <stdio.h>

#include "cmd.h"

static int
cmd_exec_exec(struct cmd_ctx *ctx, struct conf *c)
{
	(void)ctx;
	(void)c;
	fputs("cronguard: exec: not implemented yet\n", stderr);
	return EXIT_SOFTWARE;
}

const struct cmd_entry cmd_exec_entry = {
	.name = "exec",
	.usage = "",
	.summary = NULL,
	.flags = 0,
	.exec = cmd_exec_exec,
};
