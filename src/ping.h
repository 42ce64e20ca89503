/*
 * ping.h: ping URLs with the healthchecks.io conventions (job keys
 * ping_url, ping_url_file): URL/start when the job starts, URL on
 * success, URL/fail on failure, timeout or incident, each with
 * ?rid=RUN_UUID so that the service pairs start and end.
 */
#ifndef CRONGUARD_PING_H
#define CRONGUARD_PING_H

#include <stddef.h>

/* One ping, all its attempts included, takes at most this long: a dead
 * ping server delays a run by at most twice this (start and end). */
#define PING_TIMEOUT_MS 5000
/* Attempts per ping (the first and two retries) while time is left. */
#define PING_ATTEMPTS 3
/* The fail ping's body: the last this many bytes of the captured output
 * (healthchecks.io keeps 100 kB of a ping body). */
#define PING_BODY_MAX ((size_t)100000)

enum ping_kind { PING_START, PING_SUCCESS, PING_FAIL };

/*
 * The URL of a ping: url with "/start" or "/fail" appended to its path
 * (none on success) and "rid=RID" added to its query.  Allocated.
 */
char *ping_url(const char *url, enum ping_kind, const char *rid);

/*
 * Send one ping: GET, or POST of body (len bytes, may hold NUL; the last
 * PING_BODY_MAX of them) when body is not NULL.  A transport error or a
 * 5xx answer is tried again while attempts and time are left; any other
 * answer than 2xx is final.  Returns 0, or -1 with *errstr (allocated;
 * it never holds the URL, which may carry a secret).
 */
int ping_send(const char *url, enum ping_kind, const char *rid,
    const char *body, size_t len, char **errstr);

#endif
