/* cmd-outbox-enqueue.c: insert one message, for operators and scripts. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "channel.h"
#include "cmd.h"
#include "db.h"
#include "duration.h"
#include "outbox-admin.h"
#include "schedule.h"
#include "util.h"

/* Largest payload file read: far above any sane message. */
#define ENQUEUE_MAX_PAYLOAD (16 * 1024 * 1024)

/* The column widths of outbox_messages, in characters (utf8mb4). */
#define ENQUEUE_CHANNEL_MAX 64
#define ENQUEUE_TYPE_MAX 128
#define ENQUEUE_KEY_MAX 191

/* A value that is not UTF-8, or longer than its column, is bad input
 * (65), said before the server refuses it as an error that would read
 * "database unavailable". */
static int
enqueue_too_long(const char *option, const char *v, size_t max)
{
	const unsigned char *p;
	size_t               n = 0;

	if (v == NULL)
		return 0;
	if (!utf8_valid(v)) {
		fprintf(stderr,
		    "cronguard: outbox enqueue: %s is not valid UTF-8\n",
		    option);
		return 1;
	}
	for (p = (const unsigned char *)v; *p != '\0'; p++)
		if ((*p & 0xC0) != 0x80) /* not a UTF-8 continuation byte */
			n++;
	if (n <= max)
		return 0;
	fprintf(stderr,
	    "cronguard: outbox enqueue: %s is %zu characters long, at most "
	    "%zu\n",
	    option, n, max);
	return 1;
}

/* --at TIME: RFC 3339, or a time without an offset in UTC
 * (tzone_parse_instant, the one validator of an operator's time).  0, or -1
 * with *why. */
static int
enqueue_parse_at(const char *at, int64_t *t, char **why)
{
	struct tzone *utc = NULL;
	int           rc;

	if (tzone_open("+00:00", &utc, why) != 0)
		return -1;
	rc = tzone_parse_instant(utc, at, t, why);
	tzone_free(utc);
	return rc;
}

/* --at TIME | --delay DUR, --expires-in DUR into *w.  Returns 0, or
 * EXIT_USAGE having said why. */
static int
enqueue_when(struct cmd_ctx *ctx, struct outbox_when *w)
{
	const char *at, *delay, *exp, *e;
	char       *why = NULL;
	int         rc;

	memset(w, 0, sizeof *w);
	at = cmd_opt_value(ctx, "at");
	delay = cmd_opt_value(ctx, "delay");
	exp = cmd_opt_value(ctx, "expires-in");
	if (at != NULL && delay != NULL)
		return cmd_usage_error(
		    ctx->entry, "give at most one of --at and --delay");
	if (at != NULL) {
		if (enqueue_parse_at(at, &w->at_s, &why) != 0) {
			rc = cmd_usage_error(ctx->entry, "--at: %s", why);
			free(why);
			return rc;
		}
		w->at_set = true;
	}
	if (delay != NULL && duration_parse(delay, &w->delay_ms, &e) != 0)
		return cmd_usage_error(ctx->entry, "--delay: %s: %s", delay, e);
	if (exp != NULL && duration_parse(exp, &w->expires_in_ms, &e) != 0)
		return cmd_usage_error(
		    ctx->entry, "--expires-in: %s: %s", exp, e);
	if (exp != NULL && w->expires_in_ms <= 0)
		return cmd_usage_error(
		    ctx->entry, "--expires-in: %s: must be more than 0", exp);
	return 0;
}

/* What the arguments say (cmd_outbox_enqueue_check), for the exec. */
struct enqueue_args {
	struct outbox_when when;
	const char        *channel, *type, *key; /* key NULL: none */
	const char        *payload;              /* --payload, or data */
	char              *data; /* --payload-file's bytes; NULL */
};

/* --payload-file's bytes into a->data and a->payload: EXIT_DATAERR
 * having said why when it cannot be read or holds a NUL byte. */
static int
enqueue_read_payload(struct enqueue_args *a, const char *file)
{
	char  *errstr = NULL;
	size_t len;

	a->data = read_file(strcmp(file, "-") == 0 ? "/dev/stdin" : file,
	    ENQUEUE_MAX_PAYLOAD, &len, &errstr);
	if (a->data == NULL) {
		fprintf(stderr, "cronguard: outbox enqueue: %s\n", errstr);
		free(errstr);
		return EXIT_DATAERR;
	}
	if (memchr(a->data, '\0', len) != NULL) {
		fprintf(stderr,
		    "cronguard: outbox enqueue: %s: payload contains a NUL byte\n",
		    file);
		return EXIT_DATAERR;
	}
	a->payload = a->data;
	return 0;
}

