/* incident.c: the one incident reporter (CONTRACT section 5.6): a log
 * line, and the alert POST straight to alert.url. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "channel-http.h"
#include "channel-multi.h"
#include "incident.h"
#include "log.h"
#include "util.h"

static incident_sink_fn incident_sink;
static void            *incident_sink_arg;
static char            *alert_url;
static long             alert_timeout_ms = 10000;

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

	if ((h = channel_curl_easy(alert_url, CHANNEL_HTTP_PROTOCOLS,
	         alert_timeout_ms, err)) == NULL) {
		log_kv(LOG_ERROR, "alert_failed", "incident", in->event,
		    "error", "curl_easy_init failed", NULL);
		return;
	}
	o = incident_json(in);
	body = json_dumps(o, JSON_COMPACT);
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body != NULL ? body : "{}");
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard_write);
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

	if (in->run_id != 0)
		snprintf(run, sizeof run, "%llu", in->run_id);
	if (in->connection_id != 0)
		snprintf(conn, sizeof conn, "%lu", in->connection_id);
	/* Logged at error whatever the verbosity: -q keeps errors. */
	log_kv(LOG_ERROR, in->event, "incident", "1", "job", in->job, "lock",
	    in->lock, "channel", in->channel, "run_id",
	    run[0] != '\0' ? run : NULL, "connection_id",
	    conn[0] != '\0' ? conn : NULL, "detail", in->detail, NULL);
	if (alert_url != NULL)
		incident_alert(in);
	if (incident_sink != NULL)
		incident_sink(in, incident_sink_arg);
}
