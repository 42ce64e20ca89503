/*
 * conf-keys.c: the configuration's one key table (conf-int.h): every key
 * of cronguard.conf(5) with its place in struct conf, its bounds, its
 * default and when config check prints it; and the list of known keys.
 */
#include "config.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "conf-int.h"
#include "duration.h"
#include "util.h"

/* Enumerations are stored through an int: keep that honest. */
_Static_assert(sizeof(enum tls_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum guard_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(enum on_lock_lost) == sizeof(int), "enum size");
_Static_assert(sizeof(enum ordering) == sizeof(int), "enum size");
_Static_assert(sizeof(enum ordering_scope) == sizeof(int), "enum size");
_Static_assert(sizeof(enum on_failure) == sizeof(int), "enum size");
_Static_assert(sizeof(enum attempt_log) == sizeof(int), "enum size");
_Static_assert(sizeof(enum channel_type) == sizeof(int), "enum size");
_Static_assert(sizeof(enum output_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum catch_up) == sizeof(int), "enum size");
_Static_assert(sizeof(enum alert_level) == sizeof(int), "enum size");

static const char *const tls_modes[] = { "disabled", "preferred", "required",
	"verify_identity", NULL };
static const char *const orderings[] = { "per_key", "none", NULL };
static const char *const ordering_scopes[] = { "channel", "global", NULL };
static const char *const on_failures[] = { "block", "skip", NULL };
static const char *const attempt_logs[] = { "all", "failures", "none", NULL };
#define CHANNEL_TYPE_NAME_(u, l) #l,
const char *const conf_channel_type_names[] = { CHANNEL_TYPES(
    CHANNEL_TYPE_NAME_) NULL };

const char *
conf_channel_type_name(enum channel_type t)
{
	return (unsigned)t < CHANNEL_NTYPES ? conf_channel_type_names[t] : "?";
}
static const char *const smtp_tls[] = { "none", "required", NULL };
static const char *const http_methods[] = { "POST", "PUT", "PATCH", NULL };
/* In enum guard_kind's order. */
const char *const conf_guard_names[] = { "named_lock", "local", "none", "lease",
	"auto", NULL };
static const char *const lock_lost[] = { "terminate", "continue", NULL };
/* In enum catch_up's and enum alert_level's order. */
const char *const conf_catch_up_names[] = { "latest", "all", "none", NULL };
static const char *const alert_levels[] = { "warning", "critical", NULL };

/* ------------------------------------------------------ descriptors */

unsigned
conf_channel_types(const void *elem)
{
	const struct conf_channel *ch = elem;

	return 1u << ch->type;
}

static int
conf_job_has_command(const void *base)
{
	return ((const struct conf_job *)base)->command != NULL;
}

static int
conf_job_has_schedule(const void *base)
{
	return ((const struct conf_job *)base)->schedule_text != NULL;
}

/* A schedule without timezone follows the server's zone, which run can
 * only learn by name (tzone_open_server); config check has no server to
 * ask, so it says what decides. */
static const char *
conf_job_schedule_note(const void *base)
{
	const struct conf_job *j = base;

	if (j->schedule_text == NULL || j->timezone != NULL)
		return NULL;
	return "no timezone: slots follow the database server's time_zone, which must be a zone name (Area/City, or UTC), not SYSTEM known only as an abbreviation such as EST (run refuses that, doctor checks it): timezone = \"Area/City\" makes it certain";
}

/* Unset, a channel's ttl is no key to print (0 would not parse). */
static int
conf_channel_has_ttl(const void *base)
{
	const struct conf_channel *cc = base;

	return cc->ttl_ms > 0;
}

static int
conf_db_uses_tcp(const void *base)
{
	const struct conf_database *db = base;

	return db->socket == NULL;
}

/* Only verify_identity checks whom the password is sent to. */
static const char *
conf_db_tls_note(const void *base)
{
	const struct conf_database *db = base;

	switch (db->tls_mode) {
	case TLS_PREFERRED:
	case TLS_REQUIRED:
		return "does not verify the server's certificate or name: use verify_identity (with ca) against a man in the middle";
	case TLS_DISABLED:
		return "the password and all data cross the network in clear";
	case TLS_VERIFY_IDENTITY:
		break;
	}
	return NULL;
}

/* ----------------------------------------------------------- tables */

#define DB(f) offsetof(struct conf_database, f)
static const struct key database_tls_keys[] = {
	{ .name = "mode",
	    .kind = K_ENUM,
	    .off = DB(tls_mode),
	    .values = tls_modes,
	    .def = TLS_PREFERRED,
	    .note = conf_db_tls_note },
	{ .name = "ca", .kind = K_STR, .off = DB(tls_ca) },
	{ .name = "cert", .kind = K_STR, .off = DB(tls_cert) },
	{ .name = "key", .kind = K_STR, .off = DB(tls_key) },
	{ .name = NULL },
};
static const struct key database_keys[] = {
	/* No default here: 127.0.0.1 unless socket or option_file decide
	 * (conf_load). */
	{ .name = "host", .kind = K_STR, .off = DB(host) },
	{ .name = "port",
	    .kind = K_UINT,
	    .off = DB(port),
	    .min = 1,
	    .max = 65535,
	    .def = 3306,
	    .shown = conf_db_uses_tcp },
	{ .name = "socket", .kind = K_STR, .off = DB(socket) },
	{ .name = "user", .kind = K_STR, .off = DB(user) },
	{ .name = "password",
	    .kind = K_SECRET,
	    .off = DB(password),
	    .off2 = DB(password_file) },
	{ .name = "password_file",
	    .kind = K_SECRETFILE,
	    .off = DB(password_file),
	    .off2 = DB(password) },
	{ .name = "option_file", .kind = K_STR, .off = DB(option_file) },
	{ .name = "option_group", .kind = K_STR, .off = DB(option_group) },
	{ .name = "name", .kind = K_STR, .off = DB(name) },
	{ .name = "connect_timeout",
	    .kind = K_DUR,
	    .off = DB(connect_timeout_ms),
	    .min = DUR_S(1),
	    .max = DURATION_MAX_MS,
	    .def = DUR_S(5) },
	{ .name = "connect_retry",
	    .kind = K_DUR,
	    .off = DB(connect_retry_ms),
	    .min = 0,
	    .max = DUR_H(1),
	    .def = DUR_S(30) },
	{ .name = "read_timeout",
	    .kind = K_DUR,
	    .off = DB(read_timeout_ms),
	    .min = DUR_S(1),
	    .max = DURATION_MAX_MS,
	    .def = DUR_S(30) },
	{ .name = "write_timeout",
	    .kind = K_DUR,
	    .off = DB(write_timeout_ms),
	    .min = DUR_S(1),
	    .max = DURATION_MAX_MS,
	    .def = DUR_S(30) },
	{ .name = "tls", .kind = K_GROUP, .sub = database_tls_keys },
	{ .name = NULL },
};
#undef DB

#define OB(f) offsetof(struct conf_outbox, f)
static const struct key outbox_backoff_keys[] = {
	{ .name = "initial",
	    .kind = K_DUR,
	    .off = OB(backoff_initial_ms),
	    .min = 1,
	    .max = DURATION_MAX_MS,
	    .def = DUR_S(30) },
	{ .name = "multiplier",
	    .kind = K_DBL,
	    .off = OB(backoff_multiplier),
	    .dmin = 1,
	    .dmax = 100,
	    .ddef = 2.0 },
	{ .name = "max",
	    .kind = K_DUR,
	    .off = OB(backoff_max_ms),
	    .min = 1,
	    .max = DURATION_MAX_MS,
	    .def = DUR_H(1) },
	{ .name = "jitter",
	    .kind = K_DBL,
	    .off = OB(backoff_jitter),
	    .dmin = 0,
	    .dmax = 1,
	    .ddef = 0.2 },
	{ .name = NULL },
};
static const struct key outbox_threshold_keys[] = {
	{ .name = "pending_warn",
	    .kind = K_LL,
	    .off = OB(pending_warn),
	    .max = LLONG_MAX,
	    .def = 1000 },
	{ .name = "pending_crit",
	    .kind = K_LL,
	    .off = OB(pending_crit),
	    .max = LLONG_MAX,
	    .def = 10000 },
	{ .name = "oldest_due_warn",
	    .kind = K_DUR,
	    .off = OB(oldest_due_warn_ms),
	    .max = DURATION_MAX_MS,
	    .def = DUR_M(5) },
	{ .name = "oldest_due_crit",
	    .kind = K_DUR,
	    .off = OB(oldest_due_crit_ms),
	    .max = DURATION_MAX_MS,
	    .def = DUR_M(30) },
	{ .name = "failed_warn",
	    .kind = K_LL,
	    .off = OB(failed_warn),
	    .max = LLONG_MAX,
	    .def = 1 },
	{ .name = "failed_crit",
	    .kind = K_LL,
	    .off = OB(failed_crit),
	    .max = LLONG_MAX,
	    .def = 100 },
	{ .name = NULL },
};
static const struct key outbox_keys[] = {
	{ .name = "batch_size",
	    .kind = K_UINT,
	    .off = OB(batch_size),
	    .min = 1,
	    .max = 1000,
	    .def = 50 },
	{ .name = "max_batch_bytes",
	    .kind = K_LL,
	    .off = OB(max_batch_bytes),
	    .flags = KF_SIZE,
	    .min = 1,
	    .max = LLONG_MAX,
	    .def = 64LL * 1024 * 1024 },
	{ .name = "pipeline",
	    .kind = K_UINT,
	    .off = OB(pipeline),
	    .min = 1,
	    .max = 16,
	    .def = 3 },
	{ .name = "poll_interval",
	    .kind = K_DUR,
	    .off = OB(poll_interval_ms),
	    .min = 1,
	    .max = DURATION_MAX_MS,
	    .def = DUR_S(1) },
	{ .name = "lease",
	    .kind = K_DUR,
	    .off = OB(lease_ms),
	    .min = DUR_S(1),
	    .max = DURATION_MAX_MS,
	    .def = DUR_M(5) },
	{ .name = "watchdog",
	    .kind = K_DUR,
	    .off = OB(watchdog_ms),
	    .min = DUR_S(1),
	    .max = DURATION_MAX_MS,
	    .def = DUR_M(15) },
	{ .name = "max_attempts",
	    .kind = K_UINT,
	    .off = OB(max_attempts),
	    .min = 1,
	    .max = 1000000,
	    .def = 8 },
	{ .name = "backoff", .kind = K_GROUP, .sub = outbox_backoff_keys },
	{ .name = "ordering",
	    .kind = K_ENUM,
	    .off = OB(ordering),
	    .values = orderings,
	    .def = ORDERING_PER_KEY },
	{ .name = "keep_sent",
	    .kind = K_BOOL,
	    .off = OB(keep_sent),
	    .def = true },
	{ .name = "ordering_scope",
	    .kind = K_ENUM,
	    .off = OB(ordering_scope),
	    .values = ordering_scopes,
	    .def = SCOPE_CHANNEL },
	{ .name = "attempt_log",
	    .kind = K_ENUM,
	    .off = OB(attempt_log),
	    .values = attempt_logs,
	    .def = ATTEMPT_LOG_ALL },
	{ .name = "thresholds", .kind = K_GROUP, .sub = outbox_threshold_keys },
	{ .name = NULL },
};
#undef OB

#define CH(f) offsetof(struct conf_channel, f)
static const struct key channel_circuit_keys[] = {
	{ .name = "failures",
	    .kind = K_UINT,
	    .off = CH(circuit_failures),
	    .max = 1000000 },
	{ .name = "cooldown",
	    .kind = K_DUR,
	    .off = CH(circuit_cooldown_ms),
	    .min = DUR_S(1),
	    .max = DURATION_MAX_MS,
	    .def = DUR_M(1) },
	{ .name = NULL },
};
const struct key conf_channel_keys[] = {
	{ .name = "type",
	    .kind = K_ENUM,
	    .off = CH(type),
	    .values = conf_channel_type_names },
	{ .name = "url", .kind = K_STR, .off = CH(url), .flags = KF_URL },
	{ .name = "timeout",
	    .kind = K_DUR,
	    .off = CH(timeout_ms),
	    .min = 1,
	    .max = DURATION_MAX_MS,
	    .types = CH_SMTP,
	    .def = DUR_S(30) },
	{ .name = "timeout",
	    .kind = K_DUR,
	    .off = CH(timeout_ms),
	    .min = 1,
	    .max = DURATION_MAX_MS,
	    .types = CH_HTTP | CH_AMQP,
	    .def = DUR_S(10) },
	{ .name = "rate", .kind = K_DBL, .off = CH(rate), .dmax = 1e6 },
	{ .name = "daily_quota",
	    .kind = K_LL,
	    .off = CH(daily_quota),
	    .max = LLONG_MAX },
	{ .name = "circuit", .kind = K_GROUP, .sub = channel_circuit_keys },
	{ .name = "on_failure",
	    .kind = K_ENUM,
	    .off = CH(on_failure),
	    .values = on_failures,
	    .def = ON_FAILURE_BLOCK },
	{ .name = "ttl",
	    .kind = K_DUR,
	    .off = CH(ttl_ms),
	    .min = DUR_S(1),
	    .max = DURATION_MAX_MS,
	    .shown = conf_channel_has_ttl },
	{ .name = "tls_ca", .kind = K_STR, .off = CH(tls_ca) },
	{ .name = "username",
	    .kind = K_STR,
	    .off = CH(username),
	    .types = CH_SMTP | CH_AMQP },
	{ .name = "password",
	    .kind = K_SECRET,
	    .off = CH(password),
	    .off2 = CH(password_file),
	    .types = CH_SMTP | CH_AMQP },
	{ .name = "password_file",
	    .kind = K_SECRETFILE,
	    .off = CH(password_file),
	    .off2 = CH(password),
	    .types = CH_SMTP | CH_AMQP },
	{ .name = "allow_plaintext_auth",
	    .kind = K_BOOL,
	    .off = CH(allow_plaintext_auth),
	    .types = CH_SMTP,
	    .def = false },
	{ .name = "from", .kind = K_STR, .off = CH(from), .types = CH_SMTP },
	{ .name = "tls",
	    .kind = K_SENUM,
	    .off = CH(tls),
	    .values = smtp_tls,
	    .types = CH_SMTP,
	    .sdef = "none" },
	{ .name = "connections",
	    .kind = K_UINT,
	    .off = CH(connections),
	    .min = 1,
	    .max = 1000,
	    .types = CH_SMTP,
	    .def = 4 },
	{ .name = "max_size",
	    .kind = K_LL,
	    .off = CH(max_size),
	    .min = 1,
	    .max = LLONG_MAX,
	    .types = CH_SMTP | CH_HTTP | CH_AMQP,
	    .def = 10 * 1024 * 1024 },
	{ .name = "method",
	    .kind = K_SENUM,
	    .off = CH(method),
	    .values = http_methods,
	    .types = CH_HTTP,
	    .sdef = "POST" },
	{ .name = "headers",
	    .kind = K_STRV,
	    .off = CH(headers),
	    .off2 = CH(nheaders),
	    .types = CH_HTTP,
	    .flags = KF_HEADERS },
	{ .name = "signing_secret",
	    .kind = K_SECRET,
	    .off = CH(signing_secret),
	    .off2 = CH(signing_secret_file),
	    .types = CH_HTTP,
	    .flags = KF_SIGNING },
	{ .name = "signing_secret_file",
	    .kind = K_SECRETFILE,
	    .off = CH(signing_secret_file),
	    .off2 = CH(signing_secret),
	    .types = CH_HTTP,
	    .flags = KF_SIGNING },
	{ .name = "concurrency",
	    .kind = K_UINT,
	    .off = CH(concurrency),
	    .min = 1,
	    .max = 1000,
	    .types = CH_HTTP,
	    .def = 16 },
	/* "" is the AMQP default exchange. */
	{ .name = "exchange",
	    .kind = K_STR,
	    .off = CH(exchange),
	    .types = CH_AMQP,
	    .flags = KF_EMPTY,
	    .sdef = "" },
	{ .name = "routing_key",
	    .kind = K_STR,
	    .off = CH(routing_key),
	    .types = CH_AMQP },
	{ .name = "mandatory",
	    .kind = K_BOOL,
	    .off = CH(mandatory),
	    .types = CH_AMQP,
	    .def = true },
	{ .name = "unroutable_retry",
	    .kind = K_BOOL,
	    .off = CH(unroutable_retry),
	    .types = CH_AMQP },
	{ .name = NULL },
};
#undef CH

#define JB(f) offsetof(struct conf_job, f)
const struct key conf_job_keys[] = {
	{ .name = "command",
	    .kind = K_STRV,
	    .off = JB(command),
	    .off2 = JB(ncommand) },
	{ .name = "sql", .kind = K_TEXT, .off = JB(sql) },
	{ .name = "max_runtime",
	    .kind = K_DUR,
	    .off = JB(max_runtime_ms),
	    .min = DUR_S(1),
	    .max = DURATION_MAX_MS,
	    .def = DUR_H(1) },
	{ .name = "timeout",
	    .kind = K_DUR,
	    .off = JB(timeout_ms),
	    .max = DURATION_MAX_MS },
	{ .name = "expect_every",
	    .kind = K_DUR,
	    .off = JB(expect_every_ms),
	    .max = DURATION_MAX_MS },
	{ .name = "grace",
	    .kind = K_DUR,
	    .off = JB(grace_ms),
	    .max = DURATION_MAX_MS,
	    .def = DUR_M(10) },
	{ .name = "heartbeat",
	    .kind = K_DUR,
	    .off = JB(heartbeat_ms),
	    .min = 100,
	    .max = DURATION_MAX_MS,
	    .def = DUR_S(30) },
	/* No default here: CONF_LEASE_BEATS heartbeats (conf_check_jobs). */
	{ .name = "lease",
	    .kind = K_DUR,
	    .off = JB(lease_ms),
	    .min = DUR_S(1),
	    .max = DURATION_MAX_MS },
	{ .name = "guard",
	    .kind = K_ENUM,
	    .off = JB(guard),
	    .values = conf_guard_names,
	    .def = GUARD_NAMED_LOCK },
	/* No default here: it needs the database name (conf_check_jobs). */
	{ .name = "lock", .kind = K_STR, .off = JB(lock) },
	{ .name = "on_lock_lost",
	    .kind = K_ENUM,
	    .off = JB(on_lock_lost),
	    .values = lock_lost,
	    .def = LOCK_LOST_TERMINATE },
	{ .name = "busy_exit",
	    .kind = K_INT,
	    .off = JB(busy_exit),
	    .max = 255 },
	/* Checked against a day in conf_check_jobs. */
	{ .name = "once_per",
	    .kind = K_DUR,
	    .off = JB(once_per_ms),
	    .max = DURATION_MAX_MS },
	/* With once_per, known to the server or not is found when the job
	 * runs; with a schedule, checked in the host's tzdata
	 * (conf_check_schedule). */
	{ .name = "timezone", .kind = K_STR, .off = JB(timezone) },
	/* Parsed in conf_check_schedule. */
	{ .name = "schedule",
	    .kind = K_STR,
	    .off = JB(schedule_text),
	    .note = conf_job_schedule_note },
	{ .name = "catch_up",
	    .kind = K_ENUM,
	    .off = JB(catch_up),
	    .values = conf_catch_up_names,
	    .def = CATCH_UP_LATEST,
	    .shown = conf_job_has_schedule },
	{ .name = "backfill_limit",
	    .kind = K_UINT,
	    .off = JB(backfill_limit),
	    .min = 1,
	    .max = 1000,
	    .def = 10,
	    .shown = conf_job_has_schedule },
	/* No default here: the job's grace (conf_check_schedule). */
	{ .name = "starting_deadline",
	    .kind = K_DUR,
	    .off = JB(starting_deadline_ms),
	    .min = DUR_S(1),
	    .max = DURATION_MAX_MS,
	    .shown = conf_job_has_schedule },
	{ .name = "missed_lookback",
	    .kind = K_DUR,
	    .off = JB(missed_lookback_ms),
	    .min = DUR_S(1),
	    .max = DURATION_MAX_MS,
	    .def = DUR_H(24),
	    .shown = conf_job_has_schedule },
	{ .name = "alert_after_failures",
	    .kind = K_UINT,
	    .off = JB(alert_after_failures),
	    .min = 1,
	    .max = 1000,
	    .def = 1,
	    .shown = conf_job_has_schedule },
	{ .name = "alert_level",
	    .kind = K_ENUM,
	    .off = JB(alert_level),
	    .values = alert_levels,
	    .def = ALERT_WARNING,
	    .shown = conf_job_has_schedule },
	{ .name = "keep_runs",
	    .kind = K_UINT,
	    .off = JB(keep_runs),
	    .max = 100000000,
	    .def = CONF_KEEP_RUNS },
	/* exec's default is "inherit" (cmd-exec.c); SQL jobs have no
	 * output (conf_parse_job). */
	{ .name = "output",
	    .kind = K_ENUM,
	    .off = JB(output),
	    .values = output_mode_names,
	    .def = OUTPUT_ON_FAILURE,
	    .shown = conf_job_has_command },
	{ .name = "output_max",
	    .kind = K_LL,
	    .off = JB(output_max),
	    .min = 1,
	    .max = OUTPUT_MAX_LIMIT,
	    .flags = KF_SIZE,
	    .def = OUTPUT_MAX_DEFAULT,
	    .shown = conf_job_has_command },
	/* A URL with a secret goes in ping_url_file, read when the job
	 * runs (conf_read_job_secrets). */
	{ .name = "ping_url",
	    .kind = K_STR,
	    .off = JB(ping_url),
	    .flags = KF_URL },
	{ .name = "ping_url_file",
	    .kind = K_SECRETFILE,
	    .off = JB(ping_url_file),
	    .off2 = JB(ping_url) },
	{ .name = NULL },
};
#undef JB

/* Named elements are freed and printed through their name, the first
 * member. */
_Static_assert(offsetof(struct conf_channel, name) == 0, "name first");
_Static_assert(offsetof(struct conf_job, name) == 0, "name first");

#define CF(f) offsetof(struct conf, f)
static const struct key alert_keys[] = {
	{ .name = "url", .kind = K_STR, .off = CF(alert_url), .flags = KF_URL },
	{ .name = "timeout",
	    .kind = K_DUR,
	    .off = CF(alert_timeout_ms),
	    .min = 1,
	    /* Bounds how long an alert may hold up an exit. */
	    .max = DUR_S(60),
	    .def = DUR_S(10) },
	{ .name = NULL },
};
/* In the order config check prints them. */
const struct key conf_top_keys[] = {
	/* No default here: it depends on the environment (conf_load). */
	{ .name = "runtime_dir", .kind = K_STR, .off = CF(runtime_dir) },
	{ .name = "database",
	    .kind = K_GROUP,
	    .off = CF(db),
	    .off2 = CF(have_database),
	    .sub = database_keys,
	    .flags = KF_PRESENT },
	{ .name = "outbox",
	    .kind = K_GROUP,
	    .off = CF(outbox),
	    .sub = outbox_keys },
	{ .name = "channels",
	    .kind = K_NAMED,
	    .off = CF(channels),
	    .off2 = CF(nchannels),
	    .sub = conf_channel_keys,
	    .size = sizeof(struct conf_channel),
	    .parse = conf_parse_channel,
	    .types_of = conf_channel_types },
	{ .name = "jobs",
	    .kind = K_NAMED,
	    .off = CF(jobs),
	    .off2 = CF(njobs),
	    .sub = conf_job_keys,
	    .size = sizeof(struct conf_job),
	    .parse = conf_parse_job },
	{ .name = "alert", .kind = K_GROUP, .sub = alert_keys },
	{ .name = NULL },
};
#undef CF

/* ---------------------------------------------------------- helpers */

/* A key applies to a channel of these types (0: not in a channel). */
int
conf_key_applies(const struct key *k, unsigned types)
{
	return types == 0 || k->types == 0 || (k->types & types) != 0;
}

/* The same name appeared earlier in its table (a per-type twin). */
int
conf_key_repeated(const struct key *keys, const struct key *k)
{
	const struct key *e;

	for (e = keys; e < k; e++) {
		if (strcmp(e->name, k->name) == 0)
			return 1;
	}
	return 0;
}

static void
conf_keys_add(const struct key *keys, const char *prefix, char ***v, size_t *n)
{
	const struct key *k;
	char             *path;

	for (k = keys; k->name != NULL; k++) {
		if (conf_key_repeated(keys, k))
			continue;
		if (k->kind == K_GROUP || k->kind == K_NAMED) {
			path = xasprintf("%s%s.%s", prefix, k->name,
			    k->kind == K_NAMED ? "*." : "");
			conf_keys_add(k->sub, path, v, n);
			free(path);
			continue;
		}
		*v = xreallocarray(*v, *n + 2, sizeof **v);
		(*v)[(*n)++] = xasprintf("%s%s", prefix, k->name);
		(*v)[*n] = NULL;
	}
}

char **
conf_keys(void)
{
	char **v = xcalloc(1, sizeof *v);
	size_t n = 0;

	conf_keys_add(conf_top_keys, "", &v, &n);
	return v;
}

void
conf_keys_free(char **v)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}