/* The payload is JSON, and one its channel can send when it is
 * configured here: else EXIT_DATAERR having said why. */
static int
enqueue_check_payload(const struct conf *c, const struct enqueue_args *a)
{
	const struct conf_channel *cc;
	json_t                    *j;
	json_error_t               jerr;
	char                      *errstr = NULL;

	/* "\u0000" inside a string is valid JSON (RFC 8259), and so is an
	 * integer beyond 64 bits. */
	j = json_loads(a->payload,
	    JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &jerr);
	if (j == NULL) {
		fprintf(stderr,
		    "cronguard: outbox enqueue: payload is not valid JSON: line %d column %d: %s\n",
		    jerr.line, jerr.column, jerr.text);
		return EXIT_DATAERR;
	}
	json_decref(j);
	if ((cc = conf_channel_find(c, a->channel)) == NULL) {
		fprintf(stderr,
		    "cronguard: outbox enqueue: warning: channel %s is not configured here; the message stays PENDING until a dispatcher serves it\n",
		    a->channel);
		return 0;
	}
	if (channel_check(cc, a->payload, strlen(a->payload), &errstr) != 0) {
		fprintf(stderr,
		    "cronguard: outbox enqueue: payload cannot be sent on channel %s: %s\n",
		    a->channel, errstr);
		free(errstr);
		return EXIT_DATAERR;
	}
	return 0;
}

static int
cmd_outbox_enqueue_check(struct cmd_ctx *ctx, const struct conf *c)
{
	struct enqueue_args *a = ctx->state;
	const char          *file;
	int                  rc;

	if ((rc = enqueue_when(ctx, &a->when)) != 0)
		return rc;
	a->channel = cmd_opt_value(ctx, "channel");
	a->type = cmd_opt_value(ctx, "type");
	a->key = cmd_opt_value(ctx, "key");
	a->payload = cmd_opt_value(ctx, "payload");
	file = cmd_opt_value(ctx, "payload-file");
	if (a->channel == NULL || a->type == NULL)
		return cmd_usage_error(
		    ctx->entry, "--channel and --type are required");
	if ((a->payload == NULL) == (file == NULL))
		return cmd_usage_error(
		    ctx->entry, "give one of --payload and --payload-file");
	if (enqueue_too_long("--channel", a->channel, ENQUEUE_CHANNEL_MAX) ||
	    enqueue_too_long("--type", a->type, ENQUEUE_TYPE_MAX) ||
	    enqueue_too_long("--key", a->key, ENQUEUE_KEY_MAX))
		return EXIT_DATAERR;
	if (file != NULL && (rc = enqueue_read_payload(a, file)) != 0)
		return rc;
	return enqueue_check_payload(c, a);
}

static void
cmd_outbox_enqueue_free(void *state)
{
	free(((struct enqueue_args *)state)->data);
}

static int
cmd_outbox_enqueue_exec(struct cmd_ctx *ctx, struct conf *c)
{
	const struct enqueue_args *a = ctx->state;
	char                      *errstr = NULL, message_id[37];
	unsigned long long         id = 0;
	enum db_status             st;
	int                        rc = EXIT_OK;

	if ((st = outbox_enqueue(ctx->db, a->channel, a->type, a->key,
	         a->payload, &a->when, &id, message_id, &errstr)) != DB_OK)
		rc = cmd_db_error(ctx, st, errstr);
	else
		printf("%llu %s\n", id, message_id);
	free(errstr);
	return rc;
}

static const struct cmd_option cmd_outbox_enqueue_options[] = {
	{ "channel", 1 },
	{ "type", 1 },
	{ "key", 1 },
	{ "payload", 1 },
	{ "payload-file", 1 },
	{ "at", 1 },
	{ "delay", 1 },
	{ "expires-in", 1 },
	{ NULL, 0 },
};

const struct cmd_entry cmd_outbox_enqueue_entry = {
	.name = "outbox enqueue",
	.usage =
	    "--channel name --type type [--key key] (--payload json | --payload-file file) [--at time | --delay duration] [--expires-in duration]",
	.summary =
	    "Insert one PENDING message, due now, at a time or after a delay, and print its id and message_id.  Exit 65 if the payload is not valid JSON, or could never be sent on its configured channel.",
	.options = cmd_outbox_enqueue_options,
	.flags = CMD_NEEDS_DB | CMD_OPENS_DB,
	.check = cmd_outbox_enqueue_check,
	.state_size = sizeof(struct enqueue_args),
	.state_free = cmd_outbox_enqueue_free,
	.exec = cmd_outbox_enqueue_exec,
};
