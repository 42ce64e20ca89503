/* check_report.c: report.c's writers: outbox check and jobs check in the
 * three formats (cronguard(1), jobs check; cronguard-outbox(7),
 * MONITORING), and the tables and JSON of jobs runs, jobs show, jobs
 * list, locks and outbox list, from hand-made rows. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "conf.h"
#include "db.h"
#include "jobcheck.h"
#include "jobctl.h"
#include "lock.h"
#include "outbox-admin.h"
#include "report.h"
#include "runs.h"
#include "testutil.h"
#include "util.h"

/* ------------------------------------------------------------ helpers */

/* A result of nrows rows of ncols cells (NULL: SQL NULL), borrowed
 * from names and cells; lengths by strlen.  result_free frees it. */
static void
result(struct db_result *r, const char *const *names, size_t ncols,
    const char *const *cells, size_t nrows)
{
	size_t i, j;

	memset(r, 0, sizeof *r);
	r->ncols = ncols;
	r->nrows = nrows;
	r->names = (char **)(uintptr_t)names;
	r->rows = xcalloc(nrows, sizeof *r->rows);
	r->lengths = xcalloc(nrows, sizeof *r->lengths);
	for (i = 0; i < nrows; i++) {
		r->rows[i] = (char **)(uintptr_t)(cells + i * ncols);
		r->lengths[i] = xcalloc(ncols, sizeof **r->lengths);
		for (j = 0; j < ncols; j++)
			r->lengths[i][j] = cells[i * ncols + j] != NULL
			    ? (unsigned long)strlen(cells[i * ncols + j])
			    : 0;
	}
}

static void
result_free(struct db_result *r)
{
	size_t i;

	for (i = 0; i < r->nrows; i++)
		free(r->lengths[i]);
	free(r->lengths);
	free(r->rows);
}

/* text parsed as JSON (the test fails when it is not). */
static json_t *
parse(const char *text)
{
	json_error_t e;
	json_t      *j = json_loads(text, 0, &e);

	ck_assert_msg(j != NULL, "not JSON (%s):\n%s", e.text, text);
	return j;
}

/* ------------------------------------------------------- outbox check */

START_TEST(test_format_parse)
{
	enum report_format f = REPORT_JSON;

	ck_assert_int_eq(report_format_parse("nagios", &f), 0);
	ck_assert_int_eq(f, REPORT_NAGIOS);
	ck_assert_int_eq(report_format_parse("prometheus", &f), 0);
	ck_assert_int_eq(f, REPORT_PROMETHEUS);
	ck_assert_int_eq(report_format_parse("json", &f), 0);
	ck_assert_int_eq(f, REPORT_JSON);
	ck_assert_int_eq(report_format_parse("JSON", &f), -1);
	ck_assert_int_eq(report_format_parse("text", &f), -1);
	ck_assert_int_eq(report_format_parse("", &f), -1);
	ck_assert_int_eq(f, REPORT_JSON); /* untouched */
}
END_TEST

START_TEST(test_nagios_contract_example)
{
	struct conf_outbox   c = testutil_outbox_conf();
	struct outbox_counts k = testutil_counts(14, 3, 2, 0, 2, 1, 12, 0);
	char                *s;

	s = report_outbox(REPORT_NAGIOS, &k, &c, CHECK_CRITICAL, NULL);
	/* cronguard-outbox(7), MONITORING, then the unknown_channel count as
	 * extra perfdata. */
	ck_assert_str_eq(s,
	    "OUTBOX CRITICAL - stuck=2 stale=0 "
	    "pending=14 due=3 failed=1 oldest_due=12s | "
	    "pending=14;1000;10000 due=3 processing=2 stale=0 stuck=2;;0 "
	    "failed=1;1;100 oldest_due=12s;300;1800 unknown_channel=0 "
	    "circuit_open=0;0\n");
	free(s);
}
END_TEST

