/*
 * channel-http.c: webhooks over libcurl's multi interface.
 *
 * One multi handle lives as long as the channel, so its connection cache
 * keeps connections alive across batches; at most `concurrency` transfers
 * are in flight and at most that many connections are open to the host.
 * Easy handles are pooled too: options that never change are set once.
 */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "backoff.h"
#include "channel-http.h"
#include "channel-multi.h"
#include "channel.h"
#include "log.h"
#include "util.h"
#include "whsec.h"

/* Bytes of a response body kept for last_error. */
#define HTTP_ERROR_BODY 200

struct http_xfer {
	CURL              *easy;
	struct outbox_msg *msg; /* NULL when idle */
	struct curl_slist *headers;
	char               body[HTTP_ERROR_BODY];
	size_t             bodylen;
	char               retry_after[64];
	char               errbuf[CURL_ERROR_SIZE];
};

struct channel {
	const struct conf_channel *conf;
	CURLM                     *multi;
	struct http_xfer          *xfers;
	unsigned                   nxfers;
	struct whsec_keys          keys; /* none when keys.n is 0 */
};

char *
channel_http_signatures(const struct whsec_keys *k, const char *id,
    long long timestamp, const char *body, size_t bodylen)
{
	struct buf b;
	char       sig[CHANNEL_HTTP_SIG_LEN];
	size_t     i;

	buf_init(&b);
	for (i = 0; i < k->n; i++) {
		if (channel_http_sign(k->key[i], k->len[i], id, timestamp, body,
		        bodylen, sig) != 0) {
			buf_free(&b);
			return NULL;
		}
		buf_printf(&b, "%s%s", i > 0 ? " " : "", sig);
	}
	return buf_steal(&b);
}

int
channel_http_sign(const unsigned char *key, size_t keylen, const char *id,
    long long timestamp, const char *body, size_t bodylen, char *out)
{
	struct buf    b;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int  mdlen = 0;
	int           rc = -1;

	buf_init(&b);
	buf_printf(&b, "%s.%lld.", id, timestamp);
	buf_add(&b, body, bodylen);
	if (HMAC(EVP_sha256(), key, (int)keylen, (unsigned char *)b.data, b.len,
	        md, &mdlen) == NULL ||
	    mdlen != 32)
		goto out;
	memcpy(out, "v1,", 3);
	/* 32 bytes encode to 44 characters plus NUL: fits in 64. */
	EVP_EncodeBlock((unsigned char *)out + 3, md, (int)mdlen);
	rc = 0;
out:
	buf_free(&b);
	return rc;
}

enum send_result
channel_http_classify(long status)
{
	if (status >= 200 && status <= 299)
		return SEND_OK;
	if (status == 408 || status == 425 || status == 429 ||
	    (status >= 500 && status <= 599))
		return SEND_RETRY;
	return SEND_PERMANENT;
}

int
channel_http_check(const struct outbox_msg *msg, char **why)
{
	json_t      *j;
	json_error_t err;
	const char  *p;

	for (p = msg->message_id; *p != '\0'; p++) {
		if (!isalnum((unsigned char)*p) && strchr("-_.:", *p) == NULL) {
			*why = xstrdup("message_id has characters not allowed "
			               "in a header");
			return -1;
		}
	}
	if (*msg->message_id == '\0') {
		*why = xstrdup("message_id is empty");
		return -1;
	}
	/* Without JSON_DECODE_ANY jansson accepts only an object or array;
	 * "\u0000" inside a string is valid JSON (RFC 8259), and so is an
	 * integer beyond 64 bits (an id of 30 digits, an amount in wei):
	 * JSON_DECODE_INT_AS_REAL keeps jansson from refusing it.  The body
	 * goes out as the bytes stored. */
	j = json_loadb(msg->payload, msg->payload_len,
	    JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &err);
	if (j == NULL) {
		*why = xasprintf("payload is not a JSON object or array: "
		                 "line %d column %d: %s",
		    err.line, err.column, err.text);
		return -1;
	}
	json_decref(j);
	return 0;
}

char *
channel_http_error(long status, const char *body, size_t len)
{
	char *text, *e;

	if (len > HTTP_ERROR_BODY)
		len = HTTP_ERROR_BODY;
	text = peer_text(body, len, HTTP_ERROR_BODY);
	if (*text == '\0')
		e = xasprintf("http %ld", status);
	else
		e = xasprintf("http %ld: %s", status, text);
	free(text);
	return e;
}

static size_t
http_write_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct http_xfer *x = arg;
	size_t len = size * nmemb, room = sizeof x->body - x->bodylen;

	if (room > 0) {
		if (len < room)
			room = len;
		memcpy(x->body + x->bodylen, data, room);
		x->bodylen += room;
	}
	return len;
}

