/* channel-amqp.h: the amqp channel's testable parts. */
#ifndef CRONGUARD_CHANNEL_AMQP_H
#define CRONGUARD_CHANNEL_AMQP_H

#include "channel.h"

/* The routing key for msg from a routing_key template ({event_type},
 * {ordering_key}, {payload.NAME}; NULL = "{event_type}"); allocated. */
char *channel_amqp_routing_key(const char *tmpl, const struct outbox_msg *);

#endif
