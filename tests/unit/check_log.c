/* check_log.c: log lines (logfmt, JSON, levels) and the incident reporter,
 * including the alert POST to a real HTTP listener on loopback. */
#include "config.h"

#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <curl/curl.h>
#include <jansson.h>

#include "incident.h"
#include "log.h"
#include "testutil.h"
#include "util.h"

static void
emit_tricky(void *arg)
{
	(void)arg;
	log_kv(LOG_WARN, "job_failed", "job", "leave accrual", "why",
	    "said \"no\"\nthen=left", "empty", "", "absent", (const char *)NULL,
	    "plain", "x1");
}

START_TEST(test_logfmt_quoting)
{
	char *s;

	log_init(LOG_WARN, LOG_TEXT);
	s = testutil_capture(STDERR_FILENO, emit_tricky, NULL);
	ck_assert_msg(strncmp(s, "ts=", 3) == 0, "%s", s);
	ck_assert_ptr_nonnull(strstr(s, " level=warn event=job_failed "));
	ck_assert_ptr_nonnull(strstr(s, " job=\"leave accrual\""));
	ck_assert_ptr_nonnull(
	    strstr(s, " why=\"said \\\"no\\\"\\nthen=left\""));
	ck_assert_ptr_nonnull(strstr(s, " empty=\"\""));
	ck_assert_ptr_null(strstr(s, "absent"));
	ck_assert_ptr_nonnull(strstr(s, " plain=x1\n"));
	/* exactly one line */
	ck_assert_ptr_eq(strchr(s, '\n'), s + strlen(s) - 1);
	free(s);
}
END_TEST

START_TEST(test_json_lines)
{
	json_error_t jerr;
	json_t      *o;
	char        *s;

	log_init(LOG_WARN, LOG_JSON);
	s = testutil_capture(STDERR_FILENO, emit_tricky, NULL);
	o = json_loads(s, 0, &jerr);
	ck_assert_msg(o != NULL, "not JSON: %s (%s)", s, jerr.text);
	ck_assert_str_eq(
	    json_string_value(json_object_get(o, "level")), "warn");
	ck_assert_str_eq(
	    json_string_value(json_object_get(o, "event")), "job_failed");
	ck_assert_str_eq(json_string_value(json_object_get(o, "why")),
	    "said \"no\"\nthen=left");
	json_decref(o);
	free(s);
}
END_TEST

static void
emit_levels(void *arg)
{
	(void)arg;
	log_kv(LOG_DEBUG, "dbg", "msg", "debug 1");
	log_kv(LOG_INFO, "inf", "msg", "info 2");
	log_kv(LOG_WARN, "wrn", "msg", "warn 3");
	log_kv(LOG_ERROR, "err", "msg", "error 4");
}

START_TEST(test_levels)
{
	char *s;

	log_init(LOG_WARN, LOG_TEXT); /* the default: quiet on success */
	s = testutil_capture(STDERR_FILENO, emit_levels, NULL);
	ck_assert_ptr_null(strstr(s, "event=dbg"));
	ck_assert_ptr_null(strstr(s, "event=inf"));
	ck_assert_ptr_nonnull(strstr(s, "event=wrn msg=\"warn 3\""));
	ck_assert_ptr_nonnull(strstr(s, "event=err"));
	free(s);

	log_init(LOG_ERROR, LOG_TEXT); /* -q */
	s = testutil_capture(STDERR_FILENO, emit_levels, NULL);
	ck_assert_ptr_null(strstr(s, "event=wrn"));
	ck_assert_ptr_nonnull(strstr(s, "event=err"));
	free(s);

	log_init(LOG_DEBUG, LOG_TEXT); /* -vv */
	s = testutil_capture(STDERR_FILENO, emit_levels, NULL);
	ck_assert_ptr_nonnull(strstr(s, "event=dbg"));
	ck_assert_ptr_nonnull(strstr(s, "event=inf"));
	free(s);
}
END_TEST

