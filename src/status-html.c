/*
 * status-html.c: the page of "cronguard status --html" (status-html.h).
 *
 * Every value that comes from the database or the configuration goes
 * through status_html_escape, the one HTML escaper: job output, host
 * names, pause reasons and row contents are hostile.  A strip cell's
 * title begins with its state's word, and the stylesheet gives the cell
 * its colour and symbol from that word ([title^="failed "]): colour,
 * symbol and text cannot disagree, and a cell costs no class attribute
 * (1,000 jobs of 48 slots stay under 2 MB: t1261).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "status-html.h"
#include "util.h"

void
status_html_escape(struct buf *b, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t               i = 0, n;
	unsigned             cp;

	while (i < len) {
		switch (p[i]) {
		case '&':
			buf_adds(b, "&amp;");
			i++;
			continue;
		case '<':
			buf_adds(b, "&lt;");
			i++;
			continue;
		case '>':
			buf_adds(b, "&gt;");
			i++;
			continue;
		case '"':
			buf_adds(b, "&quot;");
			i++;
			continue;
		case '\'':
			buf_adds(b, "&#39;");
			i++;
			continue;
		case '\t':
		case '\n':
			buf_addc(b, (char)p[i++]);
			continue;
		default:
			break;
		}
		if (p[i] < 0x20 || p[i] == 0x7f) {
			/* U+2400 + c, U+2421 for DEL: seen, never obeyed. */
			cp = p[i] == 0x7f ? 0x2421 : 0x2400 + p[i];
			buf_addc(b, (char)(0xe0 | (cp >> 12)));
			buf_addc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
			buf_addc(b, (char)(0x80 | (cp & 0x3f)));
			i++;
			continue;
		}
		if (p[i] < 0x80) {
			buf_addc(b, (char)p[i++]);
			continue;
		}
		if ((n = utf8_seq_len(p + i, len - i)) == 0) {
			buf_adds(b, "\xef\xbf\xbd");
			i++;
			continue;
		}
		/* C1 controls (U+0080..U+009F) and the bidirectional
		 * embeddings, overrides and isolates (U+202A..U+202E,
		 * U+2066..U+2069), which reorder what follows them. */
		if ((n == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0) ||
		    (n == 3 && p[i] == 0xe2 && p[i + 1] == 0x80 &&
		        p[i + 2] >= 0xaa && p[i + 2] <= 0xae) ||
		    (n == 3 && p[i] == 0xe2 && p[i + 1] == 0x81 &&
		        p[i + 2] >= 0xa6 && p[i + 2] <= 0xa9)) {
			buf_adds(b, "\xef\xbf\xbd");
			i += n;
			continue;
		}
		buf_add(b, p + i, n);
		i += n;
	}
}

void
status_html_escapes(struct buf *b, const char *s)
{
	if (s != NULL)
		status_html_escape(b, s, strlen(s));
}

/* ------------------------------------------------------------ style */

/* The symbol of each state (CSS escapes), colour, and text colour. */
static const struct {
	const char *symbol;
	const char *bg;
	const char *fg;
} cell_style[CELL_NSTATES] = {
	[CELL_NONE] = { "", "#eceff1", "#90a4ae" },
	[CELL_WAITING] = { "\\00b7", "#cfd8dc", "#37474f" },
	[CELL_SUCCESS] = { "\\2713", "#2e7d32", "#fff" },
	[CELL_FAILED] = { "\\2717", "#c62828", "#fff" },
	[CELL_MISSED] = { "\\25cb", "#e65100", "#fff" },
	[CELL_LATE] = { "\\00bb", "#f9a825", "#212121" },
	[CELL_TWICE] = { "2", "#6a1b9a", "#fff" },
	[CELL_RUNNING] = { "\\25b6", "#1565c0", "#fff" },
	[CELL_PAUSED] = { "\\2016", "#78909c", "#fff" },
	[CELL_MANUAL] = { "M", "#00838f", "#fff" },
	[CELL_ACKED] = { "\\25cb", "#ffcc80", "#212121" },
};

