/* report-jobs.c: the jobs wing's writers: jobs check in the three formats
 * (cronguard(1), jobs check), jobs runs, jobs show, jobs list, locks, a
 * job's pause and schedule next.  Writers only: they return the text,
 * the commands print it. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "conf.h"
#include "db.h"
#include "duration.h"
#include "jobcheck.h"
#include "jobctl.h"
#include "lock.h"
#include "report-int.h"
#include "report.h"
#include "runs.h"
#include "util.h"

/* --------------------------------------------------------- jobs check */

/* A job's pause: {"all_jobs": false, "paused_at": ..., "paused_by": ...,
 * "reason": ..., "until_at": ...}, or null when it is not paused. */
json_t *
report_pause_json(const struct job_pause *p)
{
	if (p == NULL || !p->paused)
		return json_null();
	return json_pack("{s:b, s:s?, s:s?, s:s?, s:s?}", "all_jobs",
	    p->job != NULL && strcmp(p->job, JOBCTL_ALL) == 0, "paused_at",
	    p->paused_at, "paused_by", p->paused_by, "reason", p->reason,
	    "until_at", p->until_at);
}

static int
report_paused(const struct job_pause *pauses, size_t i)
{
	return pauses != NULL && pauses[i].paused;
}

static void
report_jobs_nagios(struct buf *b, enum check_status st,
    const struct job_check *jcs, const struct job_pause *pauses, size_t n,
    const char *error)
{
	const struct conf_job *j;
	size_t                 i, bad = 0;

	buf_printf(b, "JOBS %s - ", check_status_name(st));
	if (error != NULL)
		buf_adds(b, error);
	for (i = 0; error == NULL && i < n; i++) {
		if (jcs[i].status == CHECK_OK)
			continue;
		buf_printf(b, "%s%s %s: %s", bad++ ? "; " : "",
		    jcs[i].job->name, check_status_name(jcs[i].status),
		    jcs[i].msg.data);
	}
	if (error == NULL && bad == 0)
		buf_printf(b, "%zu job%s ok", n, n == 1 ? "" : "s");
	for (i = 0; error == NULL && i < n; i++) {
		if (jcs[i].status != CHECK_OK || !report_paused(pauses, i))
			continue;
		buf_printf(b, "; %s OK: ", jcs[i].job->name);
		report_nagios_text(b, jcs[i].msg.data);
	}
	if (error == NULL && n > 0) {
		buf_adds(b, " |");
		for (i = 0; i < n; i++) {
			j = jcs[i].job;
			if (j->expect_every_ms > 0 &&
			    jcs[i].js.last_success_age_s >= 0)
				buf_printf(b,
				    " %s_last_success_age=%llds;;%lld", j->name,
				    jcs[i].js.last_success_age_s,
				    (long long)((j->expect_every_ms +
				                    j->grace_ms) /
				        1000));
			else if (j->expect_every_ms > 0)
				buf_printf(
				    b, " %s_last_success_age=U", j->name);
			buf_printf(
			    b, " %s_running=%d", j->name, jcs[i].running);
		}
	}
	buf_addc(b, '\n');
}

/* once_per: [{"start": ..., "end": ..., "successes": n}, ...], the last
 * completed slot first. */
static json_t *
report_jobs_json_slots(const struct job_check *jc)
{
	const struct run_slot_tally *t;
	json_t                      *arr;
	int                          i;

	arr = json_array();
	for (i = 0; i < jc->nslots; i++) {
		t = &jc->slots[i];
		json_array_append_new(arr,
		    json_pack("{s:s, s:s, s:I, s:b}", "start", t->start, "end",
		        t->end, "successes", (json_int_t)t->successes,
		        "completed", t->since_end_ms >= 0));
	}
	return arr;
}

