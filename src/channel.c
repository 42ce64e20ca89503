/* channel.c: the table of channels, from conf.h's CHANNEL_TYPES. */
#include "config.h"

#include <stddef.h>
#include <string.h>
#include <time.h>

#include "channel.h"
#include "util.h"

#define CHANNEL_TABLE_ROW_(u, l) [CHANNEL_##u] = CHANNEL_OPS_##u,
static const struct channel_ops *const channel_table[CHANNEL_NTYPES] = {
	CHANNEL_TYPES(CHANNEL_TABLE_ROW_)
};

const struct channel_ops *
channel_ops_for(enum channel_type type)
{
	return (unsigned)type < CHANNEL_NTYPES ? channel_table[type] : NULL;
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