static const char html_css[] =
    "*{box-sizing:border-box}"
    "body{margin:0;font:14px/1.45 system-ui,-apple-system,'Segoe UI',"
    "Roboto,'DejaVu Sans',sans-serif;color:#1c2733;background:#f4f6f8}"
    "header{background:#1c2733;color:#fff;padding:14px 24px}"
    "header h1{margin:0;font-size:20px;font-weight:600}"
    "header p{margin:4px 0 0;color:#cfd8dc}"
    "main{padding:16px 24px;max-width:1400px}"
    "h2{font-size:16px;margin:20px 0 8px}"
    "section{background:#fff;border:1px solid #dde3e8;border-radius:6px;"
    "padding:4px 16px 12px;margin-bottom:16px}"
    ".down{background:#b71c1c;color:#fff;padding:16px 24px;font-size:16px}"
    ".down b{font-size:20px;display:block}"
    "table.t{border-collapse:collapse;width:100%}"
    ".t>thead th{text-align:left;font-weight:600;color:#546e7a;"
    "font-size:12px;text-transform:uppercase;letter-spacing:.04em;"
    "border-bottom:2px solid #dde3e8;padding:6px 8px}"
    ".t>tbody>tr>td{border-bottom:1px solid #eef1f4;padding:8px;"
    "vertical-align:top}"
    ".t td.n{text-align:right;font-variant-numeric:tabular-nums}"
    ".name b{display:block;word-break:break-all}"
    "small{display:block;color:#607d8b;font-size:12px;font-weight:400}"
    ".nw{white-space:nowrap}"
    ".jobs>thead th:nth-child(1){width:200px}"
    ".jobs>thead th:nth-child(2){width:270px}"
    ".chans>thead th:nth-child(1){width:240px}"
    ".chans>thead th:last-child{width:180px}"
    ".chans small{white-space:nowrap}"
    ".v{display:inline-block;font-size:11px;font-weight:700;"
    "padding:1px 6px;border-radius:3px;color:#fff;letter-spacing:.03em}"
    ".v0{background:#2e7d32}.v1{background:#f9a825;color:#212121}"
    ".v2{background:#c62828}.v3{background:#6d4c41}.vp{background:#546e7a}"
    ".msg{margin:4px 0 0;color:#37474f;font-size:12px;max-width:360px;"
    "overflow-wrap:anywhere}"
    ".pz{margin:4px 0 0;padding:3px 6px;background:#eceff1;"
    "border-left:3px solid #78909c;font-size:12px;overflow-wrap:anywhere}"
    ".strip{border-spacing:0;display:block}"
    ".strip tbody,.strip tr{display:block;line-height:0}"
    ".strip td,.legend i{display:inline-block;width:13px;height:13px;"
    "margin:0 1px 2px 0;border-radius:2px;font:bold 10px/13px "
    "'DejaVu Sans',sans-serif;text-align:center;vertical-align:top;"
    "position:relative;padding:0}"
    ".strip td.d{width:2px;background:#90a4ae;margin:0 3px 2px 2px}"
    ".strip td a{position:absolute;inset:0}"
    ".strip td a:focus{outline:2px solid #1c2733;outline-offset:1px}"
    ".legend{display:flex;flex-wrap:wrap;gap:4px 14px;margin:8px 0;"
    "padding:0;list-style:none;font-size:12px;color:#37474f}"
    ".legend i{margin-right:4px}"
    "details{margin:6px 0 0;font-size:12px}"
    "summary{cursor:pointer;color:#b71c1c}"
    "pre{margin:4px 0 0;padding:8px;background:#1c2733;color:#e0e6eb;"
    "font:12px/1.4 ui-monospace,'DejaVu Sans Mono',monospace;"
    "white-space:pre-wrap;overflow-wrap:anywhere;max-height:240px;"
    "overflow:auto;border-radius:4px}"
    ".hist{display:block}"
    "footer{color:#78909c;font-size:12px;padding:0 24px 24px}"
    "@media (max-width:760px){"
    "main{padding:8px}header{padding:12px}"
    ".t>thead{display:none}"
    ".t,.t>tbody,.t>tbody>tr,.t>tbody>tr>td{display:block;width:100%}"
    ".t>tbody>tr{border-bottom:2px solid #dde3e8;padding:6px 0}"
    ".t>tbody>tr>td{border:0;padding:3px 4px}"
    ".t>tbody>tr>td.n{display:inline-block;width:auto;margin-right:14px;"
    "text-align:left}"
    ".t td[data-l]::before{content:attr(data-l) \": \";color:#607d8b}"
    ".msg{max-width:none}}";