/* schedule: the latest and next slot and what the check found. */
static json_t *
report_jobs_json_schedule(const struct job_check *jc)
{
	const struct job_slots *s = &jc->sched;
	json_t                 *missed = json_array();
	size_t                  i;

	/* The missed slots, newest first (at most JOBCHECK_MISSED_LISTED;
	 * slots_missed counts them all). */
	for (i = 0; i < s->nlisted; i++)
		json_array_append_new(missed, json_string(s->missed_slots[i]));
	return json_pack("{s:s?, s:s?, s:o, s:I, s:b, s:I, s:b, s:b}",
	    "latest_slot", s->latest[0] != '\0' ? s->latest : NULL, "next_slot",
	    s->next[0] != '\0' ? s->next : NULL, "missed", missed,
	    "slots_missed", (json_int_t)s->nmissed, "late", s->late,
	    "failed_slots", (json_int_t)s->failed_slots, "ran_twice",
	    s->ran_twice, "paused", s->paused);
}

static void
report_jobs_json(struct buf *b, enum check_status st,
    const struct job_check *jcs, const struct job_pause *pauses, size_t n,
    const char *error)
{
	const struct job_summary *js;
	json_t                   *root, *jobs, *o;
	char                     *text;
	size_t                    i;

	root = json_object();
	json_object_set_new(root, "status", json_string(check_status_name(st)));
	if (error != NULL)
		json_object_set_new(root, "error", json_string(error));
	jobs = json_array();
	for (i = 0; error == NULL && i < n; i++) {
		js = &jcs[i].js;
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
		json_object_set_new(o, "last_finished_run_id",
		    js->done_id != 0 ? json_integer((json_int_t)js->done_id)
		                     : json_null());
		json_object_set_new(o, "last_finished_outcome",
		    js->done_outcome ? json_string(js->done_outcome)
		                     : json_null());
		json_object_set_new(o, "running", json_boolean(jcs[i].running));
		json_object_set_new(o, "lock_holder_connection",
		    jcs[i].holder.connection_id != 0
		        ? json_integer((json_int_t)jcs[i].holder.connection_id)
		        : json_null());
		if (jcs[i].nslots > 0)
			json_object_set_new(
			    o, "slots", report_jobs_json_slots(&jcs[i]));
		if (jcs[i].sched.scheduled)
			json_object_set_new(
			    o, "schedule", report_jobs_json_schedule(&jcs[i]));
		json_object_set_new(o, "paused",
		    report_pause_json(pauses != NULL ? &pauses[i] : NULL));
		json_array_append_new(jobs, o);
	}
	json_object_set_new(root, "jobs", jobs);
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	buf_printf(b, "%s\n", text != NULL ? text : "{}");
	free(text);
	json_decref(root);
}

enum report_job_metric {
	REPORT_JOB_LAST_SUCCESS,
	REPORT_JOB_RUNNING,
	REPORT_JOB_LAST_RUN_FAILED,
	REPORT_JOB_STATUS,
	REPORT_JOB_PAUSED,
	REPORT_JOB_SLOT_MISSED,
	REPORT_JOB_SLOTS_MISSED,
	REPORT_JOB_SLOT_LATE,
	REPORT_JOB_FAILED_SLOTS,
	REPORT_JOB_RAN_TWICE,
	REPORT_JOB_ALERT_LEVEL,
};

