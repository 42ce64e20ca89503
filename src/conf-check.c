/*
 * conf-check.c: the checks beyond one value: a channel and a job parsed
 * with their own rules (names, URL schemes, headers, TLS files, SMTP
 * authentication, command or sql), and the checks across keys and sections
 * (database, once_per, schedules, jobs, outbox, alert).  doc/architecture.md
 * places it.
 */
#include "config.h"
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "conf-int.h"
#include "duration.h"
#include "schedule.h"
#include "util.h"

#define NAME_MAX_LEN 64 /* channel names go into VARCHAR(64) */

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

int
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
const char *const        conf_http_schemes[] = { "http://", "https://", NULL };
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
		return conf_key_error(
		    p, m, "has no effect without an https:// URL");
	if (ch->type == CHANNEL_SMTP &&
	    strncasecmp(ch->url, "smtps://", 8) != 0 &&
	    strcmp(ch->tls, "required") != 0)
		return conf_key_error(p, m,
		    "has no effect without smtps:// or tls = \"required\"");
	if (ch->type == CHANNEL_AMQP &&
	    strncasecmp(ch->url, "amqps://", 8) != 0)
		return conf_key_error(
		    p, m, "has no effect without an amqps:// URL");
	return 0;
}

/*
 * SMTP credentials go out only over TLS (smtps://, or STARTTLS required),
 * unless the channel says in so many words that clear text is fine (a
 * relay on the same host); the key then has no effect with TLS.
 */
static int
conf_check_smtp_auth(
    struct parse *p, const config_setting_t *s, const struct conf_channel *ch)
{
	bool tls;

	if (ch->type != CHANNEL_SMTP)
		return 0;
	tls = strncasecmp(ch->url, "smtps://", 8) == 0 ||
	    strcmp(ch->tls, "required") == 0;
	if (ch->username != NULL && !tls && !ch->allow_plaintext_auth)
		return conf_key_error(p,
		    config_setting_get_member(s, "username"),
		    "credentials would cross the network in clear: use "
		    "smtps://, or tls = \"required\" (STARTTLS), or set "
		    "allow_plaintext_auth = true");
	if (ch->allow_plaintext_auth && (tls || ch->username == NULL))
		conf_key_warn(p,
		    config_setting_get_member(s, "allow_plaintext_auth"),
		    "has no effect %s",
		    tls ? "with TLS" : "without a username");
	return 0;
}
int
conf_parse_channel(struct parse *p, const config_setting_t *s, void *elem)
{
	struct conf_channel    *ch = elem;
	const config_setting_t *t, *m;
	unsigned                types;
	size_t                  i;
	int                     type, rv;

	ch->name = xstrdup(config_setting_name(s));
	ch->line = config_setting_source_line(s);
	if (conf_check_name(p, s) == -1)
		return -1;
	if (!config_setting_is_group(s))
		return conf_wrong_type(p, s, "a group { type = ...; }");
	if ((t = config_setting_get_member(s, "type")) == NULL)
		return conf_key_error(
		    p, s, "type missing (smtp, http or amqp)");
	if ((type = conf_get_enum(p, t, conf_channel_type_names)) == -1)
		return -1;
	ch->type = (enum channel_type)type;
#ifndef HAVE_AMQP
	if (ch->type == CHANNEL_AMQP)
		return conf_key_error(p, t,
		    "this cronguard was built without amqp support (install librabbitmq-dev and run configure again)");
#endif
	types = conf_channel_types(ch);
	conf_key_defaults(conf_channel_keys, ch, types);
	p->channel = ch->name;
	rv = conf_parse_group(p, s, conf_channel_keys, ch, types);
	p->channel = NULL;
	if (rv == -1)
		return -1;

	if (ch->url == NULL)
		return conf_key_error(p, s, "url missing");
	m = config_setting_get_member(s, "url");
	if (!conf_url_has_scheme(ch->url,
	        ch->type == CHANNEL_SMTP       ? smtp_schemes
	            : ch->type == CHANNEL_AMQP ? amqp_schemes
	                                       : conf_http_schemes))
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
	if (ch->type == CHANNEL_AMQP && conf_amqp_url_user(p, s, ch) == -1)
		return -1;
	if ((ch->password != NULL || ch->password_file != NULL) &&
	    ch->username == NULL)
		return conf_key_error(p, s, "a password needs a username");
	if (conf_check_smtp_auth(p, s, ch) == -1)
		return -1;
	m = config_setting_get_member(s, "headers");
	for (i = 0; i < ch->nheaders; i++) {
		if (conf_check_header(p,
		        config_setting_get_elem(m, (unsigned)i),
		        ch->headers[i]) == -1)
			return -1;
	}
	return 0;
}
void
conf_job_defaults(struct conf_job *j)
{
	memset(j, 0, sizeof *j);
	conf_key_defaults(conf_job_keys, j, 0);
}

