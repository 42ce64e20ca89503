/* cmd-jobs-check.c: "jobs check", the monitoring check of guarded jobs
 * (CONTRACT section 7): Nagios line, JSON or Prometheus text. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd.h"
#include "db.h"
#include "duration.h"
#include "lock.h"
#include "log.h"
#include "report.h"
#include "util.h"

struct job_check {
	const struct conf_job *job;
	enum check_status      status;
	struct buf             msg; /* why, when not OK */
	struct job_summary     js;
	struct lock_holder     holder;
	int                    running;
};

static void check_add(struct job_check *jc, enum check_status st,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
check_add(struct job_check *jc, enum check_status st, const char *fmt, ...)
{
	va_list ap;

	jc->status = check_status_worst(jc->status, st);
	if (jc->msg.len > 0)
		buf_adds(&jc->msg, ", ");
	va_start(ap, fmt);
	buf_vprintf(&jc->msg, fmt, ap);
	va_end(ap);
}

/* Judge one job from its run records and its lock. */
static int
check_job(struct db *db, struct job_check *jc, char **errstr)
{
	const struct conf_job    *j = jc->job;
	const struct job_summary *js = &jc->js;
	char                      d1[32], d2[32], age[32];
	char                     *why = NULL;
	int64_t                   limit;

	if (lock_job_summary(db, j->name, &jc->js, errstr) != DB_OK)
		return (-1);
	if (j->guard == GUARD_NAMED_LOCK &&
	    lock_db_real.holder(db, j->lock, &jc->holder, errstr) != DB_OK)
		return (-1);

	if (j->expect_every_ms > 0) {
		duration_format(j->expect_every_ms, d1, sizeof d1);
		duration_format(j->grace_ms, d2, sizeof d2);
		limit = j->expect_every_ms + j->grace_ms;
		if (js->last_success_ts < 0)
			check_add(jc, CHECK_WARNING,
			    "no successful run "
			    "recorded (expected every %s + %s)",
			    d1, d2);
		else if (js->last_success_age_s * 1000 > limit) {
			duration_format(
			    js->last_success_age_s * 1000, age, sizeof age);
			check_add(jc, CHECK_CRITICAL,
			    "last success %s ago "
			    "(expected every %s + %s)",
			    age, d1, d2);
		}
	}

	jc->running = js->last_outcome != NULL &&
	    strcmp(js->last_outcome, "running") == 0;
	if (jc->running && js->last_session_alive == 0) {
		/* The session of a live run is there until it finishes. */
		check_add(jc, CHECK_WARNING,
		    "run %llu died without finishing "
		    "(its session %llu is gone)",
		    js->last_id, js->last_connection_id);
		jc->running = 0;
	} else if (jc->running && js->last_age_s >= 0) {
		duration_format(js->last_age_s * 1000, age, sizeof age);
		duration_format(j->max_runtime_ms, d1, sizeof d1);
		if (js->last_age_s * 1000 > j->max_runtime_ms + j->grace_ms)
			check_add(jc, CHECK_CRITICAL,
			    "run %llu running for %s, "
			    "past max_runtime %s + grace",
			    js->last_id, age, d1);
		else if (js->last_age_s * 1000 > j->max_runtime_ms)
			check_add(jc, CHECK_WARNING,
			    "run %llu running for %s, "
			    "past max_runtime %s",
			    js->last_id, age, d1);
	}

	/* A lock that no run of ours accounts for. */
	if (jc->holder.connection_id != 0 && jc->holder.run_id == 0 &&
	    lock_holder_stuck(
	        &jc->holder, j->max_runtime_ms, j->grace_ms, &why))
		check_add(
		    jc, CHECK_CRITICAL, "lock %s held by %s", j->lock, why);
	free(why);
	return (0);
}

static void
print_nagios(FILE *f, enum check_status st, struct job_check *jcs, size_t n,
    const char *error)
{
	size_t i, bad = 0;

	fprintf(f, "JOBS %s - ", check_status_name(st));
	if (error != NULL)
		fputs(error, f);
	for (i = 0; error == NULL && i < n; i++) {
		if (jcs[i].status == CHECK_OK)
			continue;
		fprintf(f, "%s%s %s: %s", bad++ ? "; " : "", jcs[i].job->name,
		    check_status_name(jcs[i].status), jcs[i].msg.data);
	}
	if (error == NULL && bad == 0)
		fprintf(f, "%zu job%s ok", n, n == 1 ? "" : "s");
	if (error == NULL && n > 0) {
		fputs(" |", f);
		for (i = 0; i < n; i++) {
			const struct conf_job *j = jcs[i].job;

			if (j->expect_every_ms > 0) {
				if (jcs[i].js.last_success_age_s >= 0)
					fprintf(f,
					    " %s_last_success_age=%llds"
					    ";;%lld",
					    j->name,
					    jcs[i].js.last_success_age_s,
					    (long long)((j->expect_every_ms +
					                    j->grace_ms) /
					        1000));
				else
					fprintf(f, " %s_last_success_age=U",
					    j->name);
			}
			fprintf(f, " %s_running=%d", j->name, jcs[i].running);
		}
	}
	fputc('\n', f);
}

static void
print_json(FILE *f, enum check_status st, struct job_check *jcs, size_t n,
    const char *error)
{
	json_t *root, *jobs, *o;
	size_t  i;

	root = json_object();
	json_object_set_new(root, "status", json_string(check_status_name(st)));
	if (error != NULL)
		json_object_set_new(root, "error", json_string(error));
	jobs = json_array();
	for (i = 0; error == NULL && i < n; i++) {
		const struct job_summary *js = &jcs[i].js;

		o = json_object();
		json_object_set_new(o, "job", json_string(jcs[i].job->name));
		json_object_set_new(
		    o, "status", json_string(check_status_name(jcs[i].status)));
		json_object_set_new(o, "message", json_string(jcs[i].msg.data));
		json_object_set_new(o, "last_success",
		    js->last_success ? json_string(js->last_success)
		                     : json_null());
		json_object_set_new(o, "last_success_timestamp_seconds",
		    js->last_success_ts >= 0 ? json_real(js->last_success_ts)
		                             : json_null());
		json_object_set_new(o, "last_success_age_seconds",
		    js->last_success_age_s >= 0
		        ? json_integer(js->last_success_age_s)
		        : json_null());
		json_object_set_new(o, "last_run_id",
		    js->last_id != 0 ? json_integer((json_int_t)js->last_id)
		                     : json_null());
		json_object_set_new(o, "last_outcome",
		    js->last_outcome ? json_string(js->last_outcome)
		                     : json_null());
		json_object_set_new(o, "running", json_boolean(jcs[i].running));
		json_object_set_new(o, "lock_holder_connection",
		    jcs[i].holder.connection_id != 0
		        ? json_integer((json_int_t)jcs[i].holder.connection_id)
		        : json_null());
		json_array_append_new(jobs, o);
	}
	json_object_set_new(root, "jobs", jobs);
	json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', f);
	json_decref(root);
}

/* A Prometheus label value: backslash, quote and newline escaped. */
static void
prom_label(struct buf *b, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\' || *s == '"')
			buf_printf(b, "\\%c", *s);
		else if (*s == '\n')
			buf_adds(b, "\\n");
		else
			buf_addc(b, *s);
	}
}