static void
report_jobs_prom_metric(struct buf *b, const struct job_check *jcs,
    const struct job_pause *pauses, size_t n, const char *name,
    const char *help, enum report_job_metric which)
{
	size_t i;

	report_prom_head(b, name, help);
	for (i = 0; i < n; i++) {
		/* The schedule's metrics exist for scheduled jobs only. */
		if (which >= REPORT_JOB_SLOT_MISSED && !jcs[i].sched.scheduled)
			continue;
		report_prom_labelled(b, name, "job", jcs[i].job->name);
		switch (which) {
		case REPORT_JOB_LAST_SUCCESS:
			buf_printf(b, "%.6f\n",
			    jcs[i].js.last_success_ts >= 0
			        ? jcs[i].js.last_success_ts
			        : 0.0);
			break;
		case REPORT_JOB_RUNNING:
			buf_printf(b, "%d\n", jcs[i].running);
			break;
		case REPORT_JOB_LAST_RUN_FAILED:
			buf_printf(b, "%d\n",
			    jcs[i].js.done_outcome != NULL &&
			        strcmp(jcs[i].js.done_outcome, "success") != 0);
			break;
		case REPORT_JOB_STATUS:
			buf_printf(b, "%d\n", (int)jcs[i].status);
			break;
		case REPORT_JOB_PAUSED:
			buf_printf(b, "%d\n", report_paused(pauses, i));
			break;
		case REPORT_JOB_SLOT_MISSED:
			buf_printf(b, "%d\n", jcs[i].sched.missed);
			break;
		case REPORT_JOB_SLOTS_MISSED:
			buf_printf(b, "%lld\n", jcs[i].sched.nmissed);
			break;
		case REPORT_JOB_SLOT_LATE:
			buf_printf(b, "%d\n", jcs[i].sched.late);
			break;
		case REPORT_JOB_FAILED_SLOTS:
			buf_printf(b, "%lld\n", jcs[i].sched.failed_slots);
			break;
		case REPORT_JOB_RAN_TWICE:
			buf_printf(b, "%d\n", jcs[i].sched.ran_twice);
			break;
		case REPORT_JOB_ALERT_LEVEL:
			buf_printf(b, "%d\n", (int)jcs[i].sched_level);
			break;
		}
	}
}

static void
report_jobs_prometheus(struct buf *b, enum check_status st,
    const struct job_check *jcs, const struct job_pause *pauses, size_t n,
    const char *error)
{
	report_prom_gauge(b, "cronguard_jobs_up",
	    "Whether the jobs could be judged from the database (1) or not (0).",
	    error == NULL);
	report_prom_timestamp(b, "cronguard_jobs_check_timestamp_seconds");
	if (error == NULL && n > 0) {
		report_jobs_prom_metric(b, jcs, pauses, n,
		    "cronguard_job_last_success_timestamp_seconds",
		    "Unix time of the job's last successful run (database clock); 0 if none.",
		    REPORT_JOB_LAST_SUCCESS);
		report_jobs_prom_metric(b, jcs, pauses, n,
		    "cronguard_job_running",
		    "1 while a run of the job is recorded as running.",
		    REPORT_JOB_RUNNING);
		report_jobs_prom_metric(b, jcs, pauses, n,
		    "cronguard_job_last_run_failed",
		    "1 when the job's newest finished run did not succeed (failure, timeout, incident, ...), until a later run succeeds.",
		    REPORT_JOB_LAST_RUN_FAILED);
		report_jobs_prom_metric(b, jcs, pauses, n,
		    "cronguard_job_status",
		    "Check status of the job: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.",
		    REPORT_JOB_STATUS);
		report_jobs_prom_metric(b, jcs, pauses, n,
		    "cronguard_job_slot_missed",
		    "1 when a slot of the job's schedule passed its grace with no run started and no success followed.",
		    REPORT_JOB_SLOT_MISSED);
		report_jobs_prom_metric(b, jcs, pauses, n,
		    "cronguard_job_slots_missed",
		    "Slots of the job's schedule in its missed_lookback window that passed their grace with no run started (not paused, not acknowledged).",
		    REPORT_JOB_SLOTS_MISSED);
		report_jobs_prom_metric(b, jcs, pauses, n,
		    "cronguard_job_slot_late",
		    "1 when the latest slot's first run started later than grace after the slot.",
		    REPORT_JOB_SLOT_LATE);
		report_jobs_prom_metric(b, jcs, pauses, n,
		    "cronguard_job_failed_slots",
		    "Consecutive slots whose runs all failed, newest first (jobs ack ends the count).",
		    REPORT_JOB_FAILED_SLOTS);
		report_jobs_prom_metric(b, jcs, pauses, n,
		    "cronguard_job_ran_twice",
		    "1 when a recent slot has more than one successful run (not acknowledged).",
		    REPORT_JOB_RAN_TWICE);
		report_jobs_prom_metric(b, jcs, pauses, n,
		    "cronguard_job_alert_level",
		    "The job's alert_level: 1 warning, 2 critical.",
		    REPORT_JOB_ALERT_LEVEL);
		report_jobs_prom_metric(b, jcs, pauses, n,
		    "cronguard_job_paused",
		    "1 while the job is paused (jobs pause, on every host), else 0.",
		    REPORT_JOB_PAUSED);
	}
	report_prom_gauge(b, "cronguard_jobs_check_status",
	    "Overall jobs check status: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.",
	    (long long)st);
}

