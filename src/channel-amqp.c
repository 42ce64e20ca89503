/*
 * channel-amqp.c: publish outbox rows to an AMQP 0-9-1 broker (RabbitMQ)
 * with publisher confirms, through rabbitmq-c.
 *
 * One connection and one channel per process, opened on first use and
 * reopened after any error.  A batch is published whole, then its confirms
 * are awaited: a row is SEND_OK only on the broker's ack; a nack, or a
 * basic.return of an unroutable message published with mandatory, is a
 * failure; a broken connection or a confirm that does not come within the
 * timeout is transient.  connection.blocked (a memory or disk alarm) stops
 * publishing: every message without its confirm goes back as SEND_NONE,
 * with no attempt counted, and the connection is kept until the broker
 * unblocks it.  A refused login is the channel's failure, not a
 * message's: the first message goes back SEND_NONE with the error (a
 * circuit failure, no attempt counted; see channel.h) and an incident is
 * reported once until a login works again.
 */
#include "config.h"

#include <amqp.h>
#include <amqp_ssl_socket.h>
#include <amqp_tcp_socket.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "channel-amqp.h"
#include "channel.h"
#include "incident.h"
#include "log.h"
#include "util.h"

#define AMQP_CHAN 1

struct channel {
	const struct conf_channel  *conf;
	char                       *urlbuf; /* owned by url */
	struct amqp_connection_info url;
	amqp_connection_state_t     conn; /* NULL = not connected */
	bool                        blocked;
	bool                        refused_reported; /* incident sent */
	uint64_t                    next_tag; /* delivery tag of next publish */
};

static void
amqp_ms_tv(int64_t ms, struct timeval *tv)
{
	if (ms < 0)
		ms = 0;
	tv->tv_sec = (time_t)(ms / 1000);
	tv->tv_usec = (suseconds_t)(ms % 1000) * 1000;
}

static char *
amqp_reply_error(amqp_rpc_reply_t r, const char *what)
{
	amqp_connection_close_t *cc;
	amqp_channel_close_t    *ch;

	switch (r.reply_type) {
	case AMQP_RESPONSE_NORMAL:
		return xasprintf("%s: ok", what);
	case AMQP_RESPONSE_NONE:
		return xasprintf("%s: no reply", what);
	case AMQP_RESPONSE_LIBRARY_EXCEPTION:
		return xasprintf(
		    "%s: %s", what, amqp_error_string2(r.library_error));
	case AMQP_RESPONSE_SERVER_EXCEPTION:
		if (r.reply.id == AMQP_CONNECTION_CLOSE_METHOD) {
			cc = r.reply.decoded;
			return xasprintf("%s: connection closed: %u %.*s", what,
			    cc->reply_code, (int)cc->reply_text.len,
			    (const char *)cc->reply_text.bytes);
		}
		if (r.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
			ch = r.reply.decoded;
			return xasprintf("%s: channel closed: %u %.*s", what,
			    ch->reply_code, (int)ch->reply_text.len,
			    (const char *)ch->reply_text.bytes);
		}
		return xasprintf(
		    "%s: server method 0x%08x", what, (unsigned)r.reply.id);
	}
	return xasprintf("%s: unknown reply", what);
}

static void
amqp_disconnect(struct channel *ch)
{
	if (ch->conn == NULL)
		return;
	/* No goodbye handshake: the connection may be the broken one. */
	amqp_destroy_connection(ch->conn);
	ch->conn = NULL;
	ch->blocked = false;
}

/* The broker blocked (a memory or disk alarm, with its reason) or
 * unblocked the connection: logged once per change. */
static void
amqp_set_blocked(struct channel *ch, bool on, amqp_bytes_t reason)
{
	char *r;

	if (on == ch->blocked)
		return;
	ch->blocked = on;
	if (!on) {
		log_kv(LOG_INFO, "amqp_unblocked", "channel", ch->conf->name,
		    NULL);
		return;
	}
	r = xstrndup(reason.bytes, reason.len);
	log_kv(LOG_WARN, "amqp_blocked", "channel", ch->conf->name, "reason", r,
	    NULL);
	free(r);
}

/* Connect, log in, open the channel, select confirms.  Returns 0, or -1
 * with *errstr; *auth set when the broker refused the credentials. */
