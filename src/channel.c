/* channel.c: the channel table and default send hooks. */
#include "config.h"

#include <stddef.h>
#include <string.h>
#include <time.h>

#include "channel.h"
#include "util.h"

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

int
channel_check(
    const struct conf_channel *cc, const char *payload, size_t len, char **why)
{
	const struct channel_ops *ops = channel_ops_for(cc->type);
	struct outbox_msg         msg;

	if (ops == NULL || ops->check == NULL)
		return 0;
	memset(&msg, 0, sizeof msg);
	/* Any well-formed id: the row gets its own when it is inserted. */
	uuid_v4(msg.message_id);
	msg.channel = cc->name;
	msg.payload = (char *)payload;
	msg.payload_len = len;
	msg.created_at_s = time(NULL);
	return ops->check(cc, &msg, why);
}