static void
prom_metric(struct buf *b, struct job_check *jcs, size_t n, const char *name,
    const char *help, int which)
{
	size_t i;

	buf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
	for (i = 0; i < n; i++) {
		buf_printf(b, "%s{job=\"", name);
		prom_label(b, jcs[i].job->name);
		buf_adds(b, "\"} ");
		switch (which) {
		case 0:
			buf_printf(b, "%.6f\n",
			    jcs[i].js.last_success_ts >= 0
			        ? jcs[i].js.last_success_ts
			        : 0.0);
			break;
		case 1:
			buf_printf(b, "%d\n", jcs[i].running);
			break;
		default:
			buf_printf(b, "%d\n", (int)jcs[i].status);
			break;
		}
	}
}

static void
build_prometheus(struct buf *b, enum check_status st, struct job_check *jcs,
    size_t n, const char *error)
{
	if (error == NULL && n > 0) {
		prom_metric(b, jcs, n,
		    "cronguard_job_last_success_timestamp_seconds",
		    "Unix time of the job's last successful run (database "
		    "clock); 0 if none.",
		    0);
		prom_metric(b, jcs, n, "cronguard_job_running",
		    "1 while a run of the job is recorded as running.", 1);
		prom_metric(b, jcs, n, "cronguard_job_status",
		    "Check status of the job: 0 OK, 1 WARNING, 2 CRITICAL, "
		    "3 UNKNOWN.",
		    2);
	}
	buf_printf(b,
	    "# HELP cronguard_jobs_check_status Overall jobs check "
	    "status: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.\n"
	    "# TYPE cronguard_jobs_check_status gauge\n"
	    "cronguard_jobs_check_status %d\n",
	    (int)st);
}

