/* cmd-run.c: "run JOB", a configured job under its guard. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "duration.h"
#include "guard.h"
#include "lock.h"

static int
cmd_run_exec(struct cmd_ctx *ctx, struct conf *c)
{
	const struct conf_job *j;
	struct guard_job       gj;
	struct conf_database   db;
	char                  *errstr = NULL;

	if ((j = conf_job_find(c, ctx->args[0])) == NULL)
		return cmd_usage_error(
		    ctx->entry, "no job \"%s\" in %s", ctx->args[0], c->path);
	if (conf_read_job_secrets(c, j->name, &errstr) != 0) {
		fprintf(stderr, "cronguard: %s\n", errstr);
		free(errstr);
		return EXIT_CONFIG;
	}

	guard_job_from_conf(&gj, c, j);
	gj.slot_arg = cmd_opt_value(ctx, "slot");
	if (gj.slot_arg != NULL && gj.schedule == NULL)
		return cmd_usage_error(
		    ctx->entry, "--slot: job \"%s\" has no schedule", j->name);
	/*
	 * An SQL job's statement is one long read on the lock session: the
	 * configured read_timeout, meant for short queries, would cut it off
	 * as a lost session and take the lock with it.  The job's timeout
	 * (KILL QUERY) bounds it instead, with read_timeout as the margin for
	 * the kill to take effect; without a timeout nothing does, as for a
	 * command job.  t0335 shows it.
	 */
	db = c->db;
	if (j->sql != NULL)
		db.read_timeout_ms = j->timeout_ms > 0
		    ? j->timeout_ms + c->db.read_timeout_ms
		    : DURATION_MAX_MS;
	/* Without a database (guard "local" or "none" only, conf.c checks)
	 * there is no run record. */
	return cmd_run_job(&gj, c->have_database ? &lock_db_real : NULL, &db);
}

static const struct cmd_option cmd_run_options[] = {
	{ "slot", 1 },
	{ NULL, 0 },
};

const struct cmd_entry cmd_run_entry = {
	.name = "run",
	.usage = "job [--slot time]",
	.summary =
	    "Run a configured job under its guard: the local flock, the named lock and a run record; with a schedule, once per slot.",
	.options = cmd_run_options,
	.min_args = 1,
	.max_args = 1,
	/* One operand, the job: --slot may follow it, as the synopsis
	 * has it. */
	.flags = CMD_NEEDS_CONF,
	.exec = cmd_run_exec,
};