char *
report_jobs(enum report_format fmt, enum check_status st,
    const struct job_check *jcs, const struct job_pause *pauses, size_t n,
    const char *error)
{
	struct buf b;

	buf_init(&b);
	switch (fmt) {
	case REPORT_NAGIOS:
		report_jobs_nagios(&b, st, jcs, pauses, n, error);
		break;
	case REPORT_JSON:
		report_jobs_json(&b, st, jcs, pauses, n, error);
		break;
	case REPORT_PROMETHEUS:
		report_jobs_prometheus(&b, st, jcs, pauses, n, error);
		break;
	}
	return buf_steal(&b);
}

/* ------------------------------------------------ jobs runs, jobs show */

/* Columns of RUNS_LIST_COLUMNS / RUNS_GET_COLUMNS by name. */
enum report_run_col {
	RC_ID,
	RC_JOB,
	RC_HOST,
	RC_PID,
	RC_STARTED,
	RC_FINISHED,
	RC_DURATION_MS,
	RC_OUTCOME,
	RC_EXIT_STATUS,
	RC_FENCE,
	RC_RUN_UUID,
	RC_OUTPUT_BYTES,
	RC_SLOT,
	RC_SLOT_KIND,
	RC_LIST_NCOLS,
	RC_LOCK = RC_LIST_NCOLS,
	RC_CONNECTION_ID,
	RC_HEARTBEAT,
	RC_ERROR,
	RC_OUTPUT_LENGTH,
	RC_OUTPUT,
	RC_GET_NCOLS,
};

/* The integer columns: JSON numbers. */
static int
report_run_col_int(size_t col)
{
	switch (col) {
	case RC_ID:
	case RC_PID:
	case RC_DURATION_MS:
	case RC_EXIT_STATUS:
	case RC_FENCE:
	case RC_OUTPUT_BYTES:
	case RC_CONNECTION_ID:
	case RC_OUTPUT_LENGTH:
		return 1;
	}
	return 0;
}

/* A cell as JSON: null, a number for the integer columns, else a string
 * (an error text is not always UTF-8). */
static json_t *
report_run_cell(const struct db_result *r, size_t row, size_t col)
{
	const char *v = db_cell(r, row, col), *e;
	long long   n;
	int         lossy = 0;

	if (v == NULL)
		return json_null();
	if (report_run_col_int(col) &&
	    parse_ll(v, LLONG_MIN, LLONG_MAX, &n, &e) == 0)
		return json_integer((json_int_t)n);
	return report_json_bytes(v, r->lengths[row][col], &lossy);
}

/* The signal that ended a run ("SIGKILL"): outcome killed with an exit
 * status of 128 + a signal number, as the guard records it; else NULL. */
static const char *
report_run_signal(const struct db_result *r, size_t row)
{
	const char *outcome = db_cell(r, row, RC_OUTCOME);
	long long   st = db_cell_ll(r, row, RC_EXIT_STATUS, -1);

	if (outcome == NULL || strcmp(outcome, "killed") != 0 || st <= 128 ||
	    st > 128 + 64)
		return NULL;
	return signal_name((int)(st - 128));
}

/* The outcome as shown: "killed (SIGKILL)" when a signal ended it. */
static const char *
report_run_outcome(const struct db_result *r, size_t row, char *buf, size_t len)
{
	const char *sig = report_run_signal(r, row);

	if (sig == NULL)
		return report_dash(db_cell(r, row, RC_OUTCOME));
	snprintf(buf, len, "%s (%s)", db_cell(r, row, RC_OUTCOME), sig);
	return buf;
}