static size_t
http_header_cb(char *data, size_t size, size_t nitems, void *arg)
{
	struct http_xfer *x = arg;
	size_t            len = size * nitems;
	static const char name[] = "retry-after:";

	if (len > sizeof name - 1 &&
	    strncasecmp(data, name, sizeof name - 1) == 0) {
		data += sizeof name - 1;
		len -= sizeof name - 1;
		if (len >= sizeof x->retry_after)
			len = sizeof x->retry_after - 1;
		memcpy(x->retry_after, data, len);
		x->retry_after[len] = '\0';
	}
	return size * nitems;
}

static int
http_open(const struct conf_channel *conf, struct channel **out, char **errstr)
{
	struct channel   *ch;
	struct http_xfer *x;
	unsigned          i;
	long              conc;
	char             *err = NULL;

	ch = xcalloc(1, sizeof *ch);
	ch->conf = conf;
	ch->nxfers = conf->concurrency > 0 ? conf->concurrency : 1;
	conc = (long)ch->nxfers;

	if (conf->signing_secret != NULL && *conf->signing_secret != '\0' &&
	    whsec_keys(conf->signing_secret, &ch->keys, &err) != 0) {
		*errstr = xasprintf("signing secret%s%s: %s",
		    conf->signing_secret_file != NULL ? " file " : "",
		    conf->signing_secret_file != NULL
		        ? conf->signing_secret_file
		        : "",
		    err);
		free(err);
		goto fail;
	}

	if ((ch->multi = channel_multi_new(conf, conc, errstr)) == NULL)
		goto fail;

	ch->xfers = xcalloc(ch->nxfers, sizeof *ch->xfers);
	for (i = 0; i < ch->nxfers; i++) {
		x = &ch->xfers[i];
		if ((x->easy = channel_multi_easy(conf, CHANNEL_HTTP_PROTOCOLS,
		         x->errbuf, x, errstr)) == NULL)
			goto fail;
		curl_easy_setopt(x->easy, CURLOPT_USERAGENT,
		    PACKAGE_NAME "/" PACKAGE_VERSION);
		curl_easy_setopt(x->easy, CURLOPT_WRITEFUNCTION, http_write_cb);
		curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, x);
		curl_easy_setopt(
		    x->easy, CURLOPT_HEADERFUNCTION, http_header_cb);
		curl_easy_setopt(x->easy, CURLOPT_HEADERDATA, x);
		/* Redirects are not followed: a moved endpoint is a
		 * configuration error an operator must see. */
		curl_easy_setopt(x->easy, CURLOPT_FOLLOWLOCATION, 0L);
		if (conf->method != NULL && strcmp(conf->method, "POST") != 0)
			curl_easy_setopt(
			    x->easy, CURLOPT_CUSTOMREQUEST, conf->method);
	}
	*out = ch;
	return 0;

fail:
	channel_http_ops.close(ch);
	return -1;
}

static void
http_close(struct channel *ch)
{
	unsigned i;

	if (ch == NULL)
		return;
	for (i = 0; ch->xfers != NULL && i < ch->nxfers; i++) {
		if (ch->xfers[i].easy == NULL)
			continue;
		if (ch->xfers[i].msg != NULL)
			curl_multi_remove_handle(ch->multi, ch->xfers[i].easy);
		curl_easy_cleanup(ch->xfers[i].easy);
		curl_slist_free_all(ch->xfers[i].headers);
	}
	free(ch->xfers);
	if (ch->multi != NULL)
		curl_multi_cleanup(ch->multi);
	whsec_keys_free(&ch->keys);
	free(ch);
}

/* A header line, unless the configuration sets a header of that name. */
static struct curl_slist *
http_add_header(struct channel *ch, struct curl_slist *l, const char *name,
    const char *value)
{
	const char        *h;
	size_t             i, n = strlen(name);
	char              *line;
	struct curl_slist *nl;

	for (i = 0; i < ch->conf->nheaders; i++) {
		h = ch->conf->headers[i];
		if (strncasecmp(h, name, n) == 0 && h[n] == ':')
			return l;
	}
	line = xasprintf("%s: %s", name, value);
	nl = curl_slist_append(l, line);
	free(line);
	return nl;
}

