/* conf.c: the configuration (CONTRACT section 4), parsed with libconfig. */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "conf.h"
#include "duration.h"
#include "util.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif

#define LOCK_NAME_MAX 64 /* MySQL's limit for GET_LOCK names */
#define NAME_MAX_LEN 64  /* channel names go into VARCHAR(64) */
#define MASKED "********"

/* Enumerations are stored through an int: keep that honest. */
_Static_assert(sizeof(enum tls_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum guard_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(enum on_lock_lost) == sizeof(int), "enum size");
_Static_assert(sizeof(enum ordering) == sizeof(int), "enum size");
_Static_assert(sizeof(enum channel_type) == sizeof(int), "enum size");

enum key_kind {
	K_STR,   /* non-empty string, no control characters */
	K_TEXT,  /* non-empty string, newlines allowed (SQL) */
	K_SENUM, /* string from values[], stored as a string */
	K_ENUM,  /* string from values[], stored as its index */
	K_DUR,   /* duration string or bare seconds, stored in ms */
	K_UINT,
	K_INT,
	K_LL,
	K_DBL,
	K_BOOL,
	K_STRV,       /* array of strings; count at off2 */
	K_SECRET,     /* inline secret: the file must be private */
	K_SECRETFILE, /* path at off, its content at off2 */
	K_GROUP,      /* nested group of keys in the same struct */
};

/* Channel types a key is valid for (0: every type). */
#define CH_SMTP 0x1
#define CH_HTTP 0x2
#define CH_AMQP 0x4

struct key {
	const char        *name;
	enum key_kind      kind;
	size_t             off;
	size_t             off2;
	long long          min, max; /* integers; durations in ms */
	double             dmin, dmax;
	const char *const *values;
	const struct key  *sub;
	unsigned           types;
};

static const char *const tls_modes[] = { "disabled", "preferred", "required",
	"verify_identity", NULL };
static const char *const orderings[] = { "per_key", "none", NULL };
static const char *const channel_types[] = { "smtp", "http", "amqp", NULL };
static const char *const smtp_tls[] = { "none", "required", NULL };
static const char *const http_methods[] = { "POST", "PUT", "PATCH", NULL };
static const char *const guards[] = { "named_lock", "local", "none", NULL };
static const char *const lock_lost[] = { "terminate", "continue", NULL };

#define DB(f) offsetof(struct conf_database, f)
static const struct key database_tls_keys[] = {
	{ "mode", K_ENUM, DB(tls_mode), 0, 0, 0, 0, 0, tls_modes, NULL, 0 },
	{ "ca", K_STR, DB(tls_ca), 0, 0, 0, 0, 0, NULL, NULL, 0 },
	{ "cert", K_STR, DB(tls_cert), 0, 0, 0, 0, 0, NULL, NULL, 0 },
	{ "key", K_STR, DB(tls_key), 0, 0, 0, 0, 0, NULL, NULL, 0 },
	{ NULL, K_STR, 0, 0, 0, 0, 0, 0, NULL, NULL, 0 }
};
static const struct key database_keys[] = { { "host", K_STR, DB(host), 0, 0, 0,
	                                        0, 0, NULL, NULL, 0 },
	{ "port", K_UINT, DB(port), 0, 1, 65535, 0, 0, NULL, NULL, 0 },
	{ "socket", K_STR, DB(socket), 0, 0, 0, 0, 0, NULL, NULL, 0 },
	{ "user", K_STR, DB(user), 0, 0, 0, 0, 0, NULL, NULL, 0 },
	{ "password", K_SECRET, DB(password), 0, 0, 0, 0, 0, NULL, NULL, 0 },
	{ "password_file", K_SECRETFILE, DB(password_file), DB(password), 0, 0,
	    0, 0, NULL, NULL, 0 },
	{ "option_file", K_STR, DB(option_file), 0, 0, 0, 0, 0, NULL, NULL, 0 },
	{ "option_group", K_STR, DB(option_group), 0, 0, 0, 0, 0, NULL, NULL,
	    0 },
	{ "name", K_STR, DB(name), 0, 0, 0, 0, 0, NULL, NULL, 0 },
	{ "connect_timeout", K_DUR, DB(connect_timeout_ms), 0, 1000,
	    DURATION_MAX_MS, 0, 0, NULL, NULL, 0 },
	{ "read_timeout", K_DUR, DB(read_timeout_ms), 0, 1000, DURATION_MAX_MS,
	    0, 0, NULL, NULL, 0 },
	{ "write_timeout", K_DUR, DB(write_timeout_ms), 0, 1000,
	    DURATION_MAX_MS, 0, 0, NULL, NULL, 0 },
	{ "tls", K_GROUP, 0, 0, 0, 0, 0, 0, NULL, database_tls_keys, 0 },
	{ NULL, K_STR, 0, 0, 0, 0, 0, 0, NULL, NULL, 0 } };
#undef DB

#define OB(f) offsetof(struct conf_outbox, f)
static const struct key outbox_backoff_keys[] = {
	{ "initial", K_DUR, OB(backoff_initial_ms), 0, 1, DURATION_MAX_MS, 0, 0,
	    NULL, NULL, 0 },
	{ "multiplier", K_DBL, OB(backoff_multiplier), 0, 0, 0, 1, 100, NULL,
	    NULL, 0 },
	{ "max", K_DUR, OB(backoff_max_ms), 0, 1, DURATION_MAX_MS, 0, 0, NULL,
	    NULL, 0 },
	{ "jitter", K_DBL, OB(backoff_jitter), 0, 0, 0, 0, 1, NULL, NULL, 0 },
	{ NULL, K_STR, 0, 0, 0, 0, 0, 0, NULL, NULL, 0 }
};
static const struct key outbox_threshold_keys[] = {
	{ "pending_warn", K_LL, OB(pending_warn), 0, 0, LLONG_MAX, 0, 0, NULL,
	    NULL, 0 },
	{ "pending_crit", K_LL, OB(pending_crit), 0, 0, LLONG_MAX, 0, 0, NULL,
	    NULL, 0 },
	{ "oldest_due_warn", K_DUR, OB(oldest_due_warn_ms), 0, 0,
	    DURATION_MAX_MS, 0, 0, NULL, NULL, 0 },
	{ "oldest_due_crit", K_DUR, OB(oldest_due_crit_ms), 0, 0,
	    DURATION_MAX_MS, 0, 0, NULL, NULL, 0 },
	{ "failed_warn", K_LL, OB(failed_warn), 0, 0, LLONG_MAX, 0, 0, NULL,
	    NULL, 0 },
	{ "failed_crit", K_LL, OB(failed_crit), 0, 0, LLONG_MAX, 0, 0, NULL,
	    NULL, 0 },
	{ NULL, K_STR, 0, 0, 0, 0, 0, 0, NULL, NULL, 0 }
};
static const struct key outbox_keys[] = { { "batch_size", K_UINT,
	                                      OB(batch_size), 0, 1, 1000, 0, 0,
	                                      NULL, NULL, 0 },
	{ "poll_interval", K_DUR, OB(poll_interval_ms), 0, 1, DURATION_MAX_MS,
	    0, 0, NULL, NULL, 0 },
	{ "lease", K_DUR, OB(lease_ms), 0, 1000, DURATION_MAX_MS, 0, 0, NULL,
	    NULL, 0 },
	{ "watchdog", K_DUR, OB(watchdog_ms), 0, 1000, DURATION_MAX_MS, 0, 0,
	    NULL, NULL, 0 },
	{ "max_attempts", K_UINT, OB(max_attempts), 0, 1, 1000000, 0, 0, NULL,
	    NULL, 0 },
	{ "backoff", K_GROUP, 0, 0, 0, 0, 0, 0, NULL, outbox_backoff_keys, 0 },
	{ "ordering", K_ENUM, OB(ordering), 0, 0, 0, 0, 0, orderings, NULL, 0 },
	{ "keep_sent", K_BOOL, OB(keep_sent), 0, 0, 0, 0, 0, NULL, NULL, 0 },
	{ "thresholds", K_GROUP, 0, 0, 0, 0, 0, 0, NULL, outbox_threshold_keys,
	    0 },
	{ NULL, K_STR, 0, 0, 0, 0, 0, 0, NULL, NULL, 0 } };
#undef OB

#define CH(f) offsetof(struct conf_channel, f)
static const struct key channel_circuit_keys[] = {
	{ "failures", K_UINT, CH(circuit_failures), 0, 0, 1000000, 0, 0, NULL,
	    NULL, 0 },
	{ "cooldown", K_DUR, CH(circuit_cooldown_ms), 0, 1000, DURATION_MAX_MS,
	    0, 0, NULL, NULL, 0 },
	{ NULL, K_STR, 0, 0, 0, 0, 0, 0, NULL, NULL, 0 }
};
static const struct key channel_keys[] = {
	{ "type", K_ENUM, CH(type), 0, 0, 0, 0, 0, channel_types, NULL, 0 },
	{ "url", K_STR, CH(url), 0, 0, 0, 0, 0, NULL, NULL, 0 },
	{ "timeout", K_DUR, CH(timeout_ms), 0, 1, DURATION_MAX_MS, 0, 0, NULL,
	    NULL, 0 },
	{ "rate", K_DBL, CH(rate), 0, 0, 0, 0, 1e6, NULL, NULL, 0 },
	{ "daily_quota", K_LL, CH(daily_quota), 0, 0, LLONG_MAX, 0, 0, NULL,
	    NULL, 0 },
	{ "circuit", K_GROUP, 0, 0, 0, 0, 0, 0, NULL, channel_circuit_keys, 0 },
	{ "tls_ca", K_STR, CH(tls_ca), 0, 0, 0, 0, 0, NULL, NULL, 0 },
	{ "username", K_STR, CH(username), 0, 0, 0, 0, 0, NULL, NULL,
	    CH_SMTP | CH_AMQP },
	{ "password", K_SECRET, CH(password), 0, 0, 0, 0, 0, NULL, NULL,
	    CH_SMTP | CH_AMQP },
	{ "password_file", K_SECRETFILE, CH(password_file), CH(password), 0, 0,
	    0, 0, NULL, NULL, CH_SMTP | CH_AMQP },
	{ "from", K_STR, CH(from), 0, 0, 0, 0, 0, NULL, NULL, CH_SMTP },
	{ "tls", K_SENUM, CH(tls), 0, 0, 0, 0, 0, smtp_tls, NULL, CH_SMTP },
	{ "connections", K_UINT, CH(connections), 0, 1, 1000, 0, 0, NULL, NULL,
	    CH_SMTP },
	{ "max_size", K_LL, CH(max_size), 0, 1, LLONG_MAX, 0, 0, NULL, NULL,
	    CH_SMTP },
	{ "method", K_SENUM, CH(method), 0, 0, 0, 0, 0, http_methods, NULL,
	    CH_HTTP },
	{ "headers", K_STRV, CH(headers), CH(nheaders), 0, 0, 0, 0, NULL, NULL,
	    CH_HTTP },
	{ "signing_secret", K_SECRET, CH(signing_secret), 0, 0, 0, 0, 0, NULL,
	    NULL, CH_HTTP },
	{ "signing_secret_file", K_SECRETFILE, CH(signing_secret_file),
	    CH(signing_secret), 0, 0, 0, 0, NULL, NULL, CH_HTTP },
	{ "concurrency", K_UINT, CH(concurrency), 0, 1, 1000, 0, 0, NULL, NULL,
	    CH_HTTP },
	{ "exchange", K_STR, CH(exchange), 0, 0, 0, 0, 0, NULL, NULL, CH_AMQP },
	{ "routing_key", K_STR, CH(routing_key), 0, 0, 0, 0, 0, NULL, NULL,
	    CH_AMQP },
	{ "mandatory", K_BOOL, CH(mandatory), 0, 0, 0, 0, 0, NULL, NULL,
	    CH_AMQP },
	{ "unroutable_retry", K_BOOL, CH(unroutable_retry), 0, 0, 0, 0, 0, NULL,
	    NULL, CH_AMQP },
	{ NULL, K_STR, 0, 0, 0, 0, 0, 0, NULL, NULL, 0 }
};
#undef CH

#define JB(f) offsetof(struct conf_job, f)
static const struct key job_keys[] = { { "command", K_STRV, JB(command),
	                                   JB(ncommand), 0, 0, 0, 0, NULL, NULL,
	                                   0 },
	{ "sql", K_TEXT, JB(sql), 0, 0, 0, 0, 0, NULL, NULL, 0 },
	{ "max_runtime", K_DUR, JB(max_runtime_ms), 0, 1000, DURATION_MAX_MS, 0,
	    0, NULL, NULL, 0 },
	{ "timeout", K_DUR, JB(timeout_ms), 0, 0, DURATION_MAX_MS, 0, 0, NULL,
	    NULL, 0 },
	{ "expect_every", K_DUR, JB(expect_every_ms), 0, 0, DURATION_MAX_MS, 0,
	    0, NULL, NULL, 0 },
	{ "grace", K_DUR, JB(grace_ms), 0, 0, DURATION_MAX_MS, 0, 0, NULL, NULL,
	    0 },
	{ "heartbeat", K_DUR, JB(heartbeat_ms), 0, 100, DURATION_MAX_MS, 0, 0,
	    NULL, NULL, 0 },
	{ "guard", K_ENUM, JB(guard), 0, 0, 0, 0, 0, guards, NULL, 0 },
	{ "lock", K_STR, JB(lock), 0, 0, 0, 0, 0, NULL, NULL, 0 },
	{ "on_lock_lost", K_ENUM, JB(on_lock_lost), 0, 0, 0, 0, 0, lock_lost,
	    NULL, 0 },
	{ "busy_exit", K_INT, JB(busy_exit), 0, 0, 255, 0, 0, NULL, NULL, 0 },
	{ NULL, K_STR, 0, 0, 0, 0, 0, 0, NULL, NULL, 0 } };
#undef JB

#define CF(f) offsetof(struct conf, f)
static const struct key alert_keys[] = { { "url", K_STR, CF(alert_url), 0, 0, 0,
	                                     0, 0, NULL, NULL, 0 },
	{ "timeout", K_DUR, CF(alert_timeout_ms), 0, 1, DURATION_MAX_MS, 0, 0,
	    NULL, NULL, 0 },
	{ NULL, K_STR, 0, 0, 0, 0, 0, 0, NULL, NULL, 0 } };
static const struct key top_keys[] = { { "runtime_dir", K_STR, CF(runtime_dir),
	                                   0, 0, 0, 0, 0, NULL, NULL, 0 },
	{ NULL, K_STR, 0, 0, 0, 0, 0, 0, NULL, NULL, 0 } };
#undef CF

const char *const conf_keys[] = { "runtime_dir", "database.host",
	"database.port", "database.socket", "database.user",
	"database.password", "database.password_file", "database.option_file",
	"database.option_group", "database.name", "database.connect_timeout",
	"database.read_timeout", "database.write_timeout", "database.tls.mode",
	"database.tls.ca", "database.tls.cert", "database.tls.key",
	"outbox.batch_size", "outbox.poll_interval", "outbox.lease",
	"outbox.watchdog", "outbox.max_attempts", "outbox.backoff.initial",
	"outbox.backoff.multiplier", "outbox.backoff.max",
	"outbox.backoff.jitter", "outbox.ordering", "outbox.keep_sent",
	"outbox.thresholds.pending_warn", "outbox.thresholds.pending_crit",
	"outbox.thresholds.oldest_due_warn",
	"outbox.thresholds.oldest_due_crit", "outbox.thresholds.failed_warn",
	"outbox.thresholds.failed_crit", "channels.*.type", "channels.*.url",
	"channels.*.timeout", "channels.*.rate", "channels.*.daily_quota",
	"channels.*.circuit.failures", "channels.*.circuit.cooldown",
	"channels.*.tls_ca", "channels.*.username", "channels.*.password",
	"channels.*.password_file", "channels.*.from", "channels.*.tls",
	"channels.*.connections", "channels.*.max_size", "channels.*.method",
	"channels.*.headers", "channels.*.signing_secret",
	"channels.*.signing_secret_file", "channels.*.concurrency",
	"channels.*.exchange", "channels.*.routing_key", "channels.*.mandatory",
	"channels.*.unroutable_retry", "jobs.*.command", "jobs.*.sql",
	"jobs.*.max_runtime", "jobs.*.timeout", "jobs.*.expect_every",
	"jobs.*.grace", "jobs.*.heartbeat", "jobs.*.guard", "jobs.*.lock",
	"jobs.*.on_lock_lost", "jobs.*.busy_exit", "alert.url", "alert.timeout",
	NULL };

/* Parser state: the first error wins. */
struct parse {
	const char  *path;
	char        *dir; /* of path: the include directory */
	struct conf *c;
	config_t     cfg;
	char        *err;
};

static int conf_parse_group(struct parse *, const config_setting_t *,
    const struct key *, void *, unsigned);

/* "database.tls.mode", "jobs.x.command[1]": the setting's key path. */
static void
conf_key_path(const config_setting_t *s, struct buf *b)
{
	const config_setting_t *parent;
	const char             *name;

	if (s == NULL || (parent = config_setting_parent(s)) == NULL)
		return;
	conf_key_path(parent, b);
	if ((name = config_setting_name(s)) != NULL) {
		if (b->len > 0)
			buf_addc(b, '.');
		buf_adds(b, name);
	} else
		buf_printf(b, "[%d]", config_setting_index(s));
}

/* The file a setting came from (allocated): the configuration itself, or
 * an @include'd file, which libconfig names relative to the include
 * directory. */
static char *
conf_resolve(struct parse *p, const char *file)
{
	if (file == NULL || strcmp(file, p->path) == 0)
		return xstrdup(p->path);
	if (*file == '/' || p->dir == NULL)
		return xstrdup(file);
	return xasprintf("%s/%s", p->dir, file);
}

static char *
conf_source_file(struct parse *p, const config_setting_t *s)
{
	return conf_resolve(
	    p, s != NULL ? config_setting_source_file(s) : NULL);
}

/* Record "file:line: msg" for setting s (the first error only). */
static int __attribute__((format(printf, 3, 4)))
conf_error(struct parse *p, const config_setting_t *s, const char *fmt, ...)
{
	va_list ap;
	char   *msg, *file;
	int     line = 0;

	if (p->err != NULL)
		return -1;
	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	if (s != NULL)
		line = config_setting_source_line(s);
	file = conf_source_file(p, s);
	p->err = xasprintf("%s:%d: %s", file, line, msg);
	free(file);
	free(msg);
	return -1;
}

/* Same, naming the key first: "file:line: outbox.lease: msg". */
static int __attribute__((format(printf, 3, 4)))
conf_key_error(struct parse *p, const config_setting_t *s, const char *fmt, ...)
{
	va_list    ap;
	struct buf b;
	char      *msg;
	int        rv;

	buf_init(&b);
	conf_key_path(s, &b);
	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	rv = conf_error(p, s, "%s: %s", b.data != NULL ? b.data : "", msg);
	free(msg);
	buf_free(&b);
	return rv;
}

static const char *
conf_type_name(const config_setting_t *s)
{
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_GROUP:
		return "a group";
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		return "an integer";
	case CONFIG_TYPE_FLOAT:
		return "a number";
	case CONFIG_TYPE_STRING:
		return "a string";
	case CONFIG_TYPE_BOOL:
		return "a boolean";
	case CONFIG_TYPE_ARRAY:
		return "an array";
	case CONFIG_TYPE_LIST:
		return "a list";
	}
	return "something else";
}