/* The list columns of row as a JSON object, and "signal". */
static json_t *
report_run_object(const struct db_result *r, size_t row, size_t ncols)
{
	json_t     *o = json_object();
	const char *sig = report_run_signal(r, row);
	size_t      j;

	for (j = 0; j < ncols && j < r->ncols; j++)
		json_object_set_new(o, r->names[j], report_run_cell(r, row, j));
	json_object_set_new(
	    o, "signal", sig != NULL ? json_string(sig) : json_null());
	return o;
}

/* "1m30s" from duration_ms, "-" when unknown. */
static const char *
report_run_duration(
    const struct db_result *r, size_t row, char *buf, size_t len)
{
	long long ms = db_cell_ll(r, row, RC_DURATION_MS, -1);

	if (ms < 0)
		return "-";
	/* Whole seconds read better in a table; below one, the ms. */
	duration_format(ms >= 1000 ? ms / 1000 * 1000 : ms, buf, len);
	return buf;
}

char *
report_runs(const struct db_result *r, int json)
{
	struct buf b;
	json_t    *arr;
	char      *text, dur[32], outcome[64];
	size_t     i;
	int        wjob = 3, whost = 4, wout = 9, w;

	if (json) {
		arr = json_array();
		for (i = 0; i < r->nrows; i++)
			json_array_append_new(
			    arr, report_run_object(r, i, RC_LIST_NCOLS));
		text = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		json_decref(arr);
		buf_init(&b);
		buf_printf(&b, "%s\n", text != NULL ? text : "[]");
		free(text);
		return buf_steal(&b);
	}
	for (i = 0; i < r->nrows; i++) {
		if ((w = report_cell_width(r, i, RC_JOB)) > wjob)
			wjob = w;
		if ((w = report_cell_width(r, i, RC_HOST)) > whost)
			whost = w;
		if ((w = (int)strlen(report_run_outcome(
		         r, i, outcome, sizeof outcome))) > wout)
			wout = w;
	}
	buf_init(&b);
	buf_printf(&b, "%-8s  %-*s  %-*s  %-19s  %-9s  %-*s  %4s  %-5s  %s\n",
	    "ID", wjob, "JOB", whost, "HOST", "STARTED", "DURATION", wout,
	    "OUTCOME", "EXIT", "FENCE", "SLOT");
	for (i = 0; i < r->nrows; i++) {
		buf_printf(&b, "%-8s  ", report_dash(db_cell(r, i, RC_ID)));
		report_cell(&b, r, i, RC_JOB, wjob);
		buf_adds(&b, "  ");
		report_cell(&b, r, i, RC_HOST, whost);
		buf_printf(&b, "  %-19.19s  %-9s  %-*s  %4s  %-5s  %s%s%s\n",
		    report_dash(db_cell(r, i, RC_STARTED)),
		    report_run_duration(r, i, dur, sizeof dur), wout,
		    report_run_outcome(r, i, outcome, sizeof outcome),
		    report_dash(db_cell(r, i, RC_EXIT_STATUS)),
		    report_dash(db_cell(r, i, RC_FENCE)),
		    report_dash(db_cell(r, i, RC_SLOT)),
		    db_cell(r, i, RC_SLOT_KIND) != NULL &&
		            strcmp(db_cell(r, i, RC_SLOT_KIND), "schedule") != 0
		        ? " "
		        : "",
		    db_cell(r, i, RC_SLOT_KIND) != NULL &&
		            strcmp(db_cell(r, i, RC_SLOT_KIND), "schedule") != 0
		        ? db_cell(r, i, RC_SLOT_KIND)
		        : "");
	}
	return buf_steal(&b);
}

