/* cmd-exec.c: "exec --lock NAME -- CMD...", flock(1) for a whole fleet. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "duration.h"
#include "guard.h"
#include "lock.h"
#include "util.h"

static int
cmd_exec_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct guard_job gj;
	struct conf_job  j;
	const char      *errstr, *v, *lock;
	long long        n;
	size_t           i;
	int              rc;

	/* A job of the configuration's defaults (cronguard.conf(5)), named
	 * by its lock; the options below override them. */
	conf_job_defaults(&j);
	j.guard = GUARD_NAMED_LOCK;
	/* exec is flock(1): the command's output is its own by default. */
	j.output = OUTPUT_INHERIT;

	if ((lock = cmd_opt_value(ctx, "lock")) == NULL)
		return cmd_usage_error(ctx->entry, "--lock is required");
	if (!conf_lock_name_valid(lock, &errstr))
		return cmd_usage_error(
		    ctx->entry, "--lock: lock name %s", errstr);
	if ((v = cmd_opt_value(ctx, "max-runtime")) != NULL &&
	    (duration_parse(v, &j.max_runtime_ms, &errstr) != 0 ||
	        j.max_runtime_ms == 0))
		return cmd_usage_error(ctx->entry, "--max-runtime: %s: %s", v,
		    j.max_runtime_ms == 0 ? "must not be 0" : errstr);
	if ((v = cmd_opt_value(ctx, "busy-exit")) != NULL) {
		if (parse_ll(v, 0, 255, &n, &errstr) != 0)
			return cmd_usage_error(
			    ctx->entry, "--busy-exit: %s is %s", v, errstr);
		j.busy_exit = (int)n;
	}
	if ((v = cmd_opt_value(ctx, "timeout")) != NULL &&
	    duration_parse(v, &j.timeout_ms, &errstr) != 0)
		return cmd_usage_error(
		    ctx->entry, "--timeout: %s: %s", v, errstr);
	if ((v = cmd_opt_value(ctx, "output")) != NULL) {
		for (i = 0; output_mode_names[i] != NULL &&
		     strcmp(v, output_mode_names[i]) != 0;
		     i++)
			;
		if (output_mode_names[i] == NULL)
			return cmd_usage_error(ctx->entry,
			    "--output: %s is not inherit, capture or on_failure",
			    v);
		j.output = (enum output_mode)i;
	}
	j.name = j.lock = xstrdup(lock);
	j.command = ctx->args;
	guard_job_from_conf(&gj, c, &j);
	/* What exec is not: a configured job that a pause stops or whose
	 * records are pruned (cronguard(1), exec). */
	gj.pausable = 0;
	gj.keep_runs = 0;
	rc = cmd_run_job(&gj, &lock_db_real, &c->db);
	free(j.lock);
	return rc;
}

static const struct cmd_option cmd_exec_options[] = {
	{ "lock", 1 },
	{ "max-runtime", 1 },
	{ "busy-exit", 1 },
	{ "timeout", 1 },
	{ "output", 1 },
	{ NULL, 0 },
};

const struct cmd_entry cmd_exec_entry = {
	.name = "exec",
	.usage =
	    "--lock name [--max-runtime duration] [--busy-exit n] [--timeout duration] [--output inherit|capture|on_failure] -- command [arg ...]",
	.summary =
	    "Run a command under a named lock: flock(1) for a whole fleet.  Needs only the database section.",
	.options = cmd_exec_options,
	.min_args = 1,
	.max_args = -1,
	.flags = CMD_NEEDS_DB | CMD_OPTIONS_FIRST,
	.exec = cmd_exec_exec,
};