static int
conf_wrong_type(struct parse *p, const config_setting_t *s, const char *want)
{
	return conf_key_error(
	    p, s, "expected %s, not %s", want, conf_type_name(s));
}

static int
conf_is_int(const config_setting_t *s)
{
	return config_setting_type(s) == CONFIG_TYPE_INT ||
	    config_setting_type(s) == CONFIG_TYPE_INT64;
}

static const char *
conf_has_control(const char *v, int allow_newlines)
{
	const unsigned char *u;

	for (u = (const unsigned char *)v; *u != '\0'; u++) {
		if (allow_newlines && (*u == '\n' || *u == '\t' || *u == '\r'))
			continue;
		if (*u < 0x20 || *u == 0x7f)
			return (const char *)u;
	}
	return NULL;
}

/* A string setting: must be a non-empty string without control
 * characters (they would end up in headers, logs and lock names). */
static const char *
conf_get_string(struct parse *p, const config_setting_t *s, int multiline)
{
	const char *v;

	if (config_setting_type(s) != CONFIG_TYPE_STRING) {
		conf_wrong_type(p, s, "a string");
		return NULL;
	}
	v = config_setting_get_string(s);
	if (v == NULL || *v == '\0') {
		conf_key_error(p, s, "must not be empty");
		return NULL;
	}
	if (conf_has_control(v, multiline) != NULL) {
		conf_key_error(p, s, "contains a control character");
		return NULL;
	}
	return v;
}