static void
html_css_cells(struct buf *b)
{
	int         i;
	const char *w;

	buf_adds(b, html_css);
	for (i = 0; i < CELL_NSTATES; i++) {
		w = status_cell_name((enum status_cell)i);
		buf_printf(b,
		    ".strip td[title^=\"%s \"],.legend i[title=\"%s\"]"
		    "{background:%s;color:%s}"
		    ".strip td[title^=\"%s \"]::before,"
		    ".legend i[title=\"%s\"]::before{content:\"%s\"}",
		    w, w, cell_style[i].bg, cell_style[i].fg, w, w,
		    cell_style[i].symbol);
	}
}

/* ------------------------------------------------------------- jobs */

/* A DATETIME(6) value to the second. */
static void
html_time(struct buf *b, const char *t)
{
	if (t != NULL)
		status_html_escape(b, t, strnlen(t, 19));
}

static void
html_verdict(struct buf *b, enum check_status st)
{
	buf_printf(b, "<span class=\"v v%d\">%s</span>", (int)st,
	    check_status_name(st));
}

/* The host of the newest run a strip shows: cells name theirs only when
 * it differs. */
static const char *
strip_host(const struct status_job *j)
{
	size_t i;

	for (i = j->ncells; i > 0; i--) {
		if (j->cells[i - 1].host != NULL)
			return j->cells[i - 1].host;
	}
	return NULL;
}

/* A cell's title: its state's word first (the stylesheet keys on it),
 * then the slot (or the run's start), and what its run was. */
static void
cell_title(struct buf *t, const struct status_cell_info *c, int long_time,
    const char *host)
{
	char d[32];

	buf_adds(t, status_cell_name(c->state));
	buf_addc(t, ' ');
	if (c->slot >= 0)
		buf_printf(t, "%.*s", long_time ? 16 : 5,
		    c->slot_text + (long_time ? 0 : 11));
	else if (c->started != NULL)
		buf_printf(t, "%.*s UTC", long_time ? 19 : 8,
		    c->started + (long_time ? 0 : 11));
	if (c->run_id == 0)
		return;
	/* A slot's run starts within seconds of it: said only when it
	 * did not, or when several ran. */
	if (c->slot >= 0 && c->started != NULL &&
	    (c->started_s - c->slot >= 60 || c->started_s < c->slot ||
	        c->nruns > 1)) {
		duration_format((c->started_s - c->slot) * 1000, d, sizeof d);
		buf_printf(
		    t, " started %s%s", c->started_s < c->slot ? "" : "+", d);
	}
	if (c->duration_ms >= 0) {
		duration_format(c->duration_ms, d, sizeof d);
		buf_printf(t, " %s", d);
	}
	if (c->nruns > 1)
		buf_printf(t, " (%d runs)", c->nruns);
	if (c->host != NULL && (host == NULL || strcmp(c->host, host) != 0))
		buf_printf(t, " on %s", c->host);
	if (c->outcome != NULL && c->state == CELL_FAILED &&
	    strcmp(c->outcome, "failure") != 0)
		buf_printf(t, " %s", c->outcome);
	if (c->exit_status >= 0 &&
	    (c->exit_status != 0 || c->state == CELL_FAILED))
		buf_printf(t, " exit %lld", c->exit_status);
}