static json_t *
report_run_json(const struct db_result *r)
{
	json_t     *o;
	const char *out = db_cell(r, 0, RC_OUTPUT);
	long long   kept;
	int         lossy = 0;

	o = report_run_object(r, 0, RC_OUTPUT);
	if (out == NULL)
		json_object_set_new(o, "output", json_null());
	else
		json_object_set_new(o, "output",
		    report_json_bytes(out, r->lengths[0][RC_OUTPUT], &lossy));
	json_object_set_new(o, "output_lossy", json_boolean(lossy));
	/* The tail only: the job wrote more than was kept. */
	kept = db_cell_ll(r, 0, RC_OUTPUT_LENGTH, 0);
	json_object_set_new(o, "output_truncated",
	    json_boolean(
	        out != NULL && db_cell_ll(r, 0, RC_OUTPUT_BYTES, 0) > kept));
	return o;
}

/* One "name: value" line of jobs show. */
static void
report_run_field(struct buf *b, const char *name, const char *v)
{
	buf_printf(b, "%-14s ", name);
	if (v == NULL)
		buf_addc(b, '-');
	else
		report_text(b, v, strlen(v));
	buf_addc(b, '\n');
}

char *
report_run(const struct db_result *r, int json, size_t *len)
{
	struct buf  b;
	char        dur[32], outcome[64], *text;
	const char *out;
	long long   kept, total;
	size_t      i;

	if (json) {
		text = report_json_text(report_run_json(r));
		*len = strlen(text);
		return text;
	}
	buf_init(&b);
	for (i = 0; i < RC_OUTPUT_LENGTH; i++) {
		if (i == RC_DURATION_MS)
			report_run_field(&b, "duration:",
			    report_run_duration(r, 0, dur, sizeof dur));
		else if (i == RC_OUTCOME)
			report_run_field(&b, "outcome:",
			    report_run_outcome(r, 0, outcome, sizeof outcome));
		else {
			text = xasprintf("%s:", r->names[i]);
			report_run_field(&b, text, db_cell(r, 0, i));
			free(text);
		}
	}
	out = db_cell(r, 0, RC_OUTPUT);
	kept = db_cell_ll(r, 0, RC_OUTPUT_LENGTH, 0);
	total = db_cell_ll(r, 0, RC_OUTPUT_BYTES, -1);
	if (out == NULL)
		text = xstrdup("not captured");
	else if (total > kept)
		text = xasprintf(
		    "the last %lld of %lld bytes (the rest was not kept)", kept,
		    total);
	else
		text = xasprintf("%lld bytes", kept);
	report_run_field(&b, "output:", text);
	free(text);
	if (out != NULL) {
		buf_addc(&b, '\n');
		buf_add(&b, out, r->lengths[0][RC_OUTPUT]);
	}
	*len = b.len;
	return buf_steal(&b);
}

/* ------------------------------------------------ jobs list, locks */

char *
report_job_pause(const struct job_pause *p)
{
	struct buf b;

	if (p == NULL || !p->paused)
		return NULL;
	buf_init(&b);
	buf_printf(&b, "paused%s by ",
	    p->job != NULL && strcmp(p->job, JOBCTL_ALL) == 0 ? " (every job)"
	                                                      : "");
	report_text(&b, p->paused_by != NULL ? p->paused_by : "?",
	    p->paused_by != NULL ? strlen(p->paused_by) : 1);
	buf_printf(
	    &b, " since %.19s", p->paused_at != NULL ? p->paused_at : "?");
	if (p->until_at != NULL)
		buf_printf(&b, " until %.19s", p->until_at);
	else
		buf_adds(&b, " until resumed");
	if (p->reason != NULL) {
		buf_adds(&b, ": ");
		report_text(&b, p->reason, strlen(p->reason));
	}
	return buf_steal(&b);
}

/* "2026-11-29 10:00:00" from a DATETIME(6) value: seconds are enough in
 * a table. */
static const char *
report_short_time(const char *dt, char *buf, size_t len)
{
	if (dt == NULL)
		return "-";
	snprintf(buf, len, "%.19s", dt);
	return buf;
}

