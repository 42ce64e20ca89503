/* report.c: the monitoring output of jobs check and outbox check in the
 * three formats (cronguard(1), jobs check; cronguard-outbox(7), MONITORING).
 * Writers only: they return the text, the commands print it. */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "conf.h"
#include "db.h"
#include "doctor.h"
#include "duration.h"
#include "jobctl.h"
#include "lock.h"
#include "outbox-admin.h"
#include "ratelimit.h"
#include "report.h"
#include "jobcheck.h"
#include "runs.h"
#include "status.h"
#include "util.h"

int
report_format_parse(const char *s, enum report_format *out)
{
	if (strcmp(s, "nagios") == 0)
		*out = REPORT_NAGIOS;
	else if (strcmp(s, "json") == 0)
		*out = REPORT_JSON;
	else if (strcmp(s, "prometheus") == 0)
		*out = REPORT_PROMETHEUS;
	else
		return -1;
	return 0;
}

/* A Prometheus label value: backslash, quote and newline escaped. */
static void
report_label(struct buf *b, const char *v)
{
	for (; *v != '\0'; v++) {
		if (*v == '\\' || *v == '"')
			buf_addc(b, '\\');
		if (*v == '\n')
			buf_adds(b, "\\n");
		else
			buf_addc(b, *v);
	}
}

/* ------------------------------------------------- text for a terminal */

void
report_text(struct buf *b, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t               i, n;

	for (i = 0; i < len; i += n) {
		n = p[i] == '\0' ? 0 : utf8_seq_len(p + i, len - i);
		if (n == 1 && p[i] >= 0x20 && p[i] != 0x7f)
			buf_addc(b, s[i]);
		else if (n == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0)
			buf_printf(b, "\\u%04x", p[i + 1]); /* C1 */
		else if (n > 1)
			buf_add(b, s + i, n);
		else {
			n = 1;
			if (p[i] == '\n')
				buf_adds(b, "\\n");
			else if (p[i] == '\r')
				buf_adds(b, "\\r");
			else if (p[i] == '\t')
				buf_adds(b, "\\t");
			else
				buf_printf(b, "\\x%02x", p[i]);
		}
	}
}

char *
report_text_dup(const char *s)
{
	struct buf b;

	buf_init(&b);
	report_text(&b, s, strlen(s));
	return buf_steal(&b);
}

/* report_text of a cell (its bytes whole, a NUL too), "-" for NULL,
 * left-aligned in width columns (0: as it is). */
static void
report_cell(
    struct buf *b, const struct db_result *r, size_t row, size_t col, int width)
{
	struct buf  t;
	const char *v = db_cell(r, row, col);

	buf_init(&t);
	if (v == NULL)
		buf_addc(&t, '-');
	else
		report_text(&t, v, r->lengths[row][col]);
	buf_printf(
	    b, "%-*.*s", width, (int)t.len, t.data != NULL ? t.data : "");
	buf_free(&t);
}

/* The columns report_cell takes for a cell. */
static int
report_cell_width(const struct db_result *r, size_t row, size_t col)
{
	struct buf t;
	int        w;

	if (db_cell(r, row, col) == NULL)
		return 1;
	buf_init(&t);
	report_text(&t, db_cell(r, row, col), r->lengths[row][col]);
	w = (int)t.len;
	buf_free(&t);
	return w;
}

/* Text for the Nagios line: report_text, and a '|' (which would start the
 * perfdata) as '/'. */
static void
report_nagios_text(struct buf *b, const char *v)
{
	const char *bar;

	while ((bar = strchr(v, '|')) != NULL) {
		report_text(b, v, (size_t)(bar - v));
		buf_addc(b, '/');
		v = bar + 1;
	}
	report_text(b, v, strlen(v));
}

/* ------------------------------------------------------- outbox check */

/* quota_exhausted=mail(due=3),hook quota_resets=2026-12-02T00:00:00Z */
static void
report_outbox_nagios_quota(struct buf *b, const struct outbox_counts *k)
{
	const char *resets = NULL;
	size_t      i, n = 0;

	for (i = 0; i < k->nchannels; i++) {
		if (!k->quota[i].exhausted)
			continue;
		buf_printf(b, "%s%s", n++ == 0 ? " quota_exhausted=" : ",",
		    k->channels[i].channel);
		if (k->quota[i].due > 0)
			buf_printf(b, "(due=%lld)", k->quota[i].due);
		resets = k->channels[i].quota_resets_at;
	}
	if (resets != NULL)
		buf_printf(b, " quota_resets=%s", resets);
}

