/* cmd-outbox-check.c: placeholder until the command lands. */
#include "config.h"

#include <stdio.h>

#include "cmd.h"

static int
cmd_outbox_check_exec(struct cmd_ctx *ctx, struct conf *c)
{
	(void)ctx;
	(void)c;
	fputs("cronguard: outbox check: not implemented yet\n", stderr);
	return EXIT_SOFTWARE;
}

const struct cmd_entry cmd_outbox_check_entry = {
	.name = "outbox check",
	.usage = "",
	.summary = NULL,
	.flags = 0,
	.exec = cmd_outbox_check_exec,
};
