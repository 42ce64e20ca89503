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
 *
 * Each row is checked before it is published (channel_amqp_check): a
 * routing key or type over AMQP's 255-byte short string, or a payload
 * over max_size, is that row's permanent failure, and the batch goes on
 * (before, the encoding failure dropped the connection, and the rows
 * published before it were retried without their confirms: duplicates).
 * A publish that fails for the connection stops publishing, and the
 * confirms of the rows published before it are still awaited.
 *
 * rabbitmq-c writes a publish with no deadline (poll(-1), restarted on
 * EINTR), and a blocked broker stops reading: a large publish then never
 * ends.  So the channel looks for connection.blocked before each publish
 * (the frames already received, no round trip), and a watchdog thread
 * shuts the socket down when a publish or the close runs past its
 * deadline (the channel timeout from the batch's start) or the stop flag
 * is raised; the rows not confirmed go back SEND_NONE, no attempt
 * counted.
 */
#include "config.h"

#include <amqp.h>
#include <amqp_ssl_socket.h>
#include <amqp_tcp_socket.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include "channel-amqp.h"
#include "channel.h"
#include "incident.h"
#include "log.h"
#include "util.h"

#define AMQP_CHAN 1

/* AMQP short strings (routing key, type) hold at most this many bytes. */
#define AMQP_SHORTSTR_MAX 255

/* How often the watchdog looks at its deadline and the stop flag. */
#define AMQP_WATCH_TICK_MS 100
/* On stop, a publish still running after this long is cut short (one
 * that ends sooner is let end: cutting it would lose the confirms of
 * the rows published before it). */
#define AMQP_STOP_GRACE_MS 500

/* A close on a connection that answers no more waits this long at most. */
#define AMQP_CLOSE_MS 1000

/*
 * The watchdog: while armed, shuts fd down (both ways, so that the
 * blocked poll inside rabbitmq-c returns and the publish fails) once
 * until passes, or *stop is set and the publish has run for
 * AMQP_STOP_GRACE_MS.  It reads *stop, a signal handler's flag
 * that only ever goes from 0 to 1, every AMQP_WATCH_TICK_MS: a late read
 * costs one tick.
 */
struct amqp_watch {
	pthread_t              thread;
	pthread_mutex_t        lock;
	pthread_cond_t         cond;
	bool                   running;
	bool                   quit;
	int                    fd; /* armed: the socket; -1: disarmed */
	int64_t                until;
	int64_t                armed_at;
	volatile sig_atomic_t *stop;
	bool                   fired;
};

struct channel {
	const struct conf_channel  *conf;
	char                       *urlbuf; /* owned by url */
	struct amqp_connection_info url;
	amqp_connection_state_t     conn; /* NULL = not connected */
	bool                        blocked;
	bool                        refused_reported; /* incident sent */
	uint64_t                    next_tag; /* delivery tag of next publish */
	struct amqp_watch           watch;
};

static void *
amqp_watch_main(void *arg)
{
	struct amqp_watch *w = arg;
	struct timespec    ts;
	int64_t            now, wait;

	pthread_mutex_lock(&w->lock);
	while (!w->quit) {
		now = now_mono_ms();
		wait = AMQP_WATCH_TICK_MS;
		if (w->fd >= 0 &&
		    (now >= w->until ||
		        (w->stop != NULL && *w->stop &&
		            now - w->armed_at >= AMQP_STOP_GRACE_MS))) {
			(void)shutdown(w->fd, SHUT_RDWR);
			w->fired = true;
			w->fd = -1;
		} else if (w->fd >= 0 && w->until - now < wait)
			wait = w->until - now;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)wait * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&w->cond, &w->lock, &ts);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Arm the watchdog on the connection's socket (no wakeup: it ticks).
 * Without a thread (it could not be started: logged) the publish keeps
 * rabbitmq-c's own behaviour. */
static void
amqp_watch_arm(struct channel *ch, int64_t until, volatile sig_atomic_t *stop)
{
	struct amqp_watch *w = &ch->watch;
	sigset_t           all, old;
	int                rc;

	if (!w->running) {
		pthread_mutex_init(&w->lock, NULL);
		pthread_cond_init(&w->cond, NULL);
		w->fd = -1;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		rc = pthread_create(&w->thread, NULL, amqp_watch_main, w);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (rc != 0) {
			pthread_cond_destroy(&w->cond);
			pthread_mutex_destroy(&w->lock);
			log_kv(LOG_WARN, "amqp_watchdog_off", "channel",
			    ch->conf->name, "error", strerror(rc));
			return;
		}
		w->running = true;
	}
	pthread_mutex_lock(&w->lock);
	w->fd = amqp_get_sockfd(ch->conn);
	w->until = until;
	w->armed_at = now_mono_ms();
	w->stop = stop;
	pthread_mutex_unlock(&w->lock);
}

/* Disarm; true when the watchdog has shut the socket down since the
 * connection was made (amqp_watch_reset). */
static bool
amqp_watch_disarm(struct channel *ch)
{
	struct amqp_watch *w = &ch->watch;
	bool               fired;

	if (!w->running)
		return false;
	pthread_mutex_lock(&w->lock);
	w->fd = -1;
	fired = w->fired;
	pthread_mutex_unlock(&w->lock);
	return fired;
}

static void
amqp_watch_reset(struct channel *ch)
{
	struct amqp_watch *w = &ch->watch;

	if (!w->running)
		return;
	pthread_mutex_lock(&w->lock);
	w->fired = false;
	pthread_mutex_unlock(&w->lock);
}

static void
amqp_watch_end(struct channel *ch)
{
	struct amqp_watch *w = &ch->watch;

	if (!w->running)
		return;
	pthread_mutex_lock(&w->lock);
	w->quit = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	w->running = false;
}

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
	(void)amqp_watch_disarm(ch);
	amqp_destroy_connection(ch->conn);
	ch->conn = NULL;
	ch->blocked = false;
	amqp_watch_reset(ch);
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
		log_kv(LOG_INFO, "amqp_unblocked", "channel", ch->conf->name);
		return;
	}
	r = xstrndup(reason.bytes, reason.len);
	log_kv(
	    LOG_WARN, "amqp_blocked", "channel", ch->conf->name, "reason", r);
	free(r);
}

