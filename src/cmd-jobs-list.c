/* cmd-jobs-list.c: "jobs list", the configured jobs and their last runs. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "db.h"
#include "jobctl.h"
#include "lock.h"
#include "log.h"
#include "report.h"
#include "runs.h"
#include "util.h"

static const char *
guard_name(enum guard_kind g)
{
	switch (g) {
	case GUARD_NAMED_LOCK:
		return "named_lock";
	case GUARD_LOCAL:
		return "local";
	case GUARD_NONE:
		return ("none");
	case GUARD_LEASE:
		return ("lease");
	case GUARD_AUTO:
		return ("auto");
	}
	return "?";
}

static const char *
job_lock(const struct conf_job *j)
{
	return j->guard != GUARD_LOCAL && j->guard != GUARD_NONE ? j->lock
	                                                         : NULL;
}

/* The rows, in text or JSON (report.c writes both). */
static void
print_rows(const struct conf *c, const struct job_summary *js,
    const struct job_pause *pauses, const struct job_slot_info *slots, int json)
{
	struct report_job_row *rows;
	char                  *out;
	size_t                 i;

	rows = xcalloc(c->njobs + 1, sizeof *rows);
	for (i = 0; i < c->njobs; i++) {
		rows[i].job = c->jobs[i].name;
		rows[i].guard = guard_name(c->jobs[i].guard);
		rows[i].lock = job_lock(&c->jobs[i]);
		rows[i].js = &js[i];
		rows[i].pause = &pauses[i];
		rows[i].schedule = c->jobs[i].schedule_text;
		rows[i].timezone = c->jobs[i].timezone;
		rows[i].slots = &slots[i];
	}
	out = json ? report_jobs_list_json(rows, c->njobs)
	           : report_jobs_list_text(rows, c->njobs);
	fputs(out, stdout);
	free(out);
	free(rows);
}

/* Every job's summary, pause and slots, a few statements whatever their
 * number. */
static enum db_status
jobs_list_read(struct db *db, const struct conf *c, struct job_summary *js,
    struct job_pause *pauses, struct job_slot_info *slots, char **errstr)
{
	struct slot_state *st = NULL;
	struct tzone_held *held = NULL; /* the jobs' zones, in turn */
	const char       **names, **snames;
	size_t            *sidx, i, k, ns = 0;
	enum db_status     rc;

	names = xcalloc(c->njobs + 1, sizeof *names);
	snames = xcalloc(c->njobs + 1, sizeof *snames);
	sidx = xcalloc(c->njobs + 1, sizeof *sidx);
	for (i = 0; i < c->njobs; i++) {
		names[i] = c->jobs[i].name;
		if (c->jobs[i].schedule != NULL) {
			sidx[ns] = i;
			snames[ns++] = c->jobs[i].name;
		}
	}
	st = xcalloc(ns + 1, sizeof *st);
	if ((rc = runs_job_summaries(db, names, c->njobs, js, errstr)) !=
	        DB_OK ||
	    (rc = jobctl_pause_get_all(db, names, c->njobs, pauses, errstr)) !=
	        DB_OK ||
	    (rc = runs_slot_states(db, snames, ns, st, errstr)) != DB_OK)
		goto out;
	for (k = 0; k < ns; k++)
		runs_slot_info_of(&st[k], c->jobs[sidx[k]].schedule,
		    c->jobs[sidx[k]].timezone, &slots[sidx[k]], &held);
	tzone_release(held);
out:
	for (k = 0; k < ns; k++)
		runs_slot_state_free(&st[k]);
	free(st);
	free(names);
	free(snames);
	free(sidx);
	return rc;
}

static int
cmd_jobs_list_exec(struct cmd_ctx *ctx, struct conf *c)
{
	const int            *json = ctx->state;
	struct job_summary   *js = NULL;
	struct job_pause     *pauses = NULL;
	struct job_slot_info *slots = NULL;
	char                 *errstr = NULL;
	enum db_status        st;
	int                   rc = EXIT_OK;
	size_t                i;

	js = xcalloc(c->njobs + 1, sizeof *js);
	pauses = xcalloc(c->njobs + 1, sizeof *pauses);
	slots = xcalloc(c->njobs + 1, sizeof *slots);
	for (i = 0; i < c->njobs; i++)
		js[i].last_success_ts = -1;
	if (ctx->db != NULL &&
	    (st = jobs_list_read(ctx->db, c, js, pauses, slots, &errstr)) !=
	        DB_OK) {
		rc = cmd_db_error(ctx, st, errstr);
		goto out;
	}
	print_rows(c, js, pauses, slots, *json);
out:
	for (i = 0; i < c->njobs; i++) {
		runs_job_summary_free(&js[i]);
		jobctl_pause_free(&pauses[i]);
	}
	free(js);
	free(pauses);
	free(slots);
	free(errstr);
	return rc;
}

const struct cmd_entry cmd_jobs_list_entry = {
	.name = "jobs list",
	.usage = "[--format text|json]",
	.summary =
	    "List the configured jobs with their guard, lock name, last run, last success (database clock, UTC) and the fencing token of the last run; under a paused job, who paused it, since and until when, and why; under a scheduled job, its schedule, the latest slot (done or not) and the next.",
	.options = cmd_format_template,
	.flags = CMD_NEEDS_CONF | CMD_READS_ONLY | CMD_OPENS_DB,
	.check = cmd_format_check,
	.state_size = sizeof(int),
	.exec = cmd_jobs_list_exec,
};
