/*
 * curlutil.h: the one way cronguard makes a libcurl transfer: below both
 * wings, for the channels (channel-multi.c), the pings (ping.c), the
 * incident alert (incident.c) and doctor's probes.
 */
#ifndef CRONGUARD_CURLUTIL_H
#define CRONGUARD_CURLUTIL_H

#include <curl/curl.h>

/* What a webhook, a ping and the incident alert may speak: never
 * file://, ftp:// or the rest libcurl supports. */
#define CURLUTIL_HTTP "http,https"

/*
 * An easy handle for url that speaks only protocols ("http,https"), with
 * timeout_ms for the connection and the whole transfer, no signals and
 * errbuf (CURL_ERROR_SIZE bytes) as the error buffer: what every libcurl
 * transfer of cronguard sets (the channels, the incident alert).  NULL
 * when curl_easy_init fails.
 */
CURL *curlutil_easy(
    const char *url, const char *protocols, long timeout_ms, char *errbuf);

#endif
