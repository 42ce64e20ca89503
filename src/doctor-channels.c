/* doctor-channels.c: the probes of "cronguard doctor" of each channel and
 * of the alert URL (doctor-int.h): name resolution, TCP connect, TLS,
 * and the protocol's greeting, sending nothing. */
#include "config.h"

#include <sys/socket.h>

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <curl/curl.h>

#include "channel-amqp.h"
#include "curlutil.h"
#include "doctor-int.h"
#include "util.h"

/* The longest a channel's TCP connect may take. */
#define DOCTOR_CONNECT_MS 3000

/* One TCP connect to ai within DOCTOR_CONNECT_MS: 0, or an errno. */
static int
doctor_connect_one(const struct addrinfo *ai)
{
	struct pollfd pfd;
	socklen_t     len = sizeof(int);
	int           fd, err = 0;

	fd = socket(ai->ai_family,
	    ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd == -1)
		return errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		goto out;
	if (errno != EINPROGRESS) {
		err = errno;
		goto out;
	}
	pfd.fd = fd;
	pfd.events = POLLOUT;
	switch (poll(&pfd, 1, DOCTOR_CONNECT_MS)) {
	case -1:
		err = errno;
		break;
	case 0:
		err = ETIMEDOUT;
		break;
	default:
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
			err = errno;
		break;
	}
out:
	close(fd);
	return err;
}

/* The host and port of url (AMQP's default ports added); 0, or -1. */
static int
doctor_url_hostport(const char *url, char **host, char **port)
{
	CURLU *u;
	char  *scheme = NULL, *h = NULL, *p = NULL;
	int    rc = -1;

	*host = *port = NULL;
	if ((u = curl_url()) == NULL)
		return -1;
	if (curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) !=
	        CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &h, 0) != CURLUE_OK)
		goto out;
	if (curl_url_get(u, CURLUPART_PORT, &p, CURLU_DEFAULT_PORT) ==
	    CURLUE_OK)
		*port = xstrdup(p);
	else if (strcmp(scheme, "amqp") == 0)
		*port = xstrdup("5672");
	else if (strcmp(scheme, "amqps") == 0)
		*port = xstrdup("5671");
	else
		goto out;
	/* "[::1]" to "::1" */
	if (h[0] == '[' && strlen(h) > 2)
		*host = xstrndup(h + 1, strlen(h) - 2);
	else
		*host = xstrdup(h);
	rc = 0;
out:
	curl_free(scheme);
	curl_free(h);
	curl_free(p);
	curl_url_cleanup(u);
	return rc;
}

/* ------------------------------------------------------- channels */

/*
 * Each channel (and the alert URL) is probed in stages: name resolution,
 * TCP connect, TLS handshake with certificate verification when the URL
 * uses TLS, then the protocol: SMTP greeting, EHLO and AUTH (libcurl's
 * connect phase, CURLOPT_CONNECT_ONLY: no MAIL FROM, nothing sent),
 * HTTP HEAD (any answer below 500 means reachable: a webhook endpoint
 * may well refuse HEAD with 405).  A stage is reported only when the
 * stages before it passed.  Each probe gives up after DOCTOR_CHECK_MS,
 * or the channel's own timeout when that is shorter.
 */

/* What the SMTP conversation showed, from libcurl's debug callback. */
struct doctor_smtp {
	int  ehlo_sent;  /* the last command was EHLO */
	int  ehlo_ok;    /* and the server answered 250 */
	char auth[128];  /* its AUTH mechanisms, "" none */
	char reply[160]; /* the server's last line */
};

static int
doctor_smtp_debug(
    CURL *easy, curl_infotype type, char *data, size_t size, void *arg)
{
	struct doctor_smtp *s = arg;

	(void)easy;
	if (type == CURLINFO_HEADER_OUT) {
		/* After STARTTLS the client says EHLO again: the second
		 * answer is the one that counts. */
		s->ehlo_sent = size >= 5 && strncasecmp(data, "EHLO ", 5) == 0;
		if (s->ehlo_sent) {
			s->ehlo_ok = 0;
			s->auth[0] = '\0';
		}
		return 0;
	}
	if (type != CURLINFO_HEADER_IN || size < 4)
		return 0;
	line_copy(s->reply, sizeof s->reply, data, size);
	if (!s->ehlo_sent || strncmp(data, "250", 3) != 0)
		return 0;
	s->ehlo_ok = 1;
	if (size > 9 && strncasecmp(data + 4, "AUTH", 4) == 0 &&
	    (data[8] == ' ' || data[8] == '='))
		line_copy(s->auth, sizeof s->auth, data + 9, size - 9);
	return 0;
}