/* Whether a connection.close reply code refuses this login or vhost
 * (403 ACCESS_REFUSED, 530 NOT_ALLOWED: an unknown vhost or one the user
 * may not open): a channel failure that no retry of a message cures, so
 * it costs no attempt, like a refused password. */
static bool
amqp_refused_code(uint16_t code)
{
	return code == AMQP_ACCESS_REFUSED || code == AMQP_NOT_ALLOWED;
}

/* The socket of ch's new connection: TLS with the peer and its name
 * verified for amqps, else TCP.  NULL with *errstr. */
static amqp_socket_t *
amqp_socket_for(struct channel *ch, char **errstr)
{
	const struct conf_channel *cc = ch->conf;
	amqp_socket_t             *sock;

	if (ch->url.ssl) {
		sock = amqp_ssl_socket_new(ch->conn);
		if (sock != NULL && cc->tls_ca != NULL &&
		    amqp_ssl_socket_set_cacert(sock, cc->tls_ca) !=
		        AMQP_STATUS_OK) {
			*errstr = xasprintf("amqp: cannot load %s", cc->tls_ca);
			return NULL;
		}
		if (sock != NULL) {
			amqp_ssl_socket_set_verify_peer(sock, 1);
			amqp_ssl_socket_set_verify_hostname(sock, 1);
		}
	} else
		sock = amqp_tcp_socket_new(ch->conn);
	if (sock == NULL)
		*errstr = xstrdup("amqp: cannot create a socket");
	return sock;
}

/* Log in, announcing the capabilities the channel relies on
 * (connection.blocked, publisher confirms, a refused login said with a
 * close).  0, or -1 with *errstr; *auth set when the broker refused the
 * credentials. */
static int
amqp_login_caps(struct channel *ch, bool *auth, char **errstr)
{
	const struct conf_channel *cc = ch->conf;
	amqp_rpc_reply_t           r;
	amqp_table_entry_t         cap[3], props[1];
	amqp_table_t               captab, proptab;
	const char                *user, *pass;

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
	if (r.reply_type == AMQP_RESPONSE_NORMAL)
		return 0;
	*auth = (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
	            r.library_error == AMQP_STATUS_SOCKET_CLOSED) ||
	    (r.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION &&
	        r.reply.id == AMQP_CONNECTION_CLOSE_METHOD &&
	        amqp_refused_code(
	            ((amqp_connection_close_t *)r.reply.decoded)->reply_code));
	*errstr = amqp_reply_error(r, "amqp: login");
	return -1;
}