START_TEST(test_outbox_json)
{
	struct conf_outbox   c = testutil_outbox_conf();
	struct outbox_counts k = testutil_counts(14, 3, 2, 0, 2, 1, 12, 4);
	char                *s;

	s = report_outbox(REPORT_JSON, &k, &c, CHECK_CRITICAL, NULL);
	ck_assert_str_eq(s,
	    "{\"status\":\"CRITICAL\",\"pending\":14,"
	    "\"due\":3,\"processing\":2,\"stale\":0,\"stuck\":2,\"failed\":1,"
	    "\"oldest_due_age_seconds\":12,\"unknown_channel\":4,"
	    "\"expired\":0,\"paused_pending\":0,\"blocked\":0,"
	    "\"oldest_blocked_age_seconds\":0,"
	    "\"circuit_open\":0,\"channels\":{},\"paused\":[]}\n");
	free(s);
	s = report_outbox(REPORT_JSON, NULL, &c, CHECK_UNKNOWN, "db down");
	ck_assert_str_eq(s, "{\"status\":\"UNKNOWN\",\"error\":\"db down\"}\n");
	free(s);
}
END_TEST

START_TEST(test_outbox_prometheus)
{
	struct conf_outbox   c = testutil_outbox_conf();
	struct outbox_counts k = testutil_counts(14, 3, 2, 0, 2, 1, 12, 4);
	char                *s;

	s = report_outbox(REPORT_PROMETHEUS, &k, &c, CHECK_CRITICAL, NULL);
	ck_assert_ptr_nonnull(
	    strstr(s, "\ncronguard_outbox_messages{status=\"pending\"} 14\n"));
	ck_assert_ptr_nonnull(
	    strstr(s, "\ncronguard_outbox_messages{status=\"failed\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(s, "\ncronguard_outbox_stuck 2\n"));
	ck_assert_ptr_nonnull(
	    strstr(s, "\ncronguard_outbox_oldest_due_age_seconds 12\n"));
	ck_assert_ptr_nonnull(
	    strstr(s, "\ncronguard_outbox_unknown_channel 4\n"));
	ck_assert_ptr_nonnull(strstr(s, "\ncronguard_outbox_up 1\n"));
	ck_assert_ptr_nonnull(strstr(s, "\ncronguard_outbox_check_status 2\n"));
	ck_assert_ptr_nonnull(
	    strstr(s, "# TYPE cronguard_outbox_stuck gauge\n"));
	free(s);
	s = report_outbox(REPORT_PROMETHEUS, NULL, &c, CHECK_UNKNOWN, "x");
	ck_assert_ptr_nonnull(strstr(s, "\ncronguard_outbox_up 0\n"));
	ck_assert_ptr_null(strstr(s, "cronguard_outbox_messages"));
	free(s);
}
END_TEST

START_TEST(test_outbox_nagios_unknown)
{
	struct conf_outbox c = testutil_outbox_conf();
	char              *s;

	s = report_outbox(REPORT_NAGIOS, NULL, &c, CHECK_UNKNOWN,
	    "cannot connect to 127.0.0.1:1: refused");
	ck_assert_str_eq(
	    s, "OUTBOX UNKNOWN - cannot connect to 127.0.0.1:1: refused\n");
	free(s);
}
END_TEST

/* Two configured channels' limiter states: mail open, hook closed. */
START_TEST(test_outbox_circuits)
{
	struct conf_outbox     c = testutil_outbox_conf();
	struct outbox_counts   k = testutil_counts(5, 5, 0, 0, 0, 0, 3, 0);
	struct ratelimit_state st[2];
	struct outbox_quota    q[2]; /* parallel to st: none used up */
	char                   mail[] = "mail", hook[] = "hook";
	char                   err[] = "connect failed: refused";
	char                  *s;

	memset(st, 0, sizeof st);
	st[0].channel = hook;
	st[0].circuit = CIRCUIT_CLOSED;
	st[0].quota_used = 17;
	st[1].channel = mail;
	st[1].circuit = CIRCUIT_OPEN;
	st[1].failures = 3;
	st[1].open_for_ms = 41200;
	st[1].error = err;
	k.channels = st;
	k.nchannels = 2;
	memset(q, 0, sizeof q);
	k.quota = q;
	k.circuit_open = 1;

	s = report_outbox(REPORT_NAGIOS, &k, &c, CHECK_WARNING, NULL);
	ck_assert_str_eq(s,
	    "OUTBOX WARNING - stuck=0 stale=0 "
	    "pending=5 due=5 failed=0 oldest_due=3s circuit_open=mail | "
	    "pending=5;1000;10000 due=5 processing=0 stale=0 stuck=0;;0 "
	    "failed=0;1;100 oldest_due=3s;300;1800 unknown_channel=0 "
	    "circuit_open=1;0 quota_used_hook=17 quota_used_mail=0\n");
	free(s);
	s = report_outbox(REPORT_JSON, &k, &c, CHECK_WARNING, NULL);
	/* open_for_seconds rounds 41.2 s up */
	ck_assert_ptr_nonnull(strstr(s,
	    "\"circuit_open\":1,"
	    "\"channels\":{\"hook\":{\"circuit\":\"closed\","
	    "\"failures\":0,\"open_for_seconds\":0,\"quota_used\":17,"
	    "\"quota_exhausted\":false},"
	    "\"mail\":{\"circuit\":\"open\",\"failures\":3,"
	    "\"open_for_seconds\":42,\"quota_used\":0,"
	    "\"error\":\"connect failed: refused\","
	    "\"quota_exhausted\":false}},\"paused\":[]}\n"));
	free(s);
	s = report_outbox(REPORT_PROMETHEUS, &k, &c, CHECK_WARNING, NULL);
	ck_assert_ptr_nonnull(
	    strstr(s, "\ncronguard_outbox_circuit_open{channel=\"mail\"} 1\n"));
	ck_assert_ptr_nonnull(
	    strstr(s, "\ncronguard_outbox_circuit_open{channel=\"hook\"} 0\n"));
	ck_assert_ptr_nonnull(
	    strstr(s, "\ncronguard_outbox_quota_used{channel=\"hook\"} 17\n"));
	ck_assert_ptr_nonnull(strstr(
	    s, "\ncronguard_outbox_circuit_failures{channel=\"mail\"} 3\n"));
	ck_assert_ptr_nonnull(
	    strstr(s, "# TYPE cronguard_outbox_circuit_open gauge\n"));
	free(s);
	st[1].circuit = CIRCUIT_HALF_OPEN;
	s = report_outbox(REPORT_JSON, &k, &c, CHECK_WARNING, NULL);
	ck_assert_ptr_nonnull(strstr(s, "\"circuit\":\"half-open\""));
	free(s);
}
END_TEST

/* A used-up quota with rows behind it, a pause, and a label value that
 * needs Prometheus's escapes. */
START_TEST(test_outbox_quota_pause_labels)
{
	struct conf_outbox     c = testutil_outbox_conf();
	struct outbox_counts   k = testutil_counts(3, 3, 0, 0, 0, 0, 0, 0);
	struct ratelimit_state st[1];
	struct outbox_quota    q[1];
	struct outbox_pause    p[1];
	char  name[] = "mail", resets[] = "2026-12-02T00:00:00Z";
	char  odd[] = "a\"b\\c\nd", at[] = "2026-12-01 21:00:00";
	char  by[] = "kim@web1:42", why[] = "template fix";
	char *s;

	memset(st, 0, sizeof st);
	st[0].channel = name;
	st[0].quota_used = 500;
	st[0].quota_resets_at = resets;
	q[0].exhausted = true;
	q[0].due = 3;
	memset(p, 0, sizeof p);
	p[0].channel = name;
	p[0].paused_at = at;
	p[0].paused_by = by;
	p[0].reason = why;
	p[0].for_s = 60;
	k.channels = st;
	k.quota = q;
	k.nchannels = 1;
	k.quota_exhausted = k.quota_blocked = 1;
	k.paused = p;
	k.npaused = 1;

	s = report_outbox(REPORT_NAGIOS, &k, &c, CHECK_CRITICAL, NULL);
	ck_assert_ptr_nonnull(strstr(s,
	    " paused=mail(since 2026-12-01 21:00:00 by kim@web1:42: "
	    "template fix) quota_exhausted=mail(due=3) "
	    "quota_resets=2026-12-02T00:00:00Z | "));
	free(s);
	p[0].channel = odd;
	s = report_outbox(REPORT_PROMETHEUS, &k, &c, CHECK_CRITICAL, NULL);
	ck_assert_ptr_nonnull(strstr(s, "{channel=\"a\\\"b\\\\c\\nd\"} 60\n"));
	free(s);
}
END_TEST

/* --------------------------------------------------------- jobs check */

struct jobs {
	struct conf_job  cj[3];
	struct job_check jc[3];
	char             name[3][8];
};

/* Three jobs a, b, c, all OK with nothing run yet. */
static void
jobs_init(struct jobs *j)
{
	size_t i;

	memset(j, 0, sizeof *j);
	for (i = 0; i < 3; i++) {
		conf_job_defaults(&j->cj[i]);
		snprintf(j->name[i], sizeof j->name[i], "%c", (char)('a' + i));
		j->cj[i].name = j->name[i];
		j->jc[i].job = &j->cj[i];
		j->jc[i].status = CHECK_OK;
		buf_init(&j->jc[i].msg);
		j->jc[i].js.last_success_ts = -1;
		j->jc[i].js.last_success_age_s = -1;
	}
}

static void
jobs_free(struct jobs *j)
{
	size_t i;

	for (i = 0; i < 3; i++)
		buf_free(&j->jc[i].msg);
}

START_TEST(test_jobs_nagios)
{
	struct jobs      j;
	struct job_pause pause[3];
	char             by[] = "kim", at[] = "2026-12-01 21:00:00";
	char            *s;

	jobs_init(&j);
	s = report_jobs(REPORT_NAGIOS, CHECK_OK, j.jc, NULL, 1, NULL);
	ck_assert_str_eq(s, "JOBS OK - 1 job ok | a_running=0\n");
	free(s);
	/* b is CRITICAL and expected every hour; a is paused, its
	 * message has a '|' and a newline */
	j.cj[1].expect_every_ms = 3600000;
	j.cj[1].grace_ms = 300000;
	j.jc[1].status = CHECK_CRITICAL;
	buf_adds(&j.jc[1].msg, "last success 2h ago");
	j.jc[1].js.last_success_age_s = 7200;
	j.jc[1].running = 1;
	buf_adds(&j.jc[0].msg, "paused | since\nyesterday");
	memset(pause, 0, sizeof pause);
	pause[0].paused = 1;
	pause[0].paused_by = by;
	pause[0].paused_at = at;
	s = report_jobs(REPORT_NAGIOS, CHECK_CRITICAL, j.jc, pause, 3, NULL);
	ck_assert_str_eq(s,
	    "JOBS CRITICAL - b CRITICAL: last success 2h ago; "
	    "a OK: paused / since\\nyesterday | a_running=0 "
	    "b_last_success_age=7200s;;3900 b_running=1 c_running=0\n");
	free(s);
	s = report_jobs(REPORT_NAGIOS, CHECK_UNKNOWN, j.jc, NULL, 3, "no db");
	ck_assert_str_eq(s, "JOBS UNKNOWN - no db\n");
	free(s);
	jobs_free(&j);
}
END_TEST

START_TEST(test_jobs_json_prometheus)
{
	struct jobs j;
	json_t     *root, *arr, *o;
	char       *s, ok[] = "success", failed[] = "failure";

	jobs_init(&j);
	j.jc[0].js.last_success_ts = 1764600000.5;
	j.jc[0].js.last_success_age_s = 30;
	j.jc[0].js.done_outcome = ok;
	j.jc[1].js.done_outcome = failed;
	j.jc[1].status = CHECK_WARNING;
	buf_adds(&j.jc[1].msg, "last run failed");
	s = report_jobs(REPORT_JSON, CHECK_WARNING, j.jc, NULL, 2, NULL);
	root = parse(s);
	ck_assert_str_eq(
	    json_string_value(json_object_get(root, "status")), "WARNING");
	arr = json_object_get(root, "jobs");
	ck_assert_uint_eq(json_array_size(arr), 2);
	o = json_array_get(arr, 1);
	ck_assert_str_eq(json_string_value(json_object_get(o, "job")), "b");
	ck_assert_str_eq(json_string_value(json_object_get(o, "message")),
	    "last run failed");
	ck_assert(json_is_null(json_object_get(o, "last_success")));
	ck_assert(json_is_null(json_object_get(o, "paused")));
	o = json_array_get(arr, 0);
	ck_assert_int_eq(
	    json_integer_value(json_object_get(o, "last_success_age_seconds")),
	    30);
	json_decref(root);
	free(s);
	s = report_jobs(REPORT_PROMETHEUS, CHECK_WARNING, j.jc, NULL, 2, NULL);
	ck_assert_ptr_nonnull(strstr(s,
	    "\ncronguard_job_last_success_timestamp_seconds{job=\"a\"} "
	    "1764600000.500000\n"));
	ck_assert_ptr_nonnull(
	    strstr(s, "\ncronguard_job_last_run_failed{job=\"a\"} 0\n"));
	ck_assert_ptr_nonnull(
	    strstr(s, "\ncronguard_job_last_run_failed{job=\"b\"} 1\n"));
	ck_assert_ptr_nonnull(
	    strstr(s, "\ncronguard_job_status{job=\"b\"} 1\n"));
	/* the schedule's gauges only for scheduled jobs */
	ck_assert_ptr_null(strstr(s, "cronguard_job_slot_missed{"));
	ck_assert_ptr_nonnull(strstr(s, "\ncronguard_jobs_check_status 1\n"));
	free(s);
	jobs_free(&j);
}
END_TEST

/* ------------------------------------------------ jobs runs, jobs show */

static const char *const run_names[] = { "id", "job", "host", "pid",
	"started_at", "finished_at", "duration_ms", "outcome", "exit_status",
	"fence", "run_uuid", "output_bytes", "slot", "slot_kind", "lock_name",
	"connection_id", "heartbeat_at", "error", "output_length", "output" };

/* Two runs (RUNS_LIST_COLUMNS): a success in its schedule's slot, and a
 * run killed by SIGKILL (137) under once_per, its duration unknown. */
static const char *const run_rows[] = {
	"7",
	"accrual",
	"web1",
	"4242",
	"2026-11-29 10:00:00.123456",
	"2026-11-29 10:01:30.623456",
	"90500",
	"success",
	"0",
	"12",
	"u-1",
	"0",
	"2026-11-29 10:00:00",
	"schedule", /* */
	"8",
	"payroll-export",
	"db-host-1",
	"99",
	"2026-11-30 03:00:00.5",
	NULL,
	NULL,
	"killed",
	"137",
	NULL,
	"u-2",
	"0",
	"2026-11-30",
	"once_per",
};

START_TEST(test_runs_text)
{
	struct db_result r;
	char            *s;

	result(&r, run_names, 14, run_rows, 2);
	s = report_runs(&r, 0);
	ck_assert_str_eq(s,
	    "ID        JOB             HOST       STARTED              "
	    "DURATION   OUTCOME           EXIT  FENCE  SLOT\n"
	    "7         accrual         web1       2026-11-29 10:00:00  "
	    "1m30s      success              0  12     2026-11-29 10:00:00\n"
	    "8         payroll-export  db-host-1  2026-11-30 03:00:00  "
	    "-          killed (SIGKILL)   137  -      2026-11-30 once_per\n");
	free(s);
	result_free(&r);
}
END_TEST

START_TEST(test_runs_json)
{
	struct db_result r;
	json_t          *arr, *o;
	char            *s;

	result(&r, run_names, 14, run_rows, 2);
	s = report_runs(&r, 1);
	arr = parse(s);
	ck_assert_uint_eq(json_array_size(arr), 2);
	o = json_array_get(arr, 1);
	/* the integer columns are numbers, NULL is null, the rest strings */
	ck_assert(json_is_integer(json_object_get(o, "exit_status")));
	ck_assert_int_eq(
	    json_integer_value(json_object_get(o, "exit_status")), 137);
	ck_assert(json_is_null(json_object_get(o, "fence")));
	ck_assert(json_is_string(json_object_get(o, "slot")));
	ck_assert_str_eq(
	    json_string_value(json_object_get(o, "signal")), "SIGKILL");
	o = json_array_get(arr, 0);
	ck_assert_int_eq(
	    json_integer_value(json_object_get(o, "duration_ms")), 90500);
	ck_assert(json_is_null(json_object_get(o, "signal")));
	ck_assert_ptr_null(json_object_get(o, "output")); /* list only */
	json_decref(arr);
	free(s);
	result_free(&r);
}
END_TEST

/* jobs show: one run with its output's tail: 5 bytes kept (a NUL among
 * them, and a byte that is not UTF-8) of 12 written. */
static const char *const run_one[] = { "8", "payroll-export", "db-host-1", "99",
	"2026-11-30 03:00:00.5", "2026-11-30 03:00:02.5", "2000", "killed",
	"137", "13", "u-2", "12", "2026-11-30", "once_per",
	"cronguard:app:payroll-export", "55", NULL, NULL, "5", "ab\0c\xff" };

START_TEST(test_run_text)
{
	struct db_result r;
	size_t           len;
	char            *s;

	result(&r, run_names, 20, run_one, 1);
	r.lengths[0][19] = 5;
	s = report_run(&r, 0, &len);
	ck_assert_ptr_nonnull(strstr(s, "id:            8\n"));
	ck_assert_ptr_nonnull(strstr(s, "\nduration:      2s\n"));
	ck_assert_ptr_nonnull(strstr(s, "\noutcome:       killed (SIGKILL)\n"));
	ck_assert_ptr_nonnull(strstr(s, "\nerror:         -\n"));
	ck_assert_ptr_nonnull(strstr(s,
	    "\noutput:        the last 5 of 12 bytes (the rest was not "
	    "kept)\n\nab"));
	/* the output's bytes as they are, past the NUL */
	ck_assert_uint_gt(len, 5);
	ck_assert_mem_eq(s + len - 5, "ab\0c\xff", 5);
	free(s);
	result_free(&r);
}
END_TEST

START_TEST(test_run_json)
{
	struct db_result r;
	json_error_t     e;
	json_t          *o;
	size_t           len;
	char            *s;

	result(&r, run_names, 20, run_one, 1);
	r.lengths[0][19] = 5;
	s = report_run(&r, 1, &len);
	ck_assert_uint_eq(len, strlen(s));
	o = json_loads(s, JSON_ALLOW_NUL, &e);
	ck_assert_msg(o != NULL, "%s", e.text);
	ck_assert_uint_eq(json_string_length(json_object_get(o, "output")), 7);
	ck_assert_mem_eq(json_string_value(json_object_get(o, "output")),
	    "ab\0c\xef\xbf\xbd", 7);
	ck_assert(json_is_true(json_object_get(o, "output_lossy")));
	ck_assert(json_is_true(json_object_get(o, "output_truncated")));
	ck_assert_str_eq(json_string_value(json_object_get(o, "lock_name")),
	    "cronguard:app:payroll-export");
	json_decref(o);
	free(s);
	result_free(&r);
}
END_TEST

/* ------------------------------------------------- jobs list, locks */

START_TEST(test_jobs_list_text)
{
	struct job_summary    js[2];
	struct job_slot_info  si;
	struct job_pause      p;
	struct report_job_row rows[2];
	char started[] = "2026-11-29 10:00:00.123456", ok[] = "success";
	char by[] = "kim@web1:42", at[] = "2026-12-01 21:00:00.000000";
	char why[] = "quarter\nend", *s;

	memset(js, 0, sizeof js);
	memset(rows, 0, sizeof rows);
	memset(&p, 0, sizeof p);
	memset(&si, 0, sizeof si);
	js[0].last_started = started;
	js[0].last_outcome = ok;
	js[0].last_success = started;
	js[0].last_fence = 12;
	snprintf(si.latest, sizeof si.latest, "2026-11-29T10:00:00Z");
	si.latest_done = 1;
	snprintf(si.next, sizeof si.next, "2026-11-30T10:00:00Z");
	p.paused = 1;
	p.paused_by = by;
	p.paused_at = at;
	p.reason = why;
	rows[0] = (struct report_job_row){ .job = "accrual",
		.guard = "named_lock",
		.lock = "cronguard:app:accrual",
		.js = &js[0],
		.schedule = "0 10 * * *",
		.timezone = "Europe/Paris",
		.slots = &si };
	rows[1] = (struct report_job_row){
		.job = "local-job", .guard = "local", .js = &js[1], .pause = &p
	};
	s = report_jobs_list_text(rows, 2);
	ck_assert_str_eq(s,
	    "JOB        GUARD       LOCK                   LAST RUN             "
	    "OUTCOME    LAST SUCCESS         FENCE\n"
	    "accrual    named_lock  cronguard:app:accrual  2026-11-29 10:00:00  "
	    "success    2026-11-29 10:00:00  12\n"
	    "  schedule \"0 10 * * *\" (Europe/Paris): latest slot "
	    "2026-11-29T10:00:00Z done, next 2026-11-30T10:00:00Z\n"
	    "local-job  local       -                      -                    "
	    "-          -                    -\n"
	    "  paused by kim@web1:42 since 2026-12-01 21:00:00 until resumed: "
	    "quarter\\nend\n");
	free(s);
}
END_TEST

START_TEST(test_locks)
{
	struct lock_holder     h[3];
	struct report_lock_row rows[3];
	char                   host[] = "web1", client[] = "10.0.0.5:3306";
	char                   since[] = "2026-11-29 10:00:00.500000", *s;
	json_t                *arr, *o;

	memset(h, 0, sizeof h);
	h[0].connection_id = 55;
	h[0].run_id = 9;
	h[0].run_host = host;
	h[0].run_pid = 4242;
	h[0].started_at = since;
	h[0].run_age_s = 30;
	h[0].client_host = client;
	h[0].idle_s = -1;
	h[1].idle_s = -1;
	h[2].connection_id = 77;
	h[2].idle_s = 4000;
	rows[0] = (struct report_lock_row){ "cronguard:app:accrual", "accrual",
		"held", &h[0], 12, 12 };
	rows[1] = (struct report_lock_row){ "cronguard:app:x", "-", "free",
		&h[1], 0, 3 };
	rows[2] = (struct report_lock_row){ "cronguard:app:y", "y", "STUCK",
		&h[2], 0, 0 };
	s = report_locks_text(rows, 3);
	ck_assert_str_eq(s,
	    "LOCK                   JOB      STATE  FENCE   HOLDER\n"
	    "cronguard:app:accrual  accrual  held   12      connection 55, "
	    "run 9 on web1 pid 4242, from 10.0.0.5:3306, since "
	    "2026-11-29 10:00:00 (30s)\n"
	    "cronguard:app:x        -        free   -       -\n"
	    "cronguard:app:y        y        STUCK  -       connection 77, no "
	    "run record, in its state for 4000s\n");
	free(s);
	s = report_locks_json(rows, 3);
	arr = parse(s);
	o = json_array_get(arr, 0);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "pid")), 4242);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "fence")), 12);
	o = json_array_get(arr, 1);
	ck_assert(json_is_null(json_object_get(o, "connection_id")));
	ck_assert(json_is_null(json_object_get(o, "fence")));
	ck_assert_int_eq(
	    json_integer_value(json_object_get(o, "last_fence")), 3);
	o = json_array_get(arr, 2);
	ck_assert(json_is_null(json_object_get(o, "pid"))); /* no run */
	ck_assert(json_is_null(json_object_get(o, "host")));
	json_decref(arr);
	free(s);
}
END_TEST