/* Whether a connection.close reply code refuses this login or vhost
 * (403 ACCESS_REFUSED, 530 NOT_ALLOWED: an unknown vhost or one the user
 * may not open): a channel failure that no retry of a message cures, so
 * it costs no attempt, like a refused password. */
static bool
amqp_refused_code(uint16_t code)
{
	return code == AMQP_ACCESS_REFUSED || code == AMQP_NOT_ALLOWED;
}

static int
amqp_connect(struct channel *ch, bool *auth, char **errstr)
{
	const struct conf_channel *cc = ch->conf;
	amqp_socket_t             *sock;
	amqp_rpc_reply_t           r;
	amqp_table_entry_t         cap[3], props[1];
	amqp_table_t               captab, proptab;
	struct timeval             tv;
	const char                *user, *pass;
	int                        rc;

	*auth = false;
	if ((ch->conn = amqp_new_connection()) == NULL) {
		*errstr = xstrdup("amqp: out of memory");
		return -1;
	}
	if (ch->url.ssl) {
		sock = amqp_ssl_socket_new(ch->conn);
		if (sock != NULL && cc->tls_ca != NULL &&
		    amqp_ssl_socket_set_cacert(sock, cc->tls_ca) !=
		        AMQP_STATUS_OK) {
			*errstr = xasprintf("amqp: cannot load %s", cc->tls_ca);
			goto fail;
		}
		if (sock != NULL) {
			amqp_ssl_socket_set_verify_peer(sock, 1);
			amqp_ssl_socket_set_verify_hostname(sock, 1);
		}
	} else
		sock = amqp_tcp_socket_new(ch->conn);
	if (sock == NULL) {
		*errstr = xstrdup("amqp: cannot create a socket");
		goto fail;
	}
	amqp_ms_tv(cc->timeout_ms, &tv);
	if ((rc = amqp_socket_open_noblock(
	         sock, ch->url.host, ch->url.port, &tv)) != AMQP_STATUS_OK) {
		*errstr = xasprintf("amqp: connect to %s:%d: %s", ch->url.host,
		    ch->url.port, amqp_error_string2(rc));
		goto fail;
	}
	amqp_set_rpc_timeout(ch->conn, &tv);
	amqp_set_handshake_timeout(ch->conn, &tv);
	cap[0].key = amqp_cstring_bytes("connection.blocked");
	cap[0].value.kind = AMQP_FIELD_KIND_BOOLEAN;
	cap[0].value.value.boolean = 1;
	cap[1].key = amqp_cstring_bytes("publisher_confirms");
	cap[1].value.kind = AMQP_FIELD_KIND_BOOLEAN;
	cap[1].value.value.boolean = 1;
	/* A refused login then says so (403) rather than closing. */
	cap[2].key = amqp_cstring_bytes("authentication_failure_close");
	cap[2].value.kind = AMQP_FIELD_KIND_BOOLEAN;
	cap[2].value.value.boolean = 1;
	captab.num_entries = 3;
	captab.entries = cap;
	props[0].key = amqp_cstring_bytes("capabilities");
	props[0].value.kind = AMQP_FIELD_KIND_TABLE;
	props[0].value.value.table = captab;
	proptab.num_entries = 1;
	proptab.entries = props;
	user = cc->username != NULL ? cc->username : ch->url.user;
	pass = cc->password != NULL ? cc->password : ch->url.password;
	r = amqp_login_with_properties(ch->conn, ch->url.vhost, 0, 131072, 0,
	    &proptab, AMQP_SASL_METHOD_PLAIN, user, pass);
	if (r.reply_type != AMQP_RESPONSE_NORMAL) {
		*auth = (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
		            r.library_error == AMQP_STATUS_SOCKET_CLOSED) ||
		    (r.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION &&
		        r.reply.id == AMQP_CONNECTION_CLOSE_METHOD &&
		        amqp_refused_code(
		            ((amqp_connection_close_t *)r.reply.decoded)
		                ->reply_code));
		*errstr = amqp_reply_error(r, "amqp: login");
		goto fail;
	}
	amqp_channel_open(ch->conn, AMQP_CHAN);
	if ((r = amqp_get_rpc_reply(ch->conn)).reply_type !=
	    AMQP_RESPONSE_NORMAL) {
		*errstr = amqp_reply_error(r, "amqp: channel.open");
		goto fail;
	}
	amqp_confirm_select(ch->conn, AMQP_CHAN);
	if ((r = amqp_get_rpc_reply(ch->conn)).reply_type !=
	    AMQP_RESPONSE_NORMAL) {
		*errstr = amqp_reply_error(r, "amqp: confirm.select");
		goto fail;
	}
	ch->next_tag = 1;
	ch->blocked = false;
	return 0;

fail:
	amqp_disconnect(ch);
	return -1;
}

