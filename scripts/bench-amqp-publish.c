/*
 * bench-amqp-publish.c: the baselines of scripts/bench-amqp, with no
 * database.  Publishes N messages shaped like the bench's outbox rows
 * (about 240 bytes of JSON, persistent, the same properties and headers
 * as cronguard's amqp channel) to QUEUE through the default exchange with
 * publisher confirms, waiting for the confirms every B messages: B = the
 * dispatch batch is the broker's ceiling for cronguard's batching, B = 1
 * is a relay that waits for each message's confirm.  Prints the seconds
 * taken; exits non-zero on any nack, return or error.
 *
 *   bench-amqp-publish PORT QUEUE N B
 */
#include <amqp.h>
#include <amqp_tcp_socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
die(const char *what)
{
	fprintf(stderr, "bench-amqp-publish: %s\n", what);
	return 1;
}

/* Acks seen, by delivery tag (1..N), and how many from 1 are all acked. */
static unsigned char *acked;
static uint64_t       acked_upto;

/* Wait until every tag up to last is acked; -1 on a nack or error.
 * Acks may cover several tags (multiple) and may come out of order. */
static int
await_confirms(amqp_connection_state_t c, uint64_t last)
{
	amqp_frame_t      f;
	amqp_basic_ack_t *ack;
	uint64_t          t;

	while (acked_upto < last) {
		if (amqp_simple_wait_frame(c, &f) != AMQP_STATUS_OK)
			return -1;
		if (f.frame_type != AMQP_FRAME_METHOD)
			continue;
		if (f.payload.method.id != AMQP_BASIC_ACK_METHOD)
			return -1;
		ack = f.payload.method.decoded;
		if (ack->delivery_tag > last)
			return -1;
		t = ack->multiple ? acked_upto + 1 : ack->delivery_tag;
		for (; t <= ack->delivery_tag; t++)
			acked[t] = 1;
		while (acked_upto < last && acked[acked_upto + 1])
			acked_upto++;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	amqp_connection_state_t c;
	amqp_socket_t          *s;
	amqp_basic_properties_t p;
	amqp_table_entry_t      h[1];
	amqp_rpc_reply_t        r;
	char                    body[512], id[48];
	long                    n, b, i;
	int                     len;
	double                  t0;

	if (argc != 5)
		return die("usage: bench-amqp-publish PORT QUEUE N B");
	n = strtol(argv[3], NULL, 10);
	b = strtol(argv[4], NULL, 10);
	if (n <= 0 || b <= 0)
		return die("N and B must be positive");
	if ((acked = calloc((size_t)n + 2, 1)) == NULL)
		return die("out of memory");
	c = amqp_new_connection();
	s = amqp_tcp_socket_new(c);
	if (s == NULL ||
	    amqp_socket_open(s, "127.0.0.1", atoi(argv[1])) != AMQP_STATUS_OK)
		return die("cannot connect");
	r = amqp_login(c, "/", 0, 131072, 0, AMQP_SASL_METHOD_PLAIN, "guest",
	    "guest");
	if (r.reply_type != AMQP_RESPONSE_NORMAL)
		return die("login failed");
	amqp_channel_open(c, 1);
	if (amqp_get_rpc_reply(c).reply_type != AMQP_RESPONSE_NORMAL)
		return die("channel.open failed");
	amqp_confirm_select(c, 1);
	if (amqp_get_rpc_reply(c).reply_type != AMQP_RESPONSE_NORMAL)
		return die("confirm.select failed");

	t0 = now_s();
	for (i = 1; i <= n; i++) {
		len = snprintf(body, sizeof body,
		    "{\"data\": {\"note\": \"%060d\", \"amount_cents\": %ld, "
		    "\"currency\": \"EUR\", \"customer\": "
		    "\"customer-%ld@example.com\", \"order_id\": %ld}, "
		    "\"timestamp\": \"2026-11-29T10:00:00Z\", "
		    "\"type\": \"order.paid\"}",
		    0, 1000 + i % 9000, i, i);
		snprintf(id, sizeof id, "00000000-0000-0000-0000-%012ld", i);
		memset(&p, 0, sizeof p);
		p._flags = AMQP_BASIC_CONTENT_TYPE_FLAG |
		    AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_MESSAGE_ID_FLAG |
		    AMQP_BASIC_TYPE_FLAG | AMQP_BASIC_TIMESTAMP_FLAG |
		    AMQP_BASIC_HEADERS_FLAG;
		p.content_type = amqp_cstring_bytes("application/json");
		p.delivery_mode = AMQP_DELIVERY_PERSISTENT;
		p.message_id = amqp_cstring_bytes(id);
		p.type = amqp_cstring_bytes("order.paid");
		p.timestamp = (uint64_t)time(NULL);
		h[0].key = amqp_cstring_bytes("attempts");
		h[0].value.kind = AMQP_FIELD_KIND_U32;
		h[0].value.value.u32 = 1;
		p.headers.num_entries = 1;
		p.headers.entries = h;
		if (amqp_basic_publish(c, 1, amqp_empty_bytes,
		        amqp_cstring_bytes(argv[2]), 1, 0, &p,
		        (amqp_bytes_t){ (size_t)len, body }) != AMQP_STATUS_OK)
			return die("publish failed");
		if ((i % b == 0 || i == n) && await_confirms(c, (uint64_t)i) != 0)
			return die("a confirm failed (nack, return or error)");
	}
	printf("%.3f\n", now_s() - t0);
	amqp_channel_close(c, 1, AMQP_REPLY_SUCCESS);
	amqp_connection_close(c, AMQP_REPLY_SUCCESS);
	amqp_destroy_connection(c);
	return 0;
}