static int
cmd_jobs_check_exec(struct cmd_ctx *ctx, struct conf *c)
{
	static const struct option longopts[] = { { "format", required_argument,
		                                      NULL, 'f' },
		{ "metrics-file", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 } };
	enum report_format         fmt = REPORT_NAGIOS;
	enum check_status          st = CHECK_OK;
	struct job_check          *jcs = NULL;
	struct db                 *db = NULL;
	struct buf                 prom;
	const char                *metrics = NULL;
	char                      *errstr = NULL, *error = NULL;
	size_t                     n = 0, i;
	int                        ch, k;

	opterr = 0;
	while ((ch = getopt_long(ctx->argc, ctx->argv, "+", longopts, NULL)) !=
	    -1) {
		switch (ch) {
		case 'f':
			if (report_format_parse(optarg, &fmt) != 0)
				return cmd_usage_error(ctx->entry,
				    "--format "
				    "must be nagios, json or prometheus");
			break;
		case 'm':
			metrics = optarg;
			break;
		default:
			return cmd_usage_error(ctx->entry,
			    "unknown or "
			    "incomplete option %s",
			    ctx->argv[optind - 1]);
		}
	}

	buf_init(&prom);
	if (optind < ctx->argc) {
		jcs = xcalloc((size_t)(ctx->argc - optind), sizeof *jcs);
		for (k = optind; k < ctx->argc; k++) {
			if ((jcs[n].job = conf_job_find(c, ctx->argv[k])) ==
			    NULL) {
				error = xasprintf("no job \"%s\" in %s",
				    ctx->argv[k], c->path);
				break;
			}
			buf_init(&jcs[n++].msg);
		}
	} else {
		jcs = xcalloc(c->njobs + 1, sizeof *jcs);
		for (i = 0; i < c->njobs; i++) {
			jcs[n].job = &c->jobs[i];
			buf_init(&jcs[n++].msg);
		}
	}
	if (error == NULL && !c->have_database)
		error = xasprintf("no database section in %s", c->path);
	if (error == NULL && db_connect(&c->db, &db, &errstr) != DB_OK) {
		error = errstr;
		errstr = NULL;
	}
	for (i = 0; error == NULL && i < n; i++) {
		if (check_job(db, &jcs[i], &errstr) != 0) {
			error = errstr;
			errstr = NULL;
			break;
		}
		buf_adds(&jcs[i].msg, ""); /* never NULL data */
		st = check_status_worst(st, jcs[i].status);
	}
	if (error != NULL)
		st = CHECK_UNKNOWN;

	if (metrics != NULL) {
		build_prometheus(&prom, st, jcs, n, error);
		if (write_file_atomic(metrics, prom.data, prom.len, &errstr) !=
		    0) {
			fprintf(
			    stderr, "cronguard: --metrics-file: %s\n", errstr);
			if (st == CHECK_OK || st == CHECK_WARNING)
				st = CHECK_UNKNOWN;
		}
		buf_reset(&prom);
	}
	switch (fmt) {
	case REPORT_NAGIOS:
		print_nagios(stdout, st, jcs, n, error);
		break;
	case REPORT_JSON:
		print_json(stdout, st, jcs, n, error);
		break;
	case REPORT_PROMETHEUS:
		build_prometheus(&prom, st, jcs, n, error);
		fputs(prom.data != NULL ? prom.data : "", stdout);
		break;
	}

	for (i = 0; i < n; i++) {
		buf_free(&jcs[i].msg);
		lock_job_summary_free(&jcs[i].js);
		lock_holder_free(&jcs[i].holder);
	}
	free(jcs);
	buf_free(&prom);
	db_close(db);
	free(error);
	free(errstr);
	return ((int)st);
}

const struct cmd_entry cmd_jobs_check_entry = {
	.name = "jobs check",
	.usage = "[--format nagios|json|prometheus] [--metrics-file path] "
	         "[job ...]",
	.summary =
	    "Monitoring check: a job whose last success is older than "
	    "expect_every + grace,\na job still running past max_runtime, or a "
	    "lock held by a dead or stuck run.\nExit 0 OK, 1 WARNING, 2 "
	    "CRITICAL, 3 UNKNOWN.",
	.flags = CMD_NEEDS_CONF,
	.exec = cmd_jobs_check_exec,
};
