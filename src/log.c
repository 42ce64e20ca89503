/* log.c: logfmt or JSON lines on stderr. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "log.h"
#include "util.h"

static enum log_level  log_level = LOG_WARN;
static enum log_format log_format = LOG_TEXT;

static const char *const level_names[] = { "error", "warn", "info", "debug" };

void
log_init(enum log_level level, enum log_format format)
{
	log_level = level;
	log_format = format;
}

int
log_enabled(enum log_level level)
{
	return level <= log_level;
}

int
log_format_parse(const char *s, enum log_format *out)
{
	if (strcmp(s, "text") == 0)
		*out = LOG_TEXT;
	else if (strcmp(s, "json") == 0)
		*out = LOG_JSON;
	else
		return -1;
	return 0;
}

void
log_timestamp(char *buf, size_t len)
{
	struct timespec ts;
	struct tm       tm;
	char            base[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03ldZ", base, ts.tv_nsec / 1000000);
}

/* logfmt: bare when the value is a plain token, else quoted with escapes. */
static void
logfmt_value(struct buf *b, const char *v)
{
	const char *p;
	int         plain = *v != '\0';

	for (p = v; *p != '\0'; p++) {
		if (*p <= ' ' || *p == '"' || *p == '=' || *p == '\\' ||
		    (unsigned char)*p == 0x7f)
			plain = 0;
	}
	if (plain)
		buf_adds(b, v);
	else
		buf_add_quoted(b, v);
}

void
log_kvv(enum log_level level, const char *event, va_list ap)
{
	struct buf  b;
	json_t     *obj = NULL;
	const char *k, *v;
	char        ts[64], *s;

	if (!log_enabled(level))
		return;
	log_timestamp(ts, sizeof ts);
	buf_init(&b);
	if (log_format == LOG_JSON) {
		obj = json_object();
		json_object_set_new(obj, "ts", json_string(ts));
		json_object_set_new(
		    obj, "level", json_string(level_names[level]));
		json_object_set_new(obj, "event", json_string(event));
	} else {
		buf_printf(&b, "ts=%s level=%s event=", ts, level_names[level]);
		logfmt_value(&b, event);
	}
	while ((k = va_arg(ap, const char *)) != NULL) {
		/* A NULL value leaves the key out: "no job" is not job="". */
		if ((v = va_arg(ap, const char *)) == NULL)
			continue;
		if (obj != NULL) {
			/* Invalid UTF-8 must not make the line vanish. */
			json_t *js = json_string(v);

			if (js == NULL)
				js = json_string("(invalid utf-8)");
			json_object_set_new(obj, k, js);
		} else {
			buf_printf(&b, " %s=", k);
			logfmt_value(&b, v);
		}
	}
	if (obj != NULL) {
		s = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
		if (s != NULL)
			buf_adds(&b, s);
		free(s);
		json_decref(obj);
	}
	buf_addc(&b, '\n');
	/* One write per line so concurrent processes do not interleave. */
	fwrite(b.data, 1, b.len, stderr);
	fflush(stderr);
	buf_free(&b);
}

void
log_kv_list(enum log_level level, const char *event, ...)
{
	va_list ap;

	va_start(ap, event);
	log_kvv(level, event, ap);
	va_end(ap);
}
