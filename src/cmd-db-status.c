/* cmd-db-status.c: placeholder until the command lands. */
#include "config.h"

#include <stdio.h>

#include "cmd.h"

static int
cmd_db_status_exec(struct cmd_ctx *ctx, struct conf *c)
{
	(void)ctx;
	(void)c;
	fputs("cronguard: db status: not implemented yet\n", stderr);
	return EXIT_SOFTWARE;
}

const struct cmd_entry cmd_db_status_entry = {
	.name = "db status",
	.usage = "",
	.summary = NULL,
	.flags = 0,
	.exec = cmd_db_status_exec,
};