static void
conf_join_values(const char *const *values, struct buf *b)
{
	size_t i;

	for (i = 0; values[i] != NULL; i++) {
		if (i > 0)
			buf_adds(b, values[i + 1] == NULL ? " or " : ", ");
		buf_adds(b, values[i]);
	}
}

static int
conf_get_enum(
    struct parse *p, const config_setting_t *s, const char *const *values)
{
	const char *v;
	struct buf  b;
	int         i;

	if ((v = conf_get_string(p, s, 0)) == NULL)
		return -1;
	for (i = 0; values[i] != NULL; i++) {
		if (strcmp(v, values[i]) == 0)
			return i;
	}
	buf_init(&b);
	conf_join_values(values, &b);
	conf_key_error(p, s, "invalid value \"%s\" (expected %s)", v, b.data);
	buf_free(&b);
	return -1;
}

static int
conf_get_duration(struct parse *p, const config_setting_t *s,
    const struct key *k, int64_t *out)
{
	const char *why;
	char        min[32];
	long long   secs;
	int64_t     ms;

	if (conf_is_int(s)) {
		secs = config_setting_get_int64(s);
		if (secs < 0)
			return conf_key_error(
			    p, s, "bad duration %lld: negative", secs);
		if (secs > DURATION_MAX_MS / 1000)
			return conf_key_error(
			    p, s, "bad duration %lld: too large", secs);
		ms = secs * 1000;
	} else if (config_setting_type(s) == CONFIG_TYPE_STRING) {
		if (duration_parse(config_setting_get_string(s), &ms, &why) ==
		    -1)
			return conf_key_error(p, s, "bad duration \"%s\": %s",
			    config_setting_get_string(s), why);
	} else
		return conf_wrong_type(p, s,
		    "a duration (\"250ms\", \"30s\", \"5m\", \"1h\", \"7d\" "
		    "or bare seconds)");
	if (ms < k->min) {
		duration_format(k->min, min, sizeof min);
		return conf_key_error(p, s, "must be at least %s", min);
	}
	*out = ms;
	return 0;
}

static int
conf_get_integer(struct parse *p, const config_setting_t *s,
    const struct key *k, long long *out)
{
	long long v;

	if (!conf_is_int(s))
		return conf_wrong_type(p, s, "an integer");
	v = config_setting_get_int64(s);
	if (v < k->min || v > k->max)
		return conf_key_error(
		    p, s, "%lld is out of range %lld..%lld", v, k->min, k->max);
	*out = v;
	return 0;
}

static int
conf_get_number(struct parse *p, const config_setting_t *s, const struct key *k,
    double *out)
{
	double v;

	if (conf_is_int(s))
		v = (double)config_setting_get_int64(s);
	else if (config_setting_type(s) == CONFIG_TYPE_FLOAT)
		v = config_setting_get_float(s);
	else
		return conf_wrong_type(p, s, "a number");
	if (!isfinite(v) || v < k->dmin || v > k->dmax)
		return conf_key_error(
		    p, s, "%g is out of range %g..%g", v, k->dmin, k->dmax);
	*out = v;
	return 0;
}

static int
conf_get_strv(
    struct parse *p, const config_setting_t *s, char ***outv, size_t *outn)
{
	const config_setting_t *e;
	const char             *v;
	char                  **argv;
	int                     i, n;

	if (config_setting_type(s) != CONFIG_TYPE_ARRAY &&
	    config_setting_type(s) != CONFIG_TYPE_LIST)
		return conf_wrong_type(p, s, "an array of strings [ \"...\" ]");
	n = config_setting_length(s);
	argv = xcalloc((size_t)n + 1, sizeof *argv);
	for (i = 0; i < n; i++) {
		e = config_setting_get_elem(s, (unsigned)i);
		if ((v = conf_get_string(p, e, 0)) == NULL)
			break;
		argv[i] = xstrdup(v);
	}
	*outv = argv;
	*outn = (size_t)i;
	return i == n ? 0 : -1;
}

/* An inline secret is only acceptable in a file nobody else can read. */
static int
conf_check_private(
    struct parse *p, const config_setting_t *s, const char *instead)
{
	char       *file = conf_source_file(p, s);
	struct stat st;
	int         rv = 0;