/* What a probe is about: "channel" with the channel, or "alert". */
struct doctor_target {
	const char                *kind;  /* prefix of the check names */
	const char                *label; /* first word of each finding */
	const char                *key;   /* the setting to correct */
	const struct conf_channel *ch;    /* NULL for the alert URL */
	const char                *url;
	int64_t                    timeout_ms;
};

static void doctor_stage(struct doctor_report *, const struct doctor_target *,
    enum check_status, const char *stage, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* One result named KIND_STAGE, its finding "LABEL: ..." */
static void
doctor_stage(struct doctor_report *r, const struct doctor_target *t,
    enum check_status st, const char *stage, const char *fix, const char *fmt,
    ...)
{
	va_list ap;
	char   *name, *finding;

	name = xasprintf("%s_%s", t->kind, stage);
	va_start(ap, fmt);
	finding = xvasprintf(fmt, ap);
	va_end(ap);
	doctor_add(r, st, name, fix, "%s: %s", t->label, finding);
	free(name);
	free(finding);
}

/* libcurl's errors of the TLS layer (STARTTLS refused among them). */
static int
doctor_tls_error(CURLcode rc)
{
	switch (rc) {
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
	case CURLE_SSL_CRL_BADFILE:
	case CURLE_SSL_ENGINE_INITFAILED:
	case CURLE_USE_SSL_FAILED:
		return 1;
	default:
		return 0;
	}
}

/* Whether the probe of t speaks TLS: an "s" scheme, or STARTTLS. */
static int
doctor_uses_tls(const struct doctor_target *t)
{
	return strncasecmp(t->url, "https:", 6) == 0 ||
	    strncasecmp(t->url, "smtps:", 6) == 0 ||
	    (t->ch != NULL && t->ch->tls != NULL &&
	        strcmp(t->ch->tls, "required") == 0);
}

/* The protocol stage of an SMTP channel, after a finished connect. */
static void
doctor_smtp_verdict(struct doctor_report *r, const struct doctor_target *t,
    CURLcode rc, const char *err, const struct doctor_smtp *s)
{
	const struct conf_channel *ch = t->ch;
	char                      *fix = NULL;

	if (rc == CURLE_LOGIN_DENIED) {
		fix = xasprintf(
		    "correct channels.%s.username and its password", ch->name);
		doctor_stage(r, t, CHECK_CRITICAL, "smtp", fix,
		    "AUTH as %s refused: %s", ch->username,
		    s->reply[0] != '\0' ? s->reply : err);
	} else if (rc != CURLE_OK) {
		fix = xasprintf(
		    "check the mail server's log, or correct %s", t->key);
		doctor_stage(r, t, CHECK_CRITICAL, "smtp", fix, "%s%s%s", err,
		    s->reply[0] != '\0' ? "; the server said: " : "", s->reply);
	} else if (!s->ehlo_ok) {
		fix = xasprintf(
		    "check the mail server's log, or correct %s", t->key);
		doctor_stage(r, t, CHECK_CRITICAL, "smtp", fix,
		    "no 250 answer to EHLO (last: %s)", s->reply);
	} else if (ch->username != NULL && s->auth[0] == '\0') {
		fix = xasprintf("enable AUTH on the mail server (over TLS), or "
		                "remove channels.%s.username",
		    ch->name);
		doctor_stage(r, t, CHECK_CRITICAL, "smtp", fix,
		    "EHLO answered but AUTH is not offered: the username of "
		    "the channel cannot be used");
	} else if (ch->username != NULL)
		doctor_stage(r, t, CHECK_OK, "smtp", NULL,
		    "EHLO answered, AUTH %s offered, logged in as %s; "
		    "nothing sent",
		    s->auth, ch->username);
	else
		doctor_stage(r, t, CHECK_OK, "smtp", NULL,
		    "EHLO answered%s%s; nothing sent",
		    s->auth[0] != '\0' ? ", AUTH offered: " : "", s->auth);
	free(fix);
}

static void
doctor_http_verdict(struct doctor_report *r, const struct doctor_target *t,
    CURLcode rc, const char *err, long code)
{
	char *fix;

	fix = xasprintf("check the endpoint's server, or correct %s", t->key);
	if (rc != CURLE_OK)
		doctor_stage(
		    r, t, CHECK_CRITICAL, "http", fix, "HEAD: %s", err);
	else if (code >= 500)
		doctor_stage(r, t, CHECK_WARNING, "http", fix,
		    "HEAD answered %ld: the endpoint reports a server error",
		    code);
	else
		doctor_stage(r, t, CHECK_OK, "http", NULL,
		    "HEAD answered %ld: reachable", code);
	free(fix);
}

/* The options of the probe: an SMTP channel's login (the connect phase
 * only, the dialogue read by doctor_smtp_debug into *smtp), else an HTTP
 * HEAD with the channel's headers.  Returns the header list to free
 * after the transfer (NULL for none). */
static struct curl_slist *
doctor_curl_setup(CURL *easy, const struct conf_channel *ch, int is_smtp,
    struct doctor_smtp *smtp)
{
	struct curl_slist *hdrs = NULL;
	size_t             i;

	if (ch != NULL && ch->tls_ca != NULL) {
		curl_easy_setopt(easy, CURLOPT_CAINFO, ch->tls_ca);
		curl_easy_setopt(easy, CURLOPT_CAPATH, (char *)NULL);
	}
	if (is_smtp) {
		/* Greeting, EHLO, STARTTLS, AUTH: libcurl's connect phase;
		 * QUIT at cleanup. */
		curl_easy_setopt(easy, CURLOPT_CONNECT_ONLY, 1L);
		curl_easy_setopt(
		    easy, CURLOPT_DEBUGFUNCTION, doctor_smtp_debug);
		curl_easy_setopt(easy, CURLOPT_DEBUGDATA, smtp);
		curl_easy_setopt(easy, CURLOPT_VERBOSE, 1L);
		if (ch->tls != NULL && strcmp(ch->tls, "required") == 0)
			curl_easy_setopt(
			    easy, CURLOPT_USE_SSL, (long)CURLUSESSL_ALL);
		if (ch->username != NULL) {
			curl_easy_setopt(easy, CURLOPT_USERNAME, ch->username);
			curl_easy_setopt(easy, CURLOPT_PASSWORD,
			    ch->password != NULL ? ch->password : "");
		}
		return NULL;
	}
	curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
	curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard_write);
	curl_easy_setopt(easy, CURLOPT_USERAGENT, "cronguard/" PACKAGE_VERSION);
	for (i = 0; ch != NULL && i < ch->nheaders; i++)
		hdrs = curl_slist_append(hdrs, ch->headers[i]);
	curl_easy_setopt(easy, CURLOPT_HTTPHEADER, hdrs);
	return hdrs;
}

