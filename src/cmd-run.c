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

	memset(&gj, 0, sizeof gj);
	gj.job = j->name;
	gj.argv = j->command;
	gj.sql = j->sql;
	gj.guard = j->guard;
	gj.lock = j->lock;
	gj.runtime_dir = c->runtime_dir;
	gj.max_runtime_ms = j->max_runtime_ms;
	gj.grace_ms = j->grace_ms;
	gj.timeout_ms = j->timeout_ms;
	gj.heartbeat_ms = j->heartbeat_ms;
	gj.lease_ms = j->lease_ms;
	gj.kill_after_ms = GUARD_KILL_AFTER_MS;
	gj.on_lock_lost = j->on_lock_lost;
	gj.busy_exit = j->busy_exit;
	gj.once_per_ms = j->once_per_ms;
	gj.timezone = j->timezone;
	gj.keep_runs = j->keep_runs;
	gj.output = j->output;
	gj.output_max = (size_t)j->output_max;
	gj.ping_url = j->ping_url;
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

const struct cmd_entry cmd_run_entry = {
	.name = "run",
	.usage = "job",
	.summary =
	    "Run a configured job under its guard: the local flock, the named lock and a run record.",
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_NEEDS_CONF,
	.exec = cmd_run_exec,
};