/* Whether two of the strip's cells fall on one day: then a cell shows
 * its time of day, and a mark stands between days. */
static int
strip_sub_daily(const struct status_job *j)
{
	size_t i;

	for (i = 1; i < j->ncells; i++) {
		const char *a = j->cells[i - 1].slot >= 0
		    ? j->cells[i - 1].slot_text
		    : j->cells[i - 1].started;
		const char *c = j->cells[i].slot >= 0 ? j->cells[i].slot_text
		                                      : j->cells[i].started;

		if (a != NULL && c != NULL && strncmp(a, c, 10) == 0)
			return 1;
	}
	return 0;
}

static const char *
cell_day(const struct status_cell_info *c)
{
	return c->slot >= 0 ? c->slot_text : c->started;
}

static void
html_strip(struct buf *b, const struct status_job *j)
{
	const struct status_cell_info *c;
	const char                    *host = strip_host(j), *day, *prev = NULL;
	struct buf                     t;
	int                            daily = strip_sub_daily(j);
	size_t                         i;

	buf_init(&t);
	buf_adds(b, "<table class=strip><tr>");
	for (i = 0; i < j->ncells; i++) {
		c = &j->cells[i];
		day = cell_day(c);
		if (daily && day != NULL && prev != NULL &&
		    strncmp(day, prev, 10) != 0) {
			buf_adds(b, "<td class=d title=\"");
			buf_add(b, day, 10);
			buf_adds(b, "\">");
		}
		if (day != NULL)
			prev = day;
		buf_reset(&t);
		cell_title(&t, c, !daily, host);
		buf_adds(b, "<td title=\"");
		status_html_escape(b, t.data, t.len);
		buf_adds(b, "\">");
		if (c->tail != NULL)
			buf_printf(b,
			    "<a href=\"#r%llu\" aria-label=\"output\"></a>",
			    c->run_id);
	}
	buf_adds(b, "</table>");
	buf_free(&t);
}

static void
html_tails(struct buf *b, const struct status_job *j)
{
	const struct status_cell_info *c;
	size_t                         i;

	for (i = j->ncells; i > 0; i--) {
		c = &j->cells[i - 1];
		if (c->tail == NULL)
			continue;
		buf_printf(b, "<details id=\"r%llu\"><summary>run %llu ",
		    c->run_id, c->run_id);
		status_html_escapes(b, c->outcome);
		if (c->exit_status >= 0)
			buf_printf(b, ", exit %lld", c->exit_status);
		buf_adds(b, ", started ");
		status_html_escapes(b, c->started);
		buf_adds(b, " UTC on ");
		status_html_escapes(b, c->host);
		if (c->output_bytes > c->tail_len)
			buf_printf(b, ": the last %zu of %llu bytes of output",
			    c->tail_len, c->output_bytes);
		else
			buf_adds(b, ": output");
		buf_adds(b, "</summary><pre>");
		status_html_escape(b, c->tail, c->tail_len);
		buf_adds(b, "</pre></details>");
	}
}