/* The fix of a failed TLS stage, allocated. */
static char *
doctor_tls_fix(const struct doctor_target *t, CURLcode rc, const char *host)
{
	const struct conf_channel *ch = t->ch;

	if (rc == CURLE_USE_SSL_FAILED)
		return xasprintf(
		    "enable STARTTLS on the server, or use smtps:// in %s",
		    t->key);
	return xasprintf(
	    "give the server a certificate for %s from a CA in %s, or correct %s",
	    host,
	    ch != NULL && ch->tls_ca != NULL ? "the channel's tls_ca"
	                                     : "the system store",
	    t->key);
}

/* The network stages of a transfer on easy that ended with rc (why):
 * name resolution, TCP connect and, when t uses it, TLS, each reported
 * from libcurl's timings.  0 when they passed, -1 when one failed. */
static int
doctor_curl_stages(struct doctor_report *r, const struct doctor_target *t,
    CURL *easy, CURLcode rc, const char *why, const char *host,
    const char *port)
{
	curl_off_t dns_us = 0, tcp_us = 0, tls_us = 0;
	char      *ip = NULL, *fix = NULL;
	long       rport = 0;
	int        tls = doctor_uses_tls(t), ret = -1;

	curl_easy_getinfo(easy, CURLINFO_NAMELOOKUP_TIME_T, &dns_us);
	curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &tcp_us);
	curl_easy_getinfo(easy, CURLINFO_APPCONNECT_TIME_T, &tls_us);
	curl_easy_getinfo(easy, CURLINFO_PRIMARY_IP, &ip);
	curl_easy_getinfo(easy, CURLINFO_PRIMARY_PORT, &rport);
	if (rc == CURLE_COULDNT_RESOLVE_HOST ||
	    (rc == CURLE_OPERATION_TIMEDOUT && dns_us == 0)) {
		fix = xasprintf("correct the host in %s, or this host's "
		                "resolver (/etc/resolv.conf)",
		    t->key);
		doctor_stage(r, t, CHECK_CRITICAL, "dns", fix,
		    "cannot resolve %s: %s", host, why);
		goto out;
	}
	doctor_stage(r, t, CHECK_OK, "dns", NULL, "%s resolved in %lld ms",
	    host, (long long)(dns_us / 1000));
	if (rc == CURLE_COULDNT_CONNECT ||
	    (rc == CURLE_OPERATION_TIMEDOUT && tcp_us == 0)) {
		fix = xasprintf("start the server, or correct %s", t->key);
		doctor_stage(r, t, CHECK_CRITICAL, "connect", fix,
		    "cannot connect to %s port %s: %s", host, port, why);
		goto out;
	}
	doctor_stage(r, t, CHECK_OK, "connect", NULL,
	    "connected to %s port %ld in %lld ms", ip != NULL ? ip : host,
	    rport, (long long)(tcp_us / 1000));
	if (tls &&
	    (doctor_tls_error(rc) ||
	        (rc == CURLE_OPERATION_TIMEDOUT && tls_us == 0))) {
		fix = doctor_tls_fix(t, rc, host);
		doctor_stage(r, t, CHECK_CRITICAL, "tls", fix,
		    "TLS with %s: %s", host, why);
		goto out;
	}
	if (tls)
		doctor_stage(r, t, CHECK_OK, "tls", NULL,
		    "handshake done and certificate verified for %s in %lld ms",
		    host, (long long)(tls_us / 1000));
	ret = 0;
