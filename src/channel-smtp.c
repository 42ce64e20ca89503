/*
 * channel-smtp.c: mail over libcurl's SMTP, `connections` at once.
 *
 * One multi handle lives as long as the channel; its connection cache
 * holds at most `connections` connections, which every later message
 * reuses (an SMTP session carries many MAIL transactions), so a batch
 * costs one connection per slot, not one per message.  The easy handles
 * are pooled with the options that never change set once.
 *
 * Reply classification (cronguard-outbox(7), RETRIES,): connection failures,
 * timeouts and 4xx replies are transient; 5xx replies are permanent.  A refused
 * login (535), and a server that offers no AUTH when credentials are set, are
 * the channel's problem, not the message's: as channel-amqp.c does for a
 * refused login, the message goes back SEND_NONE with the error (a
 * circuit failure, no attempt counted; see channel.h), nothing more of
 * the batch is started, and an incident (channel_auth_failed) is
 * reported once until a message goes out again.  A server that refuses
 * the connection or the sender is the same kind of fault: a 5xx greeting
 * (554), a 5xx to EHLO that HELO does not mend, a 5xx to MAIL FROM (the
 * channel's own from; 552, the SIZE limit, stays the message's): the
 * incident is channel_rejected.
 *
 * libcurl skips AUTH without a word when the server does not offer it
 * (and sends the mail unauthenticated), so the protocol trace watches
 * for a MAIL FROM on a connection greeted in this transfer that no 235
 * followed; the progress callback then aborts the transfer, which makes
 * libcurl close the connection before the end of the data: the server
 * never gets a complete message.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "channel-multi.h"
#include "channel.h"
#include "incident.h"
#include "log.h"
#include "mime.h"
#include "util.h"

/* Bytes of a server reply kept for last_error. */
#define SMTP_REPLY 256
/* Bytes of refused recipients kept for last_error. */
#define SMTP_REFUSED 1024

/* What the server's reply answers, from the protocol trace. */
enum smtp_stage {
	SMTP_STAGE_GREETING, /* a new connection's first reply */
	SMTP_STAGE_EHLO,     /* EHLO or HELO */
	SMTP_STAGE_MAIL,     /* MAIL FROM */
	SMTP_STAGE_OTHER,    /* AUTH, RCPT, DATA... */
	SMTP_STAGE_QUIT,     /* QUIT: its reply is not the failure's */
};

/* The option was spelt CURLOPT_MAIL_RCPT_ALLLOWFAILS before 8.2.0. */
#if LIBCURL_VERSION_NUM >= 0x080200
#define SMTP_RCPT_ALLOWFAILS CURLOPT_MAIL_RCPT_ALLOWFAILS
#else
#define SMTP_RCPT_ALLOWFAILS CURLOPT_MAIL_RCPT_ALLLOWFAILS
#endif

struct smtp_xfer {
	CURL              *easy;
	struct outbox_msg *msg; /* NULL when idle */
	struct mime_msg   *mail;
	curl_mime         *mime;
	char               errbuf[CURL_ERROR_SIZE];
	char               reply[SMTP_REPLY]; /* last reply line */
	char               rcpt[SMTP_REPLY];  /* RCPT TO in flight */
	struct buf         refused;           /* "addr (reply), ..." */
	unsigned           nrefused;
	bool               login;    /* credentials are set */
	bool               greeted;  /* EHLO/HELO sent in this transfer */
	bool               authed;   /* 235 since the last EHLO/HELO */
	bool               noauth;   /* MAIL FROM without AUTH: abort */
	enum smtp_stage    stage;    /* of the command last sent */
	enum smtp_stage    rejected; /* the stage a 5xx refused, or OTHER */
	char               reject[SMTP_REPLY]; /* and that reply */
};

struct channel {
	const struct conf_channel *conf;
	CURLM                     *multi;
	struct smtp_xfer          *xfers;
	unsigned                   nxfers;
	unsigned long long         messages; /* transfers finished */
	unsigned long long         connects; /* connections opened */
	bool failed;   /* login or connection refused: start nothing more */
	bool reported; /* incident reported, until a message goes out */
};

