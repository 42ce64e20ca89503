/* report.c: what the writers of report.h share: the format names, the one
 * control-character escaper for a terminal (report_text) and the cells
 * and Nagios text built on it, the Prometheus gauge lines, and the JSON
 * helpers.  The wings' writers are in report-outbox.c, report-jobs.c,
 * report-doctor.c and report-status.c (report-int.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "db.h"
#include "report-int.h"
#include "report.h"
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
void
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
int
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
void
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

/* A gauge's HELP and TYPE lines. */
void
report_prom_head(struct buf *b, const char *name, const char *help)
{
	buf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

void
report_prom_gauge(
    struct buf *b, const char *name, const char *help, long long v)
{
	report_prom_head(b, name, help);
	buf_printf(b, "%s %lld\n", name, v);
}

/* A sample's name and one label, up to its value: name{key="value"} */
void
report_prom_labelled(
    struct buf *b, const char *name, const char *key, const char *value)
{
	buf_printf(b, "%s{%s=\"", name, key);
	report_label(b, value);
	buf_adds(b, "\"} ");
}

/* When the check ran, by the host clock: a metrics file that stops
 * changing says the check itself stopped (the alert rules compare it
 * with the monitoring server's time). */
void
report_prom_timestamp(struct buf *b, const char *name)
{
	report_prom_head(b, name,
	    "Unix time (host clock) at which the check wrote these metrics.");
	buf_printf(b, "%s %lld\n", name, (long long)time(NULL));
}

const char *
report_dash(const char *v)
{
	return v != NULL ? v : "-";
}

/* j as indented text with a newline; j is released. */
char *
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

/* Bytes as a JSON string: every byte that does not start a well-formed
 * UTF-8 sequence becomes U+FFFD (*lossy set). */
json_t *
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

json_t *
report_str_or_null(const char *v)
{
	return v != NULL ? json_string(v) : json_null();
}

json_t *
report_id_or_null(unsigned long long v)
{
	return v != 0 ? json_integer((json_int_t)v) : json_null();
}