	if (stat(file, &st) == -1)
		rv = conf_key_error(
		    p, s, "cannot stat %s: %s", file, strerror(errno));
	else if (st.st_mode & (S_IRGRP | S_IROTH))
		rv = conf_key_error(p, s,
		    "a secret given inline needs %s readable by its owner only "
		    "(chmod 600 %s), or %s",
		    file, file, instead);
	free(file);
	return rv;
}

/* A URL whose userinfo holds a password ("smtp://user:pw@host") is an
 * inline secret like any other. */
static int
conf_url_has_password(const char *url)
{
	const char *auth, *end, *at, *colon;

	if ((auth = strstr(url, "://")) == NULL)
		return 0;
	auth += 3;
	end = auth + strcspn(auth, "/?#");
	for (at = end; at > auth && at[-1] != '@'; at--)
		;
	if (at == auth)
		return 0;
	colon = memchr(auth, ':', (size_t)(at - auth));
	return colon != NULL;
}

static int
conf_check_url_secret(
    struct parse *p, const config_setting_t *s, const char *url)
{
	if (s == NULL || !conf_url_has_password(url))
		return 0;
	return conf_check_private(p, s,
	    "take the password out of the URL (username and password_file)");
}

static int
conf_read_secret(
    struct parse *p, const config_setting_t *s, const char *path, char **out)
{
	struct stat st;
	char       *err = NULL;

	if (stat(path, &st) == -1)
		return conf_key_error(
		    p, s, "cannot read %s: %s", path, strerror(errno));
	if (st.st_mode & S_IROTH)
		return conf_key_error(p, s,
		    "%s is readable by others (chmod o-r %s)", path, path);
	if ((*out = read_secret_file(path, &err)) == NULL) {
		conf_key_error(p, s, "%s", err);
		free(err);
		return -1;
	}
	if (**out == '\0')
		return conf_key_error(p, s, "%s is empty", path);
	return 0;
}

static int
conf_parse_key(struct parse *p, const config_setting_t *s, const struct key *k,
    void *base, unsigned types)
{
	char       *field = (char *)base + k->off;
	char      **sp = (char **)(void *)field;
	char      **secret, *instead;
	const char *v;
	long long   ll;
	int         i, rv;

	switch (k->kind) {
	case K_STR:
	case K_TEXT:
		if ((v = conf_get_string(p, s, k->kind == K_TEXT)) == NULL)
			return -1;
		free(*sp);
		*sp = xstrdup(v);
		return 0;
	case K_SENUM:
		if ((i = conf_get_enum(p, s, k->values)) == -1)
			return -1;
		free(*sp);
		*sp = xstrdup(k->values[i]);
		return 0;
	case K_ENUM:
		if ((i = conf_get_enum(p, s, k->values)) == -1)
			return -1;
		memcpy(field, &i, sizeof i);
		return 0;
	case K_DUR:
		return conf_get_duration(p, s, k, (int64_t *)(void *)field);
	case K_UINT:
		if (conf_get_integer(p, s, k, &ll) == -1)
			return -1;
		*(unsigned *)(void *)field = (unsigned)ll;
		return 0;
	case K_INT:
		if (conf_get_integer(p, s, k, &ll) == -1)
			return -1;
		*(int *)(void *)field = (int)ll;
		return 0;
	case K_LL:
		return conf_get_integer(p, s, k, (long long *)(void *)field);
	case K_DBL:
		return conf_get_number(p, s, k, (double *)(void *)field);
	case K_BOOL:
		if (config_setting_type(s) != CONFIG_TYPE_BOOL)
			return conf_wrong_type(p, s, "true or false");
		*(bool *)(void *)field = config_setting_get_bool(s) != 0;
		return 0;
	case K_STRV:
		return conf_get_strv(p, s, (char ***)(void *)field,
		    (size_t *)(void *)((char *)base + k->off2));
	case K_SECRET:
		if ((v = conf_get_string(p, s, 0)) == NULL)
			return -1;
		if (*sp != NULL)
			return conf_key_error(p, s,
			    "give the secret inline or in %s_file, not both",
			    k->name);
		instead = xasprintf("use %s_file", k->name);
		rv = conf_check_private(p, s, instead);
		free(instead);
		if (rv == -1)
			return -1;
		*sp = xstrdup(v);
		return 0;
	case K_SECRETFILE:
		if ((v = conf_get_string(p, s, 0)) == NULL)
			return -1;
		secret = (char **)(void *)((char *)base + k->off2);
		if (*secret != NULL)
			return conf_key_error(p, s,
			    "give the secret inline or in a file, not both");
		free(*sp);
		*sp = xstrdup(v);
		return conf_read_secret(p, s, v, secret);
	case K_GROUP:
		return conf_parse_group(p, s, k->sub, base, types);
	}
	return conf_key_error(p, s, "internal error: unknown key kind");
}

static const struct key *
conf_find_key(const struct key *keys, const char *name)
{
	for (; keys->name != NULL; keys++) {
		if (strcmp(keys->name, name) == 0)
			return keys;
	}
	return NULL;
}

static const char *
conf_channel_type_name(unsigned types)
{
	return (types & CH_SMTP) ? "smtp" : (types & CH_AMQP) ? "amqp" : "http";
}

static int
conf_parse_group(struct parse *p, const config_setting_t *g,
    const struct key *keys, void *base, unsigned types)
{
	const config_setting_t *s;
	const struct key       *k;
	int                     i, n;

	if (!config_setting_is_group(g))
		return conf_wrong_type(p, g, "a group { ... }");
	n = config_setting_length(g);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(g, (unsigned)i);
		if ((k = conf_find_key(keys, config_setting_name(s))) == NULL)
			return conf_key_error(p, s, "unknown key");
		if (types != 0 && k->types != 0 && (k->types & types) == 0)
			return conf_key_error(p, s,
			    "not valid for a channel of type %s",
			    conf_channel_type_name(types));
		if (conf_parse_key(p, s, k, base, types) == -1)
			return -1;
	}
	return 0;
}

/* Channel and job names end up in SQL columns, file names, log fields
 * and metric labels: keep them to a safe alphabet. */
static int
conf_check_name(struct parse *p, const config_setting_t *s)
{
	const char *name = config_setting_name(s), *c;

	if (strlen(name) > NAME_MAX_LEN)
		return conf_key_error(
		    p, s, "name longer than %d characters", NAME_MAX_LEN);
	for (c = name; *c != '\0'; c++) {
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		        (*c >= '0' && *c <= '9') || *c == '-' || *c == '_'))
			return conf_key_error(p, s,
			    "name may only hold letters, digits, '-' and '_'");
	}
	return 0;
}

static int
conf_url_has_scheme(const char *url, const char *const *schemes)
{
	size_t n;

	for (; *schemes != NULL; schemes++) {
		n = strlen(*schemes);
		if (strncasecmp(url, *schemes, n) == 0 && url[n] != '\0')
			return 1;
	}
	return 0;
}

static const char *const smtp_schemes[] = { "smtp://", "smtps://", NULL };
static const char *const http_schemes[] = { "http://", "https://", NULL };
static const char *const amqp_schemes[] = { "amqp://", "amqps://", NULL };

static int
conf_check_header(struct parse *p, const config_setting_t *s, const char *h)
{
	const char *colon = strchr(h, ':'), *c;

	if (colon == NULL || colon == h)
		return conf_key_error(p, s, "\"%s\" is not \"Name: value\"", h);
	for (c = h; c < colon; c++) {
		/* RFC 9110 token characters. */
		if (*c <= ' ' || *c >= 0x7f ||
		    strchr("\"(),/:;<=>?@[\\]{}", *c) != NULL)
			return conf_key_error(
			    p, s, "\"%s\": invalid header name", h);
	}
	return 0;
}

/*
 * A CA bundle is checked at load time so a typo is a configuration error
 * (exit 78) rather than a certificate failure on every send; it must also
 * be one a TLS connection will use, since libcurl ignores it otherwise.
 */
static int
conf_check_tls_ca(
    struct parse *p, const config_setting_t *s, const struct conf_channel *ch)
{
	const config_setting_t *m = config_setting_get_member(s, "tls_ca");
	struct stat             st;
	FILE                   *f;
	int                     rv = 0;

