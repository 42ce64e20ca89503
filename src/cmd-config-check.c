/* cmd-config-check.c: parse and validate the configuration, print it. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "conf.h"

/*
 * The configuration is loaded and validated by the command layer
 * (CMD_NEEDS_CONF), which prints "file:line: message" and exits 78 on any
 * error; reaching exec means it is valid.  Printing the effective values
 * shows the defaults an operator did not write down; what is likely wrong
 * but not fatal everywhere goes to stderr as warnings (exit 0).
 */
static int
cmd_config_check_exec(struct cmd_ctx *ctx, struct conf *c)
{
	char  *errstr;
	size_t i;
	int    rv;

	(void)ctx;
	conf_print(c);
	for (i = 0; i < c->nwarnings; i++)
		fprintf(stderr, "cronguard: warning: %s\n", c->warnings[i]);
	/* A channel's secret is needed only where outbox dispatch runs: a
	 * host that only runs jobs may lack it, so this is no error. */
	for (i = 0; i < c->nchannels; i++) {
		if (conf_read_secrets(c, c->channels[i].name, &errstr) == 0)
			continue;
		fprintf(stderr,
		    "cronguard: warning: %s (needed where outbox dispatch sends on channel %s)\n",
		    errstr, c->channels[i].name);
		free(errstr);
	}
	/* The same for a job's ping_url_file, needed where the job runs. */
	for (i = 0; i < c->njobs; i++) {
		if ((rv = conf_read_job_secrets(c, c->jobs[i].name, &errstr)) ==
		    0)
			continue;
		if (rv == -2) {
			/* Readable but wrong: the job could never ping. */
			fprintf(stderr, "cronguard: %s\n", errstr);
			free(errstr);
			return EXIT_CONFIG;
		}
		fprintf(stderr,
		    "cronguard: warning: %s (needed where job %s runs)\n",
		    errstr, c->jobs[i].name);
		free(errstr);
	}
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