/* The payload's top-level string field name[0..n), parsed with jansson;
 * NULL when the payload is not an object or the field is absent or not a
 * string. */
static char *
amqp_json_field(const struct outbox_msg *msg, const char *name, size_t n)
{
	json_t *j, *v;
	char   *key, *out = NULL;

	if ((j = json_loadb(msg->payload, msg->payload_len,
	         JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, NULL)) == NULL)
		return NULL;
	key = xstrndup(name, n);
	if ((v = json_object_get(j, key)) != NULL && json_is_string(v))
		out = xstrndup(json_string_value(v), json_string_length(v));
	free(key);
	json_decref(j);
	return out;
}

/* Expand the routing_key template: {event_type}, {ordering_key} and
 * {payload.NAME} (a top-level string field); other text is literal. */
char *
channel_amqp_routing_key(const char *tmpl, const struct outbox_msg *msg)
{
	struct buf  b;
	const char *p, *close;
	char       *v;
	size_t      n;

	if (tmpl == NULL)
		tmpl = "{event_type}";
	buf_init(&b);
	for (p = tmpl; *p != '\0'; p = close + 1) {
		if (*p != '{' || (close = strchr(p, '}')) == NULL) {
			buf_add(&b, p, 1);
			close = p;
			continue;
		}
		n = (size_t)(close - p - 1);
		if (n == 10 && memcmp(p + 1, "event_type", n) == 0)
			buf_adds(&b, msg->event_type);
		else if (n == 12 && memcmp(p + 1, "ordering_key", n) == 0) {
			if (msg->ordering_key != NULL)
				buf_adds(&b, msg->ordering_key);
		} else if (n > 8 && memcmp(p + 1, "payload.", 8) == 0) {
			v = amqp_json_field(msg, p + 9, n - 8);
			if (v != NULL)
				buf_adds(&b, v);
			free(v);
		} else
			buf_add(&b, p, (size_t)(close - p + 1));
	}
	return buf_steal(&b);
}

static int
amqp_publish(struct channel *ch, struct outbox_msg *msg)
{
	amqp_basic_properties_t props;
	amqp_table_entry_t      hdr[2];
	char                   *rk;
	int                     rc, nh = 0;

	memset(&props, 0, sizeof props);
	props._flags = AMQP_BASIC_CONTENT_TYPE_FLAG |
	    AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_MESSAGE_ID_FLAG |
	    AMQP_BASIC_TYPE_FLAG | AMQP_BASIC_TIMESTAMP_FLAG |
	    AMQP_BASIC_HEADERS_FLAG;
	props.content_type = amqp_cstring_bytes("application/json");
	props.delivery_mode = AMQP_DELIVERY_PERSISTENT;
	props.message_id = amqp_cstring_bytes(msg->message_id);
	props.type = amqp_cstring_bytes(msg->event_type);
	props.timestamp = (uint64_t)msg->created_at_s;
	if (msg->ordering_key != NULL) {
		hdr[nh].key = amqp_cstring_bytes("ordering_key");
		hdr[nh].value.kind = AMQP_FIELD_KIND_UTF8;
		hdr[nh].value.value.bytes =
		    amqp_cstring_bytes(msg->ordering_key);
		nh++;
	}
	hdr[nh].key = amqp_cstring_bytes("attempts");
	hdr[nh].value.kind = AMQP_FIELD_KIND_U32;
	hdr[nh].value.value.u32 = msg->attempts + 1;
	nh++;
	props.headers.num_entries = nh;
	props.headers.entries = hdr;
	rk = channel_amqp_routing_key(ch->conf->routing_key, msg);
	rc = amqp_basic_publish(ch->conn, AMQP_CHAN,
	    amqp_cstring_bytes(ch->conf->exchange), amqp_cstring_bytes(rk),
	    ch->conf->mandatory, 0, &props,
	    (amqp_bytes_t){ msg->payload_len, msg->payload });
	free(rk);
	return rc;
}

