/* cmd-jobs-check.c: "jobs check", the monitoring check of guarded jobs
 * (cronguard(1), jobs check; cronguard-outbox(7), MONITORING): Nagios line,
 * JSON or Prometheus text. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "db.h"
#include "jobctl.h"
#include "lock.h"
#include "migrate.h"
#include "report.h"
#include "jobcheck.h"
#include "runs.h"
#include "util.h"

/* The schedule of j as jobs check judges it. */
static void
jobs_check_sched(const struct conf_job *j, struct job_sched *s)
{
	memset(s, 0, sizeof *s);
	s->schedule = j->schedule;
	s->timezone = j->timezone;
	s->alert_after_failures = j->alert_after_failures;
	s->alert_level =
	    j->alert_level == ALERT_CRITICAL ? CHECK_CRITICAL : CHECK_WARNING;
}

/*
 * A paused job is OK whatever its run records say: it is not expected to
 * run (cronguard(1), "jobs pause").  Its message says who paused it;
 * what the run records said follows, so that nothing is hidden.
 */
static void
judge_paused(struct job_check *jc, const struct job_pause *p)
{
	char *text, *was;

	if ((text = report_job_pause(p)) == NULL)
		return;
	was = jc->msg.len > 0 ? xstrdup(jc->msg.data) : NULL;
	buf_reset(&jc->msg);
	buf_adds(&jc->msg, text);
	if (was != NULL)
		buf_printf(&jc->msg, " (while paused: %s %s)",
		    check_status_name(jc->status), was);
	jc->status = CHECK_OK;
	free(was);
	free(text);
}

static int
cmd_jobs_check_exec(struct cmd_ctx *ctx, struct conf *c)
{
	enum report_format      fmt = REPORT_NAGIOS;
	enum check_status       st = CHECK_OK;
	const struct conf_job **jobs = NULL, *j;
	struct job_check       *jcs = NULL;
	struct job_sched        sched;
	struct job_pause       *pauses = NULL;
	struct db              *db = NULL;
	const char             *metrics = NULL;
	char                   *errstr = NULL, *error = NULL, *out = NULL;
	size_t                  n = 0, i;
	int                     k;

	if (cmd_check_options(ctx, &fmt, &metrics) != 0)
		return EXIT_USAGE;

	if (ctx->nargs > 0) {
		jobs = xcalloc((size_t)ctx->nargs, sizeof *jobs);
		/* Only jobs found go into jobs[]: its n entries are never
		 * NULL. */
		for (k = 0; k < ctx->nargs; k++) {
			if ((j = conf_job_find(c, ctx->args[k])) == NULL) {
				error = xasprintf("no job \"%s\" in %s",
				    ctx->args[k], c->path);
				break;
			}
			jobs[n++] = j;
		}
	} else {
		jobs = xcalloc(c->njobs + 1, sizeof *jobs);
		for (i = 0; i < c->njobs; i++)
			jobs[n++] = &c->jobs[i];
	}
	jcs = xcalloc(n + 1, sizeof *jcs);
	pauses = xcalloc(n + 1, sizeof *pauses);
	if (error == NULL && !c->have_database)
		error = xasprintf("no database section in %s", c->path);
	if (error == NULL &&
	    (db_connect_check(&c->db, &db, &errstr) != DB_OK ||
	        migrate_check_pending(db, &errstr) != DB_OK)) {
		error = errstr;
		errstr = NULL;
	}
	for (i = 0; error == NULL && i < n; i++) {
		jobs_check_sched(jobs[i], &sched);
		if (jobcheck_run(db, jobs[i], &sched, &jcs[i], &errstr) !=
		        DB_OK ||
		    jobctl_pause_get(db, jobs[i]->name, &pauses[i], &errstr) !=
		        DB_OK) {
			error = errstr;
			errstr = NULL;
			break;
		}
		judge_paused(&jcs[i], &pauses[i]);
		st = check_status_worst(st, jcs[i].status);
	}
	if (error != NULL)
		st = CHECK_UNKNOWN;

	if (metrics != NULL) {
		out = report_jobs(REPORT_PROMETHEUS, st, jcs, pauses, n, error);
		if (write_file_atomic(metrics, out, strlen(out), &errstr) !=
		    0) {
			fprintf(
			    stderr, "cronguard: --metrics-file: %s\n", errstr);
			if (st == CHECK_OK || st == CHECK_WARNING)
				st = CHECK_UNKNOWN;
		}
		free(out);
	}
	out = report_jobs(fmt, st, jcs, pauses, n, error);
	fputs(out, stdout);

	for (i = 0; i < n; i++) {
		jobcheck_free(&jcs[i]);
		jobctl_pause_free(&pauses[i]);
	}
	free(jcs);
	free(pauses);
	free(jobs);
	free(out);
	db_close(db);
	free(error);
	free(errstr);
	return exitcode_check(st);
}

const struct cmd_entry cmd_jobs_check_entry = {
	.name = "jobs check",
	.usage =
	    "[--format nagios|json|prometheus] [--metrics-file path] [job ...]",
	.summary =
	    "Monitoring check: a job whose last success is older than expect_every + grace,\na job still running past max_runtime, or a lock held by a dead or stuck run;\na paused job is OK (jobs pause).\nExit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.",
	.options = cmd_check_template,
	.max_args = -1,
	.flags = CMD_NEEDS_CONF,
	.exec = cmd_jobs_check_exec,
};