static void
html_job(struct buf *b, const struct status_job *j)
{
	const struct conf_job *cj = j->job;
	const char            *host = strip_host(j);

	buf_adds(b, "<tr><td class=name><b>");
	status_html_escapes(b, cj->name);
	buf_adds(b, "</b><small>");
	if (cj->schedule_text != NULL) {
		status_html_escapes(b, cj->schedule_text);
		buf_adds(b, " \xc2\xb7 ");
		status_html_escapes(
		    b, j->zone != NULL ? j->zone : "zone unknown");
	} else
		buf_adds(b, "no schedule");
	buf_adds(b, "</small>");
	if (j->next[0] != '\0') {
		buf_adds(b, "<small class=nw>next ");
		status_html_escapes(b, j->next);
		buf_adds(b, "</small>");
	}
	if (host != NULL) {
		buf_adds(b, "<small>on ");
		status_html_escapes(b, host);
		buf_adds(b, "</small>");
	}
	buf_adds(b, "<td data-l=state>");
	html_verdict(b, j->check.status);
	if (j->pause.paused) {
		buf_adds(b, " <span class=\"v vp\">PAUSED</span>");
		buf_adds(b, "<p class=pz>\xe2\x80\x96 paused by ");
		status_html_escapes(b, j->pause.paused_by);
		buf_adds(b, " since ");
		html_time(b, j->pause.paused_at);
		buf_adds(b, " until ");
		html_time(b,
		    j->pause.until_at != NULL ? j->pause.until_at : "resumed");
		if (j->pause.reason != NULL) {
			buf_adds(b, ": ");
			status_html_escapes(b, j->pause.reason);
		}
		buf_adds(b, "</p>");
	}
	if (j->check.msg.len > 0 && !j->pause.paused) {
		buf_adds(b, "<p class=msg>");
		status_html_escape(b, j->check.msg.data, j->check.msg.len);
		buf_adds(b, "</p>");
	}
	buf_adds(b, "<td>");
	if (j->ncells == 0)
		buf_adds(b, "<small>no runs to show</small>");
	else
		html_strip(b, j);
	html_tails(b, j);
	buf_adds(b, "\n");
}

static void
html_legend(struct buf *b)
{
	int         i;
	const char *w;

	buf_adds(b, "<ul class=legend>");
	for (i = 0; i < CELL_NSTATES; i++) {
		w = status_cell_name((enum status_cell)i);
		buf_printf(b, "<li><i title=\"%s\"></i>%s", w, w);
	}
	buf_adds(b, "</ul>");
}

static void
html_jobs(struct buf *b, const struct status *s)
{
	size_t i, counts[4] = { 0 }, paused = 0;

	for (i = 0; i < s->njobs; i++) {
		counts[s->jobs[i].check.status & 3]++;
		paused += s->jobs[i].pause.paused != 0;
	}
	buf_printf(b, "<section><h2>Jobs (%zu): ", s->njobs);
	html_verdict(b, s->jobs_status);
	buf_printf(b,
	    " <small>%zu OK, %zu WARNING, %zu CRITICAL, %zu UNKNOWN, "
	    "%zu paused; the state is jobs check's, the strip the last %u "
	    "slots (or runs) by the database clock</small></h2>",
	    counts[CHECK_OK], counts[CHECK_WARNING], counts[CHECK_CRITICAL],
	    counts[CHECK_UNKNOWN], paused, s->slots);
	html_legend(b);
	buf_adds(b,
	    "<table class=\"t jobs\"><thead><tr><th>Job<th>State"
	    "<th>Slots, oldest first</thead><tbody>\n");
	for (i = 0; i < s->njobs; i++)
		html_job(b, &s->jobs[i]);
	buf_adds(b, "</tbody></table></section>\n");
}

/* ------------------------------------------------------------ outbox */

