/*
 * channel-multi.c: the libcurl multi interface as the smtp and http
 * channels use it.
 *
 * One multi handle lives as long as the channel, so its connection cache
 * keeps connections alive across batches; each slot is a pooled easy
 * handle, so at most nslots transfers are in flight.  The channel says how
 * a message becomes a transfer and how a transfer's end becomes a result
 * (struct channel_multi_ops); the loop here owns the order of the send_ctl
 * hooks, rate pacing and stopping, the same for every channel.
 */
#include "config.h"

#include <stdlib.h>

#include <curl/curl.h>

#include "channel-multi.h"
#include "curlutil.h"
#include "util.h"

/* Longest wait in curl_multi_poll, so a stop request is seen promptly. */
#define CHANNEL_MULTI_POLL_MS 100

CURLM *
channel_multi_new(const struct conf_channel *conf, long conns, char **errstr)
{
	CURLM *multi;

	if ((multi = curl_multi_init()) == NULL) {
		*errstr =
		    xasprintf("channel %s: curl_multi_init failed", conf->name);
		return NULL;
	}
	curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, conns);
	curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, conns);
	curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, conns);
	return multi;
}

CURL *
channel_multi_easy(const struct conf_channel *conf, const char *protocols,
    char *errbuf, void *slot, char **errstr)
{
	CURL *easy;

	if ((easy = curlutil_easy(conf->url, protocols, (long)conf->timeout_ms,
	         errbuf)) == NULL) {
		*errstr =
		    xasprintf("channel %s: curl_easy_init failed", conf->name);
		return NULL;
	}
	curl_easy_setopt(easy, CURLOPT_PRIVATE, slot);
	/* Only this bundle, not the system store besides (libcurl keeps its
	 * built-in CAPATH next to a CAINFO otherwise). */
	if (conf->tls_ca != NULL) {
		curl_easy_setopt(easy, CURLOPT_CAINFO, conf->tls_ca);
		curl_easy_setopt(easy, CURLOPT_CAPATH, (char *)NULL);
	}
	return easy;
}

/*
 * Start msg: prepare, ask before_send, start.  Returns 1 when it is in
 * flight, else 0 (after_send already called if it has a result).
 */
static int
channel_multi_start(struct channel *ch, const struct channel_multi_ops *ops,
    struct outbox_msg *msg, struct send_ctl *ctl)
{
	void *slot;

	msg->result = SEND_NONE;
	if ((slot = ops->prepare(ch, msg)) == NULL) {
		ctl->after_send(ctl, msg);
		return 0;
	}
	if (ctl->before_send(ctl, msg) != 0) {
		if (ops->cancel != NULL)
			ops->cancel(ch, slot);
		return 0;
	}
	if (ops->start(ch, slot, msg) != 0) {
		ctl->after_send(ctl, msg);
		return 0;
	}
	return 1;
}

/* Finish every transfer libcurl reports done; returns how many. */
static unsigned
channel_multi_reap(struct channel *ch, CURLM *multi,
    const struct channel_multi_ops *ops, struct send_ctl *ctl)
{
	struct outbox_msg *msg;
	CURLMsg           *m;
	void              *slot;
	unsigned           done = 0;
	int                left;

	while ((m = curl_multi_info_read(multi, &left)) != NULL) {
		if (m->msg != CURLMSG_DONE)
			continue;
		slot = NULL;
		curl_easy_getinfo(
		    m->easy_handle, CURLINFO_PRIVATE, (char **)&slot);
		msg = ops->finish(ch, slot, m->data.result);
		done++;
		ctl->after_send(ctl, msg);
	}
	return done;
}

/* Where channel_multi_run takes its messages: an array (msgs, n), or
 * ctl->next when msgs is NULL. */
struct channel_multi_src {
	struct outbox_msg **msgs;
	size_t              n, next;
};

static struct outbox_msg *
channel_multi_next(struct channel_multi_src *src, struct send_ctl *ctl)
{
	if (src->msgs == NULL)
		return ctl->next(ctl);
	return src->next < src->n ? src->msgs[src->next++] : NULL;
}

/*
 * Start messages from src while a slot is free, each not before its
 * not_before_ms, and drive the transfers, until src has nothing more and
 * nothing is in flight, or the stop with nothing in flight.  Returns the
 * message taken from src but never started (held back by its rate), or
 * NULL.
 */
static struct outbox_msg *
channel_multi_run(struct channel *ch, CURLM *multi, unsigned nslots,
    const struct channel_multi_ops *ops, struct channel_multi_src *src,
    struct send_ctl *ctl)
{
	struct outbox_msg *msg, *held = NULL;
	unsigned           inflight = 0, done;
	int                running, wait_ms;
	int64_t            now;

	for (;;) {
		wait_ms = CHANNEL_MULTI_POLL_MS;
		while (!*ctl->stop && inflight < nslots) {
			if (held == NULL &&
			    (held = channel_multi_next(src, ctl)) == NULL)
				break;
			if (held->not_before_ms != 0 &&
			    (now = now_mono_ms()) < held->not_before_ms) {
				if (held->not_before_ms - now < wait_ms)
					wait_ms =
					    (int)(held->not_before_ms - now);
				break;
			}
			msg = held;
			held = NULL;
			inflight += channel_multi_start(ch, ops, msg, ctl);
		}
		if (inflight == 0 && (held == NULL || *ctl->stop))
			break;

		curl_multi_perform(multi, &running);
		done = channel_multi_reap(ch, multi, ops, ctl);
		inflight -= done;
		/* A finished transfer frees a slot: start the next message
		 * before waiting, or its connection idles until the poll
		 * times out.  A stream's wakeup ends the wait too. */
		if (done == 0)
			curl_multi_poll(
			    multi, NULL, 0, wait_ms > 0 ? wait_ms : 0, NULL);
	}
	return held;
}

void
channel_multi_send(struct channel *ch, CURLM *multi, unsigned nslots,
    const struct channel_multi_ops *ops, struct outbox_msg **msgs, size_t n,
    struct send_ctl *ctl)
{
	struct channel_multi_src src = { msgs, n, 0 };
	struct outbox_msg       *held;

	/* Anything never started stays SEND_NONE: back to PENDING. */
	if ((held = channel_multi_run(ch, multi, nslots, ops, &src, ctl)) !=
	    NULL)
		held->result = SEND_NONE;
	for (; src.next < n; src.next++)
		msgs[src.next]->result = SEND_NONE;
}

void
channel_multi_stream(struct channel *ch, CURLM *multi, unsigned nslots,
    const struct channel_multi_ops *ops, struct send_ctl *ctl)
{
	struct channel_multi_src src = { NULL, 0, 0 };
	struct outbox_msg       *held;

	if ((held = channel_multi_run(ch, multi, nslots, ops, &src, ctl)) !=
	    NULL)
		held->result = SEND_NONE;
}