char *
report_jobs_list_text(const struct report_job_row *rows, size_t n)
{
	const struct report_job_row *row;
	struct buf                   b;
	char                         run[32], ok[32], fence[32], *text;
	int                          wjob = 3, wlock = 4, w;
	size_t                       i;

	for (i = 0; i < n; i++) {
		if ((w = (int)strlen(rows[i].job)) > wjob)
			wjob = w;
		if (rows[i].lock != NULL &&
		    (w = (int)strlen(rows[i].lock)) > wlock)
			wlock = w;
	}
	buf_init(&b);
	buf_printf(&b, "%-*s  %-10s  %-*s  %-19s  %-9s  %-19s  %s\n", wjob,
	    "JOB", "GUARD", wlock, "LOCK", "LAST RUN", "OUTCOME",
	    "LAST SUCCESS", "FENCE");
	for (i = 0; i < n; i++) {
		row = &rows[i];
		if (row->js->last_fence != 0)
			snprintf(
			    fence, sizeof fence, "%llu", row->js->last_fence);
		else
			snprintf(fence, sizeof fence, "-");
		buf_printf(&b, "%-*s  %-10s  %-*s  %-19s  %-9s  %-19s  %s\n",
		    wjob, row->job, row->guard, wlock,
		    row->lock != NULL ? row->lock : "-",
		    report_short_time(row->js->last_started, run, sizeof run),
		    report_dash(row->js->last_outcome),
		    report_short_time(row->js->last_success, ok, sizeof ok),
		    fence);
		/* Under the row, indented so that the rows stay the table's. */
		if (row->schedule != NULL)
			buf_printf(&b,
			    "  schedule \"%s\"%s%s%s: latest slot %s %s, next %s\n",
			    row->schedule, row->timezone != NULL ? " (" : "",
			    row->timezone != NULL ? row->timezone : "",
			    row->timezone != NULL ? ")" : "",
			    row->slots->latest[0] != '\0' ? row->slots->latest
			                                  : "-",
			    row->slots->latest_done ? "done" : "not done",
			    row->slots->next[0] != '\0' ? row->slots->next
			                                : "-");
		if (row->pause != NULL &&
		    (text = report_job_pause(row->pause)) != NULL) {
			buf_printf(&b, "  %s\n", text);
			free(text);
		}
	}
	return buf_steal(&b);
}

char *
report_jobs_list_json(const struct report_job_row *rows, size_t n)
{
	const struct job_summary *js;
	json_t                   *arr, *o;
	size_t                    i;

	arr = json_array();
	for (i = 0; i < n; i++) {
		js = rows[i].js;
		o = json_object();
		json_object_set_new(o, "job", json_string(rows[i].job));
		json_object_set_new(o, "guard", json_string(rows[i].guard));
		json_object_set_new(
		    o, "lock", report_str_or_null(rows[i].lock));
		json_object_set_new(
		    o, "last_run_id", report_id_or_null(js->last_id));
		json_object_set_new(o, "last_run_started",
		    report_str_or_null(js->last_started));
		json_object_set_new(
		    o, "last_outcome", report_str_or_null(js->last_outcome));
		json_object_set_new(
		    o, "last_success", report_str_or_null(js->last_success));
		json_object_set_new(
		    o, "fence", report_id_or_null(js->last_fence));
		json_object_set_new(
		    o, "paused", report_pause_json(rows[i].pause));
		json_object_set_new(o, "schedule",
		    rows[i].schedule == NULL
		        ? json_null()
		        : json_pack("{s:s, s:s?, s:s?, s:b, s:s?}",
		              "expression", rows[i].schedule, "timezone",
		              rows[i].timezone, "latest_slot",
		              rows[i].slots->latest[0] != '\0'
		                  ? rows[i].slots->latest
		                  : NULL,
		              "latest_done", rows[i].slots->latest_done,
		              "next_slot",
		              rows[i].slots->next[0] != '\0'
		                  ? rows[i].slots->next
		                  : NULL));
		json_array_append_new(arr, o);
	}
	return report_json_text(arr);
}

