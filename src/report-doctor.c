/* report-doctor.c: doctor's verdict and checks, as Nagios text or JSON
 * (cronguard(1), doctor).  A writer only: it returns the text, the
 * command prints it. */
#include "config.h"

#include <stdlib.h>

#include <jansson.h>

#include "doctor.h"
#include "report-int.h"
#include "report.h"
#include "util.h"

/* ------------------------------------------------------------- doctor */

/* The result the verdict is about: the first whose status is the
 * report's (UNKNOWN when the database is unreachable, whatever else
 * failed), else the first that is not OK; NULL when all are OK. */
static const struct doctor_result *
report_doctor_worst(const struct doctor_report *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->v[i].status == r->worst)
			return r->worst != CHECK_OK ? &r->v[i] : NULL;
	for (i = 0; i < r->n; i++)
		if (r->v[i].status != CHECK_OK)
			return &r->v[i];
	return NULL;
}

/* What the verdict is about: "migrations: 6 migration(s) pending; 2 more
 * problems below", or "19 checks passed"; one line, no '|'. */
static void
report_doctor_summary(struct buf *b, const struct doctor_report *r)
{
	const struct doctor_result *w = report_doctor_worst(r);
	size_t                      i, bad = 0;

	for (i = 0; i < r->n; i++)
		bad += r->v[i].status != CHECK_OK;
	if (w == NULL) {
		buf_printf(b, "%zu checks passed", r->n);
		return;
	}
	buf_printf(b, "%s: ", w->name);
	report_nagios_text(b, w->finding);
	if (bad > 1)
		buf_printf(b, "; %zu more problem%s below", bad - 1,
		    bad - 1 == 1 ? "" : "s");
}

/* The verdict first, the line a Nagios service shows as its status; then
 * one line per check, "STATUS name: finding; fix: ...". */
static void
report_doctor_nagios(struct buf *b, const struct doctor_report *r)
{
	size_t i;

	buf_printf(b, "DOCTOR %s - ", check_status_name(r->worst));
	report_doctor_summary(b, r);
	buf_addc(b, '\n');
	for (i = 0; i < r->n; i++)
		buf_printf(b, "%s %s: %s%s%s\n",
		    check_status_name(r->v[i].status), r->v[i].name,
		    r->v[i].finding, r->v[i].fix != NULL ? "; fix: " : "",
		    r->v[i].fix != NULL ? r->v[i].fix : "");
}

/* {"status", "summary", "checks": [{"name", "status", "finding",
 * "fix"}]}: summary is the text of the Nagios verdict. */
static void
report_doctor_json(struct buf *b, const struct doctor_report *r)
{
	const struct doctor_result *d;
	struct buf                  sum;
	json_t                     *root, *checks, *o;
	char                       *text;
	size_t                      i;

	buf_init(&sum);
	report_doctor_summary(&sum, r);
	root = json_object();
	json_object_set_new(
	    root, "status", json_string(check_status_name(r->worst)));
	json_object_set_new(root, "summary", json_string(buf_str(&sum)));
	checks = json_array();
	for (i = 0; i < r->n; i++) {
		d = &r->v[i];
		o = json_object();
		json_object_set_new(o, "name", json_string(d->name));
		json_object_set_new(
		    o, "status", json_string(check_status_name(d->status)));
		json_object_set_new(o, "finding", json_string(d->finding));
		json_object_set_new(o, "fix",
		    d->fix != NULL ? json_string(d->fix) : json_null());
		json_array_append_new(checks, o);
	}
	json_object_set_new(root, "checks", checks);
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	buf_printf(b, "%s\n", text != NULL ? text : "{}");
	free(text);
	json_decref(root);
	buf_free(&sum);
}

char *
report_doctor(enum report_format fmt, const struct doctor_report *r)
{
	struct buf b;

	buf_init(&b);
	if (fmt == REPORT_JSON)
		report_doctor_json(&b, r);
	else
		report_doctor_nagios(&b, r);
	return buf_steal(&b);
}