/* The last 24 hours of attempts as stacked bars: sent, retried, failed. */
static void
html_hist(struct buf *b, const struct status_channel *ch)
{
	static const char *const fill[3] = { "#2e7d32", "#f9a825", "#c62828" };
	static const char *const word[3] = { "sent", "retried", "failed" };
	long long                max = 0, sum[3] = { 0 }, tot;
	int                      h, k;
	double                   y, hgt;

	for (h = 0; h < STATUS_HOURS; h++) {
		tot = 0;
		for (k = 0; k < 3; k++) {
			tot += ch->hours[h][k];
			sum[k] += ch->hours[h][k];
		}
		if (tot > max)
			max = tot;
	}
	buf_printf(b,
	    "<svg class=hist width=\"%d\" height=\"34\" viewBox=\"0 0 %d 34\""
	    " role=img aria-label=\"attempts in the last 24 hours: %lld sent,"
	    " %lld retried, %lld failed\"><title>attempts in the last 24 "
	    "hours, an hour a bar, the newest right</title>"
	    "<line x1=\"0\" y1=\"32.5\" x2=\"%d\" y2=\"32.5\" "
	    "stroke=\"#b0bec5\"/>",
	    STATUS_HOURS * 6, STATUS_HOURS * 6, sum[0], sum[1], sum[2],
	    STATUS_HOURS * 6);
	for (h = 0; h < STATUS_HOURS && max > 0; h++) {
		y = 32;
		buf_printf(b,
		    "<g><title>%d h ago: %lld sent, %lld retried, "
		    "%lld failed</title>"
		    "<rect x=\"%d\" y=\"0\" width=\"5\" height=\"32\" "
		    "fill=\"transparent\"/>",
		    STATUS_HOURS - 1 - h, ch->hours[h][0], ch->hours[h][1],
		    ch->hours[h][2], h * 6);
		for (k = 0; k < 3; k++) {
			if (ch->hours[h][k] == 0)
				continue;
			hgt = 30.0 * (double)ch->hours[h][k] / (double)max;
			if (hgt < 1)
				hgt = 1;
			y -= hgt;
			buf_printf(b,
			    "<rect x=\"%d\" y=\"%.1f\" width=\"5\" "
			    "height=\"%.1f\" fill=\"%s\"/>",
			    h * 6, y, hgt, fill[k]);
		}
		buf_adds(b, "</g>");
	}
	buf_adds(b, "</svg><small>");
	for (k = 0; k < 3; k++)
		buf_printf(
		    b, "%s%lld %s", k > 0 ? " \xc2\xb7 " : "", sum[k], word[k]);
	buf_adds(b, "</small>");
}

static void
html_count(struct buf *b, const char *label, long long n)
{
	buf_printf(b, "<td class=n data-l=%s>%lld", label, n);
}

static void
html_channel(struct buf *b, const struct status_channel *ch)
{
	const struct conf_channel *cc = ch->conf;
	char                       d[32];

	buf_adds(b, "<tr><td class=name><b>");
	status_html_escapes(b, cc->name);
	buf_adds(b, "</b>");
	if (ch->pause != NULL) {
		buf_adds(b,
		    " <span class=\"v vp\">PAUSED</span>"
		    "<p class=pz>\xe2\x80\x96 paused by ");
		status_html_escapes(b, ch->pause->paused_by);
		buf_adds(b, " since ");
		html_time(b, ch->pause->paused_at);
		buf_adds(b, " until ");
		html_time(b,
		    ch->pause->until_at != NULL ? ch->pause->until_at
		                                : "resumed");
		if (ch->pause->reason != NULL) {
			buf_adds(b, ": ");
			status_html_escapes(b, ch->pause->reason);
		}
		buf_adds(b, "</p>");
	}
	html_count(b, "pending", ch->pending);
	html_count(b, "due", ch->due);
	html_count(b, "processing", ch->processing);
	html_count(b, "failed", ch->failed);
	html_count(b, "blocked", ch->blocked);
	html_count(b, "expired", ch->expired);
	duration_format(ch->oldest_due_age_s * 1000, d, sizeof d);
	buf_printf(
	    b, "<td class=n data-l=\"oldest due\">%s", ch->due > 0 ? d : "-");
	buf_adds(b, "<td data-l=circuit>");
	if (ch->limit == NULL)
		buf_adds(b, "closed");
	else {
		buf_adds(b, ratelimit_circuit_name(ch->limit->circuit));
		if (ch->limit->failures > 0)
			buf_printf(b, "<small>%u failures</small>",
			    ch->limit->failures);
		if (ch->limit->error != NULL &&
		    ch->limit->circuit != CIRCUIT_CLOSED) {
			buf_adds(b, "<small>");
			status_html_escapes(b, ch->limit->error);
			buf_adds(b, "</small>");
		}
	}
	buf_adds(b, "<td data-l=limits>");
	if (cc->rate > 0)
		buf_printf(b, "<small>rate %g/s</small>", cc->rate);
	if (cc->daily_quota > 0)
		buf_printf(b, "<small>quota %lld of %lld today%s</small>",
		    ch->limit != NULL ? ch->limit->quota_used : 0,
		    cc->daily_quota, ch->quota_exhausted ? " (used up)" : "");
	if (cc->rate <= 0 && cc->daily_quota <= 0)
		buf_adds(b, "<small>none</small>");
	buf_adds(b, "<td data-l=\"last 24 h\">");
	html_hist(b, ch);
	buf_adds(b, "\n");
}