	if ((f = fopen(ch->tls_ca, "r")) == NULL)
		return conf_key_error(
		    p, m, "cannot read %s: %s", ch->tls_ca, strerror(errno));
	if (fstat(fileno(f), &st) == -1)
		rv = conf_key_error(
		    p, m, "cannot stat %s: %s", ch->tls_ca, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		rv = conf_key_error(p, m, "%s is not a file", ch->tls_ca);
	fclose(f);
	if (rv == -1)
		return -1;
	if (ch->type == CHANNEL_HTTP &&
	    strncasecmp(ch->url, "https://", 8) != 0)
		return conf_key_error(p, m,
		    "has no effect without an https:// "
		    "URL");
	if (ch->type == CHANNEL_SMTP &&
	    strncasecmp(ch->url, "smtps://", 8) != 0 &&
	    strcmp(ch->tls, "required") != 0)
		return conf_key_error(p, m,
		    "has no effect without smtps:// or "
		    "tls = \"required\"");
	if (ch->type == CHANNEL_AMQP &&
	    strncasecmp(ch->url, "amqps://", 8) != 0)
		return conf_key_error(
		    p, m, "has no effect without an amqps:// URL");
	return 0;
}

static void
conf_channel_defaults(struct conf_channel *ch)
{
	ch->timeout_ms = ch->type == CHANNEL_SMTP ? 30000 : 10000;
	ch->circuit_cooldown_ms = 60 * 1000;
	if (ch->type == CHANNEL_SMTP) {
		ch->tls = xstrdup("none");
		ch->connections = 4;
		ch->max_size = 10 * 1024 * 1024;
	} else if (ch->type == CHANNEL_AMQP) {
		ch->exchange = xstrdup("");
		ch->mandatory = true;
	} else {
		ch->method = xstrdup("POST");
		ch->concurrency = 16;
	}
}

static int
conf_parse_channel(
    struct parse *p, const config_setting_t *s, struct conf_channel *ch)
{
	const config_setting_t *t, *m;
	unsigned                types;
	size_t                  i;
	int                     type;

	ch->name = xstrdup(config_setting_name(s));
	ch->line = config_setting_source_line(s);
	if (conf_check_name(p, s) == -1)
		return -1;
	if (!config_setting_is_group(s))
		return conf_wrong_type(p, s, "a group { type = ...; }");
	if ((t = config_setting_get_member(s, "type")) == NULL)
		return conf_key_error(
		    p, s, "type missing (smtp, http or amqp)");
	if ((type = conf_get_enum(p, t, channel_types)) == -1)
		return -1;
	ch->type = (enum channel_type)type;
#ifndef HAVE_AMQP
	if (ch->type == CHANNEL_AMQP)
		return conf_key_error(p, t,
		    "this cronguard was built without amqp support "
		    "(install librabbitmq-dev and run configure again)");
#endif
	types = ch->type == CHANNEL_SMTP ? CH_SMTP
	    : ch->type == CHANNEL_AMQP   ? CH_AMQP
	                                 : CH_HTTP;
	conf_channel_defaults(ch);
	if (conf_parse_group(p, s, channel_keys, ch, types) == -1)
		return -1;

	if (ch->url == NULL)
		return conf_key_error(p, s, "url missing");
	m = config_setting_get_member(s, "url");
	if (!conf_url_has_scheme(ch->url,
	        ch->type == CHANNEL_SMTP       ? smtp_schemes
	            : ch->type == CHANNEL_AMQP ? amqp_schemes
	                                       : http_schemes))
		return conf_key_error(p, m, "\"%s\" is not an %s URL", ch->url,
		    ch->type == CHANNEL_SMTP       ? "smtp:// or smtps://"
		        : ch->type == CHANNEL_AMQP ? "amqp:// or amqps://"
		                                   : "http:// or https://");
	if (conf_check_url_secret(p, m, ch->url) == -1)
		return -1;
	if (ch->tls_ca != NULL && conf_check_tls_ca(p, s, ch) == -1)
		return -1;
	if (ch->type == CHANNEL_SMTP && ch->from == NULL)
		return conf_key_error(p, s, "from missing (required for smtp)");
	if (ch->password != NULL && ch->username == NULL)
		return conf_key_error(p, s, "a password needs a username");
	m = config_setting_get_member(s, "headers");
	for (i = 0; i < ch->nheaders; i++) {
		if (conf_check_header(p,
		        config_setting_get_elem(m, (unsigned)i),
		        ch->headers[i]) == -1)
			return -1;
	}
	return 0;
}

static int
conf_parse_job(struct parse *p, const config_setting_t *s, struct conf_job *j)
{
	j->name = xstrdup(config_setting_name(s));
	j->line = config_setting_source_line(s);
	j->max_runtime_ms = 3600 * 1000;
	j->grace_ms = 10 * 60 * 1000;
	j->heartbeat_ms = 30 * 1000;
	j->guard = GUARD_NAMED_LOCK;
	j->on_lock_lost = LOCK_LOST_TERMINATE;
	if (conf_check_name(p, s) == -1)
		return -1;
	if (!config_setting_is_group(s))
		return conf_wrong_type(p, s, "a group { command = [...]; }");
	if (conf_parse_group(p, s, job_keys, j, 0) == -1)
		return -1;
	if ((j->command == NULL) == (j->sql == NULL))
		return conf_key_error(
		    p, s, "give exactly one of command and sql");
	if (j->command != NULL && j->ncommand == 0)
		return conf_key_error(p,
		    config_setting_get_member(s, "command"),
		    "must not be empty");
	return 0;
}

/* A section holding named groups: channels = { mail = {...}; ... }. */
static int
conf_parse_named(struct parse *p, const config_setting_t *g, int channels)
{
	struct conf            *c = p->c;
	const config_setting_t *s;
	size_t                  i, n;

	if (!config_setting_is_group(g))
		return conf_wrong_type(p, g, "a group { name = {...}; }");
	n = (size_t)config_setting_length(g);
	if (channels) {
		c->channels = xcalloc(n, sizeof *c->channels);
		for (i = 0; i < n; i++) {
			s = config_setting_get_elem(g, (unsigned)i);
			c->nchannels = i + 1;
			if (conf_parse_channel(p, s, &c->channels[i]) == -1)
				return -1;
		}
	} else {
		c->jobs = xcalloc(n, sizeof *c->jobs);
		for (i = 0; i < n; i++) {
			s = config_setting_get_elem(g, (unsigned)i);
			c->njobs = i + 1;
			if (conf_parse_job(p, s, &c->jobs[i]) == -1)
				return -1;
		}
	}
	return 0;
}

static int
conf_parse_root(struct parse *p, const config_setting_t *root)
{
	const config_setting_t *s;
	const char             *name;
	int                     i, n, rv;

	n = config_setting_length(root);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(root, (unsigned)i);
		name = config_setting_name(s);
		if (strcmp(name, "database") == 0) {
			p->c->have_database = true;
			rv =
			    conf_parse_group(p, s, database_keys, &p->c->db, 0);
		} else if (strcmp(name, "outbox") == 0)
			rv = conf_parse_group(
			    p, s, outbox_keys, &p->c->outbox, 0);
		else if (strcmp(name, "channels") == 0)
			rv = conf_parse_named(p, s, 1);
		else if (strcmp(name, "jobs") == 0)
			rv = conf_parse_named(p, s, 0);
		else if (strcmp(name, "alert") == 0)
			rv = conf_parse_group(p, s, alert_keys, p->c, 0);
		else if (conf_find_key(top_keys, name) != NULL)
			rv = conf_parse_key(
			    p, s, conf_find_key(top_keys, name), p->c, 0);
		else
			rv = conf_key_error(p, s,
			    "unknown key (expected "
			    "database, outbox, channels, jobs, alert or "
			    "runtime_dir)");
		if (rv == -1)
			return -1;
	}
	return 0;
}

static const config_setting_t *
conf_member(const config_setting_t *g, const char *name)
{
	if (g == NULL || !config_setting_is_group(g))
		return NULL;
	return config_setting_get_member(g, name);
}

static int
conf_check_database(struct parse *p, const config_setting_t *g)
{
	struct conf_database *db = &p->c->db;

	if (db->name == NULL)
		return conf_key_error(p, g, "name missing");
	if (db->socket != NULL && conf_member(g, "host") != NULL)
		return conf_key_error(p, conf_member(g, "socket"),
		    "give host (and port) or socket, not both");
	if ((db->tls_cert == NULL) != (db->tls_key == NULL))
		return conf_key_error(
		    p, conf_member(g, "tls"), "cert and key go together");
	if (db->option_group != NULL && db->option_file == NULL)
		return conf_key_error(
		    p, conf_member(g, "option_group"), "needs option_file");
	return 0;
}

