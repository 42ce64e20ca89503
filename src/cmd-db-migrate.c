/* cmd-db-migrate.c: placeholder until the command lands. */
#include "config.h"

#include <stdio.h>

#include "cmd.h"

static int
cmd_db_migrate_exec(struct cmd_ctx *ctx, struct conf *c)
{
	(void)ctx;
	(void)c;
	fputs("cronguard: db migrate: not implemented yet\n", stderr);
	return EXIT_SOFTWARE;
}

const struct cmd_entry cmd_db_migrate_entry = {
	.name = "db migrate",
	.usage = "",
	.summary = NULL,
	.flags = 0,
	.exec = cmd_db_migrate_exec,
};
