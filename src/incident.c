/* incident.c: the one incident reporter (see cronguard(1), GUARDED JOBS): a
 * log line, and the alert POST straight to alert.url, in the background. */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "curlutil.h"
#include "incident.h"
#include "log.h"
#include "util.h"

static incident_sink_fn incident_sink;
static void            *incident_sink_arg;
static char            *alert_url;
static long             alert_timeout_ms = 10000;

/*
 * Alerts in flight.  Each POST runs in a thread of its own, so that an
 * endpoint that accepts and never answers delays nothing the incident
 * calls for (terminating the job, the release, the run record); only the
 * exit waits for them (incident_flush), each for at most its timeout.
 */
#define ALERTS_MAX 8
struct alert {
	pthread_t thread;
	int       busy;
	char     *event; /* for the alert_failed line */
	char     *body;  /* the JSON POSTed */
	char     *url;
	long      timeout_ms;
};
static struct alert alerts[ALERTS_MAX];
static size_t       alerts_next; /* the slot to use (and wait on) next */

void
incident_set_sink(incident_sink_fn fn, void *arg)
{
	incident_sink = fn;
	incident_sink_arg = arg;
}

void
incident_set_alert(const char *url, long timeout_ms)
{
	incident_flush();
	free(alert_url);
	alert_url = url != NULL ? xstrdup(url) : NULL;
	alert_timeout_ms = timeout_ms > 0 ? timeout_ms : 10000;
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
	if (in->channel != NULL)
		json_object_set_new(o, "channel", json_string(in->channel));
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

/* POST one alert.  Failures are logged, never turned into another
 * incident (that could loop). */
static void
alert_post(const struct alert *a)
{
	CURL              *h = NULL;
	struct curl_slist *hdrs = NULL;
	char               err[CURL_ERROR_SIZE] = "";
	CURLcode           rc;
	long               status = 0;

	if ((h = curlutil_easy(a->url, CURLUTIL_HTTP, a->timeout_ms, err)) ==
	    NULL) {
		log_kv(LOG_ERROR, "alert_failed", "incident", a->event, "error",
		    "curl_easy_init failed");
		return;
	}
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, a->body);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard_write);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "cronguard/" PACKAGE_VERSION);
	rc = curl_easy_perform(h);
	if (rc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (rc != CURLE_OK) {
		log_kv(LOG_ERROR, "alert_failed", "incident", a->event, "error",
		    err[0] != '\0' ? err : curl_easy_strerror(rc));
	} else if (status < 200 || status > 299) {
		char code[16];

		snprintf(code, sizeof code, "%ld", status);
		log_kv(LOG_ERROR, "alert_failed", "incident", a->event,
		    "status", code);
	}
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(h);
}

static void *
alert_main(void *arg)
{
	alert_post(arg);
	return NULL;
}

static void
alert_clear(struct alert *a)
{
	free(a->event);
	free(a->body);
	free(a->url);
	memset(a, 0, sizeof *a);
}

/* Wait for the alert in slot a, if any, and free it. */
static void
alert_wait(struct alert *a)
{
	if (!a->busy)
		return;
	pthread_join(a->thread, NULL);
	alert_clear(a);
}

/*
 * Start the POST of in in a thread that takes no signals (the guard's
 * handlers and the SQL job's watchdog expect them elsewhere).  With every
 * slot in use, the oldest alert is waited for first; when no thread can
 * be started, the POST is made here.
 */
static void
incident_alert(const struct incident *in)
{
	struct alert *a = &alerts[alerts_next];
	json_t       *o;
	sigset_t      all, old;
	char         *body;
	int           rc;

	alert_wait(a);
	o = incident_json(in);
	body = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	a->event = xstrdup(in->event);
	a->body = body != NULL ? body : xstrdup("{}");
	a->url = xstrdup(alert_url);
	a->timeout_ms = alert_timeout_ms;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&a->thread, NULL, alert_main, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		alert_post(a);
		alert_clear(a);
		return;
	}
	a->busy = 1;
	alerts_next = (alerts_next + 1) % ALERTS_MAX;
}

void
incident_flush(void)
{
	size_t i;

	for (i = 0; i < ALERTS_MAX; i++)
		alert_wait(&alerts[i]);
}

void
incident_report(const struct incident *in)
{
	char run[32] = "", conn[32] = "";

	if (in->run_id != 0)
		snprintf(run, sizeof run, "%llu", in->run_id);
	if (in->connection_id != 0)
		snprintf(conn, sizeof conn, "%lu", in->connection_id);
	/* Logged at error whatever the verbosity: -q keeps errors. */
	log_kv(LOG_ERROR, in->event, "incident", "1", "job", in->job, "lock",
	    in->lock, "channel", in->channel, "run_id",
	    run[0] != '\0' ? run : NULL, "connection_id",
	    conn[0] != '\0' ? conn : NULL, "detail", in->detail);
	if (alert_url != NULL)
		incident_alert(in);
	if (incident_sink != NULL)
		incident_sink(in, incident_sink_arg);
}