static void
amqp_set(struct outbox_msg *msg, enum send_result r, char *error)
{
	msg->result = r;
	free(msg->error);
	msg->error = error;
}

/* Give every message still waiting (tags[i] != 0) the result r. */
static void
amqp_settle_rest(struct outbox_msg **msgs, uint64_t *tags, size_t n,
    enum send_result r, const char *why)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (tags[i] == 0)
			continue;
		amqp_set(msgs[i], r, why != NULL ? xstrdup(why) : NULL);
		tags[i] = 0;
	}
}

/* How many messages still wait for their confirm. */
static size_t
amqp_waiting(const uint64_t *tags, size_t n)
{
	size_t i, w = 0;

	for (i = 0; i < n; i++)
		w += tags[i] != 0;
	return w;
}

/* Read a basic.return's content and mark its message (by message_id). */
static int
amqp_on_return(struct channel *ch, amqp_basic_return_t *ret,
    struct outbox_msg **msgs, const uint64_t *tags, bool *returned, size_t n)
{
	amqp_message_t   m;
	amqp_rpc_reply_t r;
	size_t           i, len;

	r = amqp_read_message(ch->conn, AMQP_CHAN, &m, 0);
	if (r.reply_type != AMQP_RESPONSE_NORMAL)
		return -1;
	len = m.properties.message_id.len;
	for (i = 0; i < n; i++) {
		if (tags[i] != 0 && len == strlen(msgs[i]->message_id) &&
		    memcmp(m.properties.message_id.bytes, msgs[i]->message_id,
		        len) == 0) {
			returned[i] = true;
			free(msgs[i]->error);
			msgs[i]->error = xasprintf("unroutable: %u %.*s",
			    ret->reply_code, (int)ret->reply_text.len,
			    (const char *)ret->reply_text.bytes);
		}
	}
	amqp_destroy_message(&m);
	return 0;
}

/* Settle the ack/nack for tag (and all up to it when multiple). */
static void
amqp_on_confirm(struct channel *ch, uint64_t tag, bool multiple, bool ack,
    struct outbox_msg **msgs, uint64_t *tags, const bool *returned, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (tags[i] == 0 || tags[i] > tag ||
		    (!multiple && tags[i] != tag))
			continue;
		tags[i] = 0;
		if (!ack)
			amqp_set(msgs[i], SEND_RETRY,
			    xstrdup("amqp: nack from the broker"));
		else if (returned[i])
			msgs[i]->result = ch->conf->unroutable_retry
			    ? SEND_RETRY
			    : SEND_PERMANENT;
		else
			amqp_set(msgs[i], SEND_OK, NULL);
	}
}

/*
 * Wait until every published message has its confirm, the deadline
 * passes, or the connection breaks or is blocked.  Returns 0 when all
 * are settled, -1 when the connection must be dropped (the rest settled
 * by the caller).
 */