char *
report_locks_json(const struct report_lock_row *rows, size_t n)
{
	const struct lock_holder *h;
	json_t                   *arr, *o;
	size_t                    i;

	arr = json_array();
	for (i = 0; i < n; i++) {
		h = rows[i].h;
		o = json_object();
		json_object_set_new(o, "lock", json_string(rows[i].lock));
		json_object_set_new(o, "job", json_string(rows[i].job));
		json_object_set_new(o, "state", json_string(rows[i].state));
		json_object_set_new(
		    o, "connection_id", report_id_or_null(h->connection_id));
		json_object_set_new(o, "run_id", report_id_or_null(h->run_id));
		json_object_set_new(o, "host", report_str_or_null(h->run_host));
		json_object_set_new(o, "pid",
		    h->run_id != 0 && h->run_pid >= 0
		        ? json_integer((json_int_t)h->run_pid)
		        : json_null());
		json_object_set_new(
		    o, "since", report_str_or_null(h->started_at));
		json_object_set_new(
		    o, "fence", report_id_or_null(rows[i].fence));
		json_object_set_new(
		    o, "last_fence", report_id_or_null(rows[i].last_fence));
		json_array_append_new(arr, o);
	}
	return report_json_text(arr);
}

char *
report_locks_text(const struct report_lock_row *rows, size_t n)
{
	const struct lock_holder *h;
	struct buf                b;
	char                      since[40], fence[32];
	int                       wlock = 4, wjob = 3, w;
	size_t                    i;

	for (i = 0; i < n; i++) {
		if ((w = (int)strlen(rows[i].lock)) > wlock)
			wlock = w;
		if ((w = (int)strlen(rows[i].job)) > wjob)
			wjob = w;
	}
	buf_init(&b);
	buf_printf(&b, "%-*s  %-*s  %-5s  %-6s  %s\n", wlock, "LOCK", wjob,
	    "JOB", "STATE", "FENCE", "HOLDER");
	for (i = 0; i < n; i++) {
		h = rows[i].h;
		if (rows[i].fence != 0)
			snprintf(fence, sizeof fence, "%llu", rows[i].fence);
		else
			snprintf(fence, sizeof fence, "-");
		buf_printf(&b, "%-*s  %-*s  %-5s  %-6s  ", wlock, rows[i].lock,
		    wjob, rows[i].job, rows[i].state, fence);
		if (h->connection_id == 0) {
			buf_adds(&b, "-\n");
			continue;
		}
		buf_printf(&b, "connection %llu", h->connection_id);
		if (h->run_id != 0) {
			buf_printf(&b, ", run %llu on ", h->run_id);
			report_text(&b, h->run_host != NULL ? h->run_host : "?",
			    h->run_host != NULL ? strlen(h->run_host) : 1);
			buf_printf(&b, " pid %lld", h->run_pid);
		} else
			buf_adds(&b, ", no run record");
		if (h->client_host != NULL) {
			buf_adds(&b, ", from ");
			report_text(&b, h->client_host, strlen(h->client_host));
		}
		if (h->started_at != NULL)
			snprintf(since, sizeof since, ", since %.19s (%llds)",
			    h->started_at, h->run_age_s);
		else if (h->idle_s >= 0)
			snprintf(since, sizeof since,
			    ", in its state for %llds", h->idle_s);
		else
			since[0] = '\0';
		buf_printf(&b, "%s\n", since);
	}
	return buf_steal(&b);
}

char *
report_schedule_next_json(const char *schedule, const char *timezone,
    const char *from, const char *const *slots, size_t n)
{
	json_t *o = json_object(), *arr = json_array();
	size_t  i;

	json_object_set_new(o, "schedule", json_string(schedule));
	json_object_set_new(o, "timezone", json_string(timezone));
	json_object_set_new(o, "from", json_string(from));
	for (i = 0; i < n; i++)
		json_array_append_new(arr, json_string(slots[i]));
	json_object_set_new(o, "slots", arr);
	return report_json_text(o);
}
