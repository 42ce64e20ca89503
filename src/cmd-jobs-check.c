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

/* The jobs to judge: the operands', else every configured job, into
 * *jobs (allocated, never a NULL entry) and *n.  *error set (allocated)
 * when the configuration could not be loaded or names no such job. */
static const struct conf_job **
jobs_check_selected(
    const struct cmd_ctx *ctx, const struct conf *c, size_t *n, char **error)
{
	const struct conf_job **jobs, *j;
	size_t                  i;
	int                     k;

	*n = 0;
	if (ctx->conf_error != NULL) {
		*error = xasprintf(
		    "cannot load the configuration: %s", ctx->conf_error);
		return xcalloc(1, sizeof *jobs);
	}
	if (ctx->nargs == 0) {
		jobs = xcalloc(c->njobs + 1, sizeof *jobs);
		for (i = 0; i < c->njobs; i++)
			jobs[(*n)++] = &c->jobs[i];
		return jobs;
	}
	jobs = xcalloc((size_t)ctx->nargs, sizeof *jobs);
	/* Only jobs found go into jobs[]: its n entries are never NULL. */
	for (k = 0; k < ctx->nargs; k++) {
		if ((j = conf_job_find(c, ctx->args[k])) == NULL) {
			*error = xasprintf(
			    "no job \"%s\" in %s", ctx->args[k], c->path);
			break;
		}
		jobs[(*n)++] = j;
	}
	return jobs;
}

/* --metrics-file: the Prometheus text written atomically; a write that
 * fails is said, and turns OK or WARNING into UNKNOWN.  Returns the
 * status. */
static enum check_status
jobs_check_metrics(const char *metrics, enum check_status st,
    const struct job_check *jcs, const struct job_pause *pauses, size_t n,
    const char *error)
{
	char *out, *errstr = NULL;

	out = report_jobs(REPORT_PROMETHEUS, st, jcs, pauses, n, error);
	if (write_file_atomic(metrics, out, strlen(out), &errstr) != 0) {
		fprintf(stderr, "cronguard: --metrics-file: %s\n", errstr);
		if (st == CHECK_OK || st == CHECK_WARNING)
			st = CHECK_UNKNOWN;
	}
	free(errstr);
	free(out);
	return st;
}

static int
cmd_jobs_check_exec(struct cmd_ctx *ctx, struct conf *c)
{
	enum report_format      fmt = REPORT_NAGIOS;
	enum check_status       st = CHECK_OK;
	const struct conf_job **jobs = NULL;
	struct job_check       *jcs = NULL;
	struct job_sched       *scheds = NULL;
	const char            **names = NULL;
	struct job_pause       *pauses = NULL;
	struct db              *db = NULL;
	const char             *metrics = NULL;
	char                   *errstr = NULL, *error = NULL, *out = NULL;
	size_t                  n = 0, i;

	if (cmd_check_options(ctx, &fmt, &metrics) != 0)
		return EXIT_USAGE;

	jobs = jobs_check_selected(ctx, c, &n, &error);
	jcs = xcalloc(n + 1, sizeof *jcs);
	pauses = xcalloc(n + 1, sizeof *pauses);
	scheds = xcalloc(n + 1, sizeof *scheds);
	names = xcalloc(n + 1, sizeof *names);
	if (error == NULL && !c->have_database)
		error = xasprintf("no database section in %s", c->path);
	if (error == NULL &&
	    (db_connect_check(&c->db, &db, &errstr) != DB_OK ||
	        migrate_check_pending(db, &errstr) != DB_OK)) {
		error = errstr;
		errstr = NULL;
	}
	for (i = 0; i < n; i++)
		jobcheck_sched_from_conf(jobs[i], &scheds[i]);
	for (i = 0; i < n; i++)
		names[i] = jobs[i]->name;
	/* Every job at once: a few statements whatever their number. */
	if (error == NULL &&
	    (jobcheck_run_all(db, jobs, n, scheds, jcs, &errstr) != DB_OK ||
	        jobctl_pause_get_all(db, names, n, pauses, &errstr) != DB_OK)) {
		error = errstr;
		errstr = NULL;
	}
	for (i = 0; error == NULL && i < n; i++) {
		jobcheck_judge_paused(&jcs[i], &pauses[i]);
		st = check_status_worst(st, jcs[i].status);
	}
	if (error != NULL)
		st = CHECK_UNKNOWN;

	if (metrics != NULL)
		st = jobs_check_metrics(metrics, st, jcs, pauses, n, error);
	out = report_jobs(fmt, st, jcs, pauses, n, error);
	fputs(out, stdout);

	for (i = 0; i < n; i++) {
		jobcheck_free(&jcs[i]);
		jobctl_pause_free(&pauses[i]);
	}
	free(jcs);
	free(pauses);
	free(scheds);
	free(names);
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
	.flags = CMD_NEEDS_CONF | CMD_CHECK_CONF,
	.exec = cmd_jobs_check_exec,
};
