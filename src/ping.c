/* ping.c: healthchecks.io-style ping URLs, sent directly with libcurl. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "curlutil.h"
#include "ping.h"
#include "util.h"

/* Pause between attempts: a server restarting gets a moment. */
#define PING_RETRY_PAUSE_MS 250

char *
ping_url(const char *url, enum ping_kind kind, const char *rid)
{
	const char *suffix = kind == PING_START ? "/start"
	    : kind == PING_FAIL                 ? "/fail"
	                                        : "";
	size_t      plen = strcspn(url, "?#");
	const char *query = url[plen] == '?' ? url + plen + 1 : NULL;
	size_t      qlen = query != NULL ? strcspn(query, "#") : 0;
	struct buf  b;

	buf_init(&b);
	/* "https://hc-ping.com/UUID/" and ".../UUID" are the same check. */
	while (plen > 0 && url[plen - 1] == '/' && suffix[0] != '\0')
		plen--;
	buf_add(&b, url, plen);
	buf_adds(&b, suffix);
	buf_addc(&b, '?');
	if (qlen > 0) {
		buf_add(&b, query, qlen);
		buf_addc(&b, '&');
	}
	buf_printf(&b, "rid=%s", rid);
	return buf_steal(&b);
}

/* One attempt within timeout_ms: 0 done, 1 worth retrying, -1 final. */
static int
ping_attempt(const char *url, const char *body, size_t len, long timeout_ms,
    char **errstr)
{
	CURL    *h;
	CURLcode rc;
	char     err[CURL_ERROR_SIZE] = "";
	long     status = 0;
	int      rv = 1;

	if ((h = curlutil_easy(url, CURLUTIL_HTTP, timeout_ms, err)) == NULL) {
		*errstr = xstrdup("curl_easy_init failed");
		return -1;
	}
	curl_easy_setopt(h, CURLOPT_USERAGENT, "cronguard/" PACKAGE_VERSION);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard_write);
	if (body != NULL) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(
		    h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	}
	rc = curl_easy_perform(h);
	if (rc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (rc != CURLE_OK)
		*errstr =
		    xstrdup(err[0] != '\0' ? err : curl_easy_strerror(rc));
	else if (status >= 200 && status <= 299)
		rv = 0;
	else {
		*errstr = xasprintf("HTTP status %ld", status);
		if (status < 500)
			rv = -1;
	}
	curl_easy_cleanup(h);
	return rv;
}

int
ping_send(const char *url, enum ping_kind kind, const char *rid,
    const char *body, size_t len, char **errstr)
{
	char   *full = ping_url(url, kind, rid);
	int64_t deadline = now_mono_ms() + PING_TIMEOUT_MS, left;
	int     attempt, rv = -1;

	*errstr = NULL;
	if (body != NULL && len > PING_BODY_MAX) {
		body += len - PING_BODY_MAX;
		len = PING_BODY_MAX;
	}
	for (attempt = 1; attempt <= PING_ATTEMPTS; attempt++) {
		if (attempt > 1)
			sleep_ms(PING_RETRY_PAUSE_MS);
		if ((left = deadline - now_mono_ms()) <= 0)
			break;
		free(*errstr);
		*errstr = NULL;
		if ((rv = ping_attempt(full, body, len, (long)left, errstr)) !=
		    1)
			break;
	}
	if (rv != 0 && *errstr == NULL)
		*errstr = xstrdup("no time left");
	free(full);
	return rv == 0 ? 0 : -1;
}
