/* channel.c: the channel table and default send hooks. */
#include "config.h"

#include <stddef.h>

#include "channel.h"

const struct channel_ops *
channel_ops_for(enum channel_type type)
{
	switch (type) {
	case CHANNEL_SMTP:
		return &channel_smtp_ops;
	case CHANNEL_HTTP:
		return &channel_http_ops;
	case CHANNEL_AMQP:
#ifdef HAVE_AMQP
		return &channel_amqp_ops;
#else
		return NULL;
#endif
	}
	return NULL;
}
