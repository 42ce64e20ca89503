/* report-status.c: status --format json, the status page's data
 * (status.h) as one object; the HTML page is status-html.c's.  A writer
 * only: it returns the text, the command prints it. */
#include "config.h"

#include <jansson.h>

#include "conf.h"
#include "ratelimit.h"
#include "report-int.h"
#include "report.h"
#include "status.h"
#include "util.h"

/* ------------------------------------------------------------- status */

static json_t *
report_status_cell(const struct status_cell_info *c)
{
	json_t *o;

	o = json_pack("{s:s}", "state", status_cell_name(c->state));
	json_object_set_new(
	    o, "slot", c->slot >= 0 ? json_string(c->slot_text) : json_null());
	json_object_set_new(o, "runs", json_integer(c->nruns));
	json_object_set_new(o, "run_id", report_id_or_null(c->run_id));
	json_object_set_new(o, "started", report_str_or_null(c->started));
	json_object_set_new(o, "duration_ms",
	    c->duration_ms >= 0 ? json_integer(c->duration_ms) : json_null());
	json_object_set_new(o, "host", report_str_or_null(c->host));
	json_object_set_new(o, "outcome", report_str_or_null(c->outcome));
	json_object_set_new(o, "exit_status",
	    c->exit_status >= 0 ? json_integer(c->exit_status) : json_null());
	return o;
}

static json_t *
report_status_job(const struct status_job *j)
{
	json_t *o, *cells;
	size_t  i;

	o = json_pack("{s:s, s:s}", "job", j->job->name, "status",
	    check_status_name(j->check.status));
	json_object_set_new(o, "message", json_string(buf_str(&j->check.msg)));
	json_object_set_new(
	    o, "schedule", report_str_or_null(j->job->schedule_text));
	json_object_set_new(o, "timezone", report_str_or_null(j->zone));
	json_object_set_new(o, "next_slot",
	    j->next[0] != '\0' ? json_string(j->next) : json_null());
	json_object_set_new(o, "paused", report_pause_json(&j->pause));
	cells = json_array();
	for (i = 0; i < j->ncells; i++)
		json_array_append_new(cells, report_status_cell(&j->cells[i]));
	json_object_set_new(o, "cells", cells);
	return o;
}

static json_t *
report_status_channel(const struct status_channel *ch)
{
	json_t *o, *hours;
	int     h;

	o = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "channel",
	    ch->conf->name, "pending", (json_int_t)ch->pending, "due",
	    (json_int_t)ch->due, "processing", (json_int_t)ch->processing,
	    "failed", (json_int_t)ch->failed, "blocked",
	    (json_int_t)ch->blocked, "expired", (json_int_t)ch->expired,
	    "oldest_due_age_seconds", (json_int_t)ch->oldest_due_age_s);
	json_object_set_new(o, "paused",
	    ch->pause == NULL
	        ? json_null()
	        : json_pack("{s:s?, s:s?, s:s?, s:s?}", "paused_at",
	              ch->pause->paused_at, "paused_by", ch->pause->paused_by,
	              "reason", ch->pause->reason, "until_at",
	              ch->pause->until_at));
	json_object_set_new(o, "circuit",
	    json_string(ratelimit_circuit_name(
	        ch->limit != NULL ? ch->limit->circuit : CIRCUIT_CLOSED)));
	json_object_set_new(o, "rate", json_real(ch->conf->rate));
	json_object_set_new(
	    o, "daily_quota", json_integer((json_int_t)ch->conf->daily_quota));
	json_object_set_new(o, "quota_used",
	    json_integer(
	        (json_int_t)(ch->limit != NULL ? ch->limit->quota_used : 0)));
	json_object_set_new(
	    o, "quota_exhausted", json_boolean(ch->quota_exhausted));
	hours = json_array();
	for (h = 0; h < STATUS_HOURS; h++)
		json_array_append_new(hours,
		    json_pack("{s:I, s:I, s:I, s:I}", "hours_ago",
		        (json_int_t)(STATUS_HOURS - 1 - h), "sent",
		        (json_int_t)ch->hours[h][0], "retried",
		        (json_int_t)ch->hours[h][1], "failed",
		        (json_int_t)ch->hours[h][2]));
	json_object_set_new(o, "attempts", hours);
	return o;
}

char *
report_status_json(const struct status *s)
{
	json_t *root, *jobs, *chans, *outbox;
	size_t  i;

	root = json_object();
	json_object_set_new(root, "generated_at", report_str_or_null(s->now));
	json_object_set_new(root, "clock", json_string("database"));
	json_object_set_new(root, "error", report_str_or_null(s->error));
	if (s->error != NULL)
		return report_json_text(root);
	json_object_set_new(root, "slots", json_integer(s->slots));
	json_object_set_new(root, "status",
	    json_string(check_status_name(
	        check_status_worst(s->jobs_status, s->outbox_status))));
	json_object_set_new(root, "jobs_status",
	    json_string(check_status_name(s->jobs_status)));
	jobs = json_array();
	for (i = 0; i < s->njobs; i++)
		json_array_append_new(jobs, report_status_job(&s->jobs[i]));
	json_object_set_new(root, "jobs", jobs);
	outbox = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "status",
	    check_status_name(s->outbox_status), "pending",
	    (json_int_t)s->counts.pending, "due", (json_int_t)s->counts.due,
	    "processing", (json_int_t)s->counts.processing, "stuck",
	    (json_int_t)s->counts.stuck, "failed", (json_int_t)s->counts.failed,
	    "unknown_channel", (json_int_t)s->counts.unknown_channel);
	chans = json_array();
	for (i = 0; i < s->nchannels; i++)
		json_array_append_new(
		    chans, report_status_channel(&s->channels[i]));
	json_object_set_new(outbox, "channels", chans);
	json_object_set_new(root, "outbox", outbox);
	return report_json_text(root);
}
