/* channel-http.h: pieces of the HTTP channel exposed for unit tests. */
#ifndef CRONGUARD_CHANNEL_HTTP_H
#define CRONGUARD_CHANNEL_HTTP_H

#include <stddef.h>

#include "channel.h"
#include "curlutil.h"
#include "whsec.h"

/* What an http channel may speak (curlutil.h). */
#define CHANNEL_HTTP_PROTOCOLS CURLUTIL_HTTP

/* The webhook-signature value for k: one "v1,..." per key, in the file's
 * order, separated by single spaces (Standard Webhooks).  Allocated, or
 * NULL if libcrypto fails. */
char *channel_http_signatures(const struct whsec_keys *k, const char *id,
    long long timestamp, const char *body, size_t bodylen);

/* "v1,<base64 HMAC-SHA256(key, "id.timestamp.body")>" into out (at least
 * CHANNEL_HTTP_SIG_LEN bytes).  Returns 0, or -1 if libcrypto fails. */
#define CHANNEL_HTTP_SIG_LEN 64
int channel_http_sign(const unsigned char *key, size_t keylen, const char *id,
    long long timestamp, const char *body, size_t bodylen, char *out);

/* cronguard-outbox(7), RETRIES, for an HTTP status: 2xx SEND_OK; 408, 425, 429
 * and 5xx SEND_RETRY; anything else SEND_PERMANENT. */
enum send_result channel_http_classify(long status);

/* Whether a message can be sent at all: the payload must be a JSON object
 * or array and the message id safe in a header.  Returns 0, or -1 with
 * *why allocated. */
int channel_http_check(const struct outbox_msg *, char **why);

/* last_error for an HTTP answer: "http NNN: " and at most 200 bytes of
 * the body, control characters and invalid UTF-8 replaced.  Allocated. */
char *channel_http_error(long status, const char *body, size_t len);

#endif