/* ------------------------------------------------------- outbox list */

static const char *const list_names[] = { "id", "message_id", "status",
	"channel", "event_type", "ordering_key", "attempts", "next_attempt_at",
	"created_at", "sent_at", "last_error" };

/* last_error: cut at a space before 57 bytes and marked; one without a
 * space cut at a character boundary (the é straddles byte 57); control
 * characters as spaces. */
static const char *const list_rows[] = {
	"17",
	"m-17",
	"FAILED",
	"mail",
	"invoice.sent",
	NULL,
	"3",
	"2026-12-01 10:00:00.000000",
	"2026-12-01 09:00:00.000000",
	NULL,
	"550 5.1.1 <kim@example.com>: Recipient address rejected: "
	"user unknown", /* */
	"18",
	"m-18",
	"PENDING",
	"123",
	"x",
	"k",
	"0",
	"2026-12-01 10:00:00.000000",
	"2026-12-01 09:00:00.000000",
	NULL,
	"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\xc3\xa9"
	"yyyy", /* */
	"19",
	"m-19",
	"SENT",
	"hook",
	"y",
	NULL,
	"1",
	NULL,
	"2026",
	"2026",
	"line\none\ttab",
};

START_TEST(test_outbox_list_text)
{
	struct db_result r;
	char            *s;

	result(&r, list_names, 11, list_rows, 3);
	s = report_outbox_list_text(&r, 0);
	ck_assert_str_eq(s,
	    "ID         STATUS     CHANNEL      EVENT_TYPE               ATT "
	    "NEXT_ATTEMPT_AT            LAST_ERROR\n"
	    "17         FAILED     mail         invoice.sent               3 "
	    "2026-12-01 10:00:00.000000 550 5.1.1 <kim@example.com>: "
	    "Recipient address rejected:...\n"
	    "18         PENDING    123          x                          0 "
	    "2026-12-01 10:00:00.000000 "
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\n"
	    "19         SENT       hook         y                          1 "
	    "-                          line\\none\\ttab\n");
	free(s);
	s = report_outbox_list_text(&r, 1);
	ck_assert_ptr_nonnull(strstr(s,
	    " 550 5.1.1 <kim@example.com>: Recipient address rejected: "
	    "user unknown\n"));
	free(s);
	result_free(&r);
}
END_TEST