/*
 * A final reply line to the greeting, EHLO/HELO or MAIL FROM: a 5xx there
 * (but 552, MAIL FROM's SIZE limit) refuses the channel, until a 2xx or
 * 3xx to the same stage mends it (HELO after a refused EHLO).  Replies to
 * later commands (QUIT after the failure) leave it as it is.
 */
static void
smtp_note_reject(struct smtp_xfer *x, const char *line)
{
	if (x->stage == SMTP_STAGE_OTHER || x->stage == SMTP_STAGE_QUIT)
		return;
	if (line[0] == '5' && strncmp(line, "552", 3) != 0) {
		x->rejected = x->stage;
		snprintf(x->reject, sizeof x->reject, "%s", x->reply);
	} else if (line[0] == '2' || line[0] == '3')
		x->rejected = SMTP_STAGE_OTHER;
}

/*
 * libcurl reports neither the text of a reply nor which recipients a
 * server refused, so both are taken from the protocol trace: the last
 * reply line, and each RCPT TO with a 4xx or 5xx answer.
 */
static int
smtp_debug_cb(
    CURL *easy, curl_infotype type, char *data, size_t size, void *arg)
{
	struct smtp_xfer *x = arg;

	(void)easy;
	if (type == CURLINFO_HEADER_OUT) {
		x->rcpt[0] = '\0';
		x->stage = SMTP_STAGE_OTHER;
		if (size > 8 && strncasecmp(data, "RCPT TO:", 8) == 0)
			line_copy(x->rcpt, sizeof x->rcpt, data + 8, size - 8);
		else if (size > 5 &&
		    (strncasecmp(data, "EHLO ", 5) == 0 ||
		        strncasecmp(data, "HELO ", 5) == 0)) {
			x->greeted = true;
			x->authed = false;
			x->stage = SMTP_STAGE_EHLO;
		} else if (size > 10 &&
		    strncasecmp(data, "MAIL FROM:", 10) == 0) {
			x->stage = SMTP_STAGE_MAIL;
			if (x->greeted && !x->authed && x->login)
				x->noauth = true;
		} else if (size >= 4 && strncasecmp(data, "QUIT", 4) == 0)
			x->stage = SMTP_STAGE_QUIT;
		return 0;
	}
	/* libcurl says QUIT when it closes a connection after a failure:
	 * "221 bye" would hide the reply that failed the message. */
	if (type != CURLINFO_HEADER_IN || size < 4 ||
	    x->stage == SMTP_STAGE_QUIT)
		return 0;
	line_copy(x->reply, sizeof x->reply, data, size);
	if (data[3] == ' ')
		smtp_note_reject(x, data);
	/* A 4xx or 5xx to anything but RCPT TO (whose refusals leave the
	 * transaction open by design) may leave the session in a state the
	 * next message would inherit (a server still in its DATA phase
	 * answers the next MAIL FROM "503 nested MAIL command"): libcurl
	 * closes the connection when this transfer ends instead of caching
	 * it. */
	if (x->rcpt[0] == '\0' && data[3] == ' ' &&
	    (data[0] == '4' || data[0] == '5'))
		curl_easy_setopt(x->easy, CURLOPT_FORBID_REUSE, 1L);
	if (strncmp(data, "235 ", 4) == 0)
		x->authed = true;
	/* The last line of a reply has a space after the code. */
	if (x->rcpt[0] != '\0' && data[3] == ' ' &&
	    (data[0] == '4' || data[0] == '5')) {
		if (x->refused.len < SMTP_REFUSED)
			buf_printf(&x->refused, "%s%s (%s)",
			    x->nrefused > 0 ? ", " : "", x->rcpt, x->reply);
		x->nrefused++;
	}
	if (data[3] == ' ')
		x->rcpt[0] = '\0';
	return 0;
}

/* Abort a transfer that would send mail without the AUTH configured. */
static int
smtp_progress_cb(void *arg, curl_off_t dltotal, curl_off_t dlnow,
    curl_off_t ultotal, curl_off_t ulnow)
{
	struct smtp_xfer *x = arg;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return x->noauth ? 1 : 0;
}

