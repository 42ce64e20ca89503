/*
 * report-int.h: what the writers of report.h share (report.c), included
 * by report.c, report-outbox.c, report-jobs.c, report-doctor.c and
 * report-status.c only.
 */
#ifndef CRONGUARD_REPORT_INT_H
#define CRONGUARD_REPORT_INT_H

#include <stddef.h>

#include <jansson.h>

struct buf;
struct db_result;
struct job_pause;

/* report_text of a cell (its bytes whole, a NUL too), "-" for NULL,
 * left-aligned in width columns (0: as it is). */
void report_cell(
    struct buf *, const struct db_result *r, size_t row, size_t col, int width);
/* The columns report_cell takes for a cell. */
int report_cell_width(const struct db_result *r, size_t row, size_t col);
/* Text for the Nagios line: report_text, and a '|' (which would start
 * the perfdata) as '/'. */
void report_nagios_text(struct buf *, const char *v);
/* v, or "-" for NULL. */
const char *report_dash(const char *v);

/* A gauge's HELP and TYPE lines. */
void report_prom_head(struct buf *, const char *name, const char *help);
/* A gauge with its HELP and TYPE lines and its one sample v. */
void report_prom_gauge(
    struct buf *, const char *name, const char *help, long long v);
/* A sample's name and one label, up to its value: name{key="value"} */
void report_prom_labelled(
    struct buf *, const char *name, const char *key, const char *value);
/* name: the host's Unix time, when the check wrote its metrics. */
void report_prom_timestamp(struct buf *, const char *name);

/* j as indented text with a newline; j is released. */
char *report_json_text(json_t *j);
/* Bytes as a JSON string: every byte that does not start a well-formed
 * UTF-8 sequence becomes U+FFFD (*lossy set). */
json_t *report_json_bytes(const char *p, size_t len, int *lossy);
/* v as a JSON string, or null for NULL. */
json_t *report_str_or_null(const char *v);
/* v as a JSON number, or null for 0. */
json_t *report_id_or_null(unsigned long long v);

/* A job's pause (report-jobs.c): {"all_jobs", "paused_at", "paused_by",
 * "reason", "until_at"}, or null when p is NULL or not paused. */
json_t *report_pause_json(const struct job_pause *p);

#endif
