/* cmd-config-check.c: parse and validate the configuration, print it. */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "conf-print.h"
#include "conf.h"
#include "util.h"

/*
 * The configuration is loaded and validated by the command layer
 * (CMD_NEEDS_CONF), which prints "file:line: message" and exits 78 on any
 * error; reaching exec means it is valid.  Printing the effective values
 * shows the defaults an operator did not write down; what is likely wrong
 * but not fatal everywhere goes to stderr as warnings (exit 0).
 */
/*
 * Why argv0 of a job could not be started here, as run would find it
 * (execvp: a name without a slash is looked up in PATH): NULL when it
 * would start, else an allocated reason with run's exit code.  Only a
 * warning: the job may run on another host.
 */
static char *
config_check_command(const char *argv0)
{
	struct stat st;
	const char *path, *p, *end;
	char       *full;

	if (strchr(argv0, '/') == NULL) {
		if ((path = getenv("PATH")) == NULL || *path == '\0')
			path = "/usr/local/bin:/usr/bin:/bin";
		for (p = path; *p != '\0'; p = *end != '\0' ? end + 1 : end) {
			end = p + strcspn(p, ":");
			full = xasprintf("%.*s/%s", (int)(end - p),
			    end > p ? p : ".", argv0);
			if (stat(full, &st) == 0 && S_ISREG(st.st_mode) &&
			    access(full, X_OK) == 0) {
				free(full);
				return NULL;
			}
			free(full);
		}
		return xasprintf("%s is not in PATH (run exits 127)", argv0);
	}
	if (stat(argv0, &st) != 0)
		return xasprintf("%s: %s (run exits %d)", argv0,
		    strerror(errno), errno == ENOENT ? 127 : 126);
	if (!S_ISREG(st.st_mode))
		return xasprintf(
		    "%s is not a regular file (run exits 126)", argv0);
	if (access(argv0, X_OK) != 0)
		return xasprintf(
		    "%s is not executable by this user: %s (run exits 126)",
		    argv0, strerror(errno));
	return NULL;
}

static int
cmd_config_check_exec(struct cmd_ctx *ctx, struct conf *c)
{
	char  *errstr, *why, *text;
	size_t i;
	int    rv;

	text = conf_print_text(c);
	fputs(text, stdout);
	free(text);
	fflush(stdout);
	for (i = 0; i < c->nwarnings; i++)
		fprintf(stderr, "cronguard: warning: %s\n", c->warnings[i]);
	/* A channel's secret is needed only where outbox dispatch runs: a
	 * host that only runs jobs may lack it, so this is no error; one
	 * that is there but that the channel cannot use is. */
	for (i = 0; i < c->nchannels; i++) {
		if ((rv = conf_read_secrets(c, c->channels[i].name, &errstr)) ==
		    0)
			continue;
		if (rv == -2) {
			fprintf(stderr, "cronguard: %s\n", errstr);
			free(errstr);
			return EXIT_CONFIG;
		}
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
	/* A command that cannot start here is worth saying before cron
	 * finds out: a warning, since the job may run on other hosts. */
	for (i = 0; i < c->njobs; i++) {
		if (c->jobs[i].command == NULL ||
		    (why = config_check_command(c->jobs[i].command[0])) == NULL)
			continue;
		fprintf(stderr, "cronguard: warning: job %s: command %s\n",
		    c->jobs[i].name, why);
		free(why);
	}
	return cmd_stdout_done(ctx);
}

const struct cmd_entry cmd_config_check_entry = {
	.name = "config check",
	.usage = "",
	.summary =
	    "Parse and validate the configuration and print the effective values, secrets masked.",
	.flags = CMD_NEEDS_CONF,
	.exec = cmd_config_check_exec,
};
