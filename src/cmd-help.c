/* cmd-help.c: "help COMMAND". */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cmd.h"

static int
cmd_help_exec(struct cmd_ctx *ctx, struct conf *c)
{
	char   name[128];
	size_t i;
	int    r;

	(void)c;
	r = snprintf(name, sizeof name, "%s%s%s", ctx->args[0],
	    ctx->nargs == 2 ? " " : "", ctx->nargs == 2 ? ctx->args[1] : "");
	if (r < 0 || (size_t)r >= sizeof name)
		return cmd_usage_error(ctx->entry, "command name too long");
	for (i = 0; cmd_table[i] != NULL; i++) {
		if (strcmp(cmd_table[i]->name, name) == 0) {
			cmd_usage(cmd_table[i], stdout);
			if (cmd_table[i]->summary != NULL)
				printf("\n%s\n", cmd_table[i]->summary);
			return EXIT_OK;
		}
	}
	return cmd_usage_error(ctx->entry, "unknown command '%s'", name);
}

const struct cmd_entry cmd_help_entry = {
	.name = "help",
	.usage = "command",
	.summary = "Print the usage of a command.",
	.min_args = 1,
	.max_args = 2,
	.flags = 0,
	.exec = cmd_help_exec,
};