START_TEST(test_outbox_list_json)
{
	struct db_result r;
	json_t          *arr, *o;
	char            *s;

	result(&r, list_names, 11, list_rows, 3);
	s = report_outbox_list_json(&r);
	arr = parse(s);
	ck_assert_uint_eq(json_array_size(arr), 3);
	o = json_array_get(arr, 1);
	/* id and attempts are numbers; a channel that looks like one is not */
	ck_assert_int_eq(json_integer_value(json_object_get(o, "id")), 18);
	ck_assert(json_is_integer(json_object_get(o, "attempts")));
	ck_assert_str_eq(
	    json_string_value(json_object_get(o, "channel")), "123");
	ck_assert(json_is_null(json_object_get(o, "sent_at")));
	o = json_array_get(arr, 2);
	ck_assert_str_eq(json_string_value(json_object_get(o, "last_error")),
	    "line\none\ttab");
	json_decref(arr);
	free(s);
	result_free(&r);
}
END_TEST

START_TEST(test_job_pause)
{
	struct job_pause p = { 0 };
	char            *t;

	ck_assert_ptr_null(report_job_pause(&p));
	ck_assert_ptr_null(report_job_pause(NULL));
	p.paused = 1;
	p.job = "accrual";
	p.paused_at = "2026-12-01 09:12:00.123456";
	p.paused_by = "kim@app1:42";
	t = report_job_pause(&p);
	ck_assert_str_eq(
	    t, "paused by kim@app1:42 since 2026-12-01 09:12:00 until resumed");
	free(t);
	p.job = JOBCTL_ALL;
	p.until_at = "2026-12-01 12:12:00.000000";
	p.reason = "ledger migration";
	t = report_job_pause(&p);
	ck_assert_str_eq(t,
	    "paused (every job) by kim@app1:42 since 2026-12-01 09:12:00 until 2026-12-01 12:12:00: ledger migration");
	free(t);
	p.reason = "two\nlines\tand\x7f";
	t = report_job_pause(&p);
	ck_assert_ptr_nonnull(strstr(t, ": two\\nlines\\tand\\x7f"));
	free(t);
}
END_TEST