static int
conf_check_jobs(struct parse *p, const config_setting_t *g)
{
	struct conf            *c = p->c;
	struct conf_job        *j;
	const config_setting_t *s, *l;
	const char             *why;
	size_t                  i;

	for (i = 0; i < c->njobs; i++) {
		j = &c->jobs[i];
		s = conf_member(g, j->name);
		if (j->guard == GUARD_NAMED_LOCK && !c->have_database)
			return conf_key_error(p, s,
			    "guard named_lock needs a "
			    "database section (or guard = \"local\")");
		if (j->sql != NULL && !c->have_database)
			return conf_key_error(
			    p, s, "an sql job needs a database section");
		if ((l = conf_member(s, "lock")) != NULL) {
			if (!conf_lock_name_valid(j->lock, &why))
				return conf_key_error(
				    p, l, "lock name %s", why);
			continue;
		}
		if (c->have_database)
			j->lock =
			    xasprintf("cronguard:%s:%s", c->db.name, j->name);
		else
			j->lock = xasprintf("cronguard:%s", j->name);
		if (j->guard == GUARD_NAMED_LOCK &&
		    !conf_lock_name_valid(j->lock, &why))
			return conf_key_error(p, s,
			    "the default lock name "
			    "\"%s\" is %s: set lock to a shorter name",
			    j->lock, why);
	}
	return 0;
}

static int
conf_check_outbox(struct parse *p, const config_setting_t *g,
    const config_setting_t *channels)
{
	struct conf_outbox        *o = &p->c->outbox;
	const config_setting_t    *lease = conf_member(g, "lease"), *s;
	const struct conf_channel *ch;
	char                       a[32], b[32];
	size_t                     i;

	for (i = 0; i < p->c->nchannels; i++) {
		ch = &p->c->channels[i];
		if (o->lease_ms > ch->timeout_ms)
			continue;
		duration_format(o->lease_ms, a, sizeof a);
		duration_format(ch->timeout_ms, b, sizeof b);
		s = conf_member(conf_member(channels, ch->name), "timeout");
		if (lease != NULL || s == NULL)
			s = lease != NULL ? lease
			                  : conf_member(channels, ch->name);
		return conf_error(p, s,
		    "outbox.lease (%s) must be longer than "
		    "channels.%s.timeout (%s), or a slow send is claimed twice",
		    a, ch->name, b);
	}
	if (o->watchdog_ms <= o->lease_ms) {
		duration_format(o->watchdog_ms, a, sizeof a);
		duration_format(o->lease_ms, b, sizeof b);
		s = conf_member(g, "watchdog");
		return conf_error(p,
		    s != NULL           ? s
		        : lease != NULL ? lease
		                        : g,
		    "outbox.watchdog (%s) must be longer than outbox.lease "
		    "(%s)",
		    a, b);
	}
	s = conf_member(g, "backoff");
	if (o->backoff_initial_ms > o->backoff_max_ms)
		return conf_error(p, s != NULL ? s : g,
		    "outbox.backoff: "
		    "initial must not be longer than max");
	s = conf_member(g, "thresholds");
	if (s == NULL)
		s = g;
	if (o->pending_warn > o->pending_crit)
		return conf_error(p, s,
		    "outbox.thresholds: pending_warn "
		    "must not exceed pending_crit");
	if (o->oldest_due_warn_ms > o->oldest_due_crit_ms)
		return conf_error(p, s,
		    "outbox.thresholds: oldest_due_warn "
		    "must not exceed oldest_due_crit");
	if (o->failed_warn > o->failed_crit)
		return conf_error(p, s,
		    "outbox.thresholds: failed_warn "
		    "must not exceed failed_crit");
	return 0;
}

static int
conf_check(struct parse *p)
{
	const config_setting_t *root = config_root_setting(&p->cfg), *s;
	struct conf            *c = p->c;

	s = conf_member(root, "database");
	if (c->have_database && conf_check_database(p, s) == -1)
		return -1;
	if (conf_check_jobs(p, conf_member(root, "jobs")) == -1)
		return -1;
	if (conf_check_outbox(p, conf_member(root, "outbox"),
	        conf_member(root, "channels")) == -1)
		return -1;
	s = conf_member(conf_member(root, "alert"), "url");
	if (c->alert_url != NULL &&
	    !conf_url_has_scheme(c->alert_url, http_schemes))
		return conf_key_error(p, s,
		    "\"%s\" is not an http:// or "
		    "https:// URL",
		    c->alert_url);
	if (c->alert_url != NULL &&
	    conf_check_url_secret(p, s, c->alert_url) == -1)
		return -1;
	return 0;
}

static char *
conf_default_runtime_dir(void)
{
	const char *e;

	/* systemd's RuntimeDirectory= may list several, colon-separated. */
	if ((e = getenv("RUNTIME_DIRECTORY")) != NULL && *e != '\0')
		return xstrndup(e, strcspn(e, ":"));
	if (access("/run/cronguard", W_OK) == 0)
		return xstrdup("/run/cronguard");
	if ((e = getenv("TMPDIR")) != NULL && *e != '\0')
		return xstrdup(e);
	return xstrdup("/tmp");
}

void
conf_defaults(struct conf *c)
{
	/* Nothing is allocated here, so a caller may fill defaults and
	 * then conf_load() over them without leaking: the defaults that
	 * need memory (db.host, runtime_dir) are filled by conf_load(). */
	memset(c, 0, sizeof *c);
	c->db.port = 3306;
	c->db.connect_timeout_ms = 5 * 1000;
	c->db.read_timeout_ms = 30 * 1000;
	c->db.write_timeout_ms = 30 * 1000;
	c->db.tls_mode = TLS_PREFERRED;

	c->outbox.batch_size = 50;
	c->outbox.poll_interval_ms = 1000;
	c->outbox.lease_ms = 5 * 60 * 1000;
	c->outbox.watchdog_ms = 15 * 60 * 1000;
	c->outbox.max_attempts = 8;
	c->outbox.backoff_initial_ms = 30 * 1000;
	c->outbox.backoff_multiplier = 2.0;
	c->outbox.backoff_max_ms = 3600 * 1000;
	c->outbox.backoff_jitter = 0.2;
	c->outbox.ordering = ORDERING_PER_KEY;
	c->outbox.keep_sent = true;
	c->outbox.pending_warn = 1000;
	c->outbox.pending_crit = 10000;
	c->outbox.oldest_due_warn_ms = 5 * 60 * 1000;
	c->outbox.oldest_due_crit_ms = 30 * 60 * 1000;
	c->outbox.failed_warn = 1;
	c->outbox.failed_crit = 100;

	c->alert_timeout_ms = 10 * 1000;
}

static char *
conf_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

/*
 * libconfig 1.5's scanner calls exit(2) when an @include names a directory
 * or cannot be read (hyperrealm/libconfig#292), which would turn a
 * configuration error into a silent exit 2.  So check every @include line
 * ourselves first, the same way the scanner reads it: a line that starts
 * with optional blanks, "@include", blanks and a quoted path, resolved
 * against the include directory.  Returns 0 or -1 with p->err set.
 */
static int
conf_check_includes(struct parse *p, const char *file, int depth)
{
	struct stat st;
	const char *why;
	char       *text, *errstr = NULL, *line, *next, *q, *name, *full;
	int         lineno = 0, rv = -1;

	if (depth > 10) {
		p->err = xasprintf("%s: @include nested too deeply", file);
		return -1;
	}
	if ((text = read_file(file, 1024 * 1024, NULL, &errstr)) == NULL) {
		p->err = errstr;
		return -1;
	}
	for (line = text; line != NULL; line = next) {
		lineno++;
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		line += strspn(line, " \t");
		if (strncmp(line, "@include", 8) != 0 ||
		    (line[8] != ' ' && line[8] != '\t'))
			continue;
		line += 8 + strspn(line + 8, " \t");
		if (*line != '"' || (q = strchr(line + 1, '"')) == NULL)
			continue; /* libconfig reports the syntax */
		name = xstrndup(line + 1, (size_t)(q - line - 1));
		full = xasprintf("%s/%s", p->dir, name);
		why = NULL;
		if (stat(full, &st) == -1)
			why = strerror(errno);
		else if (!S_ISREG(st.st_mode))
			why = "not a regular file";
		if (why != NULL) {
			p->err = xasprintf("%s:%d: @include \"%s\": %s", file,
			    lineno, name, why);
			free(name);
			free(full);
			goto out;
		}
		free(name);
		rv = conf_check_includes(p, full, depth + 1);
		free(full);
		if (rv == -1)
			goto out;
		rv = -1;
	}
	rv = 0;
out:
	free(text);
	return rv;
}

