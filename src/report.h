/*
 * report.h: the monitoring output of jobs check and outbox check in the
 * three formats (cronguard(1), jobs check; cronguard-outbox(7), MONITORING):
 * Nagios line with perfdata, JSON, Prometheus text.  The writers return an
 * allocated string (the caller frees it) and never print.
 */
#ifndef CRONGUARD_REPORT_H
#define CRONGUARD_REPORT_H

#include <stddef.h>

#include "check.h"

enum report_format { REPORT_NAGIOS = 0, REPORT_JSON, REPORT_PROMETHEUS };

/* "nagios", "json", "prometheus"; -1 otherwise. */
int report_format_parse(const char *, enum report_format *);

struct buf;
/*
 * The one way a text from a row reaches a terminal (cronguard(1),
 * OUTPUT): s[0..len) with every control character made visible, so that
 * no byte of a row can move the cursor, ring, recolour or forge a line:
 * LF, CR, TAB as \n, \r, \t; any other C0 byte, DEL, a NUL and a byte
 * that is not well-formed UTF-8 as \xHH; a C1 character (U+0080 to
 * U+009F) as \uHHHH.  Everything else, backslashes too, as it is.  Every
 * text table and show output goes through it; JSON escapes as JSON does.
 */
void report_text(struct buf *, const char *s, size_t len);
/* report_text of the NUL-terminated s, allocated. */
char *report_text_dup(const char *s);

struct conf_outbox;
struct job_check;
struct outbox_counts;

/*
 * outbox check: the counts k in format fmt with verdict s.  k NULL means
 * the counts could not be read: status UNKNOWN and error says why.
 */
char *report_outbox(enum report_format fmt, const struct outbox_counts *k,
    const struct conf_outbox *, enum check_status s, const char *error);

/*
 * jobs check: the n judged jobs (jobcheck_run_all) in format fmt with the
 * overall status st.  error not NULL: the jobs could not be judged (status
 * UNKNOWN), error says why and jcs is not read.  pauses: NULL, or the
 * pause of each job (jobctl_pause_get), in jcs's order: the gauge
 * cronguard_job_paused, JSON "paused", the Nagios line names them.
 */
struct job_pause;
char *report_jobs(enum report_format fmt, enum check_status st,
    const struct job_check *jcs, const struct job_pause *pauses, size_t n,
    const char *error);

/*
 * doctor: the verdict first (Nagios: "DOCTOR CRITICAL - name: finding;
 * N more problems below", the worst result and what it is about), then
 * one line per check; JSON: the status, that summary and the checks.
 * REPORT_PROMETHEUS is not a format of doctor's (the Nagios text).
 */
struct doctor_report;
char *report_doctor(enum report_format fmt, const struct doctor_report *r);

/* ------------------------------------------------ jobs runs, jobs show */

struct db_result;
/* jobs runs: runs_list's rows (RUNS_LIST_COLUMNS) as a table, or as a JSON
 * array when json. */
char *report_runs(const struct db_result *r, int json);
/*
 * jobs show: runs_get's one row (RUNS_GET_COLUMNS).  Text: one "name:
 * value" line per field, a blank line, then the captured output's bytes
 * as they are.  JSON: an object; the output a string with each byte that
 * is not well-formed UTF-8 replaced by U+FFFD (output_lossy true then).
 * *len is the length: the text may hold NUL bytes.
 */
char *report_run(const struct db_result *r, int json, size_t *len);

/* "paused by WHO since T until U: REASON" (T, U to the second, UTC;
 * "until resumed" for no end; no ": REASON" for none; "paused (every
 * job) by" for the JOBCTL_ALL row; WHO and REASON through report_text),
 * allocated; NULL when p is not a pause in effect.  jobs list, jobs
 * check. */
struct job_pause;
char *report_job_pause(const struct job_pause *p);

/* jobs list --format json: one object per configured job. */
struct job_summary;
struct job_pause;
struct job_slot_info;
struct report_job_row {
	const char               *job;
	const char               *guard;
	const char               *lock; /* NULL: no database lock */
	const struct job_summary *js;
	const struct job_pause   *pause; /* NULL or not paused: "paused" null */
	const char               *schedule; /* NULL: none */
	const char               *timezone; /* NULL: the server's */
	const struct job_slot_info *slots;  /* with a schedule */
};
char *report_jobs_list_json(const struct report_job_row *, size_t n);
/* jobs list: the table, a line under a scheduled or paused job. */
char *report_jobs_list_text(const struct report_job_row *, size_t n);

/* locks --format json: one object per lock. */
struct lock_holder;
struct report_lock_row {
	const char               *lock;
	const char               *job;   /* "-": none known */
	const char               *state; /* free, held, STUCK */
	const struct lock_holder *h;
	unsigned long long        fence;      /* the holder's run's; 0 */
	unsigned long long        last_fence; /* last issued for lock; 0 */
};
char *report_locks_json(const struct report_lock_row *, size_t n);
/* outbox list: the rows of outbox_list (outbox-admin.h) as a table (wide:
 * last_error whole) or a JSON array. */
struct db_result;
char *report_outbox_list_text(const struct db_result *, int wide);
char *report_outbox_list_json(const struct db_result *);

/* outbox show: the row of outbox_show ("name: value" a line, the
 * payload, last, pretty-printed), the blocker of outbox_show_blocker (a
 * "blocked_by:" line when it has a row; NULL: none), then "attempts
 * logged: total" and the page of outbox_show_attempts, one line each. */
char *report_outbox_show(const struct db_result *row,
    const struct db_result *blocker, const struct db_result *attempts,
    unsigned long long total);

/* locks: the table, one line per lock. */
char *report_locks_text(const struct report_lock_row *, size_t n);

/* schedule next --format json: {"schedule", "timezone", "from",
 * "slots": [RFC 3339, ...]}. */
char *report_schedule_next_json(const char *schedule, const char *timezone,
    const char *from, const char *const *slots, size_t n);

/* status --format json: the page's data (status.h) as one object:
 * generated_at (the database clock, UTC), error (null, or why the
 * database could not be read: then nothing else), status, jobs (each
 * with jobs check's status and message, its pause and its cells), outbox
 * (the counts and each channel's, with 24 hours of attempts). */
struct status;
char *report_status_json(const struct status *s);

#endif