struct seen {
	int                calls;
	char               event[64];
	char               detail[128];
	unsigned long long run_id;
};

static void
test_sink(const struct incident *in, void *arg)
{
	struct seen *seen = arg;

	seen->calls++;
	snprintf(seen->event, sizeof seen->event, "%s", in->event);
	snprintf(seen->detail, sizeof seen->detail, "%s",
	    in->detail != NULL ? in->detail : "");
	seen->run_id = in->run_id;
}

static void
emit_incident(void *arg)
{
	const struct incident in = {
		.event = "lock_release_unexpected",
		.job = "leave-accrual",
		.lock = "cronguard:app:leave-accrual",
		.run_id = 42,
		.connection_id = 7,
		.detail = "RELEASE_LOCK returned 0",
	};

	(void)arg;
	incident_report(&in);
}

START_TEST(test_incident_logged_even_when_quiet)
{
	struct seen seen;
	char       *s;

	memset(&seen, 0, sizeof seen);
	log_init(LOG_ERROR, LOG_TEXT);
	incident_set_sink(test_sink, &seen);
	incident_set_alert(NULL, 0);
	s = testutil_capture(STDERR_FILENO, emit_incident, NULL);
	ck_assert_ptr_nonnull(
	    strstr(s, "level=error event=lock_release_unexpected incident=1"));
	ck_assert_ptr_nonnull(strstr(s, "run_id=42"));
	ck_assert_ptr_nonnull(strstr(s, "connection_id=7"));
	ck_assert_ptr_nonnull(strstr(s, "detail=\"RELEASE_LOCK returned 0\""));
	ck_assert_int_eq(seen.calls, 1);
	ck_assert_str_eq(seen.event, "lock_release_unexpected");
	ck_assert_uint_eq(seen.run_id, 42);
	incident_set_sink(NULL, NULL);
	free(s);
}
END_TEST

/* A one-shot HTTP listener: accepts one request, keeps it, answers 200. */
struct listener {
	int    fd;
	int    status;
	char   req[8192];
	size_t len;
};

static void *
listener_main(void *arg)
{
	struct listener *l = arg;
	char             reply[128];
	char            *hdr_end, *cl;
	ssize_t          n;
	int              c;

	if ((c = accept(l->fd, NULL, NULL)) == -1)
		return NULL;
	for (;;) {
		n = read(c, l->req + l->len, sizeof l->req - 1 - l->len);
		if (n <= 0)
			break;
		l->len += (size_t)n;
		l->req[l->len] = '\0';
		if ((hdr_end = strstr(l->req, "\r\n\r\n")) == NULL)
			continue;
		cl = strcasestr(l->req, "content-length:");
		if (cl == NULL ||
		    l->len - (size_t)(hdr_end + 4 - l->req) >=
		        strtoul(cl + 15, NULL, 10))
			break;
	}
	snprintf(reply, sizeof reply,
	    "HTTP/1.1 %d X\r\nContent-Length: 0\r\n"
	    "Connection: close\r\n\r\n",
	    l->status);
	if (write(c, reply, strlen(reply)) < 0)
		l->len = 0;
	close(c);
	return NULL;
}

static int
listen_loopback(int *port)
{
	struct sockaddr_in sin;
	socklen_t          slen = sizeof sin;
	int                fd;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	ck_assert_int_eq(listen(fd, 4), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sin, &slen), 0);
	*port = ntohs(sin.sin_port);
	return fd;
}

static void
silent(void *arg)
{
	emit_incident(arg);
	/* The alert is posted by a thread of its own: wait for it, as the
	 * command layer does before it exits. */
	incident_flush();
}

