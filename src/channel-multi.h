/*
 * channel-multi.h: what the libcurl channels (smtp, http) share: a multi
 * handle capped at the channel's connections, easy handles with the options
 * every channel sets, and the loop that drives a batch through them.
 */
#ifndef CRONGUARD_CHANNEL_MULTI_H
#define CRONGUARD_CHANNEL_MULTI_H

#include <stddef.h>

#include <curl/curl.h>

#include "channel.h"
#include "conf.h"

/*
 * A multi handle that keeps at most conns connections open, all to the
 * one host.  Returns it (the caller cleans it up), or NULL with *errstr
 * allocated.
 */
CURLM *channel_multi_new(
    const struct conf_channel *, long conns, char **errstr);

/*
 * An easy handle with the options every channel sets: curlutil_easy
 * for conf->url limited to protocols ("smtp,smtps") with the channel
 * timeout, slot as CURLOPT_PRIVATE (channel_multi_send hands it back
 * to finish), and conf->tls_ca, if set, as the only CA bundle.  Returns
 * it (the caller cleans it up), or NULL with *errstr allocated.
 */
CURL *channel_multi_easy(const struct conf_channel *, const char *protocols,
    char *errbuf, void *slot, char **errstr);

/* How one channel prepares, starts and finishes a transfer on a slot. */
struct channel_multi_ops {
	/* Make msg ready to send on an idle slot (there is one: fewer than
	 * nslots transfers are in flight) and return the slot; or return
	 * NULL with msg->result and msg->error set when the message cannot
	 * be sent at all. */
	void *(*prepare)(struct channel *, struct outbox_msg *);
	/* Give back a prepared slot that before_send refused.  May be NULL
	 * when prepare holds nothing. */
	void (*cancel)(struct channel *, void *slot);
	/* Add the slot's transfer for msg to the multi handle.  Returns 0, or
	 * -1 with msg->result and msg->error set and the slot idle again. */
	int (*start)(struct channel *, void *slot, struct outbox_msg *);
	/* The transfer on slot ended with cc: take it off the multi handle,
	 * set its message's result (and error), leave the slot idle, and
	 * return the message. */
	struct outbox_msg *(*finish)(struct channel *, void *slot, CURLcode);
};

/*
 * channel_ops.send for a libcurl channel: send msgs[0..n-1], at most
 * nslots at once, each not before its not_before_ms, through ops, calling
 * ctl->before_send before starting a message and ctl->after_send once its
 * result is known.  After *ctl->stop nothing new starts and what is in
 * flight finishes; messages never started are left SEND_NONE.
 */
void channel_multi_send(struct channel *, CURLM *, unsigned nslots,
    const struct channel_multi_ops *, struct outbox_msg **msgs, size_t n,
    struct send_ctl *ctl);

/*
 * channel_ops.stream for a libcurl channel: as channel_multi_send, with
 * the messages ctl->next hands out, until it has none and nothing is in
 * flight.  curl_multi_wakeup on multi (channel_ops.wakeup) makes it ask
 * next again while it waits on its transfers.
 */
void channel_multi_stream(struct channel *, CURLM *, unsigned nslots,
    const struct channel_multi_ops *, struct send_ctl *ctl);

#endif
