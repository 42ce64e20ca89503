/* cmd-outbox-purge.c: placeholder until the command lands. */
#include "config.h"

#include <stdio.h>

#include "cmd.h"

static int
cmd_outbox_purge_exec(struct cmd_ctx *ctx, struct conf *c)
{
	(void)ctx;
	(void)c;
	fputs("cronguard: outbox purge: not implemented yet\n", stderr);
	return EXIT_SOFTWARE;
}

const struct cmd_entry cmd_outbox_purge_entry = {
	.name = "outbox purge",
	.usage = "",
	.summary = NULL,
	.flags = 0,
	.exec = cmd_outbox_purge_exec,
};
