/* channel-amqp.h: the amqp channel's testable parts. */
#ifndef CRONGUARD_CHANNEL_AMQP_H
#define CRONGUARD_CHANNEL_AMQP_H

#include <stdbool.h>

#include "channel.h"

/* The routing key for msg from a routing_key template ({event_type},
 * {ordering_key}, {payload.NAME}; NULL = "{event_type}"); allocated. */
char *channel_amqp_routing_key(const char *tmpl, const struct outbox_msg *);

/* Open a connection as a send would (TLS, login, channel, confirms)
 * within cc->timeout_ms, publish nothing, close it: 0, or -1 with
 * *errstr allocated and *auth set when the broker refused the login.
 * For "cronguard doctor". */
int channel_amqp_probe(
    const struct conf_channel *cc, bool *auth, char **errstr);

#endif