out:
	free(fix);
	return ret;
}

/* Probe t with one libcurl transfer and report each stage it passed and
 * the first it failed. */
static void
doctor_curl(struct doctor_report *r, const struct doctor_target *t)
{
	const struct conf_channel *ch = t->ch;
	struct doctor_smtp         smtp;
	struct curl_slist         *hdrs = NULL;
	CURL                      *easy = NULL;
	CURLcode                   rc;
	char                       err[CURL_ERROR_SIZE] = "", *fix = NULL;
	char                      *host = NULL, *port = NULL;
	const char                *why;
	long                       code = 0, ms;
	int                        is_smtp;

	memset(&smtp, 0, sizeof smtp);
	is_smtp = ch != NULL && ch->type == CHANNEL_SMTP;
	ms = (long)(t->timeout_ms > 0 && t->timeout_ms < DOCTOR_CHECK_MS
	        ? t->timeout_ms
	        : DOCTOR_CHECK_MS);
	if (doctor_url_hostport(t->url, &host, &port) != 0) {
		fix = xasprintf("correct %s", t->key);
		doctor_stage(r, t, CHECK_CRITICAL, "dns", fix,
		    "no host and port in the url");
		goto out;
	}
	if ((easy = curlutil_easy(t->url,
	         is_smtp ? "smtp,smtps" : CURLUTIL_HTTP, ms, err)) == NULL) {
		doctor_stage(r, t, CHECK_UNKNOWN, "connect",
		    "check this host's memory and libcurl",
		    "curl_easy_init failed");
		goto out;
	}
	hdrs = doctor_curl_setup(easy, ch, is_smtp, &smtp);
	rc = curl_easy_perform(easy);
	why = err[0] != '\0' ? err : curl_easy_strerror(rc);
	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
	if (doctor_curl_stages(r, t, easy, rc, why, host, port) != 0)
		goto out;
	if (is_smtp)
		doctor_smtp_verdict(r, t, rc, why, &smtp);
	else
		doctor_http_verdict(r, t, rc, why, code);
out:
	curl_easy_cleanup(easy);
	curl_slist_free_all(hdrs);
	free(host);
	free(port);
	free(fix);
}

/* An AMQP channel's login (and TLS handshake for amqps://), bounded as
 * the other probes: connection, channel and confirm mode opened as a
 * dispatcher does, nothing published. */
static void
doctor_amqp(struct doctor_report *r, const struct doctor_target *t)
{
	struct conf_channel bounded = *t->ch;
	char               *errstr = NULL, *fix = NULL;
	bool                auth;

	if (bounded.timeout_ms <= 0 || bounded.timeout_ms > DOCTOR_CHECK_MS)
		bounded.timeout_ms = DOCTOR_CHECK_MS;
	if (channel_amqp_probe(&bounded, &auth, &errstr) == 0) {
		doctor_stage(r, t, CHECK_OK, "amqp", NULL,
		    "connection opened%s%s; nothing published",
		    t->ch->username != NULL ? ", logged in as " : "",
		    t->ch->username != NULL ? t->ch->username : "");
		goto out;
	}
	fix = auth ? xasprintf("correct channels.%s.username and its "
	                       "password, or the user's permissions on the "
	                       "vhost",
	                 t->ch->name)
	           : xasprintf("check the broker's log (TLS, vhost, limits), "
	                       "or correct %s",
	                 t->key);
	doctor_stage(r, t, CHECK_CRITICAL, "amqp", fix, "%s", errstr);
out:
	free(errstr);
	free(fix);
}

