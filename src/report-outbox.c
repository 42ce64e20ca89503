/* report-outbox.c: the outbox wing's writers: outbox check in the three
 * formats (cronguard-outbox(7), MONITORING), outbox list and outbox show.
 * Writers only: they return the text, the commands print it. */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "conf.h"
#include "db.h"
#include "outbox-admin.h"
#include "ratelimit.h"
#include "report-int.h"
#include "report.h"
#include "util.h"

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