int
conf_parse_job(struct parse *p, const config_setting_t *s, void *elem)
{
	struct conf_job *j = elem;
	int              rv;

	conf_job_defaults(j);
	j->name = xstrdup(config_setting_name(s));
	j->line = config_setting_source_line(s);
	if (conf_check_name(p, s) == -1)
		return -1;
	if (!config_setting_is_group(s))
		return conf_wrong_type(p, s, "a group { command = [...]; }");
	p->job = j->name;
	rv = conf_parse_group(p, s, conf_job_keys, j, 0);
	p->job = NULL;
	if (rv == -1)
		return -1;
	if ((j->command == NULL) == (j->sql == NULL))
		return conf_key_error(
		    p, s, "give exactly one of command and sql");
	if (j->sql != NULL &&
	    (conf_member(s, "output") != NULL ||
	        conf_member(s, "output_max") != NULL))
		return conf_key_error(p,
		    conf_member(s, "output") != NULL
		        ? conf_member(s, "output")
		        : conf_member(s, "output_max"),
		    "an SQL job has no output to capture: remove it");
	if (conf_member(s, "ping_url") != NULL &&
	    conf_member(s, "ping_url_file") != NULL)
		return conf_key_error(p, conf_member(s, "ping_url_file"),
		    "give ping_url or ping_url_file, not both");
	if (conf_member(s, "ping_url") != NULL &&
	    !conf_url_has_scheme(j->ping_url, conf_http_schemes))
		return conf_key_error(p, conf_member(s, "ping_url"),
		    "\"%s\" is not an http:// or https:// URL", j->ping_url);
	if (j->command != NULL && j->ncommand == 0)
		return conf_key_error(p,
		    config_setting_get_member(s, "command"),
		    "must not be empty");
	/* There is no shell: "/path --flag" names a file with a space. */
	if (j->command != NULL && strchr(j->command[0], ' ') != NULL &&
	    access(j->command[0], F_OK) == -1)
		conf_key_warn(p,
		    config_setting_get_elem(
		        config_setting_get_member(s, "command"), 0),
		    "\"%s\" does not exist (%s); there is no shell: give the program and each argument as separate strings",
		    j->command[0], strerror(errno));
	return 0;
}

const config_setting_t *
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

/*
 * once_per cuts the day into slots from local midnight: a period that
 * divides a day, in whole seconds, or a whole number of days.  The
 * timezone is checked here for its characters only: whether the server
 * knows it is found when the job runs.
 */
static int
conf_check_once_per(
    struct parse *p, const config_setting_t *s, const struct conf_job *j)
{
	const int64_t day = DUR_H(24);
	const char   *t;

	if (j->once_per_ms == 0) {
		if (j->timezone != NULL && j->schedule_text == NULL)
			return conf_key_error(p, conf_member(s, "timezone"),
			    "timezone applies to schedule and once_per slots only: set one of them");
		return 0;
	}
	if (!p->c->have_database)
		return conf_key_error(p, conf_member(s, "once_per"),
		    "once_per needs a database section (the run records)");
	if (j->once_per_ms % 1000 != 0 ||
	    (day % j->once_per_ms != 0 && j->once_per_ms % day != 0))
		return conf_key_error(p, conf_member(s, "once_per"),
		    "must divide a day in whole seconds (\"1m\", \"15m\", \"1h\", \"6h\") or be whole days (\"1d\", \"7d\")");
	if (j->timezone == NULL)
		return 0;
	if (j->timezone[0] == '\0' || strlen(j->timezone) > 64)
		return conf_key_error(p, conf_member(s, "timezone"),
		    "must be a time zone name of 1 to 64 characters");
	for (t = j->timezone; *t != '\0'; t++) {
		if (strchr(
		        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		        "0123456789/_+-:",
		        *t) == NULL)
			return conf_key_error(p, conf_member(s, "timezone"),
			    "\"%s\" is not a time zone name (\"Europe/Berlin\", \"UTC\", \"+01:00\")",
			    j->timezone);
	}
	return 0;
}

/*
 * A scheduled job's grace when none is set (cronguard.conf(5), grace): half
 * the shortest time between two of its slots, at least CONF_GRACE_MIN and
 * at most the default grace, so that a job run every minute is not blind
 * for ten minutes.  The slots looked at are the CONF_GRACE_SLOTS after a
 * fixed instant (2026-01-01 UTC) in the job's zone (tz; NULL: UTC).
 */
#define CONF_GRACE_MIN DUR_S(30)
#define CONF_GRACE_SLOTS 200
static int64_t
conf_schedule_grace(const struct schedule *sc, const struct tzone *tz)
{
	struct tzone *utc = NULL;
	int64_t       t = 1767225600, next, gap = -1, grace;
	char         *err = NULL;
	int           i;

	if (tz == NULL && tzone_open("UTC", &utc, &err) != 0) {
		free(err);
		return DUR_M(10);
	}
	for (i = 0; i < CONF_GRACE_SLOTS &&
	     schedule_next(sc, tz != NULL ? tz : utc, t, &next) == 0;
	     i++) {
		if (i > 0 && (gap < 0 || next - t < gap))
			gap = next - t;
		t = next;
	}
	tzone_free(utc);
	grace = gap < 0 ? DUR_M(10) : gap * 1000 / 2;
	if (grace < CONF_GRACE_MIN)
		grace = CONF_GRACE_MIN;
	return grace > DUR_M(10) ? DUR_M(10) : grace;
}

