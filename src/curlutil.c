/* curlutil.c: libcurl easy handles with cronguard's options (curlutil.h). */
#include "config.h"

#include <curl/curl.h>

#include "curlutil.h"

CURL *
curlutil_easy(
    const char *url, const char *protocols, long timeout_ms, char *errbuf)
{
	CURL *easy;

	if ((easy = curl_easy_init()) == NULL)
		return NULL;
	curl_easy_setopt(easy, CURLOPT_URL, url);
	curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, protocols);
	curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, errbuf);
	return easy;
}