int
conf_load(const char *path, struct conf *c, char **errstr)
{
	struct parse p;
	struct stat  st;
	char        *file;
	int          rv = -1, saved;

	*errstr = NULL;
	conf_defaults(c);
	c->path = xstrdup(path);
	memset(&p, 0, sizeof p);
	p.path = path;
	p.c = c;
	config_init(&p.cfg);

	if (stat(path, &st) == -1) {
		p.err = xasprintf("%s: %s", path, strerror(errno));
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		p.err = xasprintf("%s: is a directory", path);
		goto out;
	}
	/* @include "x.conf" is relative to the configuration's directory
	 * (libconfig 1.5 prefixes every include path with it). */
	p.dir = conf_dirname(path);
	config_set_include_dir(&p.cfg, p.dir);
	if (conf_check_includes(&p, path, 0) == -1)
		goto out;
	errno = 0;
	if (!config_read_file(&p.cfg, path)) {
		saved = errno;
		if (config_error_type(&p.cfg) == CONFIG_ERR_FILE_IO)
			p.err = xasprintf("%s: cannot read: %s", path,
			    strerror(saved != 0 ? saved : EIO));
		else {
			file = conf_resolve(&p, config_error_file(&p.cfg));
			p.err = xasprintf("%s:%d: %s", file,
			    config_error_line(&p.cfg),
			    config_error_text(&p.cfg));
			free(file);
		}
		goto out;
	}
	if (conf_parse_root(&p, config_root_setting(&p.cfg)) == -1)
		goto out;
	if (conf_check(&p) == -1)
		goto out;
	/* With an option file and no host or socket, the option file
	 * decides where to connect (db_connect passes NULL). */
	if (c->db.host == NULL && c->db.socket == NULL &&
	    c->db.option_file == NULL)
		c->db.host = xstrdup("127.0.0.1");
	if (c->runtime_dir == NULL)
		c->runtime_dir = conf_default_runtime_dir();
	rv = 0;

out:
	config_destroy(&p.cfg);
	free(p.dir);
	if (rv == -1) {
		conf_free(c);
		*errstr = p.err;
	}
	return rv;
}

static void
conf_strv_free(char **v, size_t n)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Overwrite a secret before freeing it: core dumps and reused heap. */
static void
conf_secret_free(char *s)
{
	volatile char *v = s;

	if (s == NULL)
		return;
	while (*v != '\0')
		*v++ = '\0';
	free(s);
}

void
conf_free(struct conf *c)
{
	struct conf_channel *ch;
	struct conf_job     *j;
	size_t               i;

	free(c->path);
	free(c->runtime_dir);
	free(c->db.host);
	free(c->db.socket);
	free(c->db.user);
	conf_secret_free(c->db.password);
	free(c->db.password_file);
	free(c->db.option_file);
	free(c->db.option_group);
	free(c->db.name);
	free(c->db.tls_ca);
	free(c->db.tls_cert);
	free(c->db.tls_key);
	for (i = 0; i < c->nchannels; i++) {
		ch = &c->channels[i];
		free(ch->name);
		free(ch->url);
		free(ch->tls_ca);
		free(ch->username);
		conf_secret_free(ch->password);
		free(ch->password_file);
		free(ch->from);
		free(ch->tls);
		free(ch->method);
		conf_strv_free(ch->headers, ch->nheaders);
		conf_secret_free(ch->signing_secret);
		free(ch->signing_secret_file);
		free(ch->exchange);
		free(ch->routing_key);
	}
	free(c->channels);
	for (i = 0; i < c->njobs; i++) {
		j = &c->jobs[i];
		free(j->name);
		conf_strv_free(j->command, j->ncommand);
		free(j->sql);
		free(j->lock);
	}
	free(c->jobs);
	free(c->alert_url);
	memset(c, 0, sizeof *c);
}

const char *
conf_default_path(void)
{
	const char *e;

	if ((e = getenv("CRONGUARD_CONFIG")) != NULL && *e != '\0')
		return e;
	return SYSCONFDIR "/cronguard/cronguard.conf";
}

const struct conf_channel *
conf_channel_find(const struct conf *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nchannels; i++) {
		if (strcmp(c->channels[i].name, name) == 0)
			return &c->channels[i];
	}
	return NULL;
}

const struct conf_job *
conf_job_find(const struct conf *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->njobs; i++) {
		if (strcmp(c->jobs[i].name, name) == 0)
			return &c->jobs[i];
	}
	return NULL;
}

/*
 * Returns 1 when name is usable as a GET_LOCK name: 1..64 printable ASCII
 * characters.  Otherwise returns 0 with *why saying what is wrong.
 */
int
conf_lock_name_valid(const char *name, const char **why)
{
	const unsigned char *u;
	size_t               len;

	if (name == NULL || *name == '\0') {
		*why = "is empty";
		return 0;
	}
	for (u = (const unsigned char *)name; *u != '\0'; u++) {
		if (*u < 0x20 || *u > 0x7e) {
			*why = "is not printable ASCII";
			return 0;
		}
	}
	len = strlen(name);
	if (len > LOCK_NAME_MAX) {
		*why = "longer than 64 characters";
		return 0;
	}
	return 1;
}

/* ---------------------------------------------------------------- print */

static void
conf_print_quoted(const char *s)
{
	const unsigned char *u;

	putchar('"');
	for (u = (const unsigned char *)s; *u != '\0'; u++) {
		switch (*u) {
		case '"':
			fputs("\\\"", stdout);
			break;
		case '\\':
			fputs("\\\\", stdout);
			break;
		case '\n':
			fputs("\\n", stdout);
			break;
		case '\r':
			fputs("\\r", stdout);
			break;
		case '\t':
			fputs("\\t", stdout);
			break;
		default:
			if (*u < 0x20 || *u == 0x7f)
				printf("\\x%02x", *u);
			else
				putchar(*u);
		}
	}
	putchar('"');
}

static void
conf_print_str(int indent, const char *key, const char *v)
{
	if (v == NULL)
		return;
	printf("%*s%s = ", indent, "", key);
	conf_print_quoted(v);
	fputs(";\n", stdout);
}

static void
conf_print_secret(int indent, const char *key, const char *v)
{
	if (v != NULL)
		printf("%*s%s = \"" MASKED "\";\n", indent, "", key);
}

/* A password comes from password_file (printed) or inline (masked). */
static void
conf_print_password(int indent, const char *file, const char *password)
{
	if (file != NULL)
		conf_print_str(indent, "password_file", file);
	else
		conf_print_secret(indent, "password", password);
}

/* A URL without what it might carry as credentials: the userinfo and the
 * query are masked. */
static char *
conf_url_masked(const char *url)
{
	struct buf  b;
	const char *auth, *end, *at, *q, *frag;

	buf_init(&b);
	if ((auth = strstr(url, "://")) == NULL) {
		buf_adds(&b, url);
		return buf_steal(&b);
	}
	auth += 3;
	end = auth + strcspn(auth, "/?#");
	buf_add(&b, url, (size_t)(auth - url));
	at = auth;
	for (q = auth; q < end; q++) {
		if (*q == '@')
			at = q + 1;
	}
	if (at != auth)
		buf_adds(&b, MASKED "@");
	q = at + strcspn(at, "?#");
	buf_add(&b, at, (size_t)(q - at));
	if (*q == '?') {
		buf_adds(&b, "?" MASKED);
		if ((frag = strchr(q, '#')) != NULL)
			buf_adds(&b, frag);
	} else
		buf_adds(&b, q);
	return buf_steal(&b);
}

static void
conf_print_url(int indent, const char *key, const char *url)
{
	char *m;

	if (url == NULL)
		return;
	m = conf_url_masked(url);
	conf_print_str(indent, key, m);
	free(m);
}

/* Print as a libconfig duration string that duration_parse reads back:
 * the largest unit that divides the value exactly. */
static void
conf_print_dur(int indent, const char *key, int64_t ms)
{
	static const struct {
		int64_t     ms;
		const char *unit;
	} units[] = { { 24 * 3600 * 1000, "d" }, { 3600 * 1000, "h" },
		{ 60 * 1000, "m" }, { 1000, "s" }, { 1, "ms" } };
	size_t i;

	for (i = 0; i < nitems(units); i++) {
		if (ms != 0 && ms % units[i].ms == 0)
			break;
	}
	if (i == nitems(units))
		i = 3; /* 0: "0s" */
	printf("%*s%s = \"%lld%s\";\n", indent, "", key,
	    (long long)(ms / units[i].ms), units[i].unit);
}