static struct curl_slist *
http_headers(struct channel *ch, const struct outbox_msg *msg)
{
	struct curl_slist *l = NULL;
	char               ts[32], *sig;
	long long          now = (long long)time(NULL);
	size_t             i;

	snprintf(ts, sizeof ts, "%lld", now);
	l = http_add_header(ch, l, "Content-Type", "application/json");
	l = http_add_header(ch, l, "Idempotency-Key", msg->message_id);
	l = http_add_header(ch, l, "webhook-id", msg->message_id);
	l = http_add_header(ch, l, "webhook-timestamp", ts);
	if (ch->keys.n > 0 &&
	    (sig = channel_http_signatures(&ch->keys, msg->message_id, now,
	         msg->payload, msg->payload_len)) != NULL) {
		l = http_add_header(ch, l, "webhook-signature", sig);
		free(sig);
	}
	/* No "Expect: 100-continue" round trip for larger bodies. */
	l = curl_slist_append(l, "Expect:");
	for (i = 0; i < ch->conf->nheaders; i++)
		l = curl_slist_append(l, ch->conf->headers[i]);
	return l;
}

static int http_check(
    const struct conf_channel *, const struct outbox_msg *, char **);

/* The payload must be sendable at all; then an idle slot. */
static void *
http_prepare(struct channel *ch, struct outbox_msg *msg)
{
	unsigned i;
	char    *why = NULL;

	if (http_check(ch->conf, msg, &why) != 0) {
		msg->result = SEND_PERMANENT;
		msg->error = why;
		return NULL;
	}
	for (i = 0; i < ch->nxfers; i++) {
		if (ch->xfers[i].msg == NULL)
			return &ch->xfers[i];
	}
	return NULL;
}

static int
http_start(struct channel *ch, void *slot, struct outbox_msg *msg)
{
	struct http_xfer *x = slot;
	CURLMcode         mc;

	x->bodylen = 0;
	x->retry_after[0] = '\0';
	x->errbuf[0] = '\0';
	x->headers = http_headers(ch, msg);
	curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, x->headers);
	curl_easy_setopt(x->easy, CURLOPT_POSTFIELDS, msg->payload);
	curl_easy_setopt(
	    x->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)msg->payload_len);
	if ((mc = curl_multi_add_handle(ch->multi, x->easy)) != CURLM_OK) {
		msg->result = SEND_RETRY;
		msg->error = xasprintf("http: %s", curl_multi_strerror(mc));
		curl_slist_free_all(x->headers);
		x->headers = NULL;
		return -1;
	}
	x->msg = msg;
	return 0;
}

static struct outbox_msg *
http_finish(struct channel *ch, void *slot, CURLcode cc)
{
	struct http_xfer  *x = slot;
	struct outbox_msg *msg = x->msg;
	long               status = 0;
	int64_t            ms;

	curl_multi_remove_handle(ch->multi, x->easy);
	curl_slist_free_all(x->headers);
	x->headers = NULL;
	x->msg = NULL;

	if (cc != CURLE_OK) {
		/* Connection errors and timeouts are transient. */
		msg->result = SEND_RETRY;
		msg->error = xasprintf("http: %s",
		    x->errbuf[0] != '\0' ? x->errbuf : curl_easy_strerror(cc));
		return msg;
	}
	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
	msg->status_code = status > 0 && status < 1000 ? (int)status : 0;
	msg->result = channel_http_classify(status);
	if (msg->result != SEND_OK)
		msg->error = channel_http_error(status, x->body, x->bodylen);
	if (msg->result == SEND_RETRY && x->retry_after[0] != '\0' &&
	    backoff_parse_retry_after(x->retry_after, time(NULL), &ms) == 0)
		msg->retry_after_ms = ms;
	return msg;
}

static const struct channel_multi_ops http_multi_ops = {
	.prepare = http_prepare,
	.cancel = NULL,
	.start = http_start,
	.finish = http_finish,
};

static void
http_send(struct channel *ch, struct outbox_msg **msgs, size_t n,
    struct send_ctl *ctl)
{
	channel_multi_send(
	    ch, ch->multi, ch->nxfers, &http_multi_ops, msgs, n, ctl);
}

static void
http_stream(struct channel *ch, struct send_ctl *ctl)
{
	channel_multi_stream(ch, ch->multi, ch->nxfers, &http_multi_ops, ctl);
}

static void
http_wakeup(struct channel *ch)
{
	curl_multi_wakeup(ch->multi);
}

static int
http_check(
    const struct conf_channel *cc, const struct outbox_msg *msg, char **why)
{
	/* A body over max_size is never sent: FAILED with the reason. */
	if (cc->max_size > 0 && msg->payload_len > (size_t)cc->max_size) {
		*why = xasprintf("payload too large: %zu bytes, max_size %lld",
		    msg->payload_len, cc->max_size);
		return -1;
	}
	return channel_http_check(msg, why);
}

const struct channel_ops channel_http_ops = {
	.open = http_open,
	.send = http_send,
	.stream = http_stream,
	.wakeup = http_wakeup,
	.close = http_close,
	.check = http_check,
};
