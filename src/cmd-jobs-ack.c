/* cmd-jobs-ack.c: "jobs ack", an operator's acknowledgement of a failed
 * or ran-twice slot. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "db.h"
#include "jobctl.h"
#include "util.h"

static int
cmd_jobs_ack_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct db     *db = NULL;
	const char    *job = ctx->args[0], *v, *reason;
	char          *errstr = NULL, *failed = NULL, slot[JOBCTL_SLOT_MAX];
	enum db_status st;
	int            rc;

	if ((rc = cmd_jobs_known(ctx, c)) != 0)
		return rc;
	if ((rc = cmd_reason_option(ctx, 1, JOBCTL_REASON_MAX, &reason)) != 0)
		return rc;
	v = cmd_opt_value(ctx, "slot");
	if (v != NULL &&
	    jobctl_slot_parse(conf_job_find(c, job)->timezone, v, slot,
	        sizeof slot, &errstr) != 0) {
		rc = cmd_usage_error(ctx->entry, "--slot: %s", errstr);
		goto out;
	}
	if ((rc = cmd_db_connect(ctx, c, &db)) != 0)
		goto out;
	if (v == NULL) {
		if ((st = jobctl_failed_slot(db, job, &failed, &errstr)) !=
		    DB_OK) {
			rc = cmd_db_error(ctx, st, errstr);
			goto out;
		}
		if (failed == NULL) {
			fprintf(stderr,
			    "cronguard: %s: no slot of %s has a failed run (give --slot)\n",
			    ctx->entry->name, job);
			rc = EXIT_DATAERR;
			goto out;
		}
		snprintf(slot, sizeof slot, "%.19s", failed);
	}
	if ((st = jobctl_ack(db, job, slot, reason, &errstr)) != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	printf("acknowledged %s slot %s UTC by %s\n", job, slot,
	    jobctl_identity());
out:
	db_close(db);
	free(failed);
	free(errstr);
	return rc;
}

static const struct cmd_option cmd_jobs_ack_options[] = {
	{ "slot", 1 },
	{ "reason", 1 },
	{ NULL, 0 },
};

const struct cmd_entry cmd_jobs_ack_entry = {
	.name = "jobs ack",
	.usage = "job [--slot time] --reason text",
	.summary =
	    "Acknowledge a failed or ran-twice slot of the job, so that jobs check stops reporting it; who, when and why are kept in the database.  Without --slot: the latest slot with a failed run (exit 65 when there is none).",
	.options = cmd_jobs_ack_options,
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_NEEDS_DB | CMD_OPTIONS_ANYWHERE,
	.exec = cmd_jobs_ack_exec,
};