static int
amqp_await(struct channel *ch, struct outbox_msg **msgs, uint64_t *tags,
    bool *returned, size_t n, int64_t deadline, char **why)
{
	amqp_frame_t          f;
	struct timeval        tv;
	amqp_basic_ack_t     *ack;
	amqp_basic_nack_t    *nack;
	amqp_channel_close_t *cc;
	int                   rc;

	for (;;) {
		if (amqp_waiting(tags, n) == 0)
			return 0;
		amqp_ms_tv(deadline - now_mono_ms(), &tv);
		amqp_maybe_release_buffers(ch->conn);
		rc = amqp_simple_wait_frame_noblock(ch->conn, &f, &tv);
		if (rc == AMQP_STATUS_TIMEOUT) {
			*why = xstrdup("amqp: no confirm within the timeout");
			return -1;
		}
		if (rc != AMQP_STATUS_OK) {
			*why = xasprintf("amqp: %s", amqp_error_string2(rc));
			return -1;
		}
		if (f.frame_type != AMQP_FRAME_METHOD)
			continue;
		switch (f.payload.method.id) {
		case AMQP_BASIC_ACK_METHOD:
			ack = f.payload.method.decoded;
			amqp_on_confirm(ch, ack->delivery_tag, ack->multiple,
			    true, msgs, tags, returned, n);
			break;
		case AMQP_BASIC_NACK_METHOD:
			nack = f.payload.method.decoded;
			amqp_on_confirm(ch, nack->delivery_tag, nack->multiple,
			    false, msgs, tags, returned, n);
			break;
		case AMQP_BASIC_RETURN_METHOD:
			if (amqp_on_return(ch, f.payload.method.decoded, msgs,
			        tags, returned, n) == -1) {
				*why = xstrdup("amqp: cannot read a return");
				return -1;
			}
			break;
		case AMQP_CONNECTION_BLOCKED_METHOD:
			amqp_set_blocked(ch, true,
			    ((amqp_connection_blocked_t *)
			            f.payload.method.decoded)
			        ->reason);
			*why = xstrdup("amqp: connection blocked by the broker "
			               "(memory or disk alarm)");
			return -1;
		case AMQP_CHANNEL_CLOSE_METHOD:
			cc = f.payload.method.decoded;
			*why = xasprintf("amqp: channel closed: %u %.*s",
			    cc->reply_code, (int)cc->reply_text.len,
			    (const char *)cc->reply_text.bytes);
			return -1;
		case AMQP_CONNECTION_CLOSE_METHOD:
			*why = xstrdup("amqp: connection closed by the broker");
			return -1;
		default:
			break;
		}
	}
}

/* Read whatever the broker sent between batches (connection.blocked or
 * unblocked, a close) without waiting. */
static int
amqp_poll(struct channel *ch, int64_t wait_ms)
{
	amqp_frame_t   f;
	struct timeval tv;
	int            rc;

	for (;;) {
		amqp_ms_tv(wait_ms, &tv);
		rc = amqp_simple_wait_frame_noblock(ch->conn, &f, &tv);
		if (rc == AMQP_STATUS_TIMEOUT)
			return 0;
		if (rc != AMQP_STATUS_OK)
			return -1;
		if (f.frame_type != AMQP_FRAME_METHOD)
			continue;
		switch (f.payload.method.id) {
		case AMQP_CONNECTION_BLOCKED_METHOD:
			amqp_set_blocked(ch, true,
			    ((amqp_connection_blocked_t *)
			            f.payload.method.decoded)
			        ->reason);
			break;
		case AMQP_CONNECTION_UNBLOCKED_METHOD:
			amqp_set_blocked(ch, false, amqp_empty_bytes);
			break;
		case AMQP_CHANNEL_CLOSE_METHOD:
		case AMQP_CONNECTION_CLOSE_METHOD:
			return -1;
		default:
			break;
		}
		if (!ch->blocked)
			wait_ms = 0;
	}
}

/* A refused login is reported as an incident once, until a login works
 * again: the credentials are wrong for every message alike. */
static void
amqp_report_refused(struct channel *ch, const char *err)
{
	struct incident inc;

	if (ch->refused_reported)
		return;
	ch->refused_reported = true;
	memset(&inc, 0, sizeof inc);
	inc.event = "channel_auth_failed"; /* as the SMTP channel's 535 */
	inc.channel = ch->conf->name;
	inc.detail = err;
	incident_report(&inc);
}

static void
amqp_send(struct channel *ch, struct outbox_msg **msgs, size_t n,
    struct send_ctl *ctl)
{
	uint64_t *tags;
	bool     *returned, auth;
	char     *err = NULL, *why = NULL;
	size_t    i, first;
	int64_t   deadline;