/*
 * A schedule is parsed here, so that a bad expression is a configuration
 * error naming its field, and its zone is opened in the host's tzdata
 * (cronguard.conf(5), "Schedules").  once_per is an interval schedule of
 * its own: a job has one or the other.
 */
static int
conf_check_schedule(
    struct parse *p, const config_setting_t *s, struct conf_job *j)
{
	const config_setting_t *k;
	char                   *err = NULL;
	int                     rv;

	if (j->schedule_text == NULL) {
		static const char *const only[] = { "catch_up",
			"backfill_limit", "starting_deadline",
			"alert_after_failures", "alert_level",
			"missed_lookback" };
		size_t                   i;

		for (i = 0; i < nitems(only); i++)
			if ((k = conf_member(s, only[i])) != NULL)
				return conf_key_error(p, k,
				    "applies to a schedule: set schedule");
		return 0;
	}
	k = conf_member(s, "schedule");
	if (j->once_per_ms != 0)
		return conf_key_error(p, k,
		    "give schedule or once_per, not both (once_per is an interval schedule of its own)");
	if (!p->c->have_database)
		return conf_key_error(p, k,
		    "schedule needs a database section (the run records)");
	if (schedule_parse(j->schedule_text, &j->schedule, &err) == -1) {
		rv = conf_key_error(p, k, "%s", err);
		free(err);
		return rv;
	}
	if (j->timezone != NULL &&
	    tzone_open(j->timezone, &j->tzone, &err) == -1) {
		rv = conf_key_error(p, conf_member(s, "timezone"), "%s", err);
		free(err);
		return rv;
	}
	if (conf_member(s, "grace") == NULL)
		j->grace_ms = conf_schedule_grace(j->schedule, j->tzone);
	if (j->starting_deadline_ms == 0)
		j->starting_deadline_ms = j->grace_ms;
	else if (j->catch_up != CATCH_UP_NONE)
		conf_key_warn(p, conf_member(s, "starting_deadline"),
		    "applies to catch_up = \"none\" only (catch_up is \"%s\")",
		    conf_catch_up_names[j->catch_up]);
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
		/* The i-th group of jobs, as conf_parse_named read them: a
		 * lookup by name is a walk over every job. */
		s = config_setting_get_elem(g, (unsigned)i);
		if (j->guard != GUARD_LOCAL && j->guard != GUARD_NONE &&
		    !c->have_database)
			return conf_key_error(p, s,
			    "guard %s needs a database section (or guard = \"local\")",
			    conf_guard_names[j->guard]);
		if (j->lease_ms == 0)
			j->lease_ms = CONF_LEASE_BEATS * j->heartbeat_ms;
		else if (j->lease_ms < 2 * j->heartbeat_ms)
			return conf_key_error(p, conf_member(s, "lease"),
			    "lease must be at least twice the heartbeat");
		if (j->sql != NULL && !c->have_database)
			return conf_key_error(
			    p, s, "an sql job needs a database section");
		if (conf_check_once_per(p, s, j) == -1 ||
		    conf_check_schedule(p, s, j) == -1)
			return -1;
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
		if (j->guard != GUARD_LOCAL && j->guard != GUARD_NONE &&
		    !conf_lock_name_valid(j->lock, &why))
			return conf_key_error(p, s,
			    "the default lock name \"%s\" is %s: set lock to a shorter name",
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
		    "outbox.lease (%s) must be longer than channels.%s.timeout (%s), or a slow send is claimed twice",
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
		    "outbox.watchdog (%s) must be longer than outbox.lease (%s)",
		    a, b);
	}
	s = conf_member(g, "backoff");
	if (o->backoff_initial_ms > o->backoff_max_ms)
		return conf_error(p, s != NULL ? s : g,
		    "outbox.backoff: initial must not be longer than max");
	s = conf_member(g, "thresholds");
	if (s == NULL)
		s = g;
	if (o->pending_warn > o->pending_crit)
		return conf_error(p, s,
		    "outbox.thresholds: pending_warn must not exceed pending_crit");
	if (o->oldest_due_warn_ms > o->oldest_due_crit_ms)
		return conf_error(p, s,
		    "outbox.thresholds: oldest_due_warn must not exceed oldest_due_crit");
	if (o->failed_warn > o->failed_crit)
		return conf_error(p, s,
		    "outbox.thresholds: failed_warn must not exceed failed_crit");
	return 0;
}

int
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
	    !conf_url_has_scheme(c->alert_url, conf_http_schemes))
		return conf_key_error(p, s,
		    "\"%s\" is not an http:// or https:// URL", c->alert_url);
	if (c->alert_url != NULL &&
	    conf_check_url_secret(p, s, c->alert_url) == -1)
		return -1;
	return 0;
}