/* paused=mail(since 2026-12-01 21:00:00 by kim@web1:42: template fix)
 * paused_pending=12: the rows the pauses hold, counted in no level */
static void
report_outbox_nagios_paused(struct buf *b, const struct outbox_counts *k)
{
	const struct outbox_pause *p;
	size_t                     i;

	for (i = 0; i < k->npaused; i++) {
		p = &k->paused[i];
		buf_adds(b, i == 0 ? " paused=" : ",");
		report_nagios_text(b, p->channel);
		buf_printf(b, "(since %s by ", p->paused_at);
		report_nagios_text(b, p->paused_by);
		if (p->until_at != NULL)
			buf_printf(b, " until %s", p->until_at);
		if (p->reason != NULL) {
			buf_adds(b, ": ");
			report_nagios_text(b, p->reason);
		}
		buf_addc(b, ')');
	}
	if (k->paused_pending > 0)
		buf_printf(b, " paused_pending=%lld", k->paused_pending);
}

static void
report_outbox_nagios(struct buf *b, const struct outbox_counts *k,
    const struct conf_outbox *c, enum check_status s)
{
	size_t i, n = 0;

	buf_printf(b,
	    "OUTBOX %s - stuck=%lld stale=%lld pending=%lld due=%lld failed=%lld oldest_due=%llds",
	    check_status_name(s), k->stuck, k->stale, k->pending, k->due,
	    k->failed, k->oldest_due_age_s);
	if (k->unknown_channel > 0)
		buf_printf(b, " unknown_channel=%lld", k->unknown_channel);
	if (k->blocked > 0)
		buf_printf(b, " blocked=%lld oldest_blocked=%llds", k->blocked,
		    k->oldest_blocked_age_s);
	if (k->expired > 0)
		buf_printf(b, " expired=%lld", k->expired);
	report_outbox_nagios_paused(b, k);
	for (i = 0; i < k->nchannels; i++) {
		if (k->channels[i].circuit == CIRCUIT_CLOSED)
			continue;
		buf_printf(b, "%s%s", n++ == 0 ? " circuit_open=" : ",",
		    k->channels[i].channel);
	}
	report_outbox_nagios_quota(b, k);
	buf_printf(b,
	    " | pending=%lld;%lld;%lld due=%lld processing=%lld stale=%lld stuck=%lld;;0 failed=%lld;%lld;%lld oldest_due=%llds;%lld;%lld unknown_channel=%lld circuit_open=%lld;0",
	    k->pending, c->pending_warn, c->pending_crit, k->due, k->processing,
	    k->stale, k->stuck, k->failed, c->failed_warn, c->failed_crit,
	    k->oldest_due_age_s, (long long)(c->oldest_due_warn_ms / 1000),
	    (long long)(c->oldest_due_crit_ms / 1000), k->unknown_channel,
	    k->circuit_open);
	/* Channel names are libconfig setting names: no space, quote or =. */
	for (i = 0; i < k->nchannels; i++)
		buf_printf(b, " quota_used_%s=%lld", k->channels[i].channel,
		    k->channels[i].quota_used);
	/* Last and only when there are any: the older checks' perfdata
	 * stays as it was. */
	if (k->blocked > 0)
		buf_printf(b, " blocked=%lld oldest_blocked=%llds", k->blocked,
		    k->oldest_blocked_age_s);
	buf_addc(b, '\n');
}