START_TEST(test_incident_alert_posted)
{
	struct listener l;
	pthread_t       t;
	json_t         *o;
	char            url[64], *s, *body;
	int             port;

	memset(&l, 0, sizeof l);
	l.status = 200;
	l.fd = listen_loopback(&port);
	snprintf(url, sizeof url, "http://127.0.0.1:%d/ops", port);
	ck_assert_int_eq(pthread_create(&t, NULL, listener_main, &l), 0);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	log_init(LOG_WARN, LOG_TEXT);
	incident_set_alert(url, 5000);
	s = testutil_capture(STDERR_FILENO, silent, NULL);
	pthread_join(t, NULL);
	close(l.fd);
	ck_assert_ptr_null(strstr(s, "alert_failed"));
	ck_assert_msg(
	    strncmp(l.req, "POST /ops HTTP/1.1\r\n", 20) == 0, "%s", l.req);
	ck_assert_ptr_nonnull(
	    strcasestr(l.req, "content-type: application/json"));
	body = strstr(l.req, "\r\n\r\n");
	ck_assert_ptr_nonnull(body);
	o = json_loads(body + 4, 0, NULL);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_string_value(json_object_get(o, "event")),
	    "lock_release_unexpected");
	ck_assert_str_eq(
	    json_string_value(json_object_get(o, "job")), "leave-accrual");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "run_id")), 42);
	json_decref(o);
	incident_set_alert(NULL, 0);
	free(s);
}
END_TEST

START_TEST(test_incident_alert_failure_is_logged)
{
	struct seen     seen;
	struct listener l;
	pthread_t       t;
	char            url[64], *s;
	int             port;

	/* A server answering 500: the failure is logged, the incident is
	 * still delivered to the sink and logged itself. */
	memset(&seen, 0, sizeof seen);
	memset(&l, 0, sizeof l);
	l.status = 500;
	l.fd = listen_loopback(&port);
	snprintf(url, sizeof url, "http://127.0.0.1:%d/ops", port);
	ck_assert_int_eq(pthread_create(&t, NULL, listener_main, &l), 0);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	log_init(LOG_WARN, LOG_TEXT);
	incident_set_sink(test_sink, &seen);
	incident_set_alert(url, 5000);
	s = testutil_capture(STDERR_FILENO, silent, NULL);
	pthread_join(t, NULL);
	close(l.fd);
	ck_assert_ptr_nonnull(strstr(s, "event=lock_release_unexpected"));
	ck_assert_ptr_nonnull(strstr(s,
	    "event=alert_failed incident=lock_release_unexpected status=500"));
	ck_assert_int_eq(seen.calls, 1);
	incident_set_alert(NULL, 0);
	incident_set_sink(NULL, NULL);
	free(s);
}
END_TEST

/* The alert speaks http and https only, as the http channel: a file://
 * (or ftp://, smtp://...) alert URL is refused by libcurl, not fetched. */
START_TEST(test_incident_alert_http_only)
{
	char  path[] = "/tmp/check_log.XXXXXX", url[64], *s;
	FILE *f;
	int   fd;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs("not an alert endpoint\n", f);
	fclose(f);
	snprintf(url, sizeof url, "file://%s", path);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	log_init(LOG_WARN, LOG_TEXT);
	incident_set_alert(url, 5000);
	s = testutil_capture(STDERR_FILENO, silent, NULL);
	unlink(path);
	ck_assert_ptr_nonnull(strstr(s, "event=alert_failed"));
	ck_assert_msg(
	    strstr(s, "Protocol \\\"file\\\" not supported") != NULL, "%s", s);
	incident_set_alert(NULL, 0);
	free(s);
}
END_TEST

static Suite *
log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_logfmt_quoting);
	tcase_add_test(tc, test_json_lines);
	tcase_add_test(tc, test_levels);
	tcase_add_test(tc, test_incident_logged_even_when_quiet);
	tcase_add_test(tc, test_incident_alert_posted);
	tcase_add_test(tc, test_incident_alert_failure_is_logged);
	tcase_add_test(tc, test_incident_alert_http_only);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(log_suite);
}
