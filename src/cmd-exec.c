/* cmd-exec.c: "exec --lock NAME -- CMD...", flock(1) for a whole fleet. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "duration.h"
#include "guard.h"
#include "lock.h"
#include "util.h"

static int
cmd_exec_exec(struct cmd_ctx *ctx, struct conf *c)
{
	static const struct option longopts[] = { { "lock", required_argument,
		                                      NULL, 'l' },
		{ "max-runtime", required_argument, NULL, 'm' },
		{ "busy-exit", required_argument, NULL, 'b' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 } };
	struct guard_job           gj;
	struct conf_job            def;
	const char                *errstr;
	long long                  n;
	int                        ch, rc;

	/* The defaults of a configured job (cronguard.conf(5)). */
	conf_job_defaults(&def);
	memset(&gj, 0, sizeof gj);
	gj.guard = GUARD_NAMED_LOCK;
	gj.runtime_dir = c->runtime_dir;
	gj.max_runtime_ms = def.max_runtime_ms;
	gj.grace_ms = def.grace_ms;
	gj.heartbeat_ms = def.heartbeat_ms;
	gj.kill_after_ms = GUARD_KILL_AFTER_MS;
	gj.on_lock_lost = def.on_lock_lost;
	gj.busy_exit = def.busy_exit;
	gj.timeout_ms = def.timeout_ms;

	opterr = 0;
	while ((ch = getopt_long(ctx->argc, ctx->argv, "+", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case 'l':
			if (!conf_lock_name_valid(optarg, &errstr))
				return cmd_usage_error(ctx->entry,
				    "--lock: lock "
				    "name %s",
				    errstr);
			gj.lock = optarg;
			break;
		case 'm':
			if (duration_parse(
			        optarg, &gj.max_runtime_ms, &errstr) != 0 ||
			    gj.max_runtime_ms == 0)
				return cmd_usage_error(ctx->entry,
				    "--max-runtime: %s: %s", optarg,
				    gj.max_runtime_ms == 0 ? "must not be 0"
				                           : errstr);
			break;
		case 'b':
			if (parse_ll(optarg, 0, 255, &n, &errstr) != 0)
				return cmd_usage_error(ctx->entry,
				    "--busy-exit: %s is %s", optarg, errstr);
			gj.busy_exit = (int)n;
			break;
		case 't':
			if (duration_parse(optarg, &gj.timeout_ms, &errstr) !=
			    0)
				return cmd_usage_error(ctx->entry,
				    "--timeout: %s: %s", optarg, errstr);
			break;
		default:
			return cmd_usage_error(ctx->entry,
			    "unknown or "
			    "incomplete option %s",
			    ctx->argv[optind - 1]);
		}
	}
	if (gj.lock == NULL)
		return cmd_usage_error(ctx->entry, "--lock is required");
	if (optind >= ctx->argc)
		return cmd_usage_error(ctx->entry, "no command given");
	if ((rc = cmd_need_db(ctx, c)) != 0)
		return rc;
	gj.job = gj.lock;
	gj.argv = ctx->argv + optind;
	return guard_run(&gj, &lock_db_real, &c->db);
}

const struct cmd_entry cmd_exec_entry = {
	.name = "exec",
	.usage = "--lock name [--max-runtime duration] [--busy-exit n] "
	         "[--timeout duration] -- command [arg ...]",
	.summary = "Run a command under a named lock: flock(1) for a whole "
	           "fleet.  Needs only the database section.",
	.flags = CMD_NEEDS_CONF,
	.exec = cmd_exec_exec,
};
