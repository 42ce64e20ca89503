/* log.c: logfmt or JSON lines on stderr, and the one incident reporter. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
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

static void
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
	if (plain) {
		buf_adds(b, v);
		return;
	}
	buf_addc(b, '"');
	for (p = v; *p != '\0'; p++) {
		switch (*p) {
		case '"':
			buf_adds(b, "\\\"");
			break;
		case '\\':
			buf_adds(b, "\\\\");
			break;
		case '\n':
			buf_adds(b, "\\n");
			break;
		case '\r':
			buf_adds(b, "\\r");
			break;
		case '\t':
			buf_adds(b, "\\t");
			break;
		default:
			if ((unsigned char)*p < ' ' ||
			    (unsigned char)*p == 0x7f)
				buf_printf(b, "\\x%02x", (unsigned char)*p);
			else
				buf_addc(b, *p);
		}
	}
	buf_addc(b, '"');
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
log_kv(enum log_level level, const char *event, ...)
{
	va_list ap;

	va_start(ap, event);
	log_kvv(level, event, ap);
	va_end(ap);
}

void
log_msg(enum log_level level, const char *event, const char *fmt, ...)
{
	va_list ap;
	char   *msg;

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	log_kv(level, event, "msg", msg, NULL);
	free(msg);
}

/* ------------------------------------------------------------ incidents */

static incident_sink_fn incident_sink;
static void            *incident_sink_arg;
static char            *alert_url;
static long             alert_timeout_ms = 10000;
static unsigned         incidents;

void
incident_set_sink(incident_sink_fn fn, void *arg)
{
	incident_sink = fn;
	incident_sink_arg = arg;
}

void
incident_set_alert(const char *url, long timeout_ms)
{
	free(alert_url);
	alert_url = url != NULL ? xstrdup(url) : NULL;
	alert_timeout_ms = timeout_ms > 0 ? timeout_ms : 10000;
}

unsigned
incident_count(void)
{
	return incidents;
}

static json_t *
incident_json(const struct incident *in)
{
	json_t *o;
	char    ts[64];

	log_timestamp(ts, sizeof ts);
	o = json_object();
	json_object_set_new(o, "source", json_string("cronguard"));
	json_object_set_new(o, "event", json_string(in->event));
	json_object_set_new(o, "ts", json_string(ts));
	json_object_set_new(o, "host", json_string(self_hostname()));
	json_object_set_new(o, "claimant", json_string(self_identity()));
	if (in->job != NULL)
		json_object_set_new(o, "job", json_string(in->job));
	if (in->lock != NULL)
		json_object_set_new(o, "lock", json_string(in->lock));
	if (in->run_id != 0)
		json_object_set_new(
		    o, "run_id", json_integer((json_int_t)in->run_id));
	if (in->connection_id != 0)
		json_object_set_new(o, "connection_id",
		    json_integer((json_int_t)in->connection_id));
	if (in->detail != NULL) {
		json_t *d = json_string(in->detail);

		json_object_set_new(o, "detail",
		    d != NULL ? d : json_string("(invalid utf-8)"));
	}
	return o;
}

static size_t
discard_body(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

/* POST the incident to the alert URL.  Failures are logged, never turned
 * into another incident (that could loop). */
static void
incident_alert(const struct incident *in)
{
	CURL              *h = NULL;
	struct curl_slist *hdrs = NULL;
	json_t            *o = NULL;
	char              *body = NULL, err[CURL_ERROR_SIZE] = "";
	CURLcode           rc;
	long               status = 0;

	if ((h = curl_easy_init()) == NULL) {
		log_kv(LOG_ERROR, "alert_failed", "incident", in->event,
		    "error", "curl_easy_init failed", NULL);
		return;
	}
	o = incident_json(in);
	body = json_dumps(o, JSON_COMPACT);
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	curl_easy_setopt(h, CURLOPT_URL, alert_url);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body != NULL ? body : "{}");
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, alert_timeout_ms);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard_body);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "cronguard/" PACKAGE_VERSION);
	rc = curl_easy_perform(h);
	if (rc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (rc != CURLE_OK) {
		log_kv(LOG_ERROR, "alert_failed", "incident", in->event,
		    "error", err[0] != '\0' ? err : curl_easy_strerror(rc),
		    NULL);
	} else if (status < 200 || status > 299) {
		char code[16];

		snprintf(code, sizeof code, "%ld", status);
		log_kv(LOG_ERROR, "alert_failed", "incident", in->event,
		    "status", code, NULL);
	}
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(h);
	free(body);
	json_decref(o);
}

void
incident_report(const struct incident *in)
{
	char run[32] = "", conn[32] = "";

	incidents++;
	if (in->run_id != 0)
		snprintf(run, sizeof run, "%llu", in->run_id);
	if (in->connection_id != 0)
		snprintf(conn, sizeof conn, "%lu", in->connection_id);
	/* Logged at error whatever the verbosity: -q keeps errors. */
	log_kv(LOG_ERROR, in->event, "incident", "1", "job", in->job, "lock",
	    in->lock, "run_id", run[0] != '\0' ? run : NULL, "connection_id",
	    conn[0] != '\0' ? conn : NULL, "detail", in->detail, NULL);
	if (alert_url != NULL)
		incident_alert(in);
	if (incident_sink != NULL)
		incident_sink(in, incident_sink_arg);
}
