/* cmd-config-check.c: parse and validate the configuration, print it. */
#include "config.h"

#include <stdio.h>

#include "cmd.h"
#include "conf.h"

/*
 * The configuration is loaded and validated by the command layer
 * (CMD_NEEDS_CONF), which prints "file:line: message" and exits 78 on any
 * error; reaching exec means it is valid.  Printing the effective values
 * shows the defaults an operator did not write down.
 */
static int
cmd_config_check_exec(struct cmd_ctx *ctx, struct conf *c)
{
	(void)ctx;
	conf_print(c);
	if (ferror(stdout)) {
		fputs("cronguard: config check: cannot write to stdout\n",
		    stderr);
		return EXIT_SOFTWARE;
	}
	return EXIT_OK;
}

const struct cmd_entry cmd_config_check_entry = {
	.name = "config check",
	.usage = "",
	.summary =
	    "Parse and validate the configuration and print the effective values, secrets masked.",
	.flags = CMD_NEEDS_CONF,
	.exec = cmd_config_check_exec,
};