static void
html_outbox(struct buf *b, const struct status *s)
{
	size_t i;

	buf_printf(b, "<section><h2>Outbox (%zu channels): ", s->nchannels);
	html_verdict(b, s->outbox_status);
	buf_printf(b,
	    " <small>%lld pending, %lld due, %lld processing, %lld stuck, "
	    "%lld failed, %lld in no configured channel</small></h2>",
	    s->counts.pending, s->counts.due, s->counts.processing,
	    s->counts.stuck, s->counts.failed, s->counts.unknown_channel);
	buf_adds(b,
	    "<table class=\"t chans\"><thead><tr><th>Channel<th>Pending"
	    "<th>Due<th>Processing<th>Failed<th>Blocked<th>Expired"
	    "<th>Oldest due<th>Circuit<th>Rate, quota"
	    "<th>Attempts, 24 h</thead><tbody>\n");
	for (i = 0; i < s->nchannels; i++)
		html_channel(b, &s->channels[i]);
	buf_adds(b, "</tbody></table></section>\n");
}

/* ------------------------------------------------------------- page */

char *
status_html(const struct status *s, const char *host_now, const char *host)
{
	struct buf b;

	buf_init(&b);
	buf_adds(&b,
	    "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
	    "<meta name=viewport content=\"width=device-width,"
	    "initial-scale=1\">"
	    "<meta http-equiv=Content-Security-Policy content=\""
	    "default-src 'none'; style-src 'unsafe-inline'\">"
	    "<meta name=robots content=noindex><title>");
	if (s->error != NULL)
		buf_adds(&b, "DATABASE UNREACHABLE - cronguard status");
	else
		buf_printf(&b, "%s - cronguard status",
		    check_status_name(
		        check_status_worst(s->jobs_status, s->outbox_status)));
	buf_adds(&b, "</title><style>");
	html_css_cells(&b);
	buf_adds(&b,
	    "</style></head><body>\n<header><h1>cronguard status"
	    "</h1><p>");
	if (s->error != NULL) {
		buf_adds(&b, "Written ");
		status_html_escapes(&b, host_now);
		buf_adds(&b, " by the clock of ");
		status_html_escapes(&b, host);
		buf_adds(&b,
		    "</p></header>\n<div class=down role=alert>"
		    "<b>The database could not be reached.</b>"
		    "Nothing on this page is current: the state of the "
		    "jobs and the outbox is unknown. ");
		status_html_escapes(&b, s->error);
		buf_adds(&b, "</div>\n");
	} else {
		buf_adds(&b, "Generated at <time>");
		status_html_escapes(&b, s->now);
		buf_adds(&b, " UTC</time> by the database clock, on ");
		status_html_escapes(&b, host);
		buf_adds(&b, "</p></header>\n<main>\n");
		html_jobs(&b, s);
		html_outbox(&b, s);
		buf_adds(&b, "</main>\n");
	}
	buf_printf(&b,
	    "<footer>cronguard %s \xc2\xb7 cronguard status "
	    "--html; cronguard(1)</footer>\n</body></html>\n",
	    PACKAGE_VERSION);
	return buf_steal(&b);
}