/* Connect, log in, open the channel, select confirms.  Returns 0, or -1
 * with *errstr; *auth set when the broker refused the credentials. */
static int
amqp_connect(struct channel *ch, bool *auth, char **errstr)
{
	amqp_socket_t   *sock;
	amqp_rpc_reply_t r;
	struct timeval   tv;
	int              rc;

	*auth = false;
	if ((ch->conn = amqp_new_connection()) == NULL) {
		*errstr = xstrdup("amqp: out of memory");
		return -1;
	}
	if ((sock = amqp_socket_for(ch, errstr)) == NULL)
		goto fail;
	amqp_ms_tv(ch->conf->timeout_ms, &tv);
	if ((rc = amqp_socket_open_noblock(
	         sock, ch->url.host, ch->url.port, &tv)) != AMQP_STATUS_OK) {
		*errstr = xasprintf("amqp: connect to %s:%d: %s", ch->url.host,
		    ch->url.port, amqp_error_string2(rc));
		goto fail;
	}
	amqp_set_rpc_timeout(ch->conn, &tv);
	amqp_set_handshake_timeout(ch->conn, &tv);
	if (amqp_login_caps(ch, auth, errstr) != 0)
		goto fail;
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

/* The messages of a batch being published and their confirms. */
struct amqp_batch {
	struct outbox_msg **msgs;
	uint64_t           *tags;     /* delivery tag, 0 = not waiting */
	bool               *returned; /* basic.return seen */
	size_t              n;
};

/*
 * One frame received while a batch waits for its confirms: 0 to go on,
 * -1 (with *why) when publishing must stop: the connection broke, closed
 * or was blocked (ch->blocked then says which).
 */
static int
amqp_on_frame(
    struct channel *ch, amqp_frame_t *f, struct amqp_batch *b, char **why)
{
	amqp_basic_ack_t     *ack;
	amqp_basic_nack_t    *nack;
	amqp_channel_close_t *cc;

	if (f->frame_type != AMQP_FRAME_METHOD)
		return 0;
	switch (f->payload.method.id) {
	case AMQP_BASIC_ACK_METHOD:
		ack = f->payload.method.decoded;
		amqp_on_confirm(ch, ack->delivery_tag, ack->multiple, true,
		    b->msgs, b->tags, b->returned, b->n);
		break;
	case AMQP_BASIC_NACK_METHOD:
		nack = f->payload.method.decoded;
		amqp_on_confirm(ch, nack->delivery_tag, nack->multiple, false,
		    b->msgs, b->tags, b->returned, b->n);
		break;
	case AMQP_BASIC_RETURN_METHOD:
		if (amqp_on_return(ch, f->payload.method.decoded, b->msgs,
		        b->tags, b->returned, b->n) == -1) {
			*why = xstrdup("amqp: cannot read a return");
			return -1;
		}
		break;
	case AMQP_CONNECTION_BLOCKED_METHOD:
		amqp_set_blocked(ch, true,
		    ((amqp_connection_blocked_t *)f->payload.method.decoded)
		        ->reason);
		*why = xstrdup("amqp: connection blocked by the broker "
		               "(memory or disk alarm)");
		return -1;
	case AMQP_CONNECTION_UNBLOCKED_METHOD:
		amqp_set_blocked(ch, false, amqp_empty_bytes);
		break;
	case AMQP_CHANNEL_CLOSE_METHOD:
		cc = f->payload.method.decoded;
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
	return 0;
}

/*
 * Wait until every published message has its confirm, the deadline
 * passes, or the connection breaks or is blocked; with deadline 0, only
 * handle the frames already received (before a publish: a
 * connection.blocked stops publishing).  Returns 0 when all are settled
 * (or, with deadline 0, nothing more has come), -1 when publishing must
 * stop (the rest settled by the caller).
 */
static int
amqp_await(
    struct channel *ch, struct amqp_batch *b, int64_t deadline, char **why)
{
	amqp_frame_t   f;
	struct timeval tv;
	int            rc;

	for (;;) {
		if (deadline != 0 && amqp_waiting(b->tags, b->n) == 0)
			return 0;
		amqp_ms_tv(deadline != 0 ? deadline - now_mono_ms() : 0, &tv);
		amqp_maybe_release_buffers(ch->conn);
		rc = amqp_simple_wait_frame_noblock(ch->conn, &f, &tv);
		if (rc == AMQP_STATUS_TIMEOUT) {
			if (deadline == 0)
				return 0;
			*why = xstrdup("amqp: no confirm within the timeout");
			return -1;
		}
		if (rc != AMQP_STATUS_OK) {
			*why = xasprintf("amqp: %s", amqp_error_string2(rc));
			return -1;
		}
		if (amqp_on_frame(ch, &f, b, why) == -1)
			return -1;
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

/*
 * Check msg as a publish would take it (enqueue, and each row before it
 * is published): a payload over max_size, or a routing key or type over
 * an AMQP short string, can never be published.
 */
static int
amqp_check(
    const struct conf_channel *cc, const struct outbox_msg *row, char **why)
{
	struct outbox_msg m = *row, *msg = &m;
	char             *rk;
	size_t            len;

	/* outbox enqueue checks a payload without its row's event_type. */
	if (m.event_type == NULL)
		m.event_type = "";

	if (cc->max_size > 0 && msg->payload_len > (size_t)cc->max_size) {
		*why = xasprintf("payload too large: %zu bytes, max_size %lld",
		    msg->payload_len, cc->max_size);
		return -1;
	}
	if (strlen(msg->event_type) > AMQP_SHORTSTR_MAX) {
		*why = xasprintf("amqp: event_type of %zu bytes: the type "
		                 "property holds at most %d",
		    strlen(msg->event_type), AMQP_SHORTSTR_MAX);
		return -1;
	}
	rk = channel_amqp_routing_key(cc->routing_key, msg);
	len = strlen(rk);
	free(rk);
	if (len > AMQP_SHORTSTR_MAX) {
		*why = xasprintf("amqp: routing key of %zu bytes: AMQP allows "
		                 "at most %d",
		    len, AMQP_SHORTSTR_MAX);
		return -1;
	}
	return 0;
}

/* The result of msg is known: tell the limits once. */
static void
amqp_tell(struct send_ctl *ctl, struct outbox_msg *msg, bool *told)
{
	if (*told)
		return;
	*told = true;
	ctl->after_send(ctl, msg);
}

/* Before a batch: a connection that is gone is dropped, and a blocked
 * one given a tenth of the timeout to hear connection.unblocked.  True
 * when it is still blocked: the batch is not sent. */
static bool
amqp_send_blocked(struct channel *ch)
{
	if (ch->conn != NULL && amqp_poll(ch, 0) == -1)
		amqp_disconnect(ch);
	if (ch->conn != NULL && ch->blocked &&
	    amqp_poll(ch, ch->conf->timeout_ms / 10) == -1)
		amqp_disconnect(ch);
	return ch->conn != NULL && ch->blocked;
}

/* Publish message i of b before until, after the confirms so far (and a
 * connection.blocked): 0 when published, -1 when the batch stops here,
 * with *broken set when the connection failed (*why its error). */
static int
amqp_send_one(struct channel *ch, struct amqp_batch *b, size_t i, int64_t until,
    volatile sig_atomic_t *stop, char **why, bool *broken)
{
	bool cut;
	int  rc;

	if (amqp_await(ch, b, 0, why) == -1 || now_mono_ms() >= until) {
		if (!ch->blocked && *why != NULL)
			*broken = true;
		return -1;
	}
	amqp_watch_arm(ch, until, stop);
	rc = amqp_publish(ch, b->msgs[i]);
	cut = amqp_watch_disarm(ch);
	if (rc != AMQP_STATUS_OK) {
		/* Cut short (deadline, stop) or blocked: not published, no
		 * attempt; else the connection failed. */
		if (!cut && !ch->blocked)
			amqp_set(b->msgs[i], SEND_RETRY,
			    xasprintf("amqp: publish failed: %s",
			        amqp_error_string2(rc)));
		*broken = true;
		return -1;
	}
	b->tags[i] = ch->next_tag++;
	return 0;
}

/* After the publishing, whatever stopped it: the confirms of what was
 * published (unless the connection is broken), then what is left
 * settled and a broken or cut connection dropped. */
static void
amqp_send_settle(
    struct channel *ch, struct amqp_batch *b, bool broken, char **why)
{
	int64_t deadline;
	bool    cut;

	deadline = now_mono_ms() + ch->conf->timeout_ms;
	if (ch->conn != NULL && !broken) {
		free(*why);
		*why = NULL;
		/* Blocked: put back with no attempt and no error (not a
		 * failure of the channel), and keep the connection to hear
		 * connection.unblocked (the publishes it holds may still be
		 * delivered: duplicates, never losses).  Otherwise
		 * transient, and the connection is dropped. */
		if (amqp_await(ch, b, deadline, why) == -1 && !ch->blocked)
			broken = true;
	}
	cut = amqp_watch_disarm(ch);
	if (ch->blocked || cut)
		amqp_settle_rest(b->msgs, b->tags, b->n, SEND_NONE, NULL);
	else if (broken)
		amqp_settle_rest(b->msgs, b->tags, b->n, SEND_RETRY,
		    *why != NULL ? *why : "amqp: connection lost");
	if (broken || cut)
		amqp_disconnect(ch);
}

static void
amqp_send(struct channel *ch, struct outbox_msg **msgs, size_t n,
    struct send_ctl *ctl)
{
	struct amqp_batch b;
	bool             *told, auth, stopped, broken = false, down = false;
	char             *err = NULL, *why = NULL, *bad = NULL;
	size_t            i;
	int64_t           until;

	b.msgs = msgs;
	b.n = n;
	b.tags = xcalloc(n + 1, sizeof *b.tags);
	b.returned = xcalloc(n + 1, sizeof *b.returned);
	told = xcalloc(n + 1, sizeof *told);
	for (i = 0; i < n; i++)
		msgs[i]->result = SEND_NONE;
	/* Blocked: all SEND_NONE, no attempt burnt. */
	stopped = amqp_send_blocked(ch);
	until = now_mono_ms() + ch->conf->timeout_ms;
	for (i = 0; i < n; i++) {
		/* A row the broker could never take fails alone. */
		if (amqp_check(ch->conf, msgs[i], &bad) != 0) {
			amqp_set(msgs[i], SEND_PERMANENT, bad);
			bad = NULL;
			amqp_tell(ctl, msgs[i], &told[i]);
			continue;
		}
		/* Connect only for a message the limits let start (not
		 * while the circuit is open). */
		if (stopped || *ctl->stop ||
		    ctl->before_send(ctl, msgs[i]) != 0)
			continue;
		if (!down && ch->conn == NULL) {
			if (amqp_connect(ch, &auth, &err) == -1) {
				if (auth) {
					/* The channel's failure, not the
					 * messages': back unattempted, with
					 * the error for the circuit. */
					amqp_report_refused(ch, err);
					amqp_set(
					    msgs[i], SEND_NONE, xstrdup(err));
					amqp_tell(ctl, msgs[i], &told[i]);
					stopped = true;
					continue;
				}
				down = true;
			} else
				ch->refused_reported = false;
		}
		if (down) {
			/* Unreachable: transient for every message let
			 * start. */
			amqp_set(msgs[i], SEND_RETRY, xstrdup(err));
			amqp_tell(ctl, msgs[i], &told[i]);
			continue;
		}
		if (amqp_send_one(ch, &b, i, until, ctl->stop, &why, &broken) !=
		    0)
			stopped = true;
	}
	amqp_send_settle(ch, &b, broken, &why);
	for (i = 0; i < n; i++) {
		if (msgs[i]->result != SEND_NONE || msgs[i]->error != NULL)
			amqp_tell(ctl, msgs[i], &told[i]);
	}
	free(err);
	free(why);
	free(told);
	free(b.tags);
	free(b.returned);
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
	/* A blocked broker answers no close: drop the connection.  Else
	 * the goodbye is bounded by the watchdog. */
	if (ch->conn != NULL && !ch->blocked) {
		amqp_watch_arm(ch, now_mono_ms() + AMQP_CLOSE_MS, NULL);
		amqp_channel_close(ch->conn, AMQP_CHAN, AMQP_REPLY_SUCCESS);
		amqp_connection_close(ch->conn, AMQP_REPLY_SUCCESS);
	}
	amqp_disconnect(ch);
	amqp_watch_end(ch);
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
	.open = amqp_open,
	.send = amqp_send,
	.close = amqp_close,
	.check = amqp_check,
};