static void
conf_print_ll(int indent, const char *key, long long v)
{
	/* libconfig needs the L suffix past 32 bits. */
	printf("%*s%s = %lld%s;\n", indent, "", key, v,
	    (v > INT_MAX || v < INT_MIN) ? "L" : "");
}

static void
conf_print_dbl(int indent, const char *key, double v)
{
	char num[64];

	snprintf(num, sizeof num, "%.6g", v);
	if (strpbrk(num, ".eE") == NULL)
		printf("%*s%s = %s.0;\n", indent, "", key, num);
	else
		printf("%*s%s = %s;\n", indent, "", key, num);
}

static void
conf_print_strv(int indent, const char *key, char **v, size_t n)
{
	size_t i;

	if (v == NULL)
		return;
	printf("%*s%s = [ ", indent, "", key);
	for (i = 0; i < n; i++) {
		if (i > 0)
			fputs(", ", stdout);
		conf_print_quoted(v[i]);
	}
	fputs(" ];\n", stdout);
}

/* Header values are masked unless the header is known to carry no
 * credential: Authorization, X-Api-Key and friends come in many names. */
static int
conf_header_is_harmless(const char *h)
{
	static const char *const harmless[] = { "Accept", "Accept-Language",
		"Cache-Control", "Content-Language", "Content-Type",
		"User-Agent", NULL };
	size_t                   i, n = strcspn(h, ":");

	for (i = 0; harmless[i] != NULL; i++) {
		if (strlen(harmless[i]) == n &&
		    strncasecmp(h, harmless[i], n) == 0)
			return 1;
	}
	return 0;
}

static void
conf_print_headers(int indent, const struct conf_channel *ch)
{
	size_t i, n;

	if (ch->headers == NULL)
		return;
	printf("%*sheaders = [ ", indent, "");
	for (i = 0; i < ch->nheaders; i++) {
		if (i > 0)
			fputs(", ", stdout);
		if (conf_header_is_harmless(ch->headers[i]))
			conf_print_quoted(ch->headers[i]);
		else {
			n = strcspn(ch->headers[i], ":");
			printf("\"%.*s: " MASKED "\"", (int)n, ch->headers[i]);
		}
	}
	fputs(" ];\n", stdout);
}

static void
conf_print_database(const struct conf_database *db)
{
	puts("database = {");
	conf_print_str(2, "host", db->host);
	if (db->socket == NULL)
		printf("  port = %u;\n", db->port);
	conf_print_str(2, "socket", db->socket);
	conf_print_str(2, "user", db->user);
	conf_print_password(2, db->password_file, db->password);
	conf_print_str(2, "option_file", db->option_file);
	conf_print_str(2, "option_group", db->option_group);
	conf_print_str(2, "name", db->name);
	conf_print_dur(2, "connect_timeout", db->connect_timeout_ms);
	conf_print_dur(2, "read_timeout", db->read_timeout_ms);
	conf_print_dur(2, "write_timeout", db->write_timeout_ms);
	puts("  tls = {");
	conf_print_str(4, "mode", tls_modes[db->tls_mode]);
	conf_print_str(4, "ca", db->tls_ca);
	conf_print_str(4, "cert", db->tls_cert);
	conf_print_str(4, "key", db->tls_key);
	puts("  };");
	puts("};");
}

static void
conf_print_outbox(const struct conf_outbox *o)
{
	puts("outbox = {");
	printf("  batch_size = %u;\n", o->batch_size);
	conf_print_dur(2, "poll_interval", o->poll_interval_ms);
	conf_print_dur(2, "lease", o->lease_ms);
	conf_print_dur(2, "watchdog", o->watchdog_ms);
	printf("  max_attempts = %u;\n", o->max_attempts);
	puts("  backoff = {");
	conf_print_dur(4, "initial", o->backoff_initial_ms);
	conf_print_dbl(4, "multiplier", o->backoff_multiplier);
	conf_print_dur(4, "max", o->backoff_max_ms);
	conf_print_dbl(4, "jitter", o->backoff_jitter);
	puts("  };");
	conf_print_str(2, "ordering", orderings[o->ordering]);
	printf("  keep_sent = %s;\n", o->keep_sent ? "true" : "false");
	puts("  thresholds = {");
	conf_print_ll(4, "pending_warn", o->pending_warn);
	conf_print_ll(4, "pending_crit", o->pending_crit);
	conf_print_dur(4, "oldest_due_warn", o->oldest_due_warn_ms);
	conf_print_dur(4, "oldest_due_crit", o->oldest_due_crit_ms);
	conf_print_ll(4, "failed_warn", o->failed_warn);
	conf_print_ll(4, "failed_crit", o->failed_crit);
	puts("  };");
	puts("};");
}

static void
conf_print_channel(const struct conf_channel *ch)
{
	printf("  %s = {\n", ch->name);
	conf_print_str(4, "type", channel_types[ch->type]);
	conf_print_url(4, "url", ch->url);
	conf_print_dur(4, "timeout", ch->timeout_ms);
	conf_print_dbl(4, "rate", ch->rate);
	conf_print_ll(4, "daily_quota", ch->daily_quota);
	puts("    circuit = {");
	printf("      failures = %u;\n", ch->circuit_failures);
	conf_print_dur(6, "cooldown", ch->circuit_cooldown_ms);
	puts("    };");
	conf_print_str(4, "tls_ca", ch->tls_ca);
	if (ch->type == CHANNEL_SMTP) {
		conf_print_str(4, "username", ch->username);
		conf_print_password(4, ch->password_file, ch->password);
		conf_print_str(4, "from", ch->from);
		conf_print_str(4, "tls", ch->tls);
		printf("    connections = %u;\n", ch->connections);
		conf_print_ll(4, "max_size", ch->max_size);
	} else if (ch->type == CHANNEL_AMQP) {
		conf_print_str(4, "username", ch->username);
		conf_print_password(4, ch->password_file, ch->password);
		conf_print_str(4, "exchange", ch->exchange);
		conf_print_str(4, "routing_key", ch->routing_key);
		printf(
		    "    mandatory = %s;\n", ch->mandatory ? "true" : "false");
		printf("    unroutable_retry = %s;\n",
		    ch->unroutable_retry ? "true" : "false");
	} else {
		conf_print_str(4, "method", ch->method);
		conf_print_headers(4, ch);
		if (ch->signing_secret_file != NULL)
			conf_print_str(
			    4, "signing_secret_file", ch->signing_secret_file);
		else
			conf_print_secret(
			    4, "signing_secret", ch->signing_secret);
		printf("    concurrency = %u;\n", ch->concurrency);
	}
	puts("  };");
}

static void
conf_print_job(const struct conf_job *j)
{
	printf("  %s = {\n", j->name);
	conf_print_strv(4, "command", j->command, j->ncommand);
	conf_print_str(4, "sql", j->sql);
	conf_print_dur(4, "max_runtime", j->max_runtime_ms);
	conf_print_dur(4, "timeout", j->timeout_ms);
	conf_print_dur(4, "expect_every", j->expect_every_ms);
	conf_print_dur(4, "grace", j->grace_ms);
	conf_print_dur(4, "heartbeat", j->heartbeat_ms);
	conf_print_str(4, "guard", guards[j->guard]);
	conf_print_str(4, "lock", j->lock);
	conf_print_str(4, "on_lock_lost", lock_lost[j->on_lock_lost]);
	printf("    busy_exit = %d;\n", j->busy_exit);
	puts("  };");
}

void
conf_print(const struct conf *c)
{
	size_t i;

	printf("# %s: effective configuration, secrets masked\n",
	    c->path != NULL ? c->path : "(defaults)");
	conf_print_str(0, "runtime_dir", c->runtime_dir);
	if (c->have_database)
		conf_print_database(&c->db);
	conf_print_outbox(&c->outbox);
	puts("channels = {");
	for (i = 0; i < c->nchannels; i++)
		conf_print_channel(&c->channels[i]);
	puts("};");
	puts("jobs = {");
	for (i = 0; i < c->njobs; i++)
		conf_print_job(&c->jobs[i]);
	puts("};");
	puts("alert = {");
	conf_print_url(2, "url", c->alert_url);
	conf_print_dur(2, "timeout", c->alert_timeout_ms);
	puts("};");
	fflush(stdout);
}
