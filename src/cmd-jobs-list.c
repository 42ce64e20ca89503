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

/* "2026-11-29 10:00:00" from a DATETIME(6) value: seconds are enough in
 * a table. */
static const char *
short_time(const char *dt, char *buf, size_t len)
{
	if (dt == NULL)
		return "-";
	snprintf(buf, len, "%.19s", dt);
	return buf;
}

static const char *
job_lock(const struct conf_job *j)
{
	return j->guard != GUARD_LOCAL && j->guard != GUARD_NONE ? j->lock
	                                                         : NULL;
}

/* Under the job's row, indented so that the rows stay the table's. */
static void
print_pause(const struct job_pause *p)
{
	char *text;

	if ((text = jobctl_pause_text(p)) == NULL)
		return;
	printf("  %s\n", text);
	free(text);
}

/* Under a scheduled job's row: its schedule, latest and next slot. */
static void
print_schedule(const struct conf_job *j, const struct job_slot_info *si)
{
	if (j->schedule_text == NULL)
		return;
	printf("  schedule \"%s\"%s%s%s: latest slot %s %s, next %s\n",
	    j->schedule_text, j->timezone != NULL ? " (" : "",
	    j->timezone != NULL ? j->timezone : "",
	    j->timezone != NULL ? ")" : "",
	    si->latest[0] != '\0' ? si->latest : "-",
	    si->latest_done ? "done" : "not done",
	    si->next[0] != '\0' ? si->next : "-");
}

static void
print_text(const struct conf *c, const struct job_summary *js,
    const struct job_pause *pauses, const struct job_slot_info *slots)
{
	const struct conf_job *j;
	char                   run[32], ok[32], fence[32];
	const char            *lock;
	int                    wjob = 3, wlock = 4, n;
	size_t                 i;

	for (i = 0; i < c->njobs; i++) {
		j = &c->jobs[i];
		if ((n = (int)strlen(j->name)) > wjob)
			wjob = n;
		if ((lock = job_lock(j)) != NULL &&
		    (n = (int)strlen(lock)) > wlock)
			wlock = n;
	}
	printf("%-*s  %-10s  %-*s  %-19s  %-9s  %-19s  %s\n", wjob, "JOB",
	    "GUARD", wlock, "LOCK", "LAST RUN", "OUTCOME", "LAST SUCCESS",
	    "FENCE");
	for (i = 0; i < c->njobs; i++) {
		j = &c->jobs[i];
		if (js[i].last_fence != 0)
			snprintf(fence, sizeof fence, "%llu", js[i].last_fence);
		else
			snprintf(fence, sizeof fence, "-");
		printf("%-*s  %-10s  %-*s  %-19s  %-9s  %-19s  %s\n", wjob,
		    j->name, guard_name(j->guard), wlock,
		    job_lock(j) != NULL ? job_lock(j) : "-",
		    short_time(js[i].last_started, run, sizeof run),
		    js[i].last_outcome != NULL ? js[i].last_outcome : "-",
		    short_time(js[i].last_success, ok, sizeof ok), fence);
		print_schedule(j, &slots[i]);
		print_pause(&pauses[i]);
	}
}

static void
print_json(const struct conf *c, const struct job_summary *js,
    const struct job_pause *pauses, const struct job_slot_info *slots)
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
	out = report_jobs_list_json(rows, c->njobs);
	fputs(out, stdout);
	free(out);
	free(rows);
}

static int
cmd_jobs_list_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct db            *db = NULL;
	struct job_summary   *js = NULL;
	struct job_pause     *pauses = NULL;
	struct job_slot_info *slots = NULL;
	char                 *errstr = NULL;
	enum db_status        st;
	int                   json, rc = EXIT_OK;
	size_t                i;

	if ((rc = cmd_format_option(ctx, &json)) != 0)
		return rc;
	if (c->have_database && (rc = cmd_db_connect(ctx, c, &db)) != 0)
		return rc;
	js = xcalloc(c->njobs + 1, sizeof *js);
	pauses = xcalloc(c->njobs + 1, sizeof *pauses);
	slots = xcalloc(c->njobs + 1, sizeof *slots);
	for (i = 0; i < c->njobs; i++) {
		js[i].last_success_ts = -1;
		if (db != NULL &&
		    (st = runs_job_summary(
		         db, c->jobs[i].name, &js[i], &errstr)) != DB_OK) {
			rc = cmd_db_error(ctx, st, errstr);
			goto out;
		}
		if (db != NULL &&
		    (st = jobctl_pause_get(
		         db, c->jobs[i].name, &pauses[i], &errstr)) != DB_OK) {
			rc = cmd_db_error(ctx, st, errstr);
			goto out;
		}
		if (db != NULL && c->jobs[i].schedule != NULL &&
		    (st = runs_slot_info(db, c->jobs[i].name,
		         c->jobs[i].schedule, c->jobs[i].timezone, &slots[i],
		         &errstr)) != DB_OK) {
			rc = cmd_db_error(ctx, st, errstr);
			goto out;
		}
	}
	if (json)
		print_json(c, js, pauses, slots);
	else
		print_text(c, js, pauses, slots);
out:
	for (i = 0; i < c->njobs; i++) {
		runs_job_summary_free(&js[i]);
		jobctl_pause_free(&pauses[i]);
	}
	free(js);
	free(pauses);
	free(slots);
	free(errstr);
	db_close(db);
	return rc;
}

const struct cmd_entry cmd_jobs_list_entry = {
	.name = "jobs list",
	.usage = "[--format text|json]",
	.summary =
	    "List the configured jobs with their guard, lock name, last run, last success (database clock, UTC) and the fencing token of the last run; under a paused job, who paused it, since and until when, and why; under a scheduled job, its schedule, the latest slot (done or not) and the next.",
	.options = cmd_format_template,
	.flags = CMD_NEEDS_CONF | CMD_READS_ONLY,
	.exec = cmd_jobs_list_exec,
};
