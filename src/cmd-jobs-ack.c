/* cmd-jobs-ack.c: "jobs ack", an operator's acknowledgement of a failed
 * or ran-twice slot. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "db.h"
#include "jobctl.h"
#include "schedule.h"
#include "util.h"

/* Time v of job j as a UTC slot (out) and as printed (shown), in the
 * job's zone (the server's without timezone); with check, a slot of its
 * schedule when it has one.  Returns 0, or the exit code having said
 * why. */
static int
ack_slot(struct cmd_ctx *ctx, struct db *db, const struct conf_job *j,
    const char *v, int check, char *out, char *shown)
{
	struct tzone  *z = NULL;
	char          *errstr = NULL;
	enum db_status st;
	int64_t        t;
	int            rc = 0;

	if ((st = jobctl_slot_zone(db, j->name, j->timezone, &z, &errstr)) !=
	    DB_OK)
		rc = cmd_db_error(ctx, st, errstr);
	else if (z == NULL) {
		fprintf(stderr, "cronguard: %s: job %s: %s\n", ctx->entry->name,
		    j->name, errstr);
		rc = EXIT_CONFIG;
	} else if (jobctl_slot_parse(z, check ? j->schedule : NULL, v, &t, out,
	               JOBCTL_SLOT_MAX, &errstr) != 0)
		rc = cmd_usage_error(ctx->entry, "--slot: %s", errstr);
	else
		tzone_format(z, t, shown, TZONE_RFC3339_MAX);
	tzone_free(z);
	free(errstr);
	return rc;
}

/* What the arguments say (cmd_jobs_ack_check), for the exec. */
struct jobs_ack_args {
	const char *reason;
};

static int
cmd_jobs_ack_check(struct cmd_ctx *ctx, const struct conf *c)
{
	struct jobs_ack_args *a = ctx->state;
	int                   rc;

	if ((rc = cmd_jobs_known(ctx, c)) != 0)
		return rc;
	return cmd_reason_option(ctx, 1, JOBCTL_REASON_MAX, &a->reason);
}

static int
cmd_jobs_ack_exec(struct cmd_ctx *ctx, struct conf *c)
{
	const struct jobs_ack_args *a = ctx->state;
	struct db                  *db = ctx->db;
	const char                 *job = ctx->args[0], *v;
	char          *errstr = NULL, *failed = NULL, slot[JOBCTL_SLOT_MAX];
	char           shown[TZONE_RFC3339_MAX];
	enum db_status st;
	int            rc = EXIT_OK;

	v = cmd_opt_value(ctx, "slot");
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
		/* Stored in UTC; shown, as every slot, in the job's zone. */
		snprintf(slot, sizeof slot, "%.19s", failed);
		free(failed);
		failed = xasprintf("%sZ", slot);
	}
	if ((rc = ack_slot(ctx, db, conf_job_find(c, job),
	         v != NULL ? v : failed, v != NULL, slot, shown)) != 0)
		goto out;
	if ((st = jobctl_ack(db, job, slot, a->reason, &errstr)) != DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	printf(
	    "acknowledged %s slot %s by %s\n", job, shown, jobctl_identity());
out:
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
	.flags = CMD_NEEDS_DB | CMD_OPENS_DB,
	.check = cmd_jobs_ack_check,
	.state_size = sizeof(struct jobs_ack_args),
	.exec = cmd_jobs_ack_exec,
};