/* The one function for a terminal: every control character visible. */
START_TEST(test_text)
{
	static const char in[] = "a\x1b[31m\a\r\n\t\0\x7f\xc2\x9b"
	                         "\xc2\xa0\xe4\xed\xa0\x80\\x\xf0\x9f\x98\x80";
	struct buf        b;
	char             *s;

	buf_init(&b);
	report_text(&b, in, sizeof in - 1);
	ck_assert_str_eq(b.data,
	    "a\\x1b[31m\\x07\\r\\n\\t\\x00\\x7f\\u009b\xc2\xa0\\xe4"
	    "\\xed\\xa0\\x80\\x\xf0\x9f\x98\x80");
	buf_free(&b);
	s = report_text_dup("ok | \xc3\xa9");
	ck_assert_str_eq(s, "ok | \xc3\xa9");
	free(s);
}
END_TEST

static Suite *
report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("report");

	tcase_add_test(tc, test_format_parse);
	tcase_add_test(tc, test_nagios_contract_example);
	tcase_add_test(tc, test_outbox_json);
	tcase_add_test(tc, test_outbox_prometheus);
	tcase_add_test(tc, test_outbox_nagios_unknown);
	tcase_add_test(tc, test_outbox_circuits);
	tcase_add_test(tc, test_outbox_quota_pause_labels);
	tcase_add_test(tc, test_jobs_nagios);
	tcase_add_test(tc, test_jobs_json_prometheus);
	tcase_add_test(tc, test_runs_text);
	tcase_add_test(tc, test_runs_json);
	tcase_add_test(tc, test_run_text);
	tcase_add_test(tc, test_run_json);
	tcase_add_test(tc, test_jobs_list_text);
	tcase_add_test(tc, test_locks);
	tcase_add_test(tc, test_outbox_list_text);
	tcase_add_test(tc, test_outbox_list_json);
	tcase_add_test(tc, test_job_pause);
	tcase_add_test(tc, test_text);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(report_suite);
}