	tags = xcalloc(n + 1, sizeof *tags);
	returned = xcalloc(n + 1, sizeof *returned);
	for (i = 0; i < n; i++)
		msgs[i]->result = SEND_NONE;
	if (ch->conn != NULL && amqp_poll(ch, 0) == -1)
		amqp_disconnect(ch);
	if (ch->conn != NULL && ch->blocked &&
	    amqp_poll(ch, ch->conf->timeout_ms / 10) == -1)
		amqp_disconnect(ch);
	if (ch->conn != NULL && ch->blocked)
		goto out; /* all SEND_NONE: no attempt burnt */
	/* Connect only for a message the limits let start (not while the
	 * circuit is open). */
	for (first = 0; first < n; first++) {
		if (!*ctl->stop && ctl->before_send(ctl, msgs[first]) == 0)
			break;
	}
	if (first == n)
		goto out;
	if (ch->conn == NULL && amqp_connect(ch, &auth, &err) == -1) {
		if (auth) {
			/* The channel's failure, not the messages': back
			 * unattempted, with the error for the circuit. */
			amqp_report_refused(ch, err);
			amqp_set(msgs[first], SEND_NONE, xstrdup(err));
			ctl->after_send(ctl, msgs[first]);
			goto out;
		}
		/* Unreachable: transient for every message let start. */
		for (i = first; i < n; i++) {
			if (i > first &&
			    (*ctl->stop || ctl->before_send(ctl, msgs[i]) != 0))
				continue;
			amqp_set(msgs[i], SEND_RETRY, xstrdup(err));
			ctl->after_send(ctl, msgs[i]);
		}
		goto out;
	}
	ch->refused_reported = false;
	for (i = first; i < n; i++) {
		if (i > first &&
		    (*ctl->stop || ctl->before_send(ctl, msgs[i]) != 0))
			continue;
		if (amqp_publish(ch, msgs[i]) != AMQP_STATUS_OK) {
			amqp_set(msgs[i], SEND_RETRY,
			    xstrdup("amqp: publish failed"));
			amqp_disconnect(ch);
			break;
		}
		tags[i] = ch->next_tag++;
	}
	deadline = now_mono_ms() + ch->conf->timeout_ms;
	if (ch->conn != NULL &&
	    amqp_await(ch, msgs, tags, returned, n, deadline, &why) == -1) {
		/* Blocked: put back with no attempt and no error (not a
		 * failure of the channel), and keep the connection to hear
		 * connection.unblocked (the publishes it holds may still be
		 * delivered: duplicates, never losses).  Otherwise
		 * transient, and the connection is dropped. */
		if (ch->blocked)
			amqp_settle_rest(msgs, tags, n, SEND_NONE, NULL);
		else {
			amqp_settle_rest(msgs, tags, n, SEND_RETRY, why);
			amqp_disconnect(ch);
		}
	}
	amqp_settle_rest(msgs, tags, n, SEND_RETRY, "amqp: connection lost");
	for (i = first; i < n; i++) {
		if (msgs[i]->result != SEND_NONE || msgs[i]->error != NULL)
			ctl->after_send(ctl, msgs[i]);
	}
out:
	free(err);
	free(why);
	free(tags);
	free(returned);
}

static int
amqp_open(const struct conf_channel *cc, struct channel **out, char **errstr)
{
	struct channel *ch = xcalloc(1, sizeof *ch);

	ch->conf = cc;
	ch->urlbuf = xstrdup(cc->url);
	amqp_default_connection_info(&ch->url);
	if (amqp_parse_url(ch->urlbuf, &ch->url) != AMQP_STATUS_OK) {
		*errstr = xasprintf("%s: cannot parse amqp URL", cc->name);
		free(ch->urlbuf);
		free(ch);
		return -1;
	}
	*out = ch;
	return 0;
}

static void
amqp_close(struct channel *ch)
{
	if (ch == NULL)
		return;
	if (ch->conn != NULL) {
		amqp_channel_close(ch->conn, AMQP_CHAN, AMQP_REPLY_SUCCESS);
		amqp_connection_close(ch->conn, AMQP_REPLY_SUCCESS);
	}
	amqp_disconnect(ch);
	free(ch->urlbuf);
	free(ch);
}

int
channel_amqp_probe(const struct conf_channel *cc, bool *auth, char **errstr)
{
	struct channel *ch = NULL;
	int             rc;

	*auth = false;
	if (amqp_open(cc, &ch, errstr) != 0)
		return -1;
	rc = amqp_connect(ch, auth, errstr);
	amqp_close(ch);
	return rc;
}

const struct channel_ops channel_amqp_ops = {
	.type = "amqp",
	.open = amqp_open,
	.send = amqp_send,
	.close = amqp_close,
};