/* An AMQP channel (libcurl does not speak it): name resolution, a TCP
 * connect within DOCTOR_CONNECT_MS, then doctor_amqp. */
static void
doctor_socket(struct doctor_report *r, const struct doctor_target *t)
{
	struct addrinfo hints, *res = NULL, *ai;
	char           *host = NULL, *port = NULL, *fix = NULL;
	int             gai, err = 0;
	int64_t         start;

	if (doctor_url_hostport(t->url, &host, &port) != 0) {
		fix = xasprintf("correct %s", t->key);
		doctor_stage(r, t, CHECK_CRITICAL, "dns", fix,
		    "no host and port in the url");
		goto out;
	}
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	start = now_mono_ms();
	if ((gai = getaddrinfo(host, port, &hints, &res)) != 0) {
		fix = xasprintf("correct the host in %s, or this host's "
		                "resolver (/etc/resolv.conf)",
		    t->key);
		doctor_stage(r, t, CHECK_CRITICAL, "dns", fix,
		    "cannot resolve %s: %s", host, gai_strerror(gai));
		goto out;
	}
	doctor_stage(r, t, CHECK_OK, "dns", NULL, "%s resolved in %lld ms",
	    host, (long long)(now_mono_ms() - start));
	start = now_mono_ms();
	for (ai = res; ai != NULL; ai = ai->ai_next)
		if ((err = doctor_connect_one(ai)) == 0)
			break;
	if (err != 0) {
		fix = xasprintf("start the server, or correct %s", t->key);
		doctor_stage(r, t, CHECK_CRITICAL, "connect", fix,
		    "cannot connect to %s port %s: %s", host, port,
		    strerror(err));
		goto out;
	}
	doctor_stage(r, t, CHECK_OK, "connect", NULL,
	    "connected to %s port %s in %lld ms", host, port,
	    (long long)(now_mono_ms() - start));
	doctor_amqp(r, t);
out:
	if (res != NULL)
		freeaddrinfo(res);
	free(host);
	free(port);
	free(fix);
}

/* A channel's secret file cannot be used: the fix of its first problem. */
static void
doctor_secret_failed(struct doctor_report *r, const struct conf *c,
    const struct doctor_target *t, const char *errstr)
{
	char  *reason = NULL, *fix = NULL;
	size_t i;

	for (i = 0; i < c->nsecrets && fix == NULL; i++)
		if (c->secrets[i].channel != NULL &&
		    strcmp(c->secrets[i].channel, t->label) == 0 &&
		    conf_secret_problem(
		        c->secrets[i].path, NULL, &reason, &fix) == 0)
			reason = fix = NULL;
	doctor_stage(r, t, CHECK_CRITICAL, "secret",
	    fix != NULL ? fix : "check the channel's secret files", "%s",
	    errstr);
	free(reason);
	free(fix);
}

void
doctor_channel(
    struct conf *c, const struct conf_channel *ch, struct doctor_report *r)
{
	struct doctor_target t;
	char                *key, *errstr = NULL;

	key = xasprintf("channels.%s.url", ch->name);
	t.kind = "channel";
	t.label = ch->name;
	t.key = key;
	t.ch = ch;
	t.url = ch->url;
	t.timeout_ms = ch->timeout_ms;
	/* A probe without the channel's password would fail for the wrong
	 * reason. */
	if (conf_read_secrets(c, ch->name, &errstr) != 0)
		doctor_secret_failed(r, c, &t, errstr);
	else if (ch->type == CHANNEL_AMQP)
		doctor_socket(r, &t);
	else
		doctor_curl(r, &t);
	free(key);
	free(errstr);
}

/* The alert URL takes the incidents' POST: HEAD answered is enough. */
void
doctor_alert(const struct conf *c, struct doctor_report *r)
{
	struct doctor_target t;

	t.kind = "alert";
	t.label = "alert";
	t.key = "alert.url";
	t.ch = NULL;
	t.url = c->alert_url;
	t.timeout_ms = c->alert_timeout_ms;
	doctor_curl(r, &t);
}