static int
smtp_open(const struct conf_channel *conf, struct channel **out, char **errstr)
{
	struct channel   *ch;
	struct smtp_xfer *x;
	unsigned          i;
	long              conns;
	char             *addr = NULL, *field = NULL;
	const char       *why;

	ch = xcalloc(1, sizeof *ch);
	ch->conf = conf;
	ch->nxfers = conf->connections > 0 ? conf->connections : 1;
	conns = (long)ch->nxfers;

	if (conf->from == NULL) {
		*errstr = xasprintf("channel %s: from is not set", conf->name);
		goto fail;
	}
	if (mime_parse_mailbox(conf->from, &addr, &field, &why) != 0) {
		*errstr = xasprintf("channel %s: from: %s", conf->name, why);
		goto fail;
	}
	free(addr);
	free(field);

	if ((ch->multi = channel_multi_new(conf, conns, errstr)) == NULL)
		goto fail;

	ch->xfers = xcalloc(ch->nxfers, sizeof *ch->xfers);
	for (i = 0; i < ch->nxfers; i++) {
		x = &ch->xfers[i];
		buf_init(&x->refused);
		if ((x->easy = channel_multi_easy(
		         conf, "smtp,smtps", x->errbuf, x, errstr)) == NULL)
			goto fail;
		curl_easy_setopt(x->easy, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(x->easy, SMTP_RCPT_ALLOWFAILS, 1L);
		curl_easy_setopt(x->easy, CURLOPT_DEBUGFUNCTION, smtp_debug_cb);
		curl_easy_setopt(x->easy, CURLOPT_DEBUGDATA, x);
		curl_easy_setopt(x->easy, CURLOPT_VERBOSE, 1L);
		if (conf->tls != NULL && strcmp(conf->tls, "required") == 0)
			curl_easy_setopt(
			    x->easy, CURLOPT_USE_SSL, (long)CURLUSESSL_ALL);
		if (conf->username != NULL) {
			x->login = true;
			curl_easy_setopt(
			    x->easy, CURLOPT_USERNAME, conf->username);
			curl_easy_setopt(x->easy, CURLOPT_PASSWORD,
			    conf->password != NULL ? conf->password : "");
			curl_easy_setopt(x->easy, CURLOPT_NOPROGRESS, 0L);
			curl_easy_setopt(x->easy, CURLOPT_XFERINFOFUNCTION,
			    smtp_progress_cb);
			curl_easy_setopt(x->easy, CURLOPT_XFERINFODATA, x);
		}
	}
	*out = ch;
	return 0;

fail:
	channel_smtp_ops.close(ch);
	return -1;
}

static void
smtp_close(struct channel *ch)
{
	unsigned i;
	char     msgs[32], conns[32];

	if (ch == NULL)
		return;
	if (ch->messages > 0) {
		snprintf(msgs, sizeof msgs, "%llu", ch->messages);
		snprintf(conns, sizeof conns, "%llu", ch->connects);
		log_kv(LOG_INFO, "smtp_channel_closed", "channel",
		    ch->conf->name, "messages", msgs, "connections", conns);
	}
	for (i = 0; ch->xfers != NULL && i < ch->nxfers; i++) {
		if (ch->xfers[i].easy == NULL)
			continue;
		if (ch->xfers[i].msg != NULL)
			curl_multi_remove_handle(ch->multi, ch->xfers[i].easy);
		curl_easy_cleanup(ch->xfers[i].easy);
		curl_mime_free(ch->xfers[i].mime);
		mime_free(ch->xfers[i].mail);
		buf_free(&ch->xfers[i].refused);
	}
	free(ch->xfers);
	if (ch->multi != NULL)
		curl_multi_cleanup(ch->multi);
	free(ch);
}

static struct smtp_xfer *
smtp_idle_xfer(struct channel *ch)
{
	unsigned i;

	for (i = 0; i < ch->nxfers; i++) {
		if (ch->xfers[i].msg == NULL)
			return &ch->xfers[i];
	}
	return NULL;
}

/* Detach and free what one message needed; the easy handle stays. */
static void
smtp_reset(struct smtp_xfer *x)
{
	curl_easy_setopt(x->easy, CURLOPT_MIMEPOST, NULL);
	curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(x->easy, CURLOPT_MAIL_RCPT, NULL);
	curl_mime_free(x->mime);
	x->mime = NULL;
	mime_free(x->mail);
	x->mail = NULL;
	x->msg = NULL;
}

/* before_send refused the prepared message. */
static void
smtp_cancel(struct channel *ch, void *slot)
{
	(void)ch;
	smtp_reset(slot);
}

/* msg as a MIME message for channel cc: 0 with *mail, or -1 with *why. */
static int
smtp_build(const struct conf_channel *cc, const struct outbox_msg *msg,
    struct mime_msg **mail, char **why)
{
	struct mime_opts o;

	memset(&o, 0, sizeof o);
	o.from = cc->from;
	o.message_id = msg->message_id;
	/* The creation time keeps a retried message byte for byte the same. */
	o.date = msg->created_at_s > 0 ? msg->created_at_s : time(NULL);
	o.max_size = cc->max_size;
	return mime_build(msg->payload, msg->payload_len, &o, mail, why);
}

static int
smtp_check(
    const struct conf_channel *cc, const struct outbox_msg *msg, char **why)
{
	struct mime_msg *mail = NULL;

	if (smtp_build(cc, msg, &mail, why) != 0)
		return -1;
	mime_free(mail);
	return 0;
}

/* The message as MIME on an idle slot; a payload that cannot be mail is
 * permanent. */
static void *
smtp_prepare(struct channel *ch, struct outbox_msg *msg)
{
	struct smtp_xfer *x = smtp_idle_xfer(ch);
	char             *why = NULL;

	if (ch->failed) {
		/* Back unattempted: the login or the connection failed for
		 * every message. */
		msg->result = SEND_NONE;
		return NULL;
	}
	if (smtp_build(ch->conf, msg, &x->mail, &why) != 0) {
		msg->result = SEND_PERMANENT;
		msg->error = why;
		return NULL;
	}
	return x;
}

static int
smtp_start(struct channel *ch, void *slot, struct outbox_msg *msg)
{
	struct smtp_xfer *x = slot;
	CURLMcode         mc;
	char             *why = NULL;

	x->errbuf[0] = '\0';
	x->reply[0] = '\0';
	x->rcpt[0] = '\0';
	buf_reset(&x->refused);
	x->nrefused = 0;
	x->greeted = false;
	x->authed = false;
	x->noauth = false;
	x->stage = SMTP_STAGE_GREETING;
	x->rejected = SMTP_STAGE_OTHER;
	x->reject[0] = '\0';
	curl_easy_setopt(x->easy, CURLOPT_FORBID_REUSE, 0L);
	x->msg = msg;
	if ((x->mime = mime_curl(x->mail, x->easy, &why)) == NULL) {
		msg->result = SEND_RETRY;
		msg->error = why;
		smtp_reset(x);
		return -1;
	}
	if ((mc = curl_multi_add_handle(ch->multi, x->easy)) != CURLM_OK) {
		msg->result = SEND_RETRY;
		msg->error = xasprintf("smtp: %s", curl_multi_strerror(mc));
		smtp_reset(x);
		return -1;
	}
	return 0;
}

/* cronguard-outbox(7), RETRIES, for a finished SMTP transfer (a login that
 * failed is smtp_login_failed's). */
static enum send_result
smtp_classify(CURLcode cc, long code)
{
	if (cc == CURLE_OK)
		return SEND_OK;
	if (code >= 500 && code <= 599)
		return SEND_PERMANENT;
	return SEND_RETRY;
}

/*
 * The login or the connection failed for the channel, not for msg: back
 * unattempted with the error for the circuit breaker, nothing more of
 * this batch started, and one incident (event) until a message goes out
 * again.
 */
static void
smtp_channel_failed(
    struct channel *ch, struct outbox_msg *msg, const char *event, char *error)
{
	struct incident inc;

	msg->result = SEND_NONE;
	msg->error = error;
	ch->failed = true;
	if (ch->reported)
		return;
	ch->reported = true;
	memset(&inc, 0, sizeof inc);
	inc.event = event;
	inc.channel = ch->conf->name;
	inc.detail = error;
	incident_report(&inc);
}

static struct outbox_msg *
smtp_finish(struct channel *ch, void *slot, CURLcode cc)
{
	struct smtp_xfer  *x = slot;
	struct outbox_msg *msg = x->msg;
	long               code = 0, nconn = 0;
	const char        *what;

	curl_multi_remove_handle(ch->multi, x->easy);
	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_getinfo(x->easy, CURLINFO_NUM_CONNECTS, &nconn);
	ch->messages++;
	ch->connects += (unsigned long long)nconn;

	what = x->errbuf[0] != '\0' ? x->errbuf : curl_easy_strerror(cc);
	if (x->noauth && cc != CURLE_OK) {
		smtp_channel_failed(ch, msg, "channel_auth_failed",
		    xasprintf("smtp: the server offers no AUTH and a username "
		              "is set: nothing sent unauthenticated"));
		goto out;
	}
	if (cc == CURLE_LOGIN_DENIED) {
		smtp_channel_failed(ch, msg, "channel_auth_failed",
		    xasprintf("smtp: login refused: %s",
		        x->reply[0] != '\0' ? x->reply : what));
		goto out;
	}
	if (cc != CURLE_OK && x->rejected != SMTP_STAGE_OTHER) {
		smtp_channel_failed(ch, msg, "channel_rejected",
		    xasprintf("smtp: the server refused the %s: %s",
		        x->rejected == SMTP_STAGE_GREETING ? "connection"
		            : x->rejected == SMTP_STAGE_EHLO
		            ? "EHLO"
		            : "sender (MAIL FROM)",
		        x->reject));
		goto out;
	}
	msg->result = smtp_classify(cc, code);
	msg->status_code = code > 0 && code < 1000 ? (int)code : 0;
	if (msg->result == SEND_OK) {
		ch->reported = false;
		/* Partial refusal: delivered to the others, so it counts as
		 * sent (a retry would duplicate it for them); the refused
		 * recipients are recorded. */
		if (x->nrefused > 0)
			msg->error =
			    xasprintf("smtp: %u recipient(s) refused: %s",
			        x->nrefused, x->refused.data);
	} else if (x->nrefused > 0 && x->mail != NULL &&
	    x->nrefused >= x->mail->nrcpt)
		msg->error = xasprintf(
		    "smtp: all recipients refused: %s", x->refused.data);
	else if (cc == CURLE_USE_SSL_FAILED)
		msg->error = xasprintf(
		    "smtp: %s (tls = \"required\": nothing sent in clear)",
		    what);
	else if (code >= 400 && x->reply[0] != '\0')
		msg->error = xasprintf("smtp: %s", x->reply);
	else
		msg->error = xasprintf("smtp: %s", what);
out:
	smtp_reset(x);
	return msg;
}

static const struct channel_multi_ops smtp_multi_ops = {
	.prepare = smtp_prepare,
	.cancel = smtp_cancel,
	.start = smtp_start,
	.finish = smtp_finish,
};

static void
smtp_send(struct channel *ch, struct outbox_msg **msgs, size_t n,
    struct send_ctl *ctl)
{
	ch->failed = false;
	channel_multi_send(
	    ch, ch->multi, ch->nxfers, &smtp_multi_ops, msgs, n, ctl);
}

static void
smtp_stream(struct channel *ch, struct send_ctl *ctl)
{
	ch->failed = false;
	channel_multi_stream(ch, ch->multi, ch->nxfers, &smtp_multi_ops, ctl);
}

static void
smtp_wakeup(struct channel *ch)
{
	curl_multi_wakeup(ch->multi);
}

const struct channel_ops channel_smtp_ops = {
	.open = smtp_open,
	.send = smtp_send,
	.stream = smtp_stream,
	.wakeup = smtp_wakeup,
	.close = smtp_close,
	.check = smtp_check,
};
