/* cmd-locks.c: placeholder until the command lands. */
#include "config.h"

#include <stdio.h>

#include "cmd.h"

static int
cmd_locks_exec(struct cmd_ctx *ctx, struct conf *c)
{
	(void)ctx;
	(void)c;
	fputs("cronguard: locks: not implemented yet\n", stderr);
	return EXIT_SOFTWARE;
}

const struct cmd_entry cmd_locks_entry = {
	.name = "locks",
	.usage = "",
	.summary = NULL,
	.flags = 0,
	.exec = cmd_locks_exec,
};
