/* cmd-config-check.c: placeholder until the command lands. */
#include "config.h"

#include <stdio.h>

#include "cmd.h"

static int
cmd_config_check_exec(struct cmd_ctx *ctx, struct conf *c)
{
	(void)ctx;
	(void)c;
	fputs("cronguard: config check: not implemented yet\n", stderr);
	return EXIT_SOFTWARE;
}

const struct cmd_entry cmd_config_check_entry = {
	.name = "config check",
	.usage = "",
	.summary = NULL,
	.flags = 0,
	.exec = cmd_config_check_exec,
};