/* A gauge's HELP and TYPE lines. */
static void
report_prom_head(struct buf *b, const char *name, const char *help)
{
	buf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

static void
report_prom_gauge(
    struct buf *b, const char *name, const char *help, long long v)
{
	report_prom_head(b, name, help);
	buf_printf(b, "%s %lld\n", name, v);
}

/* A sample's name and one label, up to its value: name{key="value"} */
static void
report_prom_labelled(
    struct buf *b, const char *name, const char *key, const char *value)
{
	buf_printf(b, "%s{%s=\"", name, key);
	report_label(b, value);
	buf_adds(b, "\"} ");
}

static void
report_outbox_prom_channels(struct buf *b, const struct outbox_counts *k)
{
	static const char *const        open = "cronguard_outbox_circuit_open",
	                         *const failures =
	                             "cronguard_outbox_circuit_failures",
	                         *const quota = "cronguard_outbox_quota_used",
	                         *const exhausted =
	                             "cronguard_outbox_quota_exhausted",
	                         *const resets =
	                             "cronguard_outbox_quota_resets_seconds";
	size_t i;

	if (k->nchannels == 0)
		return;
	report_prom_head(b, open,
	    "Whether the channel's circuit breaker is open or half-open (1): nothing is sent to it until a probe succeeds.");
	for (i = 0; i < k->nchannels; i++) {
		report_prom_labelled(
		    b, open, "channel", k->channels[i].channel);
		buf_printf(b, "%d\n", k->channels[i].circuit != CIRCUIT_CLOSED);
	}
	report_prom_head(b, failures,
	    "Consecutive transient failures of the channel, across instances.");
	for (i = 0; i < k->nchannels; i++) {
		report_prom_labelled(
		    b, failures, "channel", k->channels[i].channel);
		buf_printf(b, "%u\n", k->channels[i].failures);
	}
	report_prom_head(b, quota,
	    "Messages counted against the channel's daily quota today (UTC).");
	for (i = 0; i < k->nchannels; i++) {
		report_prom_labelled(
		    b, quota, "channel", k->channels[i].channel);
		buf_printf(b, "%lld\n", k->channels[i].quota_used);
	}
	report_prom_head(b, exhausted,
	    "Whether the channel's daily quota is used up (1; 2 when due messages wait behind it) until it resets.");
	for (i = 0; i < k->nchannels; i++) {
		report_prom_labelled(
		    b, exhausted, "channel", k->channels[i].channel);
		buf_printf(b, "%d\n",
		    k->quota[i].exhausted ? (k->quota[i].due > 0 ? 2 : 1) : 0);
	}
	report_prom_head(b, resets,
	    "Seconds until the daily quotas reset (midnight UTC, database clock).");
	for (i = 0; i < k->nchannels; i++) {
		report_prom_labelled(
		    b, resets, "channel", k->channels[i].channel);
		buf_printf(b, "%lld\n", k->channels[i].quota_resets_s);
	}
}

/* When the check ran, by the host clock: a metrics file that stops
 * changing says the check itself stopped (the alert rules compare it
 * with the monitoring server's time). */
static void
report_prom_timestamp(struct buf *b, const char *name)
{
	report_prom_head(b, name,
	    "Unix time (host clock) at which the check wrote these metrics.");
	buf_printf(b, "%s %lld\n", name, (long long)time(NULL));
}

static void
report_outbox_prom_paused(struct buf *b, const struct outbox_counts *k)
{
	static const char *const name = "cronguard_outbox_channel_paused";
	size_t                   i;

	report_prom_head(b, name,
	    "Seconds since the channel was paused (outbox pause); a channel not listed is not paused.");
	for (i = 0; i < k->npaused; i++) {
		report_prom_labelled(b, name, "channel", k->paused[i].channel);
		buf_printf(b, "%lld\n", k->paused[i].for_s);
	}
}

static void
report_outbox_prometheus(
    struct buf *b, const struct outbox_counts *k, enum check_status s)
{
	report_prom_gauge(b, "cronguard_outbox_up",
	    "Whether the outbox counts could be read (1) or not (0).",
	    k != NULL);
	report_prom_timestamp(b, "cronguard_outbox_check_timestamp_seconds");
	report_prom_gauge(b, "cronguard_outbox_check_status",
	    "Verdict of outbox check: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.",
	    s);
	if (k == NULL)
		return;
	report_prom_head(b, "cronguard_outbox_messages",
	    "Outbox rows by status (SENT rows are not counted).");
	buf_printf(b,
	    "cronguard_outbox_messages{status=\"pending\"} %lld\n"
	    "cronguard_outbox_messages{status=\"processing\"} %lld\n"
	    "cronguard_outbox_messages{status=\"failed\"} %lld\n",
	    k->pending, k->processing, k->failed);
	report_prom_gauge(b, "cronguard_outbox_due",
	    "PENDING rows that are due now.", k->due);
	report_prom_gauge(b, "cronguard_outbox_stale",
	    "PROCESSING rows claimed longer than the lease ago.", k->stale);
	report_prom_gauge(b, "cronguard_outbox_stuck",
	    "PROCESSING rows claimed longer than the watchdog ago: no dispatcher recovers them.",
	    k->stuck);
	report_prom_gauge(b, "cronguard_outbox_oldest_due_age_seconds",
	    "Seconds the oldest due PENDING row has waited.",
	    k->oldest_due_age_s);
	report_prom_gauge(b, "cronguard_outbox_unknown_channel",
	    "PENDING rows whose channel no configuration names.",
	    k->unknown_channel);
	report_prom_gauge(b, "cronguard_outbox_expired",
	    "FAILED rows that expired before they could be sent (expires_at or the channel's ttl).",
	    k->expired);
	report_prom_gauge(b, "cronguard_outbox_blocked",
	    "PENDING rows held back by an earlier FAILED row of their ordering key.",
	    k->blocked);
	report_prom_gauge(b, "cronguard_outbox_oldest_blocked_age_seconds",
	    "Seconds since the oldest blocked row was created.",
	    k->oldest_blocked_age_s);
	report_outbox_prom_channels(b, k);
	report_outbox_prom_paused(b, k);
}

/* {"mail": {"circuit": "open", "failures": 5, ...}, ...} */
static json_t *
report_outbox_json_channels(const struct outbox_counts *k)
{
	const struct ratelimit_state *r;
	json_t                       *o, *ch;
	size_t                        i;

	o = json_object();
	for (i = 0; o != NULL && i < k->nchannels; i++) {
		r = &k->channels[i];
		ch = json_pack("{s:s, s:I, s:I, s:I}", "circuit",
		    ratelimit_circuit_name(r->circuit), "failures",
		    (json_int_t)r->failures, "open_for_seconds",
		    (json_int_t)((r->open_for_ms + 999) / 1000), "quota_used",
		    (json_int_t)r->quota_used);
		if (ch != NULL && r->circuit != CIRCUIT_CLOSED &&
		    r->error != NULL)
			json_object_set_new(ch, "error", json_string(r->error));
		if (ch != NULL)
			json_object_set_new(ch, "quota_exhausted",
			    json_boolean(k->quota[i].exhausted));
		if (ch != NULL && k->quota[i].exhausted) {
			json_object_set_new(ch, "due",
			    json_integer((json_int_t)k->quota[i].due));
			json_object_set_new(ch, "quota_resets_at",
			    json_string(r->quota_resets_at));
			json_object_set_new(ch, "quota_resets_in_seconds",
			    json_integer((json_int_t)r->quota_resets_s));
		}
		json_object_set_new(o, r->channel, ch);
	}
	return o;
}

/* [{"channel": "mail", "since": ..., "by": ..., "reason": ...}, ...] */
static json_t *
report_outbox_json_paused(const struct outbox_counts *k)
{
	const struct outbox_pause *p;
	json_t                    *a, *o;
	size_t                     i;

	a = json_array();
	for (i = 0; a != NULL && i < k->npaused; i++) {
		p = &k->paused[i];
		o = json_pack("{s:s, s:s, s:s, s:I}", "channel", p->channel,
		    "since", p->paused_at, "by", p->paused_by,
		    "paused_for_seconds", (json_int_t)p->for_s);
		if (o == NULL)
			continue;
		json_object_set_new(o, "reason",
		    p->reason != NULL ? json_string(p->reason) : json_null());
		json_object_set_new(o, "until",
		    p->until_at != NULL ? json_string(p->until_at)
		                        : json_null());
		json_array_append_new(a, o);
	}
	return a;
}

char *
report_outbox(enum report_format fmt, const struct outbox_counts *k,
    const struct conf_outbox *c, enum check_status s, const char *error)
{
	struct buf b;
	json_t    *j;
	char      *text;

	buf_init(&b);

	switch (fmt) {
	case REPORT_NAGIOS:
		if (k == NULL)
			buf_printf(&b, "OUTBOX UNKNOWN - %s\n",
			    error != NULL ? error : "no counts");
		else
			report_outbox_nagios(&b, k, c, s);
		break;
	case REPORT_JSON:
		if (k == NULL)
			j = json_pack("{s:s, s:s}", "status",
			    check_status_name(s), "error",
			    error != NULL ? error : "no counts");
		else
			j = json_pack(
			    "{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			    "status", check_status_name(s), "pending",
			    (json_int_t)k->pending, "due", (json_int_t)k->due,
			    "processing", (json_int_t)k->processing, "stale",
			    (json_int_t)k->stale, "stuck", (json_int_t)k->stuck,
			    "failed", (json_int_t)k->failed,
			    "oldest_due_age_seconds",
			    (json_int_t)k->oldest_due_age_s, "unknown_channel",
			    (json_int_t)k->unknown_channel);
		if (k != NULL && j != NULL) {
			json_object_set_new(
			    j, "expired", json_integer((json_int_t)k->expired));
			json_object_set_new(j, "paused_pending",
			    json_integer((json_int_t)k->paused_pending));
			json_object_set_new(
			    j, "blocked", json_integer((json_int_t)k->blocked));
			json_object_set_new(j, "oldest_blocked_age_seconds",
			    json_integer((json_int_t)k->oldest_blocked_age_s));
			json_object_set_new(j, "circuit_open",
			    json_integer((json_int_t)k->circuit_open));
			json_object_set_new(
			    j, "channels", report_outbox_json_channels(k));
			json_object_set_new(
			    j, "paused", report_outbox_json_paused(k));
		}
		text = j != NULL
		    ? json_dumps(j, JSON_PRESERVE_ORDER | JSON_COMPACT)
		    : NULL;
		buf_printf(&b, "%s\n", text != NULL ? text : "{}");
		free(text);
		json_decref(j);
		break;
	case REPORT_PROMETHEUS:
		report_outbox_prometheus(&b, k, s);
		break;
	}
	return buf_steal(&b);
}

/* --------------------------------------------------------- jobs check */

/* A job's pause: {"all_jobs": false, "paused_at": ..., "paused_by": ...,
 * "reason": ..., "until_at": ...}, or null when it is not paused. */
static json_t *
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

static json_t *report_json_bytes(const char *p, size_t len, int *lossy);

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

static const char *
report_dash(const char *v)
{
	return v != NULL ? v : "-";
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

/* j as indented text with a newline; j is released. */
static char *
report_json_text(json_t *j)
{
	char *text, *s;

	text = j != NULL ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER)
	                 : NULL;
	json_decref(j);
	s = xasprintf("%s\n", text != NULL ? text : "null");
	free(text);
	return s;
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

/* Bytes as a JSON string: every byte that does not start a well-formed
 * UTF-8 sequence becomes U+FFFD (*lossy set). */
static json_t *
report_json_bytes(const char *p, size_t len, int *lossy)
{
	struct buf b;
	json_t    *j;
	size_t     i, n;

	buf_init(&b);
	for (i = 0; i < len; i += n) {
		/* A NUL is a character here (\u0000), not the end. */
		if (p[i] == '\0')
			n = 1;
		else if ((n = utf8_seq_len(
		              (const unsigned char *)p + i, len - i)) == 0) {
			buf_adds(&b, "\xef\xbf\xbd");
			*lossy = 1;
			n = 1;
			continue;
		}
		buf_add(&b, p + i, n);
	}
	j = json_stringn(b.data != NULL ? b.data : "", b.len);
	buf_free(&b);
	return j;
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

static json_t *
report_str_or_null(const char *v)
{
	return v != NULL ? json_string(v) : json_null();
}

static json_t *
report_id_or_null(unsigned long long v)
{
	return v != 0 ? json_integer((json_int_t)v) : json_null();
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

/* ------------------------------------------------------- outbox list */

/* Width of LAST_ERROR in the narrow listing. */
#define REPORT_LIST_ERROR_WIDTH 60

/* last_error on one line (report_text); unless wide, at most
 * REPORT_LIST_ERROR_WIDTH bytes of it, cut at a space (else at a UTF-8
 * character boundary) and marked with "...". */
static void
report_list_error(struct buf *b, const char *err, size_t len, int wide)
{
	size_t cut;

	if (err == NULL) {
		buf_addc(b, '-');
		return;
	}
	cut = len;
	if (!wide && len > REPORT_LIST_ERROR_WIDTH) {
		cut = REPORT_LIST_ERROR_WIDTH - 3;
		while (cut > 0 && err[cut] != ' ')
			cut--;
		if (cut == 0) {
			cut = REPORT_LIST_ERROR_WIDTH - 3;
			while (
			    cut > 0 && ((unsigned char)err[cut] & 0xc0) == 0x80)
				cut--;
		}
	}
	report_text(b, err, cut);
	if (cut < len)
		buf_adds(b, "...");
}

char *
report_outbox_list_text(const struct db_result *r, int wide)
{
	struct buf b;
	size_t     i;

	buf_init(&b);
	buf_printf(&b, "%-10s %-10s %-12s %-24s %3s %-26s %s\n", "ID", "STATUS",
	    "CHANNEL", "EVENT_TYPE", "ATT", "NEXT_ATTEMPT_AT", "LAST_ERROR");
	for (i = 0; i < r->nrows; i++) {
		buf_printf(&b, "%-10s %-10s ", report_dash(db_cell(r, i, 0)),
		    report_dash(db_cell(r, i, 2)));
		report_cell(&b, r, i, 3, 12);
		buf_addc(&b, ' ');
		report_cell(&b, r, i, 4, 24);
		buf_printf(&b, " %3s %-26s ", report_dash(db_cell(r, i, 6)),
		    report_dash(db_cell(r, i, 7)));
		report_list_error(&b, db_cell(r, i, 10),
		    db_cell(r, i, 10) != NULL ? r->lengths[i][10] : 0, wide);
		buf_addc(&b, '\n');
	}
	return buf_steal(&b);
}

char *
report_outbox_list_json(const struct db_result *r)
{
	json_t     *arr, *o;
	const char *v, *e;
	long long   n;
	size_t      i, j;
	int         lossy = 0;

	arr = json_array();
	for (i = 0; i < r->nrows; i++) {
		o = json_object();
		for (j = 0; j < r->ncols; j++) {
			v = db_cell(r, i, j);
			if (v == NULL)
				json_object_set_new(
				    o, r->names[j], json_null());
			else if ((j == 0 || j == 6) &&
			    parse_ll(v, 0, LLONG_MAX, &n, &e) == 0)
				json_object_set_new(
				    o, r->names[j], json_integer(n));
			else
				json_object_set_new(o, r->names[j],
				    report_json_bytes(
				        v, r->lengths[i][j], &lossy));
		}
		json_array_append_new(arr, o);
	}
	return report_json_text(arr);
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

/* ------------------------------------------------------- outbox show */

/* Text whose line ends are its own (the indented JSON of a payload):
 * report_text line by line. */
static void
report_lines(struct buf *b, const char *s)
{
	const char *nl;

	while ((nl = strchr(s, '\n')) != NULL) {
		report_text(b, s, (size_t)(nl - s));
		buf_addc(b, '\n');
		s = nl + 1;
	}
	report_text(b, s, strlen(s));
}

/* The payload pretty-printed when it is JSON (a string's control
 * characters are JSON escapes then), else its bytes; report_text either
 * way, for the C1 characters JSON leaves as they are. */
static void
report_show_payload(struct buf *b, const char *text, size_t len)
{
	json_t      *j;
	json_error_t err;
	char        *pretty = NULL;

	if (text == NULL) {
		buf_adds(b, "payload: NULL\n");
		return;
	}
	j = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
	if (j != NULL)
		pretty = json_dumps(
		    j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
	buf_adds(b, "payload:\n");
	if (pretty != NULL)
		report_lines(b, pretty);
	else
		report_text(b, text, len);
	buf_addc(b, '\n');
	free(pretty);
	json_decref(j);
}

char *
report_outbox_show(const struct db_result *row, const struct db_result *blocker,
    const struct db_result *attempts, unsigned long long total)
{
	struct buf b;
	size_t     i, j, last = row->ncols - 1;

	buf_init(&b);
	for (j = 0; j < last; j++) {
		buf_printf(&b, "%s: ", row->names[j]);
		if (db_cell(row, 0, j) == NULL)
			buf_adds(&b, "NULL");
		else
			report_cell(&b, row, 0, j, 0);
		buf_addc(&b, '\n');
	}
	report_show_payload(&b, db_cell(row, 0, last),
	    db_cell(row, 0, last) != NULL ? row->lengths[0][last] : 0);
	if (blocker != NULL && blocker->nrows == 1) {
		buf_adds(&b, "blocked_by: ");
		report_cell(&b, blocker, 0, 0, 0);
		buf_adds(&b, " (channel ");
		report_cell(&b, blocker, 0, 1, 0);
		buf_adds(&b, ", FAILED): ");
		if (db_cell(blocker, 0, 2) != NULL)
			report_cell(&b, blocker, 0, 2, 0);
		buf_addc(&b, '\n');
	}
	buf_printf(&b, "attempts logged: %llu", total);
	if (total > attempts->nrows)
		buf_printf(&b, " (the newest %zu shown; --attempts N for more)",
		    attempts->nrows);
	buf_addc(&b, '\n');
	for (i = 0; i < attempts->nrows; i++) {
		buf_adds(&b, " ");
		for (j = 0; j < 6; j++) {
			buf_addc(&b, ' ');
			report_cell(&b, attempts, i, j, 0);
			if (j == 2)
				buf_adds(&b, "ms");
		}
		if (db_cell(attempts, i, 6) != NULL) {
			buf_adds(&b, ": ");
			report_cell(&b, attempts, i, 6, 0);
		}
		buf_addc(&b, '\n');
	}
	return buf_steal(&b);
}
